// The intervals of a merge of hosts' records, by time (merge_time.hpp, docs/results.md).
#include "merge_time.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/record_stats.hpp"

namespace drivelab::results::detail {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

bool rate_unit(Unit u) { return u == Unit::per_s || u == Unit::per_min || u == Unit::mb_s; }

/// One value of merged interval `iv` from the contributing intervals (every one has it): a figure
/// of the interval histogram recomputed from the merged one; a count summed; a rate summed, or
/// with `per_window` (by time) the operations of every contributor (value x duration) over the
/// window's `window_s`; any other value none.
std::optional<double> merged_value(const std::string& name, const std::vector<const Interval*>& from,
                                   const Interval& iv, double window_s, bool per_window) {
  const MetricDef* def = find_metric_def(name);
  if (def == nullptr) return std::nullopt;
  const auto value_of = [&](const Interval& i) {
    const auto it = std::find_if(i.values.begin(), i.values.end(), [&](const auto& p) { return p.first == name; });
    return it->second;
  };
  if (def->of_interval_latency) {
    const auto h = iv.histograms.find("latency");
    if (h == iv.histograms.end()) return std::nullopt;
    return histogram_figure(h->second, def->figure, def->unit_string());
  }
  if (!def->has(kSummedOverHosts)) return std::nullopt;
  double sum = 0;
  if (rate_unit(def->unit) && per_window) {
    for (const Interval* i : from) sum += value_of(*i) * i->duration_s;
    return window_s > 0 ? std::optional<double>(sum / window_s) : std::nullopt;
  }
  for (const Interval* i : from) sum += value_of(*i);
  return sum;
}

/// The merged interval over `from` (every contributor's intervals in one window), with the
/// window's t_s and duration_s (merged_value for `per_window`).
Interval merge_window(double t_s, double duration_s, const std::vector<const Interval*>& from,
                      const Interval& reference, bool per_window) {
  Interval iv;
  iv.t_s = t_s;
  iv.duration_s = duration_s;
  for (const auto& [name, h] : reference.histograms) {
    if (!std::all_of(from.begin(), from.end(), [&](const Interval* i) { return i->histograms.contains(name); }))
      continue;
    LatencyHistogram merged;
    for (const Interval* i : from) merged.merge(i->histograms.at(name));
    iv.histograms.emplace(name, std::move(merged));
  }
  for (const auto& [name, v] : reference.values) {
    const bool everywhere = std::all_of(from.begin(), from.end(), [&](const Interval* i) {
      return std::any_of(i->values.begin(), i->values.end(), [&](const auto& p) { return p.first == name; });
    });
    if (!everywhere) continue;
    if (const auto x = merged_value(name, from, iv, duration_s, per_window)) iv.values.emplace_back(name, *x);
  }
  return iv;
}

/// By index, only the k every host has (render's pipeline phases: no interval clock).
MergedIntervals by_index(const std::vector<const TestRecord*>& tests) {
  std::size_t n = tests.front()->intervals.size();
  for (const TestRecord* t : tests) n = std::min(n, t->intervals.size());
  MergedIntervals out;
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<const Interval*> from;
    for (const TestRecord* t : tests) from.push_back(&t->intervals[k]);
    const Interval& base = tests.front()->intervals[k];
    out.intervals.push_back(merge_window(base.t_s, base.duration_s, from, base, false));
  }
  out.details = Json{{"merged_by", "index"}};
  return out;
}

/// An interval of a rank on the common clock: [a, b] seconds from the earliest rank's start.
struct Span {
  double a = 0;
  double b = 0;
  const Interval* interval = nullptr;
  bool stalled = false;
  double lost_s = 0;  ///< how much longer than the other ranks' intervals then (stalled only)
  double peer_s = 0;  ///< the interval it is compared with (the setting, or the other ranks' then)
  double mid() const { return (a + b) / 2; }
};

