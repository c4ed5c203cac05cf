// The exact merge of per-host records (rules in merge.hpp and docs/results.md, "Merging hosts").
#include "drivelab/results/merge.hpp"

#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/record_stats.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "json_read.hpp"
#include "merge_devices.hpp"
#include "merge_inputs.hpp"
#include "merge_time.hpp"

namespace drivelab::results {
namespace {

using detail::Host;
using detail::Hosts;
using detail::number_or_null;

/// The worse of two statuses for a merged record (failed > interrupted > running > skipped > complete).
int severity(Status s) {
  switch (s) {
    case Status::complete: return 0;
    case Status::skipped: return 1;
    case Status::running: return 2;
    case Status::interrupted: return 3;
    case Status::failed: return 4;
  }
  return 4;
}

bool summed_unit(std::string_view unit) {
  static constexpr std::array<std::string_view, 6> kSummed{"1/s", "1/min", "MB/s", "MiB/s", "count", "bytes"};
  return std::find(kSummed.begin(), kSummed.end(), unit) != kSummed.end();
}

bool rate_unit(std::string_view unit) { return unit == "1/s" || unit == "1/min" || unit == "MB/s" || unit == "MiB/s"; }

/// A status with its reason over hosts (and missing ranks): complete only when every rank is
/// present and complete.
struct StatusOver {
  Status status = Status::complete;
  std::vector<std::string> reasons;
  bool present_worse = false;
  void add(const Host& h, Status s, std::string reason) {
    if (s == Status::complete) return;
    if (s == Status::running) {
      // A record left mid-run (its rank was killed or lost, or is still running): a merged record
      // is final, so never `running`.
      s = Status::interrupted;
      reason = "its record ends mid-run (status running: the rank was killed or lost before it finished)" +
               (reason.empty() ? std::string() : "; " + reason);
    }
    if (!present_worse || severity(s) > severity(status)) status = s;
    present_worse = true;
    reasons.push_back(fmt::format("{}: {}{}", h.label(), to_string(s), reason.empty() ? "" : ": " + reason));
  }
  void missing(const std::string& what) {
    if (!present_worse) status = Status::interrupted;
    reasons.push_back(what);
  }
  std::string reason() const {
    std::string out;
    for (const std::string& r : reasons) out += (out.empty() ? "" : "; ") + r;
    return out;
  }
};

std::string missing_reason(int rank, const std::string& host) {
  return host.empty() ? fmt::format("no record or journal of rank {}", rank)
                      : fmt::format("no record or journal of rank {} (host {})", rank, host);
}

/// Warnings shared by every list once, the others prefixed with their host; order of first sight.
std::vector<std::string> merge_warnings(const std::vector<const Host*>& hosts,
                                        const std::vector<const std::vector<std::string>*>& lists) {
  std::vector<std::string> out;
  std::set<std::string> shared_done;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    for (const std::string& w : *lists[i]) {
      const bool everywhere = std::all_of(
          lists.begin(), lists.end(), [&](const auto* l) { return std::find(l->begin(), l->end(), w) != l->end(); });
      if (everywhere && lists.size() > 1) {
        if (shared_done.insert(w).second) out.push_back(w);
      } else if (everywhere) {
        out.push_back(w);
      } else {
        out.push_back(hosts[i]->label() + ": " + w);
      }
    }
  }
  return out;
}

std::string min_time(const std::vector<std::string>& ts) {
  std::string out;
  for (const std::string& t : ts)
    if (!t.empty() && (out.empty() || t < out)) out = t;
  return out;
}
std::string max_time(const std::vector<std::string>& ts) {
  std::string out;
  for (const std::string& t : ts)
    if (t > out) out = t;
  return out;
}

/// Merges one list of metrics (headline, or one group's) of the hosts' tests. `hist` are the
/// merged test histograms; `prefix` names a group's metrics in per_host_only ("new_order.");
/// `one_server`: the hosts drove one database server (HostMerge::server counters taken once).
std::vector<Metric> merge_metrics(const std::vector<const std::vector<Metric>*>& lists,
                                  const std::map<std::string, LatencyHistogram>& hist, const std::string& prefix,
                                  Json& per_host_only, bool lab_conventions, bool one_server) {
  std::vector<std::string> names;
  for (const auto* l : lists)
    for (const Metric& m : *l)
      if (std::find(names.begin(), names.end(), m.name) == names.end()) names.push_back(m.name);
  std::vector<Metric> out;
  std::vector<Metric> labs;
  for (const std::string& name : names) {
    std::vector<const Metric*> found;
    for (const auto* l : lists) {
      const auto it = std::find_if(l->begin(), l->end(), [&](const Metric& m) { return m.name == name; });
      if (it != l->end()) found.push_back(&*it);
    }
    if (found.empty()) continue;  // cannot happen (every name is from a list); GCC's -Wnull-dereference
    const Metric& first = *found.front();
    const bool everywhere =
        found.size() == lists.size() &&
        std::all_of(found.begin(), found.end(), [&](const Metric* m) { return m->unit == first.unit; });
    // By the catalogue's declaration before unit (MetricDef::merge): a maximum of a whole test
    // (queue_length_max) merges as the largest of the hosts' (a sum of maxima is no one's
    // maximum); a peak across points (a curve's peak_iops) is not the peak of the merged points:
    // per host only; CPU seconds add up. A metric the catalogue does not know merges by its unit.
    const MetricDef* def = find_metric_def(name);
    const HostMerge rule = def != nullptr ? def->merge : HostMerge::by_unit;
    const bool a_maximum = rule == HostMerge::maximum && !first.of;
    const bool a_peak = rule == HostMerge::per_host;
    const bool cpu_seconds = rule == HostMerge::sum;
    const bool whole_server = rule == HostMerge::server && one_server;
    std::optional<double> value;
    if (a_peak) {
    } else if (everywhere && whole_server) {
      value = first.value;  // the lowest rank's reading of the one server (lists are in rank order)
    } else if (everywhere && a_maximum) {
      double mx = first.value;
      for (const Metric* m : found) mx = std::max(mx, m->value);
      value = mx;
    } else if (everywhere && cpu_seconds) {
      double sum = 0;
      for (const Metric* m : found) sum += m->value;
      value = sum;
    } else if (everywhere && first.of) {
      const auto h = hist.find(first.of->histogram);
      const bool same_source =
          std::all_of(found.begin(), found.end(), [&](const Metric* m) { return m->of == first.of; });
      if (same_source && h != hist.end()) value = histogram_figure(h->second, first.of->figure, first.unit);
    } else if (everywhere && summed_unit(first.unit)) {
      double sum = 0;
      for (const Metric* m : found) sum += m->value;
      value = sum;
    } else if (everywhere && first.unit == "s") {
      double mx = first.value;
      for (const Metric* m : found) mx = std::max(mx, m->value);
      value = mx;
    }
    if (!value) {
      per_host_only.push_back(prefix + name);
      continue;
    }
    Metric merged = first;
    merged.value = *value;
    out.push_back(merged);
    if (!lab_conventions) continue;
    const auto fig = first.of ? std::optional<std::string>(first.of->figure) : std::nullopt;
    if (rate_unit(first.unit)) {
      double sum = 0;
      for (const Metric* m : found) sum += m->value;
      labs.push_back(Metric{"sum_of_hosts_" + name, sum, first.unit,
                            "the review labs' convention: the hosts' values added (not an exact figure)"});
    } else if (fig && (*fig == "avg" || (fig->size() > 1 && (*fig)[0] == 'p'))) {
      double sum = 0;
      for (const Metric* m : found) sum += m->value;
      labs.push_back(Metric{"mean_of_hosts_" + name, sum / static_cast<double>(found.size()), first.unit,
                            "the review labs' convention: the mean of the hosts' values (not an exact figure)"});
    }
  }
  out.insert(out.end(), labs.begin(), labs.end());
  return out;
}

/// A curve's `details.points` (vdbench: one object per run, in order) merged by the curve rule
/// (docs/multihost.md "Curves"): when every host ran the same points (same groups in the same
/// order), each merged point has the hosts' requested and achieved IOPS summed, the longest
/// measured_s, and latency_avg_us from the merged histogram latency_<group>; what is a host's own
/// (steady state, workload shares) stays in hosts[].tests[]. Null when the hosts' points differ
/// or a test has none.
Json merge_curve_points(const std::vector<const TestRecord*>& tests,
                        const std::map<std::string, LatencyHistogram>& merged) {
  std::vector<const Json*> lists;
  for (const TestRecord* x : tests) {
    const Json* p = x->details.is_object() ? detail::member(x->details, "points") : nullptr;
    if (p == nullptr || !p->is_array()) return nullptr;
    lists.push_back(p);
  }
  if (lists.empty()) return nullptr;
  const std::size_t n = lists.front()->size();
  Json out = Json::array();
  for (std::size_t k = 0; k < n; ++k) {
    const Json& first = (*lists.front())[k];
    const std::string group = first.value("group", "");
    double requested = 0, achieved = 0, measured = 0;
    for (const Json* l : lists) {
      if (l->size() != n || !(*l)[k].is_object() || (*l)[k].value("group", "") != group) return nullptr;
      requested += (*l)[k].value("requested_iops", 0.0);
      achieved += (*l)[k].value("achieved_iops", 0.0);
      measured = std::max(measured, (*l)[k].value("measured_s", 0.0));
    }
    Json point{{"group", group},
               {"requested_pct", first.value("requested_pct", 0.0)},
               {"requested_iops", requested},
               {"achieved_iops", achieved},
               {"measured_s", measured}};
    if (const auto h = merged.find("latency_" + group); h != merged.end())
      point["latency_avg_us"] = h->second.mean() / 1e3;
    out.push_back(std::move(point));
  }
  return out;
}

/// The warning of a test that the hosts ran with different settings (a hosts: entry's set:),
/// naming each differing config key per host; "" when every host's config is the first's. The
/// merged figures then combine different workloads, and the merged config is the first host's.
std::string different_settings_warning(const std::vector<const Host*>& hosts,
                                       const std::vector<const TestRecord*>& tests) {
  std::vector<std::string> differing;
  const Json& first = tests.front()->config;
  for (std::size_t i = 1; i < tests.size(); ++i) {
    const Json& c = tests[i]->config;
    if (!first.is_object() || !c.is_object()) continue;
    for (const auto& [key, value] : c.items()) {
      const auto it = first.find(key);
      if (it != first.end() && *it == value) continue;
      differing.push_back(fmt::format("{}: {} {} vs {} {}", key, hosts.front()->label(),
                                      it != first.end() ? it->dump() : "(none)", hosts[i]->label(), value.dump()));
    }
  }
  if (differing.empty()) return {};
  return fmt::format(
      "the hosts ran this test with different settings ({}): its config is {}'s, and the merged "
      "figures combine different workloads",
      fmt::join(differing, "; "), hosts.front()->label());
}

Json host_test_entry(const TestRecord& t) {
  Json metrics = Json::object();
  for (const Metric& m : t.metrics) metrics[m.name] = number_or_null(m.value);
  for (const MetricGroup& g : t.groups)
    for (const Metric& m : g.metrics) metrics[g.name + "." + m.name] = number_or_null(m.value);
  Json intervals = Json::array();
  for (const Interval& i : t.intervals) {
    Interval plain{i.t_s, i.duration_s, i.values};
    intervals.push_back(to_json(plain));
  }
  return Json{{"name", t.name},
              {"status", to_string(t.status)},
              {"reason", t.reason},
              {"metrics", std::move(metrics)},
              {"intervals", std::move(intervals)}};
}

/// The hosts' test histograms merged bin by bin; a histogram some host lacks is not the whole:
/// figures of it are per host only, so it is left out.
std::map<std::string, LatencyHistogram> merge_histograms(const std::vector<const TestRecord*>& tests) {
  std::map<std::string, LatencyHistogram> out;
  std::set<std::string> hist_names;
  for (const TestRecord* x : tests)
    for (const auto& [name, h] : x->histograms) hist_names.insert(name);
  for (const std::string& name : hist_names) {
    LatencyHistogram merged;
    bool everywhere = true;
    for (const TestRecord* x : tests) {
      const auto it = x->histograms.find(name);
      if (it == x->histograms.end()) {
        everywhere = false;
        continue;
      }
      merged.merge(it->second);
    }
    if (everywhere) out.emplace(name, std::move(merged));
  }
  return out;
}

/// Per phase of `base`'s barriers that every host passed: the spread of the hosts' release
/// times on rank 0's clock (each corrected by its clock offset), ns.
Json start_skew(const TestRecord& base, const std::vector<const Host*>& hosts,
                const std::vector<const TestRecord*>& tests) {
  Json skew = Json::object();
  for (const auto& [phase, v] : base.barriers.items()) {
    std::vector<std::int64_t> at;
    for (std::size_t i = 0; i < tests.size(); ++i) {
      const Json& b = tests[i]->barriers;
      const auto it = b.find(phase);
      if (it == b.end() || !it->is_number_integer()) break;
      at.push_back(it->get<std::int64_t>() - hosts[i]->clock_offset_ns);
    }
    if (at.size() != tests.size()) continue;
    const auto [lo, hi] = std::minmax_element(at.begin(), at.end());
    skew[phase] = *hi - *lo;
  }
  return skew;
}

/// The skew is only as good as the clock offsets it is corrected by: their largest uncertainty
/// beside it (on one host the clocks are one clock and the uncertainty is the exchange's).
std::int64_t clock_offset_uncertainty(const std::vector<const Host*>& hosts) {
  std::int64_t uncertainty = 0;
  for (const Host* h : hosts) uncertainty = std::max(uncertainty, h->clock_offset_uncertainty_ns);
  return uncertainty;
}

/// Setting `key` of test `name` in the run config (tests[].interval_s, duration_s; 0 when absent).
double config_test_setting(const Json& config, const std::string& name, const char* key) {
  const Json* tests = config.is_object() ? detail::member(config, "tests") : nullptr;
  if (tests == nullptr || !tests->is_array()) return 0;
  for (const Json& t : *tests) {
    if (!t.is_object() || t.value("name", "") != name) continue;
    const Json* v = detail::member(t, key);
    return v != nullptr && v->is_number() ? v->get<double>() : 0.0;
  }
  return 0;
}

/// Summed headline rate `name` over the common window (MergedIntervals::window_rates): the ranks'
/// window rates of the same value, or else each rank's own `name` scaled as its first window rate
/// whose headline every rank has (its share of operations inside the window: a throughput's bytes
/// go with its I/Os); none when neither is known.
std::optional<double> window_rate(const std::string& name, const std::vector<const TestRecord*>& tests,
                                  const std::map<std::string, std::vector<double>>& window_rates) {
  const auto headline = [&](std::size_t i, const std::string& n) -> std::optional<double> {
    const auto& ms = tests[i]->metrics;
    const auto it = std::find_if(ms.begin(), ms.end(), [&](const Metric& m) { return m.name == n; });
    return it == ms.end() ? std::nullopt : std::optional<double>(it->value);
  };
  if (const auto it = window_rates.find(name); it != window_rates.end()) {
    double sum = 0;
    for (double r : it->second) sum += r;
    return sum;
  }
  for (const auto& [ref, rates] : window_rates) {
    double sum = 0;
    bool known = true;
    for (std::size_t i = 0; i < tests.size() && known; ++i) {
      const auto own = headline(i, name);
      const auto own_ref = headline(i, ref);
      known = own && own_ref && *own_ref > 0;
      if (known) sum += *own * rates[i] / *own_ref;
    }
    if (known) return sum;
  }
  return std::nullopt;
}

/// A time-limited test whose ranks did not all measure the same window: its summed headline rates
/// over the common window, named in details.intervals.headline_over_common_window (merge_time.hpp).
void headline_over_common_window(TestRecord& t, const std::vector<const TestRecord*>& tests,
                                 const std::map<std::string, std::vector<double>>& window_rates) {
  if (window_rates.empty()) return;
  Json names = Json::array();
  for (Metric& m : t.metrics) {
    const MetricDef* def = find_metric_def(m.name);
    if (!rate_unit(m.unit) || m.of || (def != nullptr && def->merge != HostMerge::by_unit)) continue;
    if (const auto v = window_rate(m.name, tests, window_rates)) {
      m.value = *v;
      names.push_back(m.name);
    }
  }
  if (!names.empty()) t.details["intervals"]["headline_over_common_window"] = std::move(names);
}

/// Adds a stall beyond the tolerance to a merged status: `failed` (the hosts' figures are no
/// measurement of the hosts together, as tpcc's missed mix is none of TPC-C: docs/results.md
/// "Status"; not `interrupted`, which is a run stopped early, exit 130 as Ctrl-C), the reason appended.
void add_stall(Status& status, std::string& reason, const std::string& why) {
  status = Status::failed;
  reason += (reason.empty() ? "" : "; ") + why;
}

/// The tests' metric groups, merged group by group (in first-seen order); a group a host lacks
/// counts as empty for it.
std::vector<MetricGroup> merge_groups(const std::vector<const TestRecord*>& tests,
                                      const std::map<std::string, LatencyHistogram>& histograms, Json& per_host_only,
                                      bool one_server) {
  std::vector<std::string> group_names;
  for (const TestRecord* x : tests)
    for (const MetricGroup& g : x->groups)
      if (std::find(group_names.begin(), group_names.end(), g.name) == group_names.end()) group_names.push_back(g.name);
  std::vector<MetricGroup> out;
  for (const std::string& g : group_names) {
    std::vector<const std::vector<Metric>*> glists;
    static const std::vector<Metric> kNone;
    for (const TestRecord* x : tests) {
      const auto it =
          std::find_if(x->groups.begin(), x->groups.end(), [&](const MetricGroup& mg) { return mg.name == g; });
      glists.push_back(it == x->groups.end() ? &kNone : &it->metrics);
    }
    out.push_back(MetricGroup{g, merge_metrics(glists, histograms, g + ".", per_host_only, true, one_server)});
  }
  return out;
}

/// The device figures of the merged test `t` (headline and groups) summed once per device
/// (merge_devices.hpp).
detail::DeviceShares merge_device_figures(const std::vector<const Host*>& hosts,
                                          const std::vector<const TestRecord*>& tests, TestRecord& t,
                                          Json& per_host_only) {
  detail::DeviceShares shares = detail::device_shares(hosts, tests);
  std::vector<const std::vector<Metric>*> lists;
  for (const TestRecord* x : tests) lists.push_back(&x->metrics);
  detail::apply_device_shares(shares, lists, t.metrics, "", per_host_only);
  static const std::vector<Metric> kNone;
  for (MetricGroup& g : t.groups) {
    std::vector<const std::vector<Metric>*> glists;
    for (const TestRecord* x : tests) {
      const auto it =
          std::find_if(x->groups.begin(), x->groups.end(), [&](const MetricGroup& mg) { return mg.name == g.name; });
      glists.push_back(it == x->groups.end() ? &kNone : &it->metrics);
    }
    detail::apply_device_shares(shares, glists, g.metrics, g.name + ".", per_host_only);
  }
  return shares;
}

TestRecord merge_test(std::size_t index, const std::vector<Host>& all, int size,
                      const std::vector<std::string>& host_names, const Json& run_config,
                      std::vector<std::string>& stalls) {
  std::vector<const Host*> hosts;
  std::vector<const TestRecord*> tests;
  for (const Host& h : all) {
    if (index < h.record().tests.size()) {
      hosts.push_back(&h);
      tests.push_back(&h.record().tests[index]);
    }
  }
  const TestRecord& base = *tests.front();
  TestRecord t;
  t.name = base.name;
  t.kind = base.kind;
  t.repetition = base.repetition;
  t.discarded = base.discarded;
  t.seed = base.seed;
  t.config = base.config;
  StatusOver st;
  std::set<int> present;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    st.add(*hosts[i], tests[i]->status, tests[i]->reason);
    present.insert(hosts[i]->rank);
  }
  for (int r = 0; r < size; ++r) {
    if (present.contains(r)) continue;
    const std::string host = static_cast<std::size_t>(r) < host_names.size() ? host_names[r] : "";
    st.missing(host.empty() ? fmt::format("rank {}: no result for this test", r)
                            : fmt::format("rank {} (host {}): no result for this test", r, host));
  }
  t.status = st.status;
  t.reason = st.reason();
  // A host that ended before this test did (killed: its record stops mid-test, no metrics, no
  // histograms) has nothing to add: the figures are those of the hosts that measured, said in a
  // warning, rather than none at all because one host lacks them.
  std::vector<std::string> unmeasured;
  {
    std::vector<const Host*> h2;
    std::vector<const TestRecord*> t2;
    for (std::size_t i = 0; i < tests.size(); ++i) {
      if (tests[i]->metrics.empty() && tests[i]->histograms.empty() && tests[i]->groups.empty()) {
        unmeasured.push_back(hosts[i]->label());
      } else {
        h2.push_back(hosts[i]);
        t2.push_back(tests[i]);
      }
    }
    if (!t2.empty() && t2.size() < tests.size()) {
      hosts = std::move(h2);
      tests = std::move(t2);
    } else {
      unmeasured.clear();
    }
  }
  std::vector<std::string> starts;
  std::vector<std::string> ends;
  for (const TestRecord* x : tests) {
    t.warmup_s = std::max(t.warmup_s, x->warmup_s);
    t.measured_s = std::max(t.measured_s, x->measured_s);
    starts.push_back(x->started_at);
    ends.push_back(x->finished_at);
  }
  t.started_at = min_time(starts);
  t.finished_at = max_time(ends);

