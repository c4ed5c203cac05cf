// Text for people: the interval line and the end-of-run table. Pinned by golden-style unit tests
// (tests/unit/results/summary_test.cpp): change both together.
#include "drivelab/results/summary.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <vector>

#include <fmt/format.h>

#include "drivelab/results/catalogue.hpp"

namespace drivelab::results {

std::string format_number(double v) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e12 || a < 1e-3) return fmt::format("{:.3g}", v);
  if (v == std::trunc(v) || a >= 1000) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  // Below 1: three significant digits (0.500, 0.0123, 0.00123).
  const int decimals = 2 - static_cast<int>(std::floor(std::log10(a)));
  return fmt::format("{:.{}f}", v, decimals);
}

std::string format_grouped(double v) {
  if (!std::isfinite(v)) return format_number(v);
  const double r = std::round(v);
  const std::string digits = fmt::format("{:.0f}", std::fabs(r));
  std::string out = r < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_ratio(double v) {
  const double a = std::fabs(v);
  if (!std::isfinite(v) || v == 0) return format_number(v);
  if (a < 0.001) return v > 0 ? std::string("<0.001") : format_number(v);
  if (std::round(a) >= 1000) return format_grouped(v);
  if (a < 1) return format_number(v);  // three significant digits below 1
  return fmt::format("{:.{}f}", v, a < 10 ? 2 : a < 100 ? 1 : 0);
}

std::string format_bare(double value, std::string_view unit) {
  if (unit == "ratio") return format_ratio(value);
  const bool finite = std::isfinite(value);
  if (unit == "1/s" || unit == "1/min" || unit == "MB/s")
    return finite && std::round(std::fabs(value)) >= 1000 ? format_grouped(value) : format_number(value);
  if (unit == "count" || unit == "bytes")
    return finite && (value == std::trunc(value) || std::fabs(value) >= 1000) ? format_grouped(value)
                                                                              : format_number(value);
  return format_number(value);
}

namespace {

/// "<number> <unit>", "-" for NaN (a missing value has no unit).
std::string with_unit(double v, const std::string& number, std::string_view unit) {
  if (std::isnan(v)) return "-";
  return fmt::format("{} {}", number, unit);
}

/// The word of a rate metric: its declaration's (catalogue.hpp MetricDef::word: "iops" -> IOPS,
/// "tpm_c" -> tpmC), "" for a declared metric without one. A name the catalogue does not know is
/// not ours (the reporter's fio and sysbench imports, published figures: "read_iops", "eps"): its
/// word is taken from its parts, the way those tools name their fields.
std::string_view rate_word(std::string_view name) {
  if (const MetricDef* d = find_metric_def(name)) return d->word;
  if (name.find("tpm_c") != std::string_view::npos || name.find("tpmc") != std::string_view::npos) return "tpmC";
  std::string_view word;
  std::size_t from = 0;
  while (from <= name.size() && word.empty()) {
    const std::size_t to = std::min(name.find('_', from), name.size());
    const std::string_view part = name.substr(from, to - from);
    if (part == "iops")
      word = "IOPS";
    else if (part == "tps")
      word = "TPS";
    else if (part == "qps")
      word = "QPS";
    else if (part == "nopm")
      word = "NOPM";
    else if (part == "fps")
      word = "fps";
    from = to + 1;
  }
  return word;
}

/// The latency units format_latency knows, in microseconds.
double microseconds_per(std::string_view unit) {
  return unit == "ns" ? 1e-3 : unit == "us" ? 1.0 : unit == "ms" ? 1e3 : unit == "s" ? 1e6 : 0.0;
}

}  // namespace

std::string format_rate(double per_unit, std::string_view word) {
  const std::string number = std::isfinite(per_unit) && std::round(std::fabs(per_unit)) >= 1000
                                 ? format_grouped(per_unit)
                                 : format_number(per_unit);
  return with_unit(per_unit, number, word);
}

std::string format_iops(double iops) {
  const double a = std::fabs(iops);
  if (!std::isfinite(iops) || std::round(a) < 1e4) return format_rate(iops, "IOPS");
  const char* sign = iops < 0 ? "-" : "";
  if (std::round(a / 1e2) / 10 < 1000) return fmt::format("{}{:.1f}K IOPS", sign, a / 1e3);
  const double m = a / 1e6;
  return fmt::format("{}{:.{}f}M IOPS", sign, m, std::round(m * 100) / 100 < 10 ? 2 : 1);
}

std::string format_throughput(double mb_s) {
  const double a = std::fabs(mb_s);
  std::string number = format_number(mb_s);
  if (std::isfinite(mb_s) && std::round(a * 10) / 10 >= 1000)
    number = format_grouped(mb_s);
  else if (std::isfinite(mb_s) && a >= 10)
    number = fmt::format("{:.1f}", mb_s);
  return with_unit(mb_s, number, "MB/s");
}

std::string format_latency(double value, std::string_view unit) {
  const double per = microseconds_per(unit);
  if (per == 0) return with_unit(value, format_number(value), unit);
  if (!std::isfinite(value) || value == 0) return with_unit(value, format_number(value), unit_label(unit));
  const double us = std::fabs(value) * per;
  const double sign = value < 0 ? -1.0 : 1.0;
  if (us < 999.95) return with_unit(value, format_number(sign * us), "µs");
  // In ms or s the number is at least 0.99995: two decimals below 10 ("1.00 ms", not "1.000 ms").
  const auto number = [sign](double x) { return x < 10 ? fmt::format("{:.2f}", sign * x) : format_number(sign * x); };
  if (us < 999.95e3) return with_unit(value, number(us / 1e3), "ms");
  return with_unit(value, number(us / 1e6), "s");
}

std::string format_quantity(double value, std::string_view unit, std::string_view name) {
  if (unit == "1/s" || unit == "1/min") {
    const std::string_view word = rate_word(name);
    if (word == "IOPS" && unit == "1/s") return format_iops(value);
    if (!word.empty()) return format_rate(value, word);
    if (std::isnan(value)) return "-";
    return format_bare(value, unit) + (unit == "1/s" ? "/s" : "/min");
  }
  if (unit == "MB/s") return format_throughput(value);
  if (unit == "ns" || unit == "us" || unit == "ms") return format_latency(value, unit);
  if (unit == "count") return format_bare(value, unit);
  if (unit == "bytes") return with_unit(value, format_bare(value, unit), "bytes");
  if (unit == "%") return std::isnan(value) ? "-" : format_number(value) + "%";
  if (unit == "ratio") return format_ratio(value);
  if (unit.empty()) return format_number(value);
  return with_unit(value, format_number(value), unit);
}

std::string unit_label(std::string_view unit, std::string_view name) {
  if (unit == "1/s" || unit == "1/min") {
    const std::string_view word = rate_word(name);
    if (!word.empty()) return std::string(word);
    return unit == "1/s" ? "/s" : "/min";
  }
  if (unit == "us") return "µs";
  return std::string(unit);
}

namespace {

/// A value of the runner's device and host telemetry (catalogue Trait kDeviceLine): shown on the
/// summary's device line, not among the headline metrics nor on the interval line.
bool on_device_line(std::string_view name) {
  const MetricDef* d = find_metric_def(name);
  return d != nullptr && d->has(kDeviceLine);
}

}  // namespace

std::string format_interval_line(const std::string& test_name, const Interval& interval, std::size_t max_values) {
  std::string line = fmt::format("[ {:>3}s ] {}", format_number(interval.t_s), test_name);
  std::size_t shown = 0;
  for (const auto& [name, value] : interval.values) {
    if (shown == max_values) break;
    if (on_device_line(name)) continue;
    line += fmt::format("  {} {}", name, format_number(value));
    ++shown;
  }
  return line;
}

namespace {

constexpr std::size_t kHeadlineMetrics = 5;

/// Columns a cell takes on a terminal: its UTF-8 code points ("µs" is two bytes, two columns).
std::size_t display_width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

/// Rows of cells printed as left-aligned columns two spaces apart, trailing spaces trimmed.
class Table {
 public:
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  /// A rule of dashes under the header, as wide as each column.
  void add_rule() { rule_after_.push_back(rows_.size()); }

  std::string render() const {
    std::vector<std::size_t> width;
    for (const auto& row : rows_) {
      if (width.size() < row.size()) width.resize(row.size(), 0);
      for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));
    }
    std::string out;
    for (std::size_t r = 0; r <= rows_.size(); ++r) {
      if (std::find(rule_after_.begin(), rule_after_.end(), r) != rule_after_.end()) {
        std::string rule;
        for (std::size_t c = 0; c < width.size(); ++c) {
          rule += (c ? "  " : "") + std::string(width[c], '-');
        }
        out += rule + "\n";
      }
      if (r == rows_.size()) break;
      std::string line;
      for (std::size_t c = 0; c < rows_[r].size(); ++c) {
        if (c) line += "  ";
        line += rows_[r][c];
        line.append(width[c] - display_width(rows_[r][c]), ' ');
      }
      line.erase(line.find_last_not_of(' ') + 1);
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> rule_after_;
};

std::string text_of(const Json& obj, const char* key) {
  if (!obj.is_object()) return {};
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// "target /mnt/dut  ext4 on nvme0n1  Samsung SSD 980 PRO 1TB  fw 5B2QGXA7" (parts that are null
/// are left out).
std::string target_line(const Json& target) {
  const std::string path = text_of(target, "path");
  if (path.empty()) return {};
  std::string line = "target " + path;
  const std::string fs = text_of(target, "filesystem"), dev = text_of(target, "block_device");
  if (!fs.empty() && !dev.empty()) {
    line += "  " + fs + " on " + dev;
  } else if (!fs.empty() || !dev.empty()) {
    line += "  " + fs + dev;
  }
  if (const std::string model = text_of(target, "model"); !model.empty()) line += "  " + model;
  if (const std::string fw = text_of(target, "firmware"); !fw.empty()) line += "  fw " + fw;
  return line + "\n";
}

/// True when the unit's word is the metric's name ("tps" and TPS, "tpm_c" and tpmC, "iops" and IOPS).
bool unit_names_metric(const Metric& m) {
  const auto key = [](std::string_view s) {
    std::string k;
    for (char c : s)
      if (c != '_') k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return k;
  };
  return key(unit_label(m.unit, m.name)) == key(m.name);
}

/// The metric's name without the unit its value is printed in anyway, which format_quantity
/// scales ("latency_p99_us" read "latency_p99_us 4.91 ms"): "latency_p99", "throughput";
/// "" for a name that is its unit alone ("mb_s").
std::string label_without_unit(const std::string& name) {
  for (const std::string_view suffix : {"mb_s", "us", "ms", "s"}) {
    if (name == suffix) return "";
    if (name.size() > suffix.size() + 1 && name.ends_with(suffix) && name[name.size() - suffix.size() - 1] == '_')
      return name.substr(0, name.size() - suffix.size() - 1);
  }
  return name;
}

std::string metric_cell(const Metric& m) {
  const std::string value = format_quantity(m.value, m.unit, m.name);
  if (unit_names_metric(m)) return value;
  const std::string label = label_without_unit(m.name);
  return label.empty() ? value : label + " " + value;
}

/// A test's name in the table: a repetition's number after it ("oltp #2", "oltp #1 (discarded)").
std::string row_name(const TestRecord& t) {
  if (t.repetition == 0) return t.name;
  return fmt::format("{} #{}{}", t.name, t.repetition, t.discarded ? " (discarded)" : "");
}

double number_at(const Json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : std::nan("");
}

/// Per repeated test, its headline metric over the counted repetitions (RunRecord::repetitions):
/// "oltp  tps  n=5  mean 512.3 TPS  CV 1.2%  95% CI 505.1 TPS .. 519.5 TPS".
std::string repetitions_table(const RunRecord& record) {
  Table table;
  for (const Json& test : record.repetitions) {
    const std::string name = test.value("test", std::string());
    const Json* metrics = test.contains("metrics") && test["metrics"].is_array() ? &test["metrics"] : nullptr;
    if (metrics == nullptr || metrics->empty()) {
      table.add({name, "-", fmt::format("n={}", test.value("n", 0)), "no complete repetition"});
      continue;
    }
    const Json& m = metrics->front();
    const std::string metric = m.value("name", std::string()), unit = m.value("unit", std::string());
    const auto q = [&](const char* key) { return format_quantity(number_at(m, key), unit, metric); };
    const double cv = number_at(m, "cv");
    table.add({name, metric, fmt::format("n={}", m.value("n", 0)), "mean " + q("mean"),
               "CV " + (std::isnan(cv) ? std::string("-") : format_number(100 * cv) + "%"),
               "95% CI " + q("ci95_low") + " .. " + q("ci95_high")});
  }
  return table.render();
}

std::string with_reason(std::string_view name, Status status, const std::string& reason) {
  std::string line = fmt::format("  {}: {}", name, to_string(status));
  if (!reason.empty()) line += ": " + reason;
  return line + "\n";
}

std::optional<double> optional_number(const Json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

/// The sum of the keys `obj` has; nullopt when it has none.
std::optional<double> sum_of(const Json& obj, std::initializer_list<const char*> keys) {
  std::optional<double> out;
  for (const char* k : keys)
    if (const auto v = optional_number(obj, k)) out = out.value_or(0) + *v;
  return out;
}

/// The object at details[key], or null.
const Json& detail_object(const TestRecord& t, const char* key) {
  static const Json kNull;
  const auto it = t.details.find(key);
  return it != t.details.end() && it->is_object() ? *it : kNull;
}

}  // namespace

std::vector<DriveHealthSeen> drive_health_seen(const TestRecord& t) {
  std::vector<DriveHealthSeen> out;
  const Json& health = detail_object(t, "health");
  const auto drives = health.is_object() ? health.find("drives") : health.end();
  if (!health.is_object() || drives == health.end() || !drives->is_array()) return out;
  for (const Json& d : *drives) {
    if (!d.is_object()) continue;
    DriveHealthSeen h;
    h.device = text_of(d, "device");
    h.model = text_of(d, "model");
    h.reason = text_of(d, "reason");
    const Json& temp = d.contains("temperature_c") ? d["temperature_c"] : Json();
    h.temperature_before_c = optional_number(temp, "before");
    h.temperature_after_c = optional_number(temp, "after");
    h.temperature_max_c = optional_number(temp, "max");
    h.warning_temp_c = optional_number(d, "warning_temp_c");
    const Json& delta = d.contains("delta") ? d["delta"] : Json();
    h.tmt_transitions = sum_of(delta, {"tmt1_transitions", "tmt2_transitions"});
    h.tmt_seconds = sum_of(delta, {"tmt1_seconds", "tmt2_seconds"});
    h.media_errors = optional_number(delta, "media_errors");
    h.percentage_used = optional_number(d.contains("percentage_used") ? d["percentage_used"] : Json(), "after");
    h.throttled = d.value("throttled", false);
    out.push_back(std::move(h));
  }
  return out;
}

std::string drive_health_text(const DriveHealthSeen& d) {
  std::string out = "drive " + d.device + (d.model.empty() ? "" : " (" + d.model + ")") + ":";
  if (!d.reason.empty()) return out + " no reading: " + d.reason;
  const auto c = [](const std::optional<double>& v) { return v ? format_number(*v) + " °C" : std::string("-"); };
  std::vector<std::string> parts;
  if (d.temperature_before_c || d.temperature_after_c) {
    std::string t = fmt::format("{} -> {}", c(d.temperature_before_c), c(d.temperature_after_c));
    if (d.temperature_max_c) t += " (max " + c(d.temperature_max_c);
    if (d.warning_temp_c) t += (d.temperature_max_c ? ", WCTEMP " : " (WCTEMP ") + c(d.warning_temp_c);
    if (d.temperature_max_c || d.warning_temp_c) t += ")";
    parts.push_back(std::move(t));
  }
  if (d.tmt_transitions)
    parts.push_back(fmt::format("thermal management +{} transitions{}", format_number(*d.tmt_transitions),
                                d.tmt_seconds ? " in " + format_number(*d.tmt_seconds) + " s" : ""));
  if (d.media_errors) parts.push_back("media errors +" + format_number(*d.media_errors));
  if (d.percentage_used) parts.push_back(format_number(*d.percentage_used) + "% used");
  if (d.throttled) parts.emplace_back("throttled");
  if (parts.empty()) return out + " no figures";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? " " : ", ") + parts[i];
  return out;
}

std::string no_health_reason(const RunRecord& record) {
  const auto it = record.details.find("health");
  if (it == record.details.end() || !it->is_object() || it->value("available", true)) return {};
  return text_of(*it, "reason");
}

std::vector<CheckSeen> checks_seen(const TestRecord& t) {
  std::vector<CheckSeen> out;
  const Json& tel = detail_object(t, "telemetry");
  const auto checks = tel.is_object() ? tel.find("checks") : tel.end();
  if (!tel.is_object() || checks == tel.end() || !checks->is_array()) return out;
  for (const Json& c : *checks)
    if (c.is_object()) out.push_back({text_of(c, "check"), text_of(c, "outcome"), text_of(c, "detail")});
  return out;
}

std::string shared_device_text(const TestRecord& t) {
  const Json& tel = detail_object(t, "telemetry");
  return tel.is_object() && tel.contains("shared") ? text_of(tel["shared"], "text") : std::string();
}

namespace {

/// A check the device lines show: one that warned or failed.
bool shown_check(const CheckSeen& c) { return c.outcome == "warning" || c.outcome == "failed"; }

/// The test's device line: the headline device's iostat -x figures over the measured phase, the
/// demand per unit of the application's work, or why there is no device (details.telemetry,
/// telemetry/test_telemetry.hpp); "" for a test without telemetry.
std::string device_line(const TestRecord& t) {
  const auto tel = t.details.find("telemetry");
  if (tel == t.details.end() || !tel->is_object()) return {};
  if (const std::string why = text_of(*tel, "no_device"); !why.empty()) return "no block device: " + why;
  const auto devices = tel->find("devices");
  if (devices == tel->end() || !devices->is_array() || devices->empty()) return {};
  std::string line = text_of(devices->front(), "name");
  const auto add = [&](std::string_view label, const MetricDef& def, auto&& format) {
    if (const Metric* m = t.find_metric(def.name)) line += fmt::format("  {} {}", label, format(m->value));
  };
  const auto num = [](double v) { return format_number(v); };
  const auto grouped = [](double v) { return format_grouped(v); };
  const auto ms = [](double v) { return format_latency(v, "ms"); };
  add("r/s", catalogue::device_r_s, grouped);
  add("w/s", catalogue::device_w_s, grouped);
  add("rMB/s", catalogue::device_rmb_s, num);
  add("wMB/s", catalogue::device_wmb_s, num);
  add("r_await", catalogue::device_r_await_ms, ms);
  add("w_await", catalogue::device_w_await_ms, ms);
  add("aqu-sz", catalogue::device_aqu_sz, num);
  add("%util", catalogue::device_util_pct, num);
  // The demand per unit of work, the first unit the test has: what a DBA sizes with.
  struct PerUnit {
    const char* per;
    const MetricDef* bytes;
    const MetricDef* ios;  ///< nullptr: none declared for the unit
  };
  for (const PerUnit& u :
       {PerUnit{"New-Order", &catalogue::device_write_bytes_per_new_order, &catalogue::device_write_ios_per_new_order},
        PerUnit{"txn", &catalogue::device_write_bytes_per_txn, &catalogue::device_write_ios_per_txn},
        PerUnit{"frame", &catalogue::device_write_bytes_per_frame, nullptr}}) {
    const Metric* b = t.find_metric(u.bytes->name);
    if (b == nullptr) continue;
    line += fmt::format("  written per {} {} bytes", u.per, format_grouped(b->value));
    if (const Metric* n = u.ios != nullptr ? t.find_metric(u.ios->name) : nullptr)
      line += fmt::format(" in {} I/Os", format_ratio(n->value));
    break;
  }
  const auto ratio = [](double v) { return format_ratio(v); };
  add("reads per I/O", catalogue::device_read_ios_per_io, ratio);
  add("writes per I/O", catalogue::device_write_ios_per_io, ratio);
  return line;
}

}  // namespace

std::string format_summary(const RunRecord& record) {
  std::string out = fmt::format("run {}", record.run_id);
  if (!record.protocol.empty()) out += "  protocol " + record.protocol;
  out += fmt::format("  status {}\n", to_string(record.status));
  out += target_line(record.target);
  out += "\n";

  if (record.tests.empty()) {
    out += "no tests\n";
  } else {
    Table table;
    table.add({"test", "kind", "status", "headline metrics"});
    table.add_rule();
    for (const TestRecord& t : record.tests) {
      std::vector<std::string> row{row_name(t), t.kind, std::string(to_string(t.status))};
      for (const Metric& m : t.metrics) {
        if (row.size() == 3 + kHeadlineMetrics) break;
        if (!on_device_line(m.name)) row.push_back(metric_cell(m));
      }
      table.add(std::move(row));
    }
    out += table.render();
  }
  std::string devices;
  std::vector<std::string> shared_said;  // each device's other filesystems, said once
  for (const TestRecord& t : record.tests) {
    std::string line = device_line(t);
    if (const std::string shared = shared_device_text(t);
        !line.empty() && !shared.empty() &&
        std::find(shared_said.begin(), shared_said.end(), shared) == shared_said.end()) {
      line += "  shared: " + shared;
      shared_said.push_back(shared);
    }
    std::string below;  // the drive health and the checks that warned or failed
    for (const DriveHealthSeen& d : drive_health_seen(t)) below += "    " + drive_health_text(d) + "\n";
    for (const CheckSeen& c : checks_seen(t))
      if (shown_check(c)) below += fmt::format("    check {}: {}: {}\n", c.check, c.outcome, c.detail);
    if (line.empty() && !below.empty()) line = "no device figures";
    if (!line.empty()) devices += "  " + row_name(t) + ": " + line + "\n" + below;
  }
  if (const std::string why = no_health_reason(record); !why.empty() && !devices.empty())
    devices += "  drive health: not read: " + why + "\n";
  if (const auto c = record.details.find("harness_ceiling"); !devices.empty() && c != record.details.end())
    if (const auto per_cpu = optional_number(*c, "iops_per_cpu_s"))
      devices += fmt::format(
          "  harness ceiling: {} I/Os per CPU-second (the null engine; a test within half of it is warned)\n",
          format_grouped(*per_cpu));
  if (!devices.empty())
    out +=
        "\ndevices (iostat -x over the measured phase; %util is no saturation figure for NVMe, RAID, dm or "
        "loop devices):\n" +
        devices;
  if (record.repetitions.is_array() && !record.repetitions.empty())
    out += "\nrepetitions (95% confidence interval of the mean):\n" + repetitions_table(record);

  // A physics check's warning or failure is on its test's device lines: not said twice.
  const auto on_device_lines = [](const TestRecord& t, std::string_view name, const std::string& detail) {
    const std::vector<CheckSeen> seen = checks_seen(t);
    return std::any_of(seen.begin(), seen.end(), [&](const CheckSeen& c) {
      return shown_check(c) && c.detail == detail && (name.empty() || c.check == name);
    });
  };
  std::string failed;
  for (const TestRecord& t : record.tests) {
    for (const Check& c : t.checks) {
      if (c.passed || on_device_lines(t, c.name, c.detail)) continue;
      failed += fmt::format("  {}: {}", t.name, c.name);
      if (!c.detail.empty()) failed += ": " + c.detail;
      failed += "\n";
    }
  }
  if (!failed.empty()) out += "\nfailed checks:\n" + failed;

  std::string warnings;
  for (const std::string& w : record.warnings) warnings += "  run: " + w + "\n";
  for (const TestRecord& t : record.tests) {
    for (const std::string& w : t.warnings)
      if (!on_device_lines(t, {}, w)) warnings += "  " + row_name(t) + ": " + w + "\n";
  }
  if (!warnings.empty()) out += "\nwarnings:\n" + warnings;

  std::string incomplete;
  for (const TestRecord& t : record.tests) {
    if (t.status != Status::complete) incomplete += with_reason(row_name(t), t.status, t.reason);
  }
  if (record.status != Status::complete) incomplete += with_reason("run", record.status, record.reason);
  if (!incomplete.empty()) out += "\nnot complete:\n" + incomplete;
  return out;
}

std::string format_summary(const RunRecord& record, const std::filesystem::path& record_path) {
  return format_summary(record) + "\nrecord: " + record_path.string() + "\n";
}

std::string format_columns(const std::vector<std::vector<std::string>>& rows, bool header_rule) {
  Table t;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    t.add(rows[i]);
    if (i == 0 && header_rule) t.add_rule();
  }
  return t.render();
}

}  // namespace drivelab::results
