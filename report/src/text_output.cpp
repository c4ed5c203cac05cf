// CSV and Markdown writers (sinks only format a finished Report).
#include <cmath>

#include <fmt/format.h>

#include "drivelab/core/escape.hpp"
#include "drivelab/report/report.hpp"
#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/summary.hpp"
#include "table_view.hpp"

namespace drivelab::report {
namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string csv_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string(); }

/// A Markdown table cell: a '|' would end the cell, a newline the row.
constexpr Escape kMarkdownCellEscapes[] = {{'|', "\\|"}, {'\n', " "}};

std::string md_escape(const std::string& s) { return escaped(s, kMarkdownCellEscapes); }

}  // namespace

std::vector<TestView> test_views(const Report& r) {
  std::vector<TestView> views;
  for (const std::string& test : r.tests) {
    TestView v;
    v.test = test;
    for (const auto& t : r.tables)
      if (t.test == test) (t.device ? v.device_tables : v.tables).push_back(&t);
    if (v.tables.empty()) continue;
    // Row order: the first table's ranking, then drives only in later tables.
    for (const auto* t : v.tables)
      for (const auto& c : t->cells)
        if (std::find(v.drives.begin(), v.drives.end(), c.drive) == v.drives.end()) v.drives.push_back(c.drive);
    for (const auto* t : v.tables)
      for (const auto& c : t->left_out)
        if (std::find(v.left_out.begin(), v.left_out.end(), c.drive) == v.left_out.end()) v.left_out.push_back(c.drive);
    v.other_configuration = v.tables.front()->other_configuration;
    for (const auto* t : v.tables) {
      v.lab_conventions = v.lab_conventions || t->lab_convention;
      for (const auto& c : t->host_cells) {
        bool seen = false;
        for (std::size_t i = 0; i < v.host_rows.size() && !seen; ++i)
          seen = v.host_row_systems[i] == c.drive && v.host_rows[i].left_out == c.host->left_out &&
                 v.host_rows[i].rank == c.host->rank && v.host_rows[i].name == c.host->name;
        if (seen) continue;
        v.host_rows.push_back(*c.host);
        v.host_row_systems.push_back(c.drive);
      }
    }
    views.push_back(std::move(v));
  }
  return views;
}

std::string other_configuration_text(const TestView& v) {
  return fmt::format(
      "Reference only, other configuration: these published numbers were measured on another "
      "configuration than the measured test of the same name, so they are not ranked against it ({}).",
      v.other_configuration);
}

std::vector<std::size_t> host_rows_of(const TestView& v, const std::string& system, bool left_out) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < v.host_rows.size(); ++i)
    if (v.host_row_systems[i] == system && v.host_rows[i].left_out == left_out) out.push_back(i);
  return out;
}

void for_each_row(const TestView& v, const std::function<void(const TableRow&)>& emit) {
  for_each_row(v, v.tables, emit);
}

void for_each_row(const TestView& v, const std::vector<const MetricTable*>& tables,
                  const std::function<void(const TableRow&)>& emit) {
  const auto any = [](const TableRow& row) {
    return std::any_of(row.cells.begin(), row.cells.end(), [](const Cell* c) { return c != nullptr; });
  };
  TableRow row;
  for (const bool left_out : {false, true}) {
    for (const std::string& d : left_out ? v.left_out : v.drives) {
      row.kind = left_out ? TableRow::Kind::left_out : TableRow::Kind::drive;
      row.drive = &d;
      row.first = first_cell(v, d, left_out);
      row.cells.clear();
      for (const auto* t : tables) row.cells.push_back(find_cell(*t, d, left_out));
      if (!any(row)) continue;
      emit(row);
      for (const std::size_t i : host_rows_of(v, d, left_out)) {
        row.kind = TableRow::Kind::host;
        row.drive = nullptr;
        row.first = nullptr;
        row.host = i;
        row.cells.clear();
        for (const auto* t : tables) row.cells.push_back(find_host_cell(*t, v, i));
        if (any(row)) emit(row);
      }
    }
  }
}