  t.histograms = merge_histograms(tests);

  Json per_host_only = Json::array();
  std::vector<const std::vector<Metric>*> lists;
  for (const TestRecord* x : tests) lists.push_back(&x->metrics);
  // tpcc shared_database: every host's test says so (details.shared_database); the hosts' server
  // counters are then readings of one server.
  const bool one_server = tests.size() > 1 && std::all_of(tests.begin(), tests.end(), [](const TestRecord* x) {
                            return x->details.is_object() && x->details.contains("shared_database");
                          });
  t.metrics = merge_metrics(lists, t.histograms, "", per_host_only, false, one_server);
  t.groups = merge_groups(tests, t.histograms, per_host_only, one_server);
  const detail::DeviceShares devices = merge_device_figures(hosts, tests, t, per_host_only);

  // Hosts that ran the test with different intervals (a hosts: entry's set:) have no common
  // windows: by index, as before (merge_time.hpp).
  double interval_s = config_test_setting(run_config, base.name, "interval_s");
  bool time_limited = true;
  for (const Host* h : hosts) {
    if (config_test_setting(h->record().config, base.name, "interval_s") != interval_s) interval_s = -1;
    time_limited = time_limited && config_test_setting(h->record().config, base.name, "duration_s") > 0;
  }
  std::vector<TestRecord> owned;
  detail::MergedIntervals mi = detail::merge_test_intervals(
      hosts, detail::without_repeated_devices(devices, tests, owned), interval_s, time_limited);
  t.intervals = std::move(mi.intervals);
  detail::drop_overlapping_devices(devices, t.intervals);
  for (const std::string& why : mi.beyond_tolerance) {
    add_stall(t.status, t.reason, why);
    stalls.push_back(fmt::format("test {}: {}", test_label(t), why));
  }

