#pragma once
/// \file physics.hpp
/// Is the number physical? Checks of a test's result against what the drive, its link, TPC-C's
/// pacing and the harness itself allow (docs/telemetry.md, "Is the number physical?"; issue 33):
///  - link: the application's throughput above the drive's link (link_speed.hpp: PCIe generation
///    x width, SATA, SAS; summed over the distinct drives below a dm/md device): a warning, the
///    number is not the drive's (a cache or compression answered).
///  - direct_io: O_DIRECT work (the test's `direct: true`) that the headline device did not see:
///    for 4 KiB-style random reads (`rw: randread`) the application's IOPS above 1.5 x the
///    device's r/s; for other O_DIRECT work its bytes above 1.5 x the device's bytes read and
///    written. A warning naming both numbers: the page cache or another layer (a null engine, a
///    filesystem that ignores O_DIRECT) answered. And O_DIRECT work on a stack with a loop device
///    that reads and writes its backing file through the page cache (loop/dio 0,
///    DeviceStack::page_cache_loops) is warned when the counts pass: the loop device counts every
///    request that its backing file's page cache then answers, so its counts cannot tell.
///  - tpmc_per_warehouse: a tpcc test with TPC-C's keying and think times at full length (`think:
///    tpcc`, think_scale 1: it records efficiency_pct) whose tpm_c is above 12.86 per warehouse.
///    TPC-C clause 4.2 fixes the load a warehouse carries (clause 4.2.2: ten terminals per
///    warehouse; with clause 5.2.5's keying and think times they cannot pass 12.86 tpmC per
///    warehouse), so a result above it is not a TPC-C result for this database size: the test
///    fails (its reason says so), as a run that does not keep the clause's required mix does.
///  - harness_ceiling: the test's I/Os per CPU-second of the drivelab process at or above half
///    the null engine's on this host (harness_ceiling.hpp): a warning, the result may be the
///    harness's, not the drive's.
/// Each check that does not apply says why (no link, not O_DIRECT, ...). A test of an engine that
/// does no I/O (io/ "null", capability no_io) is not checked against the device or the harness:
/// its figures are the harness's by design.
#include <optional>
#include <string>
#include <vector>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/device_demand.hpp"
#include "drivelab/results/record.hpp"
#include "drivelab/telemetry/device_stack.hpp"

namespace drivelab::telemetry {

/// TPC-C's most New-Orders per minute per warehouse with its keying and think times (clause 4.2).
inline constexpr double kTpmCPerWarehouse = 12.86;
/// The application's O_DIRECT random-read IOPS (or bytes) above this multiple of the device's: warned.
inline constexpr double kDirectIoExcess = 1.5;
/// A test at or above this share of the harness's ceiling (I/Os per CPU-second): warned.
inline constexpr double kHarnessShare = 0.5;

/// A headline metric above 0, and the application's bytes over a window (results/device_demand.hpp).
using results::application_bytes;
using results::is_curve;
using results::positive_metric;

/// The most bytes per second the links under a stack carry.
struct LinkCeiling {
  std::optional<double> bytes_per_s;  ///< the sum over the distinct drives' links
  std::string text;                   ///< "nvme0n1: PCIe 16.0 GT/s x4 (7877 MB/s)"
  std::string reason;                 ///< when none: "vda is a virtio disk: its link is virtual"
};
/// The links of the drives in `stack` (link_speed() of each distinct NVMe, SCSI/SATA/SAS or
/// virtio disk; loop, dm and md devices have none of their own). No ceiling when a drive has no
/// link (its reason) or the stack holds no drive.
LinkCeiling link_ceiling(const DeviceStack& stack);

/// What a check found.
enum class CheckOutcome { passed, warning, failed, not_applicable };
/// "passed", "warning", "failed", "not_applicable".
const char* outcome_name(CheckOutcome o) noexcept;

struct PhysicsFinding {
  std::string check;  ///< "link", "direct_io", "tpmc_per_warehouse", "harness_ceiling"
  CheckOutcome outcome = CheckOutcome::not_applicable;
  std::string detail;  ///< the warning or failure text, or why it passed / does not apply
};

/// The figures the checks read besides the test's own record.
struct PhysicsInputs {
  double window_s = 0;  ///< the measured phase (details.telemetry.window_s)
  /// The headline device's counts over the window; nullopt without a device.
  std::optional<double> device_read_ios, device_read_bytes, device_write_bytes;
  std::string no_device;  ///< why there is no device (details.telemetry.no_device)
  /// DeviceStack::page_cache_loops(): the loop devices below the target without direct I/O.
  std::string page_cache_loops;
  /// CPU time (user + system) of the drivelab process over the window.
  std::optional<double> process_cpu_s;
  LinkCeiling link;
  /// The run's harness ceiling (I/Os per CPU-second); nullopt: `ceiling_reason`.
  std::optional<double> harness_iops_per_cpu_s;
  std::string ceiling_reason;
};

PhysicsFinding link_check(const results::TestRecord& test, const PhysicsInputs& in);
PhysicsFinding direct_io_check(const results::TestRecord& test, const PhysicsInputs& in);
PhysicsFinding tpmc_check(const results::TestRecord& test);
PhysicsFinding harness_check(const results::TestRecord& test, const PhysicsInputs& in);
/// The four, in that order.
std::vector<PhysicsFinding> physics_checks(const results::TestRecord& test, const PhysicsInputs& in);
/// details.telemetry.checks: [{"check", "outcome", "detail"}].
results::Json checks_json(const std::vector<PhysicsFinding>& findings);

}  // namespace drivelab::telemetry
