// Grouping by test and drive, ranking per metric, repetitions and noise.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "drivelab/report/report.hpp"

namespace drivelab::report {
namespace {

constexpr std::size_t kHeadlineMetrics = 5;  // docs/results.md: the first five are the headline

void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

}  // namespace

std::string ordinal(int n) {
  const int mod100 = n % 100;
  const char* suffix = "th";
  if (mod100 < 11 || mod100 > 13) {
    switch (n % 10) {
      case 1: suffix = "st"; break;
      case 2: suffix = "nd"; break;
      case 3: suffix = "rd"; break;
      default: break;
    }
  }
  return fmt::format("{}{}", n, suffix);
}

std::string place(const Cell& c) {
  if (c.rank <= 0) return {};
  return fmt::format("{} of {}", ordinal(c.rank), c.of);
}

namespace {

/// One cell per drive over the repetitions in `values` (drives in first-seen order).
std::vector<Cell> make_cells(const std::vector<std::string>& drives, std::map<std::string, Cell>& cells,
                             std::map<std::string, std::vector<double>>& values) {
  std::vector<Cell> out;
  for (const auto& d : drives) {
    Cell c = cells[d];
    const auto& v = values[d];
    c.n = v.size();
    if (!v.empty()) {
      c.median = median_of(v);
      c.min = *std::min_element(v.begin(), v.end());
      c.max = *std::max_element(v.begin(), v.end());
    } else {
      c.median = c.min = c.max = NAN;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

Report build_report(Dataset data, const ReportOptions& opt) {
  Report rep;
  for (const auto& r : data.results) add_unique(rep.tests, r.test);
  const auto left_out = [&opt](const Result& r) { return r.partial() && !opt.include_partial; };
  // Say once per partial result why it is not in the ranking (a killed test may have no metric
  // at all, so this cannot wait for the tables).
  std::vector<std::string> notes;
  for (const auto& r : data.results) {
    if (r.partial() && r.metrics.empty())  // killed before its end: only its intervals were kept
      notes.push_back(fmt::format(
          "{}: test {} on {} is {} and has no headline metrics (the record ends before the test did), so no "
          "table can show it; its {} interval(s) are in the record",
          r.source, r.test, r.drive, r.status, r.intervals.size()));
    else if (left_out(r))
      notes.push_back(fmt::format(
          "{}: test {} on {} is {}: left out of the ranking, which compares complete tests only (shown apart "
          "as \"{} (partial, not ranked)\"; --include-partial ranks it with them)",
          r.source, r.test, r.drive, r.status, r.drive));
  }
  data.notes.insert(data.notes.end(), notes.begin(), notes.end());

  for (const std::string& test : rep.tests) {
    // Metrics of this test, in order: measured headline first, then imported ones.
    std::vector<std::string> metrics;
    std::map<std::string, std::string> unit_of;
    for (const auto& r : data.results) {
      if (r.test != test || r.origin != Origin::measured) continue;
      for (std::size_t i = 0; i < r.metrics.size() && i < kHeadlineMetrics; ++i) {
        const auto& m = r.metrics[i];
        if (better_for_unit(m.unit) == Better::unranked) continue;
        add_unique(metrics, m.name);
        unit_of.try_emplace(m.name, m.unit);
      }
    }
    for (const auto& r : data.results) {
      if (r.test != test || r.origin == Origin::measured) continue;
      for (const auto& m : r.metrics) {
        if (better_for_unit(m.unit) == Better::unranked) continue;
        add_unique(metrics, m.name);
        unit_of.try_emplace(m.name, m.unit);
      }
    }
    for (const std::string& metric : metrics) {
      MetricTable t;
      t.test = test;
      t.metric = metric;
      t.unit = unit_of[metric];
      t.better = better_for_unit(t.unit);
      // Drives in first-seen order; repetitions collected (partial ones apart unless included).
      std::vector<std::string> drives, apart_drives;
      std::map<std::string, std::vector<double>> values, apart_values;
      std::map<std::string, Cell> cells, apart_cells;
      for (const auto& r : data.results) {
        if (r.test != test) continue;
        const auto* m = r.find_metric(metric);
        if (m == nullptr || m->unit != t.unit) continue;  // a different unit is a different metric
        const bool apart = left_out(r);
        add_unique(apart ? apart_drives : drives, r.drive);
        Cell& c = (apart ? apart_cells : cells)[r.drive];
        c.drive = r.drive;
        c.origin = r.origin;
        c.partial = c.partial || r.partial();
        add_unique(c.sources, r.source);
        if (std::isfinite(m->value)) (apart ? apart_values : values)[r.drive].push_back(m->value);
      }
      if (drives.empty() && apart_drives.empty()) continue;
      t.cells = make_cells(drives, cells, values);
      t.left_out = make_cells(apart_drives, apart_cells, apart_values);
      const bool higher = t.better == Better::higher;
      std::stable_sort(t.cells.begin(), t.cells.end(), [higher](const Cell& a, const Cell& b) {
        if (a.n == 0 || b.n == 0) return a.n != 0 && b.n == 0;
        return higher ? a.median > b.median : a.median < b.median;
      });
      int ranked = 0;
      for (const auto& c : t.cells) ranked += c.n > 0 ? 1 : 0;
      for (std::size_t i = 0; i < t.cells.size(); ++i) {
        Cell& c = t.cells[i];
        if (c.n == 0) continue;
        c.of = ranked;
        c.rank = (i > 0 && t.cells[i - 1].n > 0 && t.cells[i - 1].median == c.median) ? t.cells[i - 1].rank
                                                                                         : static_cast<int>(i) + 1;
      }
      // Comparisons: every other measured drive against the best measured drive.
      const Cell* leader = nullptr;
      for (const auto& c : t.cells)
        if (c.n > 0 && c.origin != Origin::published) {
          leader = &c;
          break;
        }
      if (leader != nullptr) {
        for (const auto& c : t.cells) {
          if (&c == leader || c.n == 0 || c.origin == Origin::published) continue;
          Comparison cmp;
          cmp.test = test;
          cmp.metric = metric;
          cmp.unit = t.unit;
          cmp.leader = leader->drive;
          cmp.other = c.drive;
          cmp.diff_pct = leader->median != 0 ? (c.median - leader->median) / leader->median * 100.0 : NAN;
          cmp.noise_known = leader->n >= 2 && c.n >= 2;
          cmp.within_noise = cmp.noise_known && c.min <= leader->max && leader->min <= c.max;
          rep.comparisons.push_back(std::move(cmp));
        }
      }
      rep.tables.push_back(std::move(t));
    }
  }
  rep.data = std::move(data);
  return rep;
}

}  // namespace drivelab::report