  for (std::size_t i = 0; i < tests.size(); ++i)
    for (const Check& c : tests[i]->checks)
      t.checks.push_back(Check{c.name, c.passed, hosts[i]->label() + ": " + c.detail});
  std::vector<const std::vector<std::string>*> wl;
  for (const TestRecord* x : tests) wl.push_back(&x->warnings);
  t.warnings = merge_warnings(hosts, wl);
  if (std::string w = different_settings_warning(hosts, tests); !w.empty()) t.warnings.push_back(std::move(w));
  for (std::string& w : mi.warnings) t.warnings.push_back(std::move(w));
  for (const std::string& u : unmeasured)
    t.warnings.push_back(
        fmt::format("{} has no results for this test (its record ends before the test did): the "
                    "figures are those of the other {} host{}",
                    u, tests.size(), tests.size() == 1 ? "" : "s"));

  t.details = Json{{"start_skew_ns", start_skew(base, hosts, tests)},
                   {"clock_offset_uncertainty_ns", clock_offset_uncertainty(hosts)},
                   {"per_host_only", std::move(per_host_only)},
                   {"intervals", std::move(mi.details)}};
  headline_over_common_window(t, tests, mi.window_rates);
  detail::merge_demand(t, tests, devices, !mi.window_rates.empty());
  if (Json points = merge_curve_points(tests, t.histograms); !points.is_null()) t.details["points"] = std::move(points);
  if (!devices.details.is_null()) t.details["devices"] = devices.details;
  if (devices.overlap) t.warnings.push_back(*devices.overlap);
  return t;
}

