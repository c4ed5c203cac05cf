#pragma once
// The device figures of a merge of hosts' records (docs/results.md "Merging hosts", "Device
// figures"; issue 33). The runner's telemetry (telemetry/test_telemetry.hpp) records, per rank,
// what the block device under the rank's target did: its counts and iostat -x rates. Two ranks on
// one host whose targets are on one device each counted all of that device's I/O, so adding their
// figures counts it twice (HammerDB 6.1 fixed the same double count of a partition and its disk,
// TPC-Council/HammerDB#913). A device is a host's name and the kernel name of the headline device
// in the test's details.telemetry.devices; its figures are added once, the lowest rank's. Two
// ranks of one host whose devices are one stack's (a partition and its disk, a dm device and its
// slave: one's headline is among the other's devices) overlap by an unknown amount: their device
// figures are per host only. Internal to results/: merge.cpp calls it for every test it merges.
#include <optional>
#include <string>
#include <vector>

#include "drivelab/results/record.hpp"
#include "merge_inputs.hpp"

namespace drivelab::results::detail {

/// Which hosts' device figures one merged test adds up.
struct DeviceShares {
  /// Per host of the test (in merge order): its device figures are added. A host whose record
  /// names no device (no telemetry, a target without a block device) counts as a device of its own.
  std::vector<bool> counted;
  /// Two hosts' devices are of one stack: no device figure is added up (per host only).
  std::optional<std::string> overlap;
  /// details.devices of the merged test: [{"rank", "host", "device", "counted", "same_as_rank"}]
  /// ("device" null when the record names none; "same_as_rank" for a device counted under
  /// another rank); null when no host names a device.
  Json details;
};

/// The device shares of `tests` (tests[i] is hosts[i]'s).
DeviceShares device_shares(const std::vector<const Host*>& hosts, const std::vector<const TestRecord*>& tests);

/// True for a figure of the device under the target that a merge adds up over hosts: a catalogue
/// declaration of kind `device` with trait kDeviceLine that is not kept per host (device_r_s,
/// device_wmb_s, device_read_ios, device_write_bytes, ...; not the awaits, aqu-sz, %util, the host
/// CPU or pressure stalls, or the demand per unit of work).
bool summed_device_figure(std::string_view name) noexcept;

/// Corrects the merged metrics `merged` (headline, or one group's: `prefix` "phase." names it in
/// per_host_only) of the device figures: each the sum over the counted hosts' values (lists[i]
/// is tests[i]'s), or, with an overlap, moved to `per_host_only`. A metric not in `merged` stays out.
void apply_device_shares(const DeviceShares& shares, const std::vector<const std::vector<Metric>*>& lists,
                         std::vector<Metric>& merged, const std::string& prefix, Json& per_host_only);

/// The tests to merge the intervals of: the uncounted hosts' tests copied into `owned` with their
/// intervals' device figures 0 (the merged interval then holds the device's once), the others as
/// they are.
std::vector<const TestRecord*> without_repeated_devices(const DeviceShares& shares,
                                                        const std::vector<const TestRecord*>& tests,
                                                        std::vector<TestRecord>& owned);

/// Removes the device figures from merged intervals when the hosts' devices overlap.
void drop_overlapping_devices(const DeviceShares& shares, std::vector<Interval>& intervals);

/// The merged test `t`'s demand per unit of work (device_demand.hpp; docs/results.md "Demand per
/// unit of work"), after its device figures (apply_device_shares), its details.intervals and its
/// headline rates over the common window (`windowed`: the ranks measured different windows, the
/// window details.intervals.common_window_t_s; merge_time.hpp):
///  - the distinct devices' counts (each device once: apply_device_shares' sums), over the sum of
///    the ranks' work: their counts, or, `windowed`, the devices' and the work's rates over the
///    common window x its length;
///  - ranks that share one device (a host's device counted once, under its lowest rank): said in
///    details.demand.shared (the device's I/O against every rank's work);
///  - devices of one stack (shares.overlap: the device figures are per host only): no merged
///    demand, each host's own in hosts[].tests[] (details.demand.per_host says so; the merge's
///    warning names the devices);
///  - a curve on any rank (details.telemetry.no_demand), or a rank without device counts: none.
/// Adds the figures to t.metrics, takes them out of details.per_host_only and writes
/// details.demand: {"window", "shared" | "per_host" | "none"}.
void merge_demand(TestRecord& t, const std::vector<const TestRecord*>& tests, const DeviceShares& shares,
                  bool windowed);

}  // namespace drivelab::results::detail
