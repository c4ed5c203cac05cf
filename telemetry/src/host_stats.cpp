#include "drivelab/telemetry/host_stats.hpp"

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"

namespace drivelab::telemetry {
namespace fs = std::filesystem;

namespace {

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

/// Calls `fn(line_no, words)` for each line of `text` (numbered from 1) until it returns true;
/// true if one did.
template <class Fn>
bool for_each_line(std::string_view text, Fn&& fn) {
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (fn(line_no, words(line))) return true;
  }
  return false;
}

bool to_u64(std::string_view s, std::uint64_t& v) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool to_double(std::string_view s, double& v) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::optional<std::string> slurp(const fs::path& p, int& err) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    err = errno;
    return std::nullopt;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double delta_share(std::uint64_t a, std::uint64_t b, double total) {
  return b > a && total > 0 ? static_cast<double>(b - a) / total * 100.0 : 0.0;
}

}  // namespace

CpuStat parse_proc_stat_cpu(std::string_view text, const std::string& source) {
  CpuStat out;
  const bool found = for_each_line(text, [&](std::size_t line_no, const std::vector<std::string_view>& w) {
    if (w.empty() || w[0] != "cpu") return false;
    static constexpr std::array<const char*, 10> kNames = {"user", "nice",    "system", "idle",  "iowait",
                                                           "irq",  "softirq", "steal",  "guest", "guest_nice"};
    std::array<std::uint64_t, 10> v{};
    if (w.size() < 5)
      throw EnvironmentError(
          fmt::format("{}:{}: the cpu line has {} values, proc(5) has at least 4", source, line_no, w.size() - 1));
    for (std::size_t k = 1; k < w.size() && k <= v.size(); ++k)
      if (!to_u64(w[k], v[k - 1]))
        throw EnvironmentError(
            fmt::format("{}:{}: cpu {} is '{}', not an unsigned number", source, line_no, kNames[k - 1], w[k]));
    out = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]};
    return true;
  });
  if (found) return out;
  throw EnvironmentError(fmt::format("{}: no \"cpu\" line (proc(5))", source));
}

CpuPercent cpu_percent(const CpuStat& a, const CpuStat& b) noexcept {
  const auto up = [](std::uint64_t x, std::uint64_t y) { return y > x ? y - x : 0; };
  const double total =
      static_cast<double>(up(a.user, b.user) + up(a.nice, b.nice) + up(a.system, b.system) + up(a.idle, b.idle) +
                          up(a.iowait, b.iowait) + up(a.irq, b.irq) + up(a.softirq, b.softirq) + up(a.steal, b.steal));
  CpuPercent p;
  p.user = delta_share(a.user, b.user, total);
  p.nice = delta_share(a.nice, b.nice, total);
  p.system = delta_share(a.system, b.system, total);
  p.idle = delta_share(a.idle, b.idle, total);
  p.iowait = delta_share(a.iowait, b.iowait, total);
  p.irq = delta_share(a.irq, b.irq, total);
  p.softirq = delta_share(a.softirq, b.softirq, total);
  p.steal = delta_share(a.steal, b.steal, total);
  return p;
}

PressureStat parse_pressure(std::string_view text, const std::string& source) {
  PressureStat p;
  bool some = false;
  for_each_line(text, [&](std::size_t line_no, const std::vector<std::string_view>& w) {
    if (w.empty()) return false;
    if (w[0] != "some" && w[0] != "full")
      throw EnvironmentError(
          fmt::format("{}:{}: '{}' is neither \"some\" nor \"full\" (psi.rst)", source, line_no, w[0]));
    std::optional<double> avg10;
    std::optional<std::uint64_t> total;
    for (std::size_t k = 1; k < w.size(); ++k) {
      const std::size_t eq = w[k].find('=');
      if (eq == std::string_view::npos)
        throw EnvironmentError(fmt::format("{}:{}: '{}' is not key=value", source, line_no, w[k]));
      const std::string_view key = w[k].substr(0, eq), val = w[k].substr(eq + 1);
      if (key == "total") {
        std::uint64_t t = 0;
        if (!to_u64(val, t))
          throw EnvironmentError(fmt::format("{}:{}: {} total is '{}', not microseconds", source, line_no, w[0], val));
        total = t;
      } else if (key == "avg10") {
        double a = 0;
        if (!to_double(val, a))
          throw EnvironmentError(fmt::format("{}:{}: {} avg10 is '{}', not a number", source, line_no, w[0], val));
        avg10 = a;
      }
    }
    if (!total) throw EnvironmentError(fmt::format("{}:{}: the {} line has no total=", source, line_no, w[0]));
    if (w[0] == "some") {
      some = true;
      p.some_total_us = *total;
      p.some_avg10 = avg10.value_or(0);
    } else {
      p.full_total_us = total;
      p.full_avg10 = avg10;
    }
    return false;
  });
  if (!some) throw EnvironmentError(fmt::format("{}: no \"some\" line (Documentation/accounting/psi.rst)", source));
  return p;
}

PressurePercent pressure_percent(const PressureStat& a, const PressureStat& b, double seconds) noexcept {
  PressurePercent p;
  const double wall_us = seconds * 1e6;
  p.some = delta_share(a.some_total_us, b.some_total_us, wall_us);
  if (a.full_total_us && b.full_total_us) p.full = delta_share(*a.full_total_us, *b.full_total_us, wall_us);
  return p;
}

HostRates host_rates(const HostSample& a, const HostSample& b, double seconds) noexcept {
  HostRates r;
  if (a.cpu && b.cpu) r.cpu = cpu_percent(*a.cpu, *b.cpu);
  if (seconds > 0) {
    if (a.io_pressure && b.io_pressure) r.io_pressure = pressure_percent(*a.io_pressure, *b.io_pressure, seconds);
    if (a.memory_pressure && b.memory_pressure)
      r.memory_pressure = pressure_percent(*a.memory_pressure, *b.memory_pressure, seconds);
  }
  return r;
}

void HostSampler::note(std::string reason) {
  if (seen_.insert(reason).second) reasons_.push_back(std::move(reason));
}

HostSample HostSampler::sample() {
  HostSample s;
  int err = 0;
  const fs::path stat = proc_root_ / "stat";
  if (const auto text = slurp(stat, err)) {
    try {
      s.cpu = parse_proc_stat_cpu(*text, stat.string());
    } catch (const EnvironmentError& e) {
      note(e.what());
    }
  } else {
    note(fmt::format("{}: {}", stat.string(), std::strerror(err)));
  }
  for (const char* resource : {"io", "memory"}) {
    const fs::path file = proc_root_ / "pressure" / resource;
    auto& slot = std::string_view(resource) == "io" ? s.io_pressure : s.memory_pressure;
    err = 0;
    const auto text = slurp(file, err);
    if (!text) {
      note(err == ENOENT ? fmt::format("{}: absent (pressure stall information needs Linux >= 4.20 with CONFIG_PSI, "
                                       "and not psi=0 on the kernel command line)",
                                       file.string())
                         : fmt::format("{}: {}", file.string(), std::strerror(err)));
      continue;
    }
    try {
      slot = parse_pressure(*text, file.string());
    } catch (const EnvironmentError& e) {
      note(e.what());
    }
  }
  return s;
}

}  // namespace drivelab::telemetry
