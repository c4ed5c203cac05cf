// The device figures of a merge of hosts' records (merge_devices.hpp, docs/results.md).
#include "merge_devices.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/device_demand.hpp"
#include "json_read.hpp"

namespace drivelab::results::detail {
namespace {

/// The devices a test's telemetry names: the headline first, then those below it; empty when none.
std::vector<std::string> devices_of(const TestRecord& t) {
  std::vector<std::string> out;
  const Json* tel = t.details.is_object() ? member(t.details, "telemetry") : nullptr;
  const Json* devices = tel != nullptr && tel->is_object() ? member(*tel, "devices") : nullptr;
  if (devices == nullptr || !devices->is_array()) return out;
  for (const Json& d : *devices) {
    const Json* name = d.is_object() ? member(d, "name") : nullptr;
    if (name != nullptr && name->is_string()) out.push_back(name->get<std::string>());
  }
  return out;
}

}  // namespace

bool summed_device_figure(std::string_view name) noexcept {
  const MetricDef* d = find_metric_def(name);
  return d != nullptr && d->kind == MetricKind::device && d->has(kDeviceLine) && d->merge != HostMerge::per_host;
}

DeviceShares device_shares(const std::vector<const Host*>& hosts, const std::vector<const TestRecord*>& tests) {
  DeviceShares out;
  out.counted.assign(tests.size(), true);
  std::vector<std::vector<std::string>> devices;
  bool any = false;
  for (const TestRecord* t : tests) {
    devices.push_back(devices_of(*t));
    any = any || !devices.back().empty();
  }
  if (!any) return out;
  out.details = Json::array();
  for (std::size_t i = 0; i < tests.size(); ++i) {
    Json row{{"rank", hosts[i]->rank},
             {"host", hosts[i]->name},
             {"device", devices[i].empty() ? Json(nullptr) : Json(devices[i].front())}};
    // The same host (a host without a name is a host of its own) and a device named.
    for (std::size_t j = 0; j < i && !devices[i].empty() && !hosts[i]->name.empty(); ++j) {
      if (devices[j].empty() || hosts[j]->name != hosts[i]->name) continue;
      const std::string& mine = devices[i].front();
      const std::string& theirs = devices[j].front();
      if (mine == theirs) {
        if (out.counted[j]) {
          out.counted[i] = false;
          row["same_as_rank"] = hosts[j]->rank;
        }
        continue;
      }
      const bool below_theirs = std::find(devices[j].begin(), devices[j].end(), mine) != devices[j].end();
      const bool below_mine = std::find(devices[i].begin(), devices[i].end(), theirs) != devices[i].end();
      if ((below_theirs || below_mine) && !out.overlap)
        out.overlap = fmt::format(
            "{} and {} measured devices of one stack ({} and {}): each counts I/O the other's counts too, so the "
            "device figures are per host only",
            hosts[j]->label(), hosts[i]->label(), theirs, mine);
    }
    row["counted"] = static_cast<bool>(out.counted[i]) && !out.overlap;
    out.details.push_back(std::move(row));
  }
  if (out.overlap)
    for (Json& row : out.details) row["counted"] = false;
  return out;
}

void apply_device_shares(const DeviceShares& shares, const std::vector<const std::vector<Metric>*>& lists,
                         std::vector<Metric>& merged, const std::string& prefix, Json& per_host_only) {
  const bool all_counted = std::all_of(shares.counted.begin(), shares.counted.end(), [](bool c) { return c; });
  if (all_counted && !shares.overlap) return;
  for (auto it = merged.begin(); it != merged.end();) {
    if (!summed_device_figure(it->name)) {
      ++it;
      continue;
    }
    if (shares.overlap) {
      per_host_only.push_back(prefix + it->name);
      it = merged.erase(it);
      continue;
    }
    double sum = 0;
    for (std::size_t i = 0; i < lists.size() && i < shares.counted.size(); ++i) {
      if (!shares.counted[i]) continue;
      for (const Metric& m : *lists[i])
        if (m.name == it->name) sum += m.value;
    }
    it->value = sum;
    ++it;
  }
}

std::vector<const TestRecord*> without_repeated_devices(const DeviceShares& shares,
                                                        const std::vector<const TestRecord*>& tests,
                                                        std::vector<TestRecord>& owned) {
  std::vector<const TestRecord*> out = tests;
  std::size_t repeated = 0;
  for (std::size_t i = 0; i < tests.size(); ++i) repeated += shares.counted[i] ? 0 : 1;
  if (repeated == 0 || shares.overlap) return out;
  owned.reserve(repeated);  // the pointers below stay valid
  for (std::size_t i = 0; i < tests.size(); ++i) {
    if (shares.counted[i]) continue;
    TestRecord& copy = owned.emplace_back(*tests[i]);
    for (Interval& iv : copy.intervals)
      for (auto& [name, v] : iv.values)
        if (summed_device_figure(name)) v = 0;
    out[i] = &copy;
  }
  return out;
}

void drop_overlapping_devices(const DeviceShares& shares, std::vector<Interval>& intervals) {
  if (!shares.overlap) return;
  for (Interval& iv : intervals) std::erase_if(iv.values, [](const auto& p) { return summed_device_figure(p.first); });
}

namespace {

std::optional<double> merged_value(const TestRecord& t, const MetricDef& def) {
  const Metric* m = t.find_metric(def.name);
  return m == nullptr ? std::nullopt : std::optional<double>(m->value);
}

/// The ranks that measured a device counted under another rank: "rank 1 (host a) measured
/// nvme0n1 of rank 0".
std::string shared_devices(const DeviceShares& shares) {
  std::string out;
  if (!shares.details.is_array()) return out;
  for (const Json& row : shares.details) {
    const Json* same = member(row, "same_as_rank");
    if (same == nullptr) continue;
    out += fmt::format("{}rank {} (host {}) measured {} of rank {}", out.empty() ? "" : "; ", row.value("rank", -1),
                       row.value("host", ""), row.value("device", ""), same->get<int>());
  }
  return out;
}

/// The work and device counts of `t` over a window of `w` seconds from its headline rates (over
/// the common window): a record of the work for demand_metrics and the device totals.
std::optional<std::pair<TestRecord, DeviceTotals>> over_window(const TestRecord& t, double w) {
  namespace cat = catalogue;
  const auto r_s = merged_value(t, cat::device_r_s), w_s = merged_value(t, cat::device_w_s);
  const auto rmb = merged_value(t, cat::device_rmb_s), wmb = merged_value(t, cat::device_wmb_s);
  if (!r_s || !w_s || !rmb || !wmb) return std::nullopt;
  const auto count = [&](double rate) { return static_cast<std::uint64_t>(std::llround(rate * w)); };
  DeviceTotals d{.read_ios = count(*r_s),
                 .write_ios = count(*w_s),
                 .flush_ios = count(merged_value(t, cat::device_f_s).value_or(0)),
                 .read_bytes = count(*rmb * 1e6),
                 .write_bytes = count(*wmb * 1e6)};
  TestRecord work;
  work.kind = t.kind;
  const auto add = [&](const MetricDef& def, std::optional<double> v) {
    if (v) work.metrics.push_back(Metric{std::string(def.name), *v, std::string(def.unit_string()), ""});
  };
  const auto times = [&](const MetricDef& rate, double per_s) -> std::optional<double> {
    const auto v = merged_value(t, rate);
    return v ? std::optional<double>(*v * per_s * w) : std::nullopt;
  };
  add(cat::transactions, times(cat::tps, 1));
  add(cat::new_orders, times(cat::tpm_c, 1.0 / 60));  // tpmC: New-Orders per minute (TPC-C clause 5.4)
  add(cat::ios, times(cat::iops, 1));
  add(cat::bytes, times(cat::mb_s, 1e6));
  add(cat::write_fps, merged_value(t, cat::write_fps));
  add(cat::read_fps, merged_value(t, cat::read_fps));
  return std::pair{std::move(work), d};
}

}  // namespace

void merge_demand(TestRecord& t, const std::vector<const TestRecord*>& tests, const DeviceShares& shares,
                  bool windowed) {
  namespace cat = catalogue;
  if (shares.details.is_null()) return;  // no rank recorded a device
  double window_s = 0;
  const Json* intervals = member(t.details, "intervals");
  const Json* common = intervals != nullptr ? member(*intervals, "common_window_t_s") : nullptr;
  if (windowed && common != nullptr && common->is_array() && common->size() == 2) {
    const auto ab = common->get<std::vector<double>>();
    window_s = ab[1] - ab[0];
  }
  for (const TestRecord* x : tests) {
    const Json* tel = x->details.is_object() ? member(x->details, "telemetry") : nullptr;
    if (tel != nullptr && tel->is_object() && member(*tel, "no_demand") != nullptr) return;  // a curve
  }
  Json demand = Json::object();
  std::vector<std::pair<const MetricDef*, double>> figures;
  if (shares.overlap) {
    demand["per_host"] =
        "the ranks measured devices of one stack: the demand per unit of work is each rank's own "
        "(hosts[].tests[].metrics)";
  } else if (window_s > 0) {
    demand["window"] = fmt::format("the common window ({:.3f} s): the devices' and the work's rates over it", window_s);
    if (const auto w = over_window(t, window_s)) figures = demand_metrics(w->first, w->second, window_s);
  } else {
    demand["window"] = "each rank's measured phase (the ranks measured one window)";
    const auto ri = merged_value(t, cat::device_read_ios), wi = merged_value(t, cat::device_write_ios);
    const auto rb = merged_value(t, cat::device_read_bytes), wb = merged_value(t, cat::device_write_bytes);
    if (ri && wi && rb && wb) {
      const auto n = [](double v) { return static_cast<std::uint64_t>(std::llround(v)); };
      const DeviceTotals d{.read_ios = n(*ri),
                           .write_ios = n(*wi),
                           .flush_ios = n(merged_value(t, cat::device_flush_ios).value_or(0)),
                           .read_bytes = n(*rb),
                           .write_bytes = n(*wb)};
      figures = demand_metrics(t, d, t.measured_s);
    }
  }
  if (!shares.overlap && figures.empty())
    demand["none"] = "a rank recorded no device counts, or the ranks recorded no work the demand is per";
  if (const std::string shared = shared_devices(shares); !shared.empty() && !shares.overlap)
    demand["shared"] = shared + ": the device's I/O is counted once, per unit of every rank's work";
  // per_host_only lists names (merge.cpp): the merged figures are no longer per host only.
  auto per_host_only = t.details.value("per_host_only", std::vector<std::string>{});
  for (const auto& [def, v] : figures) {
    std::erase_if(t.metrics, [&](const Metric& m) { return m.name == def->name; });
    t.metrics.push_back(
        Metric{std::string(def->name), v, std::string(def->unit_string()), std::string(def->description)});
    std::erase(per_host_only, def->name);
  }
  if (!figures.empty()) t.details["per_host_only"] = per_host_only;
  t.details["demand"] = std::move(demand);
}

}  // namespace drivelab::results::detail
