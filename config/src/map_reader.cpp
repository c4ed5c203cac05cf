// MapReader: one declared key at a time, each converted, range-checked and reported with its
// path and position; finish() turns every undeclared key into an error (fio's parse.c declares
// every option once for the same reason: a typo must never be silently ignored).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/core/units.hpp"
#include "text.hpp"

namespace drivelab::config {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "must be between 1 and 65536" / "must be at least 1" / "must be at most 100".
template <class T, class Format>
std::string range_text(std::string_view key, const std::optional<T>& lo, const std::optional<T>& hi, Format fmt_value) {
  if (lo && hi) return fmt::format("{} must be between {} and {}", key, fmt_value(*lo), fmt_value(*hi));
  if (lo) return fmt::format("{} must be at least {}", key, fmt_value(*lo));
  return fmt::format("{} must be at most {}", key, fmt_value(*hi));
}

// True when `value` is within `range`; else reports "KEY must be between A and B, found V" at
// `node`, every number written by `fmt_value` (format_size, format_duration, ...).
template <class T, class Format>
bool within(const Node& node, std::string_view key, const T& value, const Range<T>& range, Format fmt_value) {
  if ((range.min && value < *range.min) || (range.max && value > *range.max)) {
    node.error(fmt::format("{}, found {}", range_text(key, range.min, range.max, fmt_value), fmt_value(value)));
    return false;
  }
  return true;
}

// The unit parsers of core/units.hpp explain themselves in std::invalid_argument; most reasons
// start by quoting the input ("'4q': unknown size unit 'q' ..."). Lead with what was expected
// and do not quote the input twice.
std::string unit_error(std::string_view text, std::string_view what, const std::string& reason) {
  const std::string quoted = fmt::format("'{}'", trim(text));
  std::string message;
  if (reason.rfind(quoted + ": ", 0) == 0)
    message = fmt::format("{} is not a {}: {}", quoted, what, reason.substr(quoted.size() + 2));
  else if (reason.rfind(quoted + " ", 0) == 0)
    message = reason;
  else
    message = fmt::format("{} is not a {}: {}", quoted, what, reason);
  return detail::printable(message);  // the reason quotes the input, which may be binary
}

enum class IntParse { ok, not_integer, too_small, too_large };

// Decimal with an optional sign, or 0x-hex (YAML 1.2 core schema integers, minus octal).
IntParse parse_int(std::string_view text, std::int64_t& out) {
  text = trim(text);
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty() || !std::isxdigit(static_cast<unsigned char>(text.front()))) return IntParse::not_integer;
  std::uint64_t magnitude = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), magnitude, base);
  if (ptr != text.data() + text.size()) return IntParse::not_integer;
  if (ec == std::errc::result_out_of_range) return negative ? IntParse::too_small : IntParse::too_large;
  if (ec != std::errc{}) return IntParse::not_integer;
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (negative) {
    if (magnitude > kMax + 1) return IntParse::too_small;
    out = magnitude == kMax + 1 ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(magnitude);
  } else {
    if (magnitude > kMax) return IntParse::too_large;
    out = static_cast<std::int64_t>(magnitude);
  }
  return IntParse::ok;
}

bool parse_double(std::string_view text, double& out) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && ptr == text.data() + text.size() && std::isfinite(out);
}

std::string format_number(double v) { return fmt::format("{:g}", v); }

// Checks `value` against the caller's range and the limits of the target type T. Type limits are
// only named in the message when they are the bound that was violated.
template <class T>
bool check_int_range(const Node& node, std::string_view key, std::string_view text, IntParse parsed, std::int64_t value,
                     const Range<std::int64_t>& range) {
  const auto type_min = static_cast<std::int64_t>(std::numeric_limits<T>::min());
  const auto type_max = static_cast<std::int64_t>(
      std::min<std::uint64_t>(std::numeric_limits<T>::max(), std::numeric_limits<std::int64_t>::max()));
  const std::int64_t lo_eff = range.min ? std::max(*range.min, type_min) : type_min;
  const std::int64_t hi_eff = range.max ? std::min(*range.max, type_max) : type_max;
  const bool below = parsed == IntParse::too_small || (parsed == IntParse::ok && value < lo_eff);
  const bool above = parsed == IntParse::too_large || (parsed == IntParse::ok && value > hi_eff);
  if (!below && !above) return true;
  std::optional<std::int64_t> lo = range.min, hi = range.max;
  if (below && (!lo || *lo < type_min)) lo = type_min;
  if (above && (!hi || *hi > type_max)) hi = type_max;
  if (lo && hi && *lo > *hi) lo = type_min;  // contradictory caller range: show the type's
  node.error(fmt::format("{}, found {}", range_text(key, lo, hi, [](std::int64_t v) { return std::to_string(v); }),
                         trim(text)));
  return false;
}

