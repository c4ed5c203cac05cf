#include "text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

namespace drivelab::config::detail {
namespace {

constexpr std::size_t kMaxQuoted = 40;

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool starts_with_ci(std::string_view text, std::string_view prefix) {
  if (prefix.size() > text.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (lower(text[i]) != lower(prefix[i])) return false;
  return true;
}

// Length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlongs, no surrogates,
// at most U+10FFFF), or 0 when the bytes there are not one.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF)
    n = 2;
  else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

}  // namespace

// Control characters and bytes that are not UTF-8 become \xNN, so a message never carries raw
// binary to the terminal; well-formed UTF-8 (names in any script) is kept.
std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (const std::size_t n = c >= 0x80 ? utf8_length(text, i) : 0; n > 0) {
      // C1 controls (U+0080-U+009F: 0x9B is a terminal's CSI) and the bidirectional controls
      // (U+200E/F, U+202A-U+202E, U+2066-U+2069) would steer the terminal or reorder the line.
      std::uint32_t cp = c & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
      for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3Fu);
      if (cp <= 0x9F || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
          (cp >= 0x2066 && cp <= 0x2069)) {
        out += fmt::format("\\u{:04x}", cp);
      } else {
        out.append(text.substr(i, n));
      }
      i += n;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
      ++i;
    }
  }
  return out;
}

std::string quote(std::string_view text) {
  bool cut = false;
  if (const auto nl = text.find('\n'); nl != std::string_view::npos) {
    text = text.substr(0, nl);
    cut = true;
  }
  if (text.size() > kMaxQuoted) {
    text = text.substr(0, kMaxQuoted);
    cut = true;
  }
  return "'" + printable(text) + (cut ? "...'" : "'");
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined()) return "nothing";
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a sequence";
    case YAML::NodeType::Null: return "an empty value";
    case YAML::NodeType::Scalar: return quote(node.Scalar());
    case YAML::NodeType::Undefined: break;
  }
  return "nothing";
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rolling rows of the classic dynamic programme; keys are short.
  std::vector<std::size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& known) {
  std::optional<std::string> best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const std::string& candidate : known) {
    if (candidate.empty()) continue;
    const std::size_t d = edit_distance(word, candidate);
    const bool typo = d <= 2 && d < word.size();
    const bool prefix = !word.empty() && (starts_with_ci(candidate, word) || starts_with_ci(word, candidate));
    if ((typo || prefix) && d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += ", ";
    out += w;
  }
  return out;
}

}  // namespace drivelab::config::detail