const char* const kDeviceTableText =
    "What the drive did: the block device under each target over the measured phase (iostat -x's figures from "
    "/sys/block/<dev>/stat; MB = 10^6 bytes), and its demand per unit of the application's work. Not ranked: a "
    "figure of the device, not of merit. %util is the share of time with a request in flight: no saturation figure "
    "for NVMe, RAID, dm or loop devices. Short runs under-count deferred writes (docs/telemetry.md).";

std::vector<CheckLine> check_lines(const Report& r, const std::string& test) {
  std::vector<CheckLine> out;
  for (const Result& res : r.data.results)
    if (res.test == test)
      for (const results::CheckSeen& c : res.checks) out.push_back({&res, &c});
  return out;
}

std::string check_line_text(const CheckLine& c) {
  return fmt::format("{} ({}): {} {}: {}", c.result->drive, c.result->source, c.check->check, c.check->outcome,
                     c.check->detail);
}

double check_outcome_value(const results::CheckSeen& c) { return c.outcome == "failed" ? 2 : 1; }

const char* const kChecksText =
    "The checks that a number is physical that warned or failed (docs/telemetry.md \"Is the number physical?\": "
    "above the drive's link, O_DIRECT work the device did not see, tpmC above 12.86 per warehouse, within half of "
    "the harness's own ceiling). A warning does not change a place; read the figure with it.";

const Cell* first_cell(const TestView& v, const std::string& drive, bool left_out) {
  for (const auto* t : v.tables)
    if (const Cell* c = find_cell(*t, drive, left_out); c != nullptr) return c;
  return nullptr;
}

const Cell* find_host_cell(const MetricTable& t, const TestView& v, std::size_t i) {
  for (const auto& c : t.host_cells)
    if (c.drive == v.host_row_systems[i] && c.host->left_out == v.host_rows[i].left_out &&
        c.host->rank == v.host_rows[i].rank && c.host->name == v.host_rows[i].name)
      return &c;
  return nullptr;
}

std::string host_row_label(const Cell::HostOf& h) { return fmt::format("↳ host {} (rank {})", h.name, h.rank); }

std::string host_row_source(const Cell::HostOf& h) { return fmt::format("host, {}", h.status); }

const char* const kLabConventionsText =
    "Columns marked \"lab convention\" are the review labs' way of adding hosts up (the sum of the per-host rates, "
    "the mean of the per-host averages and p99s): shown beside the exact figures, which are the merged histograms "
    "and counters, never ranked and never the headline.";

const Cell* find_cell(const MetricTable& t, const std::string& drive, bool left_out) {
  for (const auto& c : left_out ? t.left_out : t.cells)
    if (c.drive == drive) return &c;
  return nullptr;
}

std::string cell_text(const MetricTable& t, const Cell& c) {
  if (c.n == 0) return "-";
  // A device column is in the unit its header names, as iostat -x's columns are (header_text).
  const auto value = [&t](double v) {
    return t.device ? results::format_bare(v, t.unit) : results::format_quantity(v, t.unit, t.metric);
  };
  std::string s = value(c.median);
  if (c.rank > 0) s += fmt::format(" ({}{})", place(c), c.of > 1 && !c.rank_tested ? ", not tested" : "");
  if (c.n >= 2) {
    s += fmt::format(" [min {}, max {}, n={}", value(c.min), value(c.max), c.n);
    if (c.mean_ci.valid())
      s += fmt::format("; mean {}, 95% CI {} to {}", value(c.mean), value(c.mean_ci.low), value(c.mean_ci.high));
    s += "]";
  }
  return s;
}

std::string comparison_change(const Comparison& c) {
  const MetricComparison& m = c.result;
  if (!m.tested()) return "-";
  const inference::Interval ci = m.change_ci_pct();
  return fmt::format("{:+.1f}% [{:+.1f}%, {:+.1f}%]", m.change_pct(), ci.low, ci.high);
}

std::string comparison_verdict(const Comparison& c) {
  const MetricComparison& m = c.result;
  if (m.tested()) return verdict_word(m);
  if (m.baseline.size() < 2 || m.candidate.size() < 2) return "not tested (needs 2+ repetitions on both)";
  return "not tested (" + m.not_tested + ")";
}