template <class T>
bool read_integer(const std::optional<Node>& node, std::string_view key, T& out, const Range<std::int64_t>& range) {
  if (!node) return false;
  const std::string text = node->scalar();
  std::int64_t value = 0;
  const IntParse parsed = parse_int(text, value);
  if (parsed == IntParse::not_integer) {
    node->error(fmt::format("expected an integer, found {}", detail::quote(text)));
    return false;
  }
  if (!check_int_range<T>(*node, key, text, parsed, value, range)) return false;
  out = static_cast<T>(value);
  return true;
}

// A value with units (a size, a duration): "expected a WHAT (e.g. EXAMPLES), found an empty
// value", the unit parser's reason (core/units.hpp), or the range; `out` is set only when valid.
template <class T, class Parse, class Format>
bool read_with_unit(const std::optional<Node>& node, std::string_view key, std::string_view what,
                    std::string_view examples, Parse parse, Format format, const Range<T>& range, T& out) {
  if (!node) return false;
  const std::string text = node->scalar();
  if (trim(text).empty()) {
    node->error(fmt::format("expected a {} (e.g. {}), found an empty value", what, examples));
    return false;
  }
  T value{};
  try {
    value = parse(text);
  } catch (const std::invalid_argument& e) {
    node->error(unit_error(text, what, e.what()));
    return false;
  }
  if (!within(*node, key, value, range, format)) return false;
  out = value;
  return true;
}

}  // namespace

MapReader::MapReader(const Node& map) : map_(map) {
  if (map_.defined() && !map_.is_map() && !map_.is_null()) {
    map_.error(fmt::format("expected a mapping, found {}", detail::describe(map_.yaml())));
    ok_ = false;
    return;
  }
  report_duplicate_keys();
}

MapReader::~MapReader() {
  if (!finished_) finish();
}

void MapReader::report_duplicate_keys() {
  if (!map_.is_map()) return;
  const YAML::Node& yaml = map_.yaml();
  std::vector<std::pair<std::string, YAML::Mark>> seen;
  for (auto it = yaml.begin(); it != yaml.end(); ++it) {
    const YAML::Node key_node = it->first;  // a copy: it-> returns a temporary proxy
    if (!key_node.IsScalar()) {
      Node(key_node, map_.path(), map_.file(), &map_.diagnostics())
          .error(fmt::format("mapping keys must be plain words, found {}", detail::describe(key_node)));
      continue;
    }
    const std::string& key = key_node.Scalar();
    const auto first = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == key; });
    if (first == seen.end()) {
      seen.emplace_back(key, key_node.Mark());
      continue;
    }
    const Node here = map_.child(key);
    const Location loc = Node(key_node, here.path(), map_.file(), &map_.diagnostics()).location();
    std::string where;
    if (!first->second.is_null())
      where = fmt::format(" (first given at {}:{})", first->second.line + 1, first->second.column + 1);
    map_.diagnostics().error(loc, here.path(), fmt::format("duplicate key {}{}", detail::quote(key), where));
  }
}

std::optional<Node> MapReader::scalar_child(std::string_view key, bool required) {
  return scalar_child(key, required, "a scalar");
}

std::optional<Node> MapReader::scalar_child(std::string_view key, bool required, std::string_view what) {
  accept(key);
  if (!ok_) return std::nullopt;
  Node child = map_.child(key);
  if (!child.defined()) {
    if (required) map_.error(fmt::format("missing required key '{}'", key));
    return std::nullopt;
  }
  if (!child.is_scalar()) {
    child.error(fmt::format("expected {}, found {}", what, detail::describe(child.yaml())));
    return std::nullopt;
  }
  return child;
}

bool MapReader::string(std::string_view key, std::string& out, bool required) {
  const auto node = scalar_child(key, required, "a string");
  if (!node) return false;
  out = node->scalar();
  return true;
}

bool MapReader::boolean(std::string_view key, bool& out, bool required) {
  const auto node = scalar_child(key, required, "a boolean");
  if (!node) return false;
  const std::string word = lower(trim(node->scalar()));
  if (word == "true" || word == "yes" || word == "on") {
    out = true;
    return true;
  }
  if (word == "false" || word == "no" || word == "off") {
    out = false;
    return true;
  }
  node->error(fmt::format("expected a boolean (true/false, yes/no, on/off), found {}", detail::quote(node->scalar())));
  return false;
}

bool MapReader::integer(std::string_view key, std::int64_t& out, Range<std::int64_t> range, bool required) {
  return read_integer(scalar_child(key, required, "an integer"), key, out, range);
}

bool MapReader::integer(std::string_view key, int& out, Range<std::int64_t> range, bool required) {
  return read_integer(scalar_child(key, required, "an integer"), key, out, range);
}

bool MapReader::integer(std::string_view key, std::uint32_t& out, Range<std::int64_t> range, bool required) {
  return read_integer(scalar_child(key, required, "an integer"), key, out, range);
}