/// The merged record's `hosts` rows, one per rank (a missing rank's row says so), and its status
/// and reason over them into `out`.
void add_host_rows(const Hosts& c, RunRecord& out) {
  StatusOver st;
  out.hosts = Json::array();
  for (int r = 0; r < c.size; ++r) {
    const auto it = std::find_if(c.hosts.begin(), c.hosts.end(), [&](const Host& h) { return h.rank == r; });
    const std::string& name = c.names[static_cast<std::size_t>(r)];
    if (it == c.hosts.end()) {
      const std::string why = missing_reason(r, name);
      st.missing(why);
      out.hosts.push_back(Json{{"rank", r},
                               {"name", name},
                               {"run_id", ""},
                               {"status", "missing"},
                               {"reason", why},
                               {"target", nullptr},
                               {"clock_offset_ns", 0},
                               {"clock_offset_uncertainty_ns", 0},
                               {"tests", Json::array()}});
      continue;
    }
    const RunRecord& rec = it->record();
    st.add(*it, rec.status, rec.reason);
    Json tests = Json::array();
    for (const TestRecord& t : rec.tests) tests.push_back(host_test_entry(t));
    out.hosts.push_back(Json{{"rank", r},
                             {"name", name},
                             {"run_id", rec.run_id},
                             {"status", to_string(rec.status)},
                             {"reason", rec.reason},
                             {"target", rec.target},
                             {"clock_offset_ns", it->clock_offset_ns},
                             {"clock_offset_uncertainty_ns", it->clock_offset_uncertainty_ns},
                             {"tests", std::move(tests)}});
  }
  out.status = st.status;
  out.reason = st.reason();
}

}  // namespace

