// Grouping by test and drive, ranking per metric (ties where the 95% intervals cannot tell drives
// apart), repetitions and comparisons with intervals (report/compare.hpp).
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "drivelab/report/report.hpp"
#include "drivelab/results/catalogue.hpp"

namespace drivelab::report {
namespace {

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

/// The cell's figures over its repetitions' finite values `v`: n, median, min, max, mean and the
/// 95% interval of the mean (inference::summarize_nonnegative; NaN without values).
void set_figures(Cell& c, std::vector<double> v) {
  c.n = v.size();
  if (!v.empty()) {
    c.median = median_of(v);
    c.min = *std::min_element(v.begin(), v.end());
    c.max = *std::max_element(v.begin(), v.end());
    const inference::Summary s = inference::summarize_nonnegative(v);  // figures the report ranks
    c.mean = s.mean;
    c.mean_ci = s.mean_ci;
  } else {
    c.median = c.min = c.max = c.mean = NAN;
  }
  c.values = std::move(v);
}

/// One cell per drive over the repetitions in `values` (drives in first-seen order).
std::vector<Cell> make_cells(const std::vector<std::string>& drives, std::map<std::string, Cell>& cells,
                             std::map<std::string, std::vector<double>>& values) {
  std::vector<Cell> out;
  for (const auto& d : drives) {
    Cell c = cells[d];
    set_figures(c, values[d]);
    out.push_back(std::move(c));
  }
  return out;
}

/// The cells of table `t` (its test, metric and unit set): per drive in first-seen order, the
/// repetitions' values of `metric_of(result)` in `t.unit` (a different unit is a different metric),
/// partial results in `t.left_out` when `left_out` says so. False when no result has the metric.
bool fill_cells(MetricTable& t, const std::vector<Result>& results,
                const std::function<const results::Metric*(const Result&)>& metric_of,
                const std::function<bool(const Result&)>& left_out) {
  std::vector<std::string> drives, apart_drives;
  std::map<std::string, std::vector<double>> values, apart_values;
  std::map<std::string, Cell> cells, apart_cells;
  for (const auto& r : results) {
    if (r.test != t.test) continue;
    const results::Metric* m = metric_of(r);
    if (m == nullptr || m->unit != t.unit) continue;
    const bool apart = left_out(r);
    add_unique(apart ? apart_drives : drives, r.drive);
    Cell& c = (apart ? apart_cells : cells)[r.drive];
    c.drive = r.drive;
    c.origin = r.origin;
    c.hosts = r.hosts;
    c.partial = c.partial || r.partial();
    add_unique(c.sources, r.source);
    if (std::isfinite(m->value)) (apart ? apart_values : values)[r.drive].push_back(m->value);
  }
  if (drives.empty() && apart_drives.empty()) return false;
  t.cells = make_cells(drives, cells, values);
  t.left_out = make_cells(apart_drives, apart_cells, apart_values);
  return true;
}

/// MetricTable::host_cells of `metric` (unit `unit`) over the multi-host results of `test`: one
/// cell per (system, ranked or left out, rank, host name), over the system's repetitions.
std::vector<Cell> host_cells_of(const std::vector<Result>& results, const std::string& test, const std::string& metric,
                                const std::string& unit, const std::function<bool(const Result&)>& left_out) {
  std::vector<Cell> out;
  std::vector<std::vector<double>> values;
  for (const auto& r : results) {
    if (r.test != test || r.per_host.empty()) continue;
    const auto* system = r.find_metric(metric);
    if (system == nullptr || system->unit != unit) continue;
    const bool apart = left_out(r);
    for (const HostResult& h : r.per_host) {
      auto it = std::find_if(out.begin(), out.end(), [&](const Cell& c) {
        return c.drive == r.drive && c.host->left_out == apart && c.host->rank == h.rank && c.host->name == h.name;
      });
      if (it == out.end()) {
        Cell c;
        c.drive = r.drive;
        c.origin = r.origin;
        c.hosts = r.hosts;
        c.host = Cell::HostOf{h.name, h.rank, h.status, apart};
        out.push_back(std::move(c));
        values.emplace_back();
        it = out.end() - 1;
      }
      Cell& c = *it;
      if (c.host->status != h.status &&
          (", " + c.host->status + ", ").find(", " + h.status + ", ") == std::string::npos)
        c.host->status += ", " + h.status;
      c.partial = c.partial || h.status != "complete";
      add_unique(c.sources, r.source);
      const auto* m = h.find_metric(metric);
      if (m != nullptr && m->unit == unit && std::isfinite(m->value))
        values[static_cast<std::size_t>(it - out.begin())].push_back(m->value);
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) set_figures(out[i], std::move(values[i]));
  // By system (first seen), then rank.
  std::vector<std::string> systems;
  for (const auto& c : out) add_unique(systems, c.drive);
  std::stable_sort(out.begin(), out.end(), [&systems](const Cell& a, const Cell& b) {
    const auto sa = std::find(systems.begin(), systems.end(), a.drive) - systems.begin();
    const auto sb = std::find(systems.begin(), systems.end(), b.drive) - systems.begin();
    return sa != sb ? sa < sb : a.host->rank < b.host->rank;
  });
  return out;
}

}  // namespace

std::string other_configuration_key(const std::string& test) { return test + " (other configuration)"; }

namespace {

/// What a published row's configuration is called in a table name: its I/O workload
/// ("64 KiB sequential, 100% reads, 16 outstanding") or the map's description of it.
std::string configuration_label(const Result& r) {
  if (r.published == nullptr) return "configuration not known";
  return r.published->io ? to_string(*r.published->io) : std::string(r.published->workload);
}

/// Published rows alone under a name (no measured test of it) but of more than one configuration
/// (the reviews ran some corners at different depths): each configuration becomes a table of its
/// own, "name (its configuration)", so unlike rows are never ranked together.
void split_published_configurations(Dataset& data) {
  std::map<std::string, std::set<std::string>> labels;  // test -> configurations among its published rows
  for (const Result& r : data.results)
    if (r.origin == Origin::published && !r.other_configuration) labels[r.test].insert(configuration_label(r));
  std::set<std::string> noted;
  for (Result& r : data.results) {
    if (r.origin != Origin::published || r.other_configuration) continue;
    const auto& l = labels[r.test];
    if (l.size() < 2) continue;
    const std::string key = r.test;
    r.test = fmt::format("{} ({})", key, configuration_label(r));
    if (noted.insert(key).second)
      data.notes.push_back(fmt::format(
          "published {} was measured in {} configurations ({}): each is a table of its own, not ranked against the "
          "others (docs/reporter.md, \"Published configurations\")",
          key, l.size(), fmt::join(l, "; ")));
  }
}

/// Published rows meet measured tests only on the same configuration (docs/reporter.md
/// "Published configurations"): each goes to the measured variant of its name that ran its
/// configuration, or to the reference block when the name has measured or imported results but
/// none ran it. Returns, per reference block, what each side ran.
std::map<std::string, std::string> place_published(Dataset& data) {
  std::set<std::string> multi_host_noted;
  for (Result& r : data.results) {
    if (r.origin != Origin::published) continue;
    const std::string key = r.test;
    const TestVariant* same = nullptr;
    const TestVariant* first = nullptr;
    for (const TestVariant& v : data.variants) {
      if (v.key != key) continue;
      if (first == nullptr) first = &v;
      if (same == nullptr && r.published != nullptr && measures(*r.published, v.kind, v.config)) same = &v;
    }
    if (same != nullptr) {
      r.test = same->as;
      // The reviews' N-VM latencies are the mean of the VMs' own figures (their convention); the
      // measured N-host latencies are exact figures of the merged histograms.
      if (r.hosts > 1 && multi_host_noted.insert(r.test).second)
        data.notes.push_back(fmt::format(
            "published {} is a sum over {} VMs, ranked against the measured {}-host results: its rates are sums as "
            "ours are, but its latencies are the review's per-VM figures averaged (the labs' convention), ours the "
            "exact figures of the merged histograms; the like-for-like numbers are our lab-convention columns "
            "(mean_of_hosts_...)",
            r.test, r.hosts, r.hosts));
      continue;
    }
    bool others = first != nullptr;
    for (const Result& q : data.results) others = others || (q.origin != Origin::published && q.test == key);
    if (!others) continue;  // only published numbers under this name: split_published_configurations
    r.other_configuration = true;
    r.test = other_configuration_key(key);
  }
  split_published_configurations(data);
  // One note per name sent apart.
  std::map<std::string, std::string> said;
  for (const Result& r : data.results) {
    if (!r.other_configuration || said.count(r.test) != 0) continue;
    const std::string key = r.test.substr(0, r.test.size() - other_configuration_key("").size());
    std::string measured;
    for (const TestVariant& v : data.variants)
      if (v.key == key) measured += (measured.empty() ? "" : "; ") + describe_workload(v.kind, v.config);
    if (measured.empty()) measured = "an import without its configuration (fio, sysbench)";
    std::string published;
    for (const Result& q : data.results)
      if (q.test == r.test) {
        const std::string w(q.published != nullptr ? q.published->workload : "a configuration the map does not know");
        if (published.find(w) == std::string::npos) published += (published.empty() ? "" : "; ") + w;
      }
    said[r.test] = fmt::format("published: {}; measured: {}", published, measured);
    data.notes.push_back(fmt::format(
        "published {} is not the configuration measured here, so it is not ranked against it ({}): shown apart as "
        "\"{}\" (docs/reporter.md, \"Published configurations\")",
        key, said[r.test], r.test));
  }
  return said;
}

}  // namespace

namespace {

/// Ranks a table's cells (Cell::rank): best median first, then each drive's rank is 1 + the
/// drives beyond doubt better than it (the 95% interval of the ratio, or a strictly better
/// median where that cannot be tested, which makes the rank "not tested"); cells then ordered by
/// rank, best median first within a rank, drives without a value last.
void rank_cells(MetricTable& t) {
  const bool higher = t.better == Better::higher;
  std::stable_sort(t.cells.begin(), t.cells.end(), [higher](const Cell& a, const Cell& b) {
    if (a.n == 0 || b.n == 0) return a.n != 0 && b.n == 0;
    return higher ? a.median > b.median : a.median < b.median;
  });
  int ranked = 0;
  for (const auto& c : t.cells) ranked += c.n > 0 ? 1 : 0;
  for (Cell& c : t.cells) {
    if (c.n == 0) continue;
    int beyond = 0;
    bool tested = true;
    for (const Cell& o : t.cells) {
      if (&o == &c || o.n == 0) continue;
      // o as the baseline, c as the candidate: ratio c / o.
      const MetricComparison m = compare_values(t.metric, t.unit, t.better, o.values, c.values);
      if (m.tested()) {
        const inference::Interval& ci = m.estimate->ratio_ci;
        beyond += (higher ? ci.high < 1.0 : ci.low > 1.0) ? 1 : 0;
      } else if (higher ? o.median > c.median : o.median < c.median) {
        ++beyond;
        tested = false;  // a place lost on medians alone
      }
    }
    c.rank = 1 + beyond;
    c.of = ranked;
    c.rank_tested = tested && c.n >= 2;
  }
  std::stable_sort(t.cells.begin(), t.cells.end(), [](const Cell& a, const Cell& b) {
    if (a.n == 0 || b.n == 0) return a.n != 0 && b.n == 0;
    return a.rank < b.rank;
  });
}

/// Comparisons of test `test` (its ranked tables, already in rep.tables): every other measured
/// drive against the best measured drive of each metric, then Holm's correction across the
/// metrics of each pair of drives.
void compare_with_leaders(Report& rep, const std::string& test) {
  const std::size_t first = rep.comparisons.size();
  for (const MetricTable& t : rep.tables) {
    if (t.test != test || t.lab_convention || !t.other_configuration.empty()) continue;
    const Cell* leader = nullptr;
    for (const auto& c : t.cells)
      if (c.n > 0 && c.origin != Origin::published) {
        leader = &c;
        break;
      }
    if (leader == nullptr) continue;
    for (const auto& c : t.cells) {
      if (&c == leader || c.n == 0 || c.origin == Origin::published) continue;
      Comparison cmp;
      cmp.test = test;
      cmp.metric = t.metric;
      cmp.unit = t.unit;
      cmp.leader = leader->drive;
      cmp.other = c.drive;
      cmp.diff_pct = leader->median != 0 ? (c.median - leader->median) / leader->median * 100.0 : NAN;
      cmp.result = compare_values(t.metric, t.unit, t.better, leader->values, c.values);
      rep.comparisons.push_back(std::move(cmp));
    }
  }
  // Holm across the metrics of each pair (leader, other) of this test.
  std::vector<bool> done(rep.comparisons.size() - first, false);
  for (std::size_t i = first; i < rep.comparisons.size(); ++i) {
    if (done[i - first]) continue;
    std::vector<std::size_t> group;
    for (std::size_t j = i; j < rep.comparisons.size(); ++j)
      if (rep.comparisons[j].leader == rep.comparisons[i].leader &&
          rep.comparisons[j].other == rep.comparisons[i].other) {
        group.push_back(j);
        done[j - first] = true;
      }
    std::vector<MetricComparison> metrics;
    for (const std::size_t j : group) metrics.push_back(std::move(rep.comparisons[j].result));
    apply_holm(metrics);
    for (std::size_t k = 0; k < group.size(); ++k) rep.comparisons[group[k]].result = std::move(metrics[k]);
  }
}

}  // namespace

namespace {

/// The device columns (MetricTable::device) of a test, in order: the iostat -x figures a storage
/// engineer reads first, the demand per unit of the application's work (every per-unit figure of
/// the catalogue's telemetry but the flushes), and %util last, with its caveat.
std::vector<const results::MetricDef*> device_columns() {
  namespace cat = results::catalogue;
  std::vector<const results::MetricDef*> out{&cat::device_r_s,   &cat::device_w_s,        &cat::device_rmb_s,
                                             &cat::device_wmb_s, &cat::device_r_await_ms, &cat::device_w_await_ms,
                                             &cat::device_aqu_sz};
  for (const results::MetricDef* d : results::metric_defs())
    if (d->kind == results::MetricKind::device && d->has(results::kDeviceLine) && d->where == results::kHeadline &&
        d->name.find("_per_") != std::string_view::npos && d->name.find("flush") == std::string_view::npos)
      out.push_back(d);
  out.push_back(&cat::device_util_pct);
  return out;
}

/// The test's device tables (after its ranked and lab-convention tables): never ranked or compared.
void add_device_tables(Report& rep, const Dataset& data, const std::string& test,
                       const std::function<bool(const Result&)>& left_out) {
  for (const results::MetricDef* d : device_columns()) {
    MetricTable t;
    t.test = test;
    t.metric = std::string(d->name);
    t.unit = std::string(d->unit_string());
    t.better = Better::unranked;
    t.device = true;
    const auto metric_of = [&t](const Result& r) {
      return r.origin == Origin::measured ? r.find_metric(t.metric) : nullptr;
    };
    if (!fill_cells(t, data.results, metric_of, left_out)) continue;
    t.host_cells = host_cells_of(data.results, test, t.metric, t.unit, left_out);
    rep.tables.push_back(std::move(t));
  }
  // Then the drive's health over the test (dataset.hpp drive_health()), in its order.
  std::vector<std::pair<std::string, std::string>> health;  // name, unit
  for (const Result& r : data.results)
    if (r.test == test)
      for (const results::Metric& m : r.health)
        if (std::none_of(health.begin(), health.end(), [&m](const auto& h) { return h.first == m.name; }))
          health.emplace_back(m.name, m.unit);
  for (const auto& [name, unit] : health) {
    MetricTable t;
    t.test = test;
    t.metric = name;
    t.unit = unit;
    t.better = Better::unranked;
    t.device = true;
    const auto metric_of = [&name](const Result& r) { return find_metric(r.health, name); };
    if (fill_cells(t, data.results, metric_of, left_out)) rep.tables.push_back(std::move(t));
  }
}

}  // namespace

Report build_report(Dataset data, const ReportOptions& opt) {
  Report rep;
  const std::map<std::string, std::string> reference = place_published(data);
  for (const auto& r : data.results)
    if (!r.other_configuration) add_unique(rep.tests, r.test);
  // Each reference block right after the test of its name.
  for (const auto& r : data.results) {
    if (!r.other_configuration) continue;
    if (std::find(rep.tests.begin(), rep.tests.end(), r.test) != rep.tests.end()) continue;
    const std::string key = r.test.substr(0, r.test.size() - other_configuration_key("").size());
    auto at = std::find_if(rep.tests.begin(), rep.tests.end(),
                           [&key](const std::string& t) { return t == key || t.starts_with(key + " ("); });
    while (at != rep.tests.end() && (*at == key || at->starts_with(key + " ("))) ++at;
    rep.tests.insert(at, r.test);
  }
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
        if (better_for(m.name, m.unit) == Better::unranked) continue;
        add_unique(metrics, m.name);
        unit_of.try_emplace(m.name, m.unit);
      }
    }
    for (const auto& r : data.results) {
      if (r.test != test || r.origin == Origin::measured) continue;
      for (const auto& m : r.metrics) {
        if (better_for(m.name, m.unit) == Better::unranked) continue;
        add_unique(metrics, m.name);
        unit_of.try_emplace(m.name, m.unit);
      }
    }
    for (const std::string& metric : metrics) {
      MetricTable t;
      t.test = test;
      t.metric = metric;
      t.unit = unit_of[metric];
      t.better = better_for(metric, t.unit);
      if (!fill_cells(t, data.results, [&metric](const Result& r) { return r.find_metric(metric); }, left_out))
        continue;
      t.host_cells = host_cells_of(data.results, test, metric, t.unit, left_out);
      if (test.ends_with(other_configuration_key(""))) {
        t.other_configuration = reference.at(test);
        rep.tables.push_back(std::move(t));  // reference only: never ranked, never compared
        continue;
      }
      rank_cells(t);
      rep.tables.push_back(std::move(t));
    }
    compare_with_leaders(rep, test);
    // The labs' conventions of multi-host results: shown after the exact figures, labelled, never
    // ranked (each drive's repetitions still as median, min, max).
    std::vector<std::string> conventions;
    for (const auto& r : data.results)
      if (r.test == test)
        for (const auto& m : r.lab_conventions) {
          add_unique(conventions, m.name);
          unit_of.try_emplace("lab_conventions." + m.name, m.unit);
        }
    for (const std::string& metric : conventions) {
      MetricTable t;
      t.test = test;
      t.metric = metric;
      t.unit = unit_of["lab_conventions." + metric];
      t.better = better_for(metric, t.unit);
      t.lab_convention = true;
      fill_cells(
          t, data.results, [&metric](const Result& r) { return find_metric(r.lab_conventions, metric); }, left_out);
      rep.tables.push_back(std::move(t));
    }
    add_device_tables(rep, data, test, left_out);
  }
  rep.data = std::move(data);
  return rep;
}

}  // namespace drivelab::report