/// MergedIntervals::window_rates: when some rank measured outside the common window [a, b] by more
/// than kStallFraction of the interval (`nominal`: more than the interval clock's own lateness),
/// per rate value every rank's intervals carry, each rank's operations inside [a, b] over b - a.
std::map<std::string, std::vector<double>> rates_over_window(const std::vector<std::vector<Span>>& spans, double a,
                                                             double b, double nominal) {
  std::map<std::string, std::vector<double>> out;
  if (std::none_of(spans.begin(), spans.end(), [&](const std::vector<Span>& s) {
        return std::max(0.0, a - s.front().a) + std::max(0.0, s.back().b - b) > kStallFraction * nominal;
      }))
    return out;
  for (const auto& [name, ignored] : spans.front().front().interval->values) {
    const MetricDef* def = find_metric_def(name);
    if (def == nullptr || !def->has(kSummedOverHosts) || !rate_unit(def->unit)) continue;
    std::vector<double> per_rank;
    bool everywhere = true;
    for (const std::vector<Span>& rank : spans) {
      double ops = 0;  // value x seconds: operations in the value's own unit of time
      bool carried = false;
      for (const Span& x : rank) {
        const auto& v = x.interval->values;
        const auto it = std::find_if(v.begin(), v.end(), [&](const auto& p) { return p.first == name; });
        if (it == v.end()) continue;
        carried = true;
        const double inside = std::min(b, x.b) - std::max(a, x.a);
        if (inside > 0 && x.b > x.a) ops += it->second * x.interval->duration_s * inside / (x.b - x.a);
      }
      everywhere = everywhere && carried;
      per_rank.push_back(ops / (b - a));
    }
    if (everywhere) out.emplace(name, std::move(per_rank));
  }
  return out;
}

/// Marks the stalled intervals of `spans` (each rank's, by their end): an interval longer than the
/// interval setting (`nominal`) and than the other ranks' intervals over the same time (for each
/// other rank its longest there; the shortest of those), by more than kStallFraction of the longer
/// of the two. Both, so that neither a rank that kept measuring after another stopped nor the
/// whole job paused together is a stall.
void mark_stalls(std::vector<std::vector<Span>>& spans, double nominal) {
  const std::size_t n = spans.size();
  // The intervals of `r` that overlap [a, b] (each rank's in order: a binary search, then the few after).
  const auto for_overlapping = [&](std::size_t r, double a, double b, auto&& f) {
    const auto first =
        std::upper_bound(spans[r].begin(), spans[r].end(), a, [](double v, const Span& y) { return v < y.b; });
    for (auto it = first; it != spans[r].end() && it->a < b; ++it)
      if (std::min(b, it->b) > std::max(a, it->a)) f(*it);
  };
  for (std::size_t i = 0; i < n; ++i) {
    for (Span& x : spans[i]) {
      double peer = 0;
      bool any = false;
      for (std::size_t r = 0; r < n; ++r) {
        if (r == i) continue;
        double longest = 0;
        bool overlaps = false;
        for_overlapping(r, x.a, x.b, [&](const Span& y) {
          longest = std::max(longest, y.b - y.a);
          overlaps = true;
        });
        if (!overlaps) continue;
        peer = any ? std::min(peer, longest) : longest;
        any = true;
      }
      x.peer_s = std::max(any ? peer : 0.0, nominal);
      const double d = x.b - x.a;
      if (d - x.peer_s > kStallFraction * x.peer_s) {
        x.stalled = true;
        x.lost_s = d - x.peer_s;
      }
    }
  }
}

}  // namespace