std::string comparison_detectable(const Comparison& c) {
  const MetricComparison& m = c.result;
  return m.tested() && std::isfinite(m.estimate->detectable_change)
             ? fmt::format("±{:.1f}%", m.estimate->detectable_change * 100)
             : std::string("-");
}

const char* const kComparisonsText =
    "Each measured drive against the best measured drive of the same test and metric: the difference of the "
    "medians, and the change of the geometric means with its 95% interval (Welch's t on log values); the verdict "
    "with Holm's correction across the test's metrics of the same two drives; the smallest change these "
    "repetitions could detect (80% power). With fewer than 2 repetitions on either side nothing is tested. Ranks: "
    "drives the 95% intervals cannot tell apart share a rank; \"not tested\" marks a rank set by medians alone.";

std::string header_text(const MetricTable& t) {
  if (t.device && t.metric == results::catalogue::device_util_pct.name)
    return fmt::format("{} (%; no saturation figure for NVMe, RAID, dm or loop devices)", t.metric);
  if (t.device) {
    // The cells' unit (cell_text); a plain number's what it counts, as the catalogue says (aqu-sz: requests).
    std::string_view unit = t.unit;
    if (const results::MetricDef* d = results::find_metric_def(t.metric); unit.empty() && d != nullptr) unit = d->word;
    return unit.empty() ? t.metric : fmt::format("{} ({})", t.metric, unit);
  }
  if (t.lab_convention) return fmt::format("{} (lab convention: not an exact figure, not ranked)", t.metric);
  return fmt::format("{} ({} is better)", t.metric, to_string(t.better));
}

std::string to_csv(const Report& r) {
  std::string out =
      "test,metric,unit,better,drive,origin,rank,of,place,median,min,max,n,status,sources,row,hosts,host,host_rank,"
      "mean,mean_ci_low,mean_ci_high,ranked_by\n";
  const auto row = [&out](const MetricTable& t, const Cell& c, std::string_view status) {
    std::string sources;
    for (const auto& s : c.sources) sources += (sources.empty() ? "" : ";") + s;
    const std::string_view kind = c.host ? "host" : c.hosts > 1 ? "system" : "drive";
    out +=
        fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},", csv_field(t.test), csv_field(t.metric),
                    csv_field(t.unit), to_string(t.better), csv_field(c.drive), to_string(c.origin),
                    c.rank > 0 ? std::to_string(c.rank) : "", c.rank > 0 ? std::to_string(c.of) : "",
                    csv_field(place(c)), csv_number(c.median), csv_number(c.min), csv_number(c.max), c.n,
                    csv_field(std::string(status)), csv_field(sources), kind, c.hosts,
                    c.host ? csv_field(c.host->name) : "", c.host ? std::to_string(c.host->rank) : "");
    out += fmt::format("{},{},{},{}\n", csv_number(c.mean), csv_number(c.mean_ci.low), csv_number(c.mean_ci.high),
                       c.rank == 0     ? ""
                       : c.rank_tested ? "intervals"
                                       : "medians");
  };
  // The checks that warned or failed: one row per result and check, never ranked (median 1: a
  // warning, 2: a failure; status `check`).
  const auto check_rows = [&](const std::string& test) {
    for (const CheckLine& c : check_lines(r, test)) {
      const double v = check_outcome_value(*c.check);
      out += fmt::format("{},check_{},outcome,unranked,{},{},,,,{},{},{},1,check,{},{},{},,,,,,\n", csv_field(test),
                         csv_field(c.check->check), csv_field(c.result->drive), to_string(c.result->origin),
                         csv_number(v), csv_number(v), csv_number(v), csv_field(c.result->source),
                         c.result->hosts > 1 ? "system" : "drive", c.result->hosts);
    }
  };
  std::string last_test;
  for (const auto& t : r.tables) {
    if (t.test != last_test && !last_test.empty()) check_rows(last_test);
    last_test = t.test;
    const auto hosts_of = [&](const Cell& system, bool left_out) {
      for (const auto& c : t.host_cells)
        if (c.drive == system.drive && c.host->left_out == left_out) row(t, c, c.host->status);
    };
    for (const auto& c : t.cells) {
      row(t, c,
          t.device                         ? "device"
          : t.lab_convention               ? "lab_convention"
          : !t.other_configuration.empty() ? "other_configuration"
          : c.partial                      ? "partial"
                                           : "complete");
      hosts_of(c, false);
    }
    for (const auto& c : t.left_out) {
      row(t, c, "partial_not_ranked");
      hosts_of(c, true);
    }
  }
  if (!last_test.empty()) check_rows(last_test);
  return out;
}

