// The device figures of a merge of hosts' records (merge_devices.hpp, docs/results.md).
#include "merge_devices.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "drivelab/results/catalogue.hpp"
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

}  // namespace drivelab::results::detail