bool MapReader::number(std::string_view key, double& out, Range<double> range, bool required) {
  const auto node = scalar_child(key, required, "a number");
  if (!node) return false;
  double value = 0;
  if (!parse_double(node->scalar(), value)) {
    node->error(fmt::format("expected a number, found {}", detail::quote(node->scalar())));
    return false;
  }
  if (!within(*node, key, value, range, format_number)) return false;
  out = value;
  return true;
}

bool MapReader::size(std::string_view key, std::uint64_t& bytes, Range<std::uint64_t> range, bool required) {
  return read_with_unit(scalar_child(key, required, "a size"), key, "size", "4k, 2GiB", parse_size, format_size, range,
                        bytes);
}

bool MapReader::duration(std::string_view key, std::chrono::nanoseconds& out, Range<std::chrono::nanoseconds> range,
                         bool required) {
  return read_with_unit(scalar_child(key, required, "a duration"), key, "duration", "30s, 250ms, 1h30m", parse_duration,
                        format_duration, range, out);
}

bool MapReader::percent(std::string_view key, double& out, bool required) {
  const auto node = scalar_child(key, required, "a percentage");
  if (!node) return false;
  const std::string raw = node->scalar();
  std::string_view text = trim(raw);
  if (!text.empty() && text.back() == '%') text = trim(text.substr(0, text.size() - 1));
  double value = 0;
  if (!parse_double(text, value)) {
    node->error(fmt::format("expected a percentage (0-100, e.g. 45 or 45%), found {}", detail::quote(node->scalar())));
    return false;
  }
  if (value < 0 || value > 100) {
    node->error(fmt::format("{} must be between 0 and 100, found {}", key, trim(node->scalar())));
    return false;
  }
  out = value;
  return true;
}

bool MapReader::choice_word(std::string_view key, std::string& out, const std::vector<std::string_view>& names,
                            bool required) {
  std::vector<std::string> words(names.begin(), names.end());
  const auto node = scalar_child(key, required, fmt::format("a word (one of: {})", detail::join(words)));
  if (!node) return false;
  const std::string word = node->scalar();
  if (std::find(names.begin(), names.end(), word) != names.end()) {
    out = word;
    return true;
  }
  node->error(fmt::format("{} must be one of: {}; found {}", key, detail::join(words), detail::quote(word)));
  return false;
}

bool MapReader::string_list(std::string_view key, std::vector<std::string>& out, bool required) {
  accept(key);
  if (!ok_) return false;
  const Node child = map_.child(key);
  if (!child.defined()) {
    if (required) map_.error(fmt::format("missing required key '{}'", key));
    return false;
  }
  if (child.is_null()) {
    out.clear();
    return true;
  }
  if (child.is_scalar()) {
    out = {child.scalar()};
    return true;
  }
  if (!child.is_sequence()) {
    child.error(fmt::format("expected a list of strings, found {}", detail::describe(child.yaml())));
    return false;
  }
  std::vector<std::string> values;
  bool ok = true;
  for (const Node& element : child.elements()) {
    if (element.is_scalar()) {
      values.push_back(element.scalar());
    } else {
      element.error(fmt::format("expected a string, found {}", detail::describe(element.yaml())));
      ok = false;
    }
  }
  if (ok) out = std::move(values);
  return ok;
}

Node MapReader::section(std::string_view key, bool required) {
  accept(key);
  Node child = map_.child(key);
  if (ok_ && !child.defined() && required) map_.error(fmt::format("missing required key '{}'", key));
  return child;
}

std::vector<Node> MapReader::sequence(std::string_view key, bool required) {
  const Node child = section(key, required);
  if (!ok_ || !child.defined() || child.is_null()) return {};
  if (!child.is_sequence()) {
    child.error(fmt::format("expected a sequence, found {}", detail::describe(child.yaml())));
    return {};
  }
  return child.elements();
}

void MapReader::accept(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
}

void MapReader::finish() {
  if (finished_) return;
  finished_ = true;
  if (!ok_ || !map_.is_map()) return;
  const YAML::Node& yaml = map_.yaml();
  for (auto it = yaml.begin(); it != yaml.end(); ++it) {
    if (!it->first.IsScalar()) continue;  // reported by the constructor
    const std::string key = it->first.Scalar();
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    std::string hint;
    if (const auto suggestion = detail::closest(key, known_))
      hint = fmt::format(" (did you mean '{}'?)", *suggestion);
    else if (!known_.empty())
      hint = fmt::format(" (known keys: {})", detail::join(known_));
    else
      hint = " (this section takes no keys)";
    // Reported at the key itself, which is where the typo is.
    const std::string path = map_.path().empty() ? key : fmt::format("{}.{}", map_.path(), key);
    Node(it->first, path, map_.file(), &map_.diagnostics())
        .error(fmt::format("unknown key {}{}", detail::quote(key), hint));
  }
}

}  // namespace drivelab::config