RunRecord merge_host_records(const std::vector<MergeInput>& inputs) {
  if (inputs.empty()) throw ConfigError("no records to merge");
  const Hosts c = detail::collect_hosts(inputs);
  const std::vector<Host>& hosts = c.hosts;
  const std::size_t test_count = detail::common_test_count(hosts);

  const RunRecord& b = hosts.front().record();
  RunRecord out;
  out.run_id = c.job_id;
  out.tool = b.tool;
  out.host = b.host;
  out.protocol = b.protocol;
  out.protocol_file = b.protocol_file;
  out.command_line = b.command_line;
  out.config = b.config;
  out.seed = b.seed;
  std::vector<std::string> starts;
  std::vector<std::string> ends;
  for (const Host& h : hosts) {
    starts.push_back(h.record().started_at);
    ends.push_back(h.record().finished_at);
  }
  out.started_at = min_time(starts);
  out.finished_at = max_time(ends);
  Json ranks = Json::array();
  for (const Host& h : hosts) ranks.push_back(h.rank);
  out.cohort = Json{{"job_id", c.job_id}, {"size", c.size}, {"ranks", std::move(ranks)}};
  out.target = Json{{"kind", "hosts"}, {"hosts", c.size}, {"description", fmt::format("{} hosts", c.size)}};
  add_host_rows(c, out);

  std::vector<const Host*> hp;
  std::vector<const std::vector<std::string>*> wl;
  for (const Host& h : hosts) {
    hp.push_back(&h);
    wl.push_back(&h.record().warnings);
  }
  out.warnings = merge_warnings(hp, wl);
  std::vector<std::string> stalls;
  for (std::size_t i = 0; i < test_count; ++i)
    out.tests.push_back(merge_test(i, hosts, c.size, c.names, b.config, stalls));
  // A rank that stalled beyond the tolerance: the run did not measure what it says (merge_time.hpp).
  for (const std::string& why : stalls) add_stall(out.status, out.reason, why);
  out.repeat = b.repeat;
  out.repetitions = summarize_repetitions(out);
  return out;
}

}  // namespace drivelab::results