MergedIntervals merge_test_intervals(const std::vector<const Host*>& hosts, const std::vector<const TestRecord*>& tests,
                                     double interval_s, bool time_limited) {
  std::vector<double> durations;
  for (const TestRecord* t : tests)
    for (const Interval& i : t->intervals)
      if (std::isfinite(i.duration_s) && i.duration_s > 0) durations.push_back(i.duration_s);
  const double typical = median(durations);
  const bool clocked = interval_s == 0 || (typical >= 0.75 * interval_s && typical <= 1.25 * interval_s);
  if (durations.empty() || interval_s < 0 || !clocked) return by_index(tests);
  const double nominal = interval_s > 0 ? interval_s : typical;

  // The common clock: rank 0's CLOCK_REALTIME. A rank's measured phase starts at the release of
  // its `run` barrier, less its clock offset; without that barrier on every rank (runs started
  // separately) the phases are aligned at their starts.
  const std::size_t n = tests.size();
  std::vector<std::int64_t> start_ns(n, 0);
  const bool timed = std::all_of(tests.begin(), tests.end(), [](const TestRecord* t) {
    const auto it = t->barriers.find("run");
    return it != t->barriers.end() && it->is_number_integer();
  });
  if (timed)
    for (std::size_t i = 0; i < n; ++i)
      start_ns[i] = tests[i]->barriers.at("run").get<std::int64_t>() - hosts[i]->clock_offset_ns;
  const std::int64_t origin = *std::min_element(start_ns.begin(), start_ns.end());
  std::vector<std::vector<Span>> spans(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double s = static_cast<double>(start_ns[i] - origin) / 1e9;
    for (const Interval& iv : tests[i]->intervals) spans[i].push_back({s + iv.t_s - iv.duration_s, s + iv.t_s, &iv});
    // An interval clock's intervals follow each other: by their end (stable: the record's order).
    std::stable_sort(spans[i].begin(), spans[i].end(), [](const Span& x, const Span& y) { return x.b < y.b; });
  }
  mark_stalls(spans, nominal);

  MergedIntervals out;
  // The common window: where every rank measured.
  double common_a = -1e300;
  double common_b = 1e300;
  for (std::size_t i = 0; i < n; ++i) {
    if (spans[i].empty()) continue;
    common_a = std::max(common_a, spans[i].front().a);
    common_b = std::min(common_b, spans[i].back().b);
  }
  const bool any_empty = std::any_of(spans.begin(), spans.end(), [](const auto& s) { return s.empty(); });
  if (time_limited && !any_empty && common_b > common_a && n > 1)
    out.window_rates = rates_over_window(spans, common_a, common_b, nominal);
  Json stalls = Json::array();
  for (std::size_t i = 0; i < n; ++i) {
    const auto worst = std::max_element(spans[i].begin(), spans[i].end(),
                                        [](const Span& x, const Span& y) { return x.lost_s < y.lost_s; });
    if (worst == spans[i].end() || !worst->stalled) continue;
    double stalled_s = 0;
    for (const Span& x : spans[i]) stalled_s += x.lost_s;
    const double outside =
        any_empty ? 0.0 : std::max(0.0, common_a - spans[i].front().a) + std::max(0.0, spans[i].back().b - common_b);
    stalls.push_back(Json{{"rank", hosts[i]->rank}, {"stalled_s", stalled_s}, {"outside_common_window_s", outside}});
    const std::string what = fmt::format(
        "{} stalled {:.2f} s in the measured phase (its interval ending at t={:.2f} s lasted {:.2f} s where the "
        "other hosts' lasted {:.2f} s: the process or its host did not run) and measured {:.2f} s outside the "
        "window every host measured in; the merged intervals leave out its stalled intervals, the windows it "
        "did not measure in and its time outside the common window; the summed headline rates are {}",
        hosts[i]->label(), stalled_s, worst->interval->t_s, worst->b - worst->a, worst->peer_s, outside,
        out.window_rates.empty() ? "each host's own over its own measured phase" : "over the common window");
    out.warnings.push_back(what);
    if (stalled_s > kStallToleranceS)
      out.beyond_tolerance.push_back(
          fmt::format("{} stalled {:.2f} s in the measured phase, beyond the {:g} s "
                      "tolerance: the hosts did not run the workload together",
                      hosts[i]->label(), stalled_s, kStallToleranceS));
  }

  // The windows: the intervals of the lowest rank without a stall (the lowest rank when each has one).
  std::size_t ref = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::none_of(spans[i].begin(), spans[i].end(), [](const Span& x) { return x.stalled; })) {
      ref = i;
      break;
    }
  }
  const std::vector<Span>& windows = spans[ref];
  // placed[k][i]: rank i's intervals whose midpoint is in window k (a stalled interval nowhere).
  std::vector<std::vector<std::vector<const Span*>>> placed(windows.size(), std::vector<std::vector<const Span*>>(n));
  for (std::size_t i = 0; i < n; ++i) {
    for (const Span& x : spans[i]) {
      if (x.stalled) continue;
      if (i == ref) {
        placed[static_cast<std::size_t>(&x - windows.data())][i].push_back(&x);
        continue;
      }
      const double m = x.mid();
      const auto it =
          std::upper_bound(windows.begin(), windows.end(), m, [](double v, const Span& w) { return v < w.b; });
      if (it == windows.end() || m < it->a) continue;  // outside every window: left out
      placed[static_cast<std::size_t>(it - windows.begin())][i].push_back(&x);
    }
  }
  for (std::size_t k = 0; k < windows.size(); ++k) {
    const Span& w = windows[k];
    const double length = w.b - w.a;
    std::vector<const Interval*> from;
    bool covered = true;
    for (std::size_t i = 0; i < n && covered; ++i) {
      double cover = 0;
      for (const Span* x : placed[k][i]) {
        cover += x->b - x->a;
        from.push_back(x->interval);
      }
      covered = !placed[k][i].empty() && cover >= kCoverFraction * length;
    }
    if (!covered) continue;
    out.intervals.push_back(merge_window(w.interval->t_s, w.interval->duration_s, from, *w.interval, n > 1));
  }
  out.details = Json{{"merged_by", "time"}, {"common_clock", timed ? "barriers" : "aligned starts"}};
  // On the merged intervals' t_s scale (the reference rank's measured phase).
  if (!any_empty && common_b >= common_a) {
    const double s = static_cast<double>(start_ns[ref] - origin) / 1e9;
    out.details["common_window_t_s"] = Json::array({common_a - s, common_b - s});
  }
  if (!stalls.empty()) out.details["stalls"] = std::move(stalls);
  return out;
}

}  // namespace drivelab::results::detail
