#include "drivelab/core/units.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
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

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "12.5GiB" into the number (12.5) and the suffix ("gib").
void split_number(std::string_view text, double& number, std::string& suffix, const char* what) {
  text = trim(text);
  if (text.empty()) throw std::invalid_argument(fmt::format("empty {}", what));
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) throw std::invalid_argument(fmt::format("'{}' is not a {} (expected a number first)", text, what));
  const std::string num(text.substr(0, i));
  auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), number);
  if (ec != std::errc{} || ptr != num.data() + num.size())
    throw std::invalid_argument(fmt::format("'{}' is not a {}", text, what));
  suffix = lower(trim(text.substr(i)));
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
  double number = 0;
  std::string suffix;
  split_number(text, number, suffix, "size");
  double mult = 0;
  if (suffix.empty() || suffix == "b") mult = 1;
  else if (suffix == "k" || suffix == "kb" || suffix == "kib") mult = 1024.0;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib") mult = 1024.0 * 1024;
  else if (suffix == "g" || suffix == "gb" || suffix == "gib") mult = 1024.0 * 1024 * 1024;
  else if (suffix == "t" || suffix == "tb" || suffix == "tib") mult = 1024.0 * 1024 * 1024 * 1024;
  else if (suffix == "p" || suffix == "pb" || suffix == "pib") mult = 1024.0 * 1024 * 1024 * 1024 * 1024;
  else
    throw std::invalid_argument(fmt::format(
        "'{}': unknown size unit '{}' (use b, k/KiB, m/MiB, g/GiB, t/TiB)", trim(text), suffix));
  const double bytes = number * mult;
  if (!(bytes < 1.8e19)) throw std::invalid_argument(fmt::format("'{}' is too large", trim(text)));
  if (bytes != std::floor(bytes))
    throw std::invalid_argument(fmt::format("'{}' is not a whole number of bytes", trim(text)));
  return static_cast<std::uint64_t>(bytes);
}

std::chrono::nanoseconds parse_duration(std::string_view text) {
  std::string_view rest = trim(text);
  if (rest.empty()) throw std::invalid_argument("empty duration");
  double total_ns = 0;
  bool any = false;
  while (!rest.empty()) {
    std::size_t i = 0;
    while (i < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[i])) || rest[i] == '.')) ++i;
    if (i == 0)
      throw std::invalid_argument(fmt::format("'{}' is not a duration (e.g. 30s, 250ms, 1h30m)", trim(text)));
    double number = 0;
    const std::string num(rest.substr(0, i));
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), number);
    if (ec != std::errc{} || ptr != num.data() + num.size())
      throw std::invalid_argument(fmt::format("'{}' is not a duration", trim(text)));
    rest.remove_prefix(i);
    std::size_t j = 0;
    while (j < rest.size() && std::isalpha(static_cast<unsigned char>(rest[j]))) ++j;
    const std::string unit = lower(rest.substr(0, j));
    rest.remove_prefix(j);
    double mult = 0;
    if (unit.empty() || unit == "s" || unit == "sec") mult = 1e9;
    else if (unit == "ns") mult = 1;
    else if (unit == "us") mult = 1e3;
    else if (unit == "ms") mult = 1e6;
    else if (unit == "m" || unit == "min") mult = 60e9;
    else if (unit == "h") mult = 3600e9;
    else
      throw std::invalid_argument(
          fmt::format("'{}': unknown duration unit '{}' (use ns, us, ms, s, m, h)", trim(text), unit));
    if (unit.empty() && !rest.empty())
      throw std::invalid_argument(fmt::format("'{}' is not a duration", trim(text)));
    total_ns += number * mult;
    any = true;
  }
  if (!any || !(total_ns < 9.2e18)) throw std::invalid_argument(fmt::format("'{}' is out of range", trim(text)));
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
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

std::string format_duration(std::chrono::nanoseconds d) {
  const std::int64_t ns = d.count();
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