namespace {

/// One Markdown table of test view `v`: a row per drive (and host) with a cell in `tables`.
void markdown_table(std::string& out, const TestView& v, const std::vector<const MetricTable*>& tables) {
  out += "| Drive | Source |";
  for (const auto* t : tables) out += fmt::format(" {} |", md_escape(header_text(*t)));
  out += "\n|---|---|";
  for (std::size_t i = 0; i < tables.size(); ++i) out += "---|";
  out += '\n';
  for_each_row(v, tables, [&out, &v, &tables](const TableRow& row) {
    const Cell* any = row.first;
    const std::string_view origin = any != nullptr ? to_string(any->origin) : "";
    switch (row.kind) {
      case TableRow::Kind::host:
        out += fmt::format("| {} | {} |", md_escape(host_row_label(v.host_rows[row.host])),
                           md_escape(host_row_source(v.host_rows[row.host])));
        break;
      case TableRow::Kind::drive:
        out += fmt::format("| {}{} | {} |", md_escape(*row.drive), any != nullptr && any->partial ? " (partial)" : "",
                           origin);
        break;
      case TableRow::Kind::left_out:
        out += fmt::format("| {}{} | {} |", md_escape(*row.drive), kLeftOutSuffix, origin);
        break;
    }
    for (std::size_t k = 0; k < tables.size(); ++k) {
      const Cell* c = row.cells[k];
      out += fmt::format(" {} |", c != nullptr ? md_escape(cell_text(*tables[k], *c)) : "");
    }
    out += '\n';
  });
}

}  // namespace

std::string to_markdown(const Report& r) {
  std::string out = "# drivelab report\n\n";
  out +=
      "Drives ranked per metric in its direction (rates: higher is better; times: lower is better). "
      "Each cell: median over repetitions, place among the drives with a value (drives the 95% "
      "intervals cannot tell apart share a place), and min/max and the mean with its 95% interval when there are "
      "repetitions. Model and rules: docs/reporter.md.\n";
  for (const auto& v : test_views(r)) {
    out += fmt::format("\n## {}\n\n", md_escape(v.test));
    if (!v.other_configuration.empty()) out += md_escape(other_configuration_text(v)) + "\n\n";
    if (v.lab_conventions) out += md_escape(kLabConventionsText) + "\n\n";
    markdown_table(out, v, v.tables);
    if (!v.device_tables.empty()) {
      out += fmt::format("\n### {}: device\n\n{}\n\n", md_escape(v.test), md_escape(kDeviceTableText));
      markdown_table(out, v, v.device_tables);
    }
    if (const std::vector<CheckLine> checks = check_lines(r, v.test); !checks.empty()) {
      out += fmt::format("\n### {}: checks\n\n{}\n\n", md_escape(v.test), md_escape(kChecksText));
      for (const CheckLine& c : checks) out += "- " + md_escape(check_line_text(c)) + "\n";
    }
  }
  if (!r.comparisons.empty()) {
    out += fmt::format(
        "\n## Comparisons\n\n{}\n\n| Test | Metric | Drive | Against | Difference of medians | Change, 95% interval "
        "| Verdict | Detectable |\n|---|---|---|---|---|---|---|---|\n",
        md_escape(kComparisonsText));
    for (const auto& c : r.comparisons)
      out += fmt::format("| {} | {} | {} | {} | {}% | {} | {} | {} |\n", md_escape(c.test), md_escape(c.metric),
                         md_escape(c.other), md_escape(c.leader), results::format_number(c.diff_pct),
                         comparison_change(c), md_escape(comparison_verdict(c)), comparison_detectable(c));
  }
  if (!r.data.notes.empty()) {
    out += "\n## Notes: partial runs, warnings, failed checks and configurations\n\n";
    for (const auto& n : r.data.notes) out += fmt::format("- {}\n", md_escape(n));
  }
  return out;
}

}  // namespace drivelab::report
