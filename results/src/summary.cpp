// Text for people: the interval line and the end-of-run table. Pinned by golden-style unit tests
// (tests/unit/results/summary_test.cpp): change both together.
#include "drivelab/results/summary.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

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

std::string format_interval_line(const std::string& test_name, const Interval& interval,
                                 std::size_t max_values) {
  std::string line = fmt::format("[ {:>3}s ] {}", format_number(interval.t_s), test_name);
  const std::size_t n = std::min(max_values, interval.values.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& [name, value] = interval.values[i];
    line += fmt::format("  {} {}", name, format_number(value));
  }
  return line;
}

namespace {

constexpr std::size_t kHeadlineMetrics = 5;

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
      for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
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
        line.append(width[c] - rows_[r][c].size(), ' ');
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

std::string metric_cell(const Metric& m) {
  std::string cell = m.name + " " + format_number(m.value);
  if (!m.unit.empty()) cell += " " + m.unit;
  return cell;
}

std::string with_reason(std::string_view name, Status status, const std::string& reason) {
  std::string line = fmt::format("  {}: {}", name, to_string(status));
  if (!reason.empty()) line += ": " + reason;
  return line + "\n";
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
      std::vector<std::string> row{t.name, t.kind, std::string(to_string(t.status))};
      const std::size_t n = std::min(kHeadlineMetrics, t.metrics.size());
      for (std::size_t i = 0; i < n; ++i) row.push_back(metric_cell(t.metrics[i]));
      table.add(std::move(row));
    }
    out += table.render();
  }

  std::string failed;
  for (const TestRecord& t : record.tests) {
    for (const Check& c : t.checks) {
      if (c.passed) continue;
      failed += fmt::format("  {}: {}", t.name, c.name);
      if (!c.detail.empty()) failed += ": " + c.detail;
      failed += "\n";
    }
  }
  if (!failed.empty()) out += "\nfailed checks:\n" + failed;

  std::string warnings;
  for (const std::string& w : record.warnings) warnings += "  run: " + w + "\n";
  for (const TestRecord& t : record.tests) {
    for (const std::string& w : t.warnings) warnings += "  " + t.name + ": " + w + "\n";
  }
  if (!warnings.empty()) out += "\nwarnings:\n" + warnings;

  std::string incomplete;
  for (const TestRecord& t : record.tests) {
    if (t.status != Status::complete) incomplete += with_reason(t.name, t.status, t.reason);
  }
  if (record.status != Status::complete) incomplete += with_reason("run", record.status, record.reason);
  if (!incomplete.empty()) out += "\nnot complete:\n" + incomplete;
  return out;
}

std::string format_summary(const RunRecord& record, const std::filesystem::path& record_path) {
  return format_summary(record) + "\nrecord: " + record_path.string() + "\n";
}

}  // namespace drivelab::results
