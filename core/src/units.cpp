#include "drivelab/core/units.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace drivelab {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_number_char(char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; }
bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Takes the leading run of digits and dots off `rest`.
std::string_view take_number(std::string_view& rest) {
  std::size_t i = 0;
  while (i < rest.size() && is_number_char(rest[i])) ++i;
  const std::string_view num = rest.substr(0, i);
  rest.remove_prefix(i);
  return num;
}

double parse_double(std::string_view num, std::string_view text, const char* what) {
  double number = 0;
  auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), number);
  if (num.empty() || ec != std::errc{} || ptr != num.data() + num.size())
    throw std::invalid_argument(fmt::format("'{}' is not a {}", trim(text), what));
  return number;
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
  std::string_view rest = trim(text);
  if (rest.empty()) throw std::invalid_argument("empty size");
  const std::string_view num = take_number(rest);
  if (num.empty())
    throw std::invalid_argument(
        fmt::format("'{}' is not a size (expected a number first, e.g. 4k, 512, 2GiB)", trim(text)));
  const std::string suffix = lower(trim(rest));
  int power = -1;  // of 1024
  if (suffix.empty() || suffix == "b")
    power = 0;
  else if (suffix == "k" || suffix == "kb" || suffix == "kib")
    power = 1;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib")
    power = 2;
  else if (suffix == "g" || suffix == "gb" || suffix == "gib")
    power = 3;
  else if (suffix == "t" || suffix == "tb" || suffix == "tib")
    power = 4;
  else if (suffix == "p" || suffix == "pb" || suffix == "pib")
    power = 5;
  else
    throw std::invalid_argument(
        fmt::format("'{}': unknown size unit '{}' (use b, k/KiB, m/MiB, g/GiB, t/TiB, p/PiB)", trim(text), suffix));
  const std::uint64_t mult = std::uint64_t{1} << (10 * power);
  const auto too_large = [&] {
    return std::invalid_argument(fmt::format("'{}' is too large (max 2^64 - 1 bytes)", trim(text)));
  };
  if (num.find('.') == std::string_view::npos) {
    // Integers stay exact (a double would round sizes above 2^53).
    std::uint64_t n = 0;
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
    if (ec == std::errc::result_out_of_range) throw too_large();
    if (ec != std::errc{} || ptr != num.data() + num.size())
      throw std::invalid_argument(fmt::format("'{}' is not a size", trim(text)));
    if (n > std::numeric_limits<std::uint64_t>::max() / mult) throw too_large();
    return n * mult;
  }
  const double bytes = parse_double(num, text, "size") * static_cast<double>(mult);
  if (!(bytes < 0x1.0p64)) throw too_large();
  if (bytes != std::floor(bytes))
    throw std::invalid_argument(fmt::format("'{}' is not a whole number of bytes", trim(text)));
  return static_cast<std::uint64_t>(bytes);
}

std::chrono::nanoseconds parse_duration(std::string_view text) {
  std::string_view rest = trim(text);
  if (rest.empty()) throw std::invalid_argument("empty duration");
  double total_ns = 0;
  int parts = 0;
  while (!rest.empty()) {
    const std::string_view num = take_number(rest);
    if (num.empty())
      throw std::invalid_argument(fmt::format("'{}' is not a duration (e.g. 30s, 250ms, 1h30m)", trim(text)));
    const double number = parse_double(num, text, "duration");
    while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
    std::size_t j = 0;
    while (j < rest.size() && is_alpha(rest[j])) ++j;
    const std::string unit = lower(rest.substr(0, j));
    rest.remove_prefix(j);
    while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
    double mult = 0;
    if (unit.empty() || unit == "s" || unit == "sec")
      mult = 1e9;
    else if (unit == "ns")
      mult = 1;
    else if (unit == "us")
      mult = 1e3;
    else if (unit == "ms")
      mult = 1e6;
    else if (unit == "m" || unit == "min")
      mult = 60e9;
    else if (unit == "h")
      mult = 3600e9;
    else
      throw std::invalid_argument(
          fmt::format("'{}': unknown duration unit '{}' (use ns, us, ms, s, m, h)", trim(text), unit));
    // A bare number means seconds only on its own: "1h30" is ambiguous, so it is an error.
    if (unit.empty() && (parts > 0 || !rest.empty()))
      throw std::invalid_argument(
          fmt::format("'{}' is not a duration (a unit is needed after each number)", trim(text)));
    total_ns += number * mult;
    ++parts;
  }
  if (!(total_ns < 9.2e18))
    throw std::invalid_argument(fmt::format("'{}' is out of range (max ~292 years)", trim(text)));
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(total_ns)));
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  std::uint64_t exact = bytes;
  bool is_exact = true;
  while (v >= 1024 && u < 5) {
    if (exact % 1024 != 0) is_exact = false;
    exact /= 1024;
    v /= 1024;
    ++u;
  }
  if (is_exact) return fmt::format("{} {}", exact, kUnits[u]);
  // 1,048,575 bytes is 1023.999 KiB, which prints as "1024.0 KiB": move up one unit instead.
  if (v >= 1023.95 && u < 5) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

std::string format_duration(std::chrono::nanoseconds d) {
  const std::int64_t ns = d.count();
  if (ns < 0) {
    if (ns == std::numeric_limits<std::int64_t>::min()) return fmt::format("{}ns", ns);
    std::string out = "-";
    out += format_duration(std::chrono::nanoseconds(-ns));
    return out;
  }
  if (ns == 0) return "0s";  // "warm-up 0s", not "0ns"
  if (ns < 1'000) return fmt::format("{}ns", ns);
  if (ns < 1'000'000) return fmt::format("{:g}us", static_cast<double>(ns) / 1e3);
  if (ns < 1'000'000'000) return fmt::format("{:g}ms", static_cast<double>(ns) / 1e6);
  const std::int64_t s = ns / 1'000'000'000;
  if (ns % 1'000'000'000 != 0 && s < 60) return fmt::format("{:g}s", static_cast<double>(ns) / 1e9);
  std::string out;
  if (s >= 3600) out += fmt::format("{}h", s / 3600);
  if ((s % 3600) / 60) out += fmt::format("{}m", (s % 3600) / 60);
  if (s % 60 || out.empty()) out += fmt::format("{}s", s % 60);
  return out;
}

}  // namespace drivelab
