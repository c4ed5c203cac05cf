// Is the number physical? The checks of physics.hpp.
#include "drivelab/telemetry/physics.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "drivelab/telemetry/link_speed.hpp"

namespace drivelab::telemetry {
namespace {

namespace cat = results::catalogue;
using results::Json;

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

/// A disk that is a drive (or a virtual one) with a link to read, not a layer over others.
bool has_own_link(const std::string& disk) {
  return starts_with(disk, "nvme") || starts_with(disk, "sd") || starts_with(disk, "vd") || starts_with(disk, "xvd");
}

PhysicsFinding finding(const char* check, CheckOutcome o, std::string detail) { return {check, o, std::move(detail)}; }

/// Check `check` of a figure against the most the layer below explains: passed, saying `within`,
/// when `value` is at most `bound`; else a warning saying `beyond`.
PhysicsFinding at_most(const char* check, double value, double bound, std::string within, std::string beyond) {
  if (value <= bound) return finding(check, CheckOutcome::passed, std::move(within));
  return finding(check, CheckOutcome::warning, std::move(beyond));
}

/// The test's effective config value `key` (a string or bool), or null.
Json config_value(const results::TestRecord& t, const char* key) {
  if (!t.config.is_object()) return nullptr;
  const auto it = t.config.find(key);
  return it == t.config.end() ? Json(nullptr) : *it;
}

/// The test ran an engine that does no I/O (io/ "null", capability no_io): its figures are the
/// harness's by design, and no device is expected to see them.
bool no_io_engine(const results::TestRecord& t) {
  if (config_value(t, "engine") == Json("null")) return true;
  if (!t.details.is_object() || !t.details.contains("engine_capabilities")) return false;
  const Json& caps = t.details.at("engine_capabilities");
  return caps.is_array() && caps.dump().find("\"no_io\"") != std::string::npos;
}

constexpr const char* kNoIo = "the null engine does no I/O: its figures are the harness's by design (fio: null)";
/// A curve's headline is its max run's, the measured phase's window every point's (is_curve).
constexpr const char* kCurve =
    "a curve: the device counters and the process's CPU cover every point and its warm-up, the metrics the max run "
    "only";

}  // namespace

LinkCeiling link_ceiling(const DeviceStack& stack) {
  LinkCeiling out;
  std::set<std::string> seen;
  double sum = 0;
  for (const StackDevice& d : stack.devices) {
    if (!has_own_link(d.block.disk) || !seen.insert(d.block.disk).second) continue;
    const LinkResult r = link_speed(d.block);
    if (!r.link) {
      out.reason = r.reason;
      out.text.clear();
      return out;
    }
    sum += r.link->max_bytes_per_s;
    out.text += fmt::format("{}{}: {}", out.text.empty() ? "" : ", ", d.block.disk, r.link->text);
  }
  if (seen.empty()) {
    out.reason = fmt::format("no drive with a link under {}", stack.headline().block.name);
    return out;
  }
  out.bytes_per_s = sum;
  return out;
}

const char* outcome_name(CheckOutcome o) noexcept {
  switch (o) {
    case CheckOutcome::passed: return "passed";
    case CheckOutcome::warning: return "warning";
    case CheckOutcome::failed: return "failed";
    case CheckOutcome::not_applicable: break;
  }
  return "not_applicable";
}

PhysicsFinding link_check(const results::TestRecord& test, const PhysicsInputs& in) {
  constexpr const char* kName = "link";
  if (!in.link.bytes_per_s) return finding(kName, CheckOutcome::not_applicable, in.link.reason);
  // Video: its frame writes and reads each at their own rate (over their passes' time); the faster
  // one must fit the link too. Others: their bytes over the window (or their throughput).
  std::optional<double> rate;
  for (const results::MetricDef* def : {&cat::write_mb_s, &cat::read_mb_s})
    if (const auto mb_s = positive_metric(test, *def)) rate = std::max(rate.value_or(0), *mb_s * 1e6);
  if (const auto bytes = application_bytes(test, in.window_s); !rate && bytes && in.window_s > 0)
    rate = *bytes / in.window_s;
  if (!rate) return finding(kName, CheckOutcome::not_applicable, "the test recorded no bytes or throughput");
  return at_most(kName, *rate, *in.link.bytes_per_s,
                 fmt::format("{:.1f} MB/s within the link ({})", *rate / 1e6, in.link.text),
                 fmt::format("throughput {:.1f} MB/s is above what the drive's link carries ({}): the number is not "
                             "the drive's (a cache or compression answered)",
                             *rate / 1e6, in.link.text));
}

namespace {

/// The application's O_DIRECT work against the headline device's counts (direct_io_check).
PhysicsFinding direct_io_counts(const results::TestRecord& test, const PhysicsInputs& in) {
  constexpr const char* kName = "direct_io";
  if (is_curve(test)) return finding(kName, CheckOutcome::not_applicable, kCurve);
  if (!in.device_read_ios || !in.device_read_bytes || !in.device_write_bytes)
    return finding(kName, CheckOutcome::not_applicable,
                   in.no_device.empty() ? "no device counters" : "no device: " + in.no_device);
  if (!(in.window_s > 0)) return finding(kName, CheckOutcome::not_applicable, "no measured phase");
  if (config_value(test, "rw") == Json("randread")) {
    const auto iops = positive_metric(test, cat::iops);
    if (!iops) return finding(kName, CheckOutcome::not_applicable, "the test recorded no IOPS");
    const double device_r_s = *in.device_read_ios / in.window_s;
    return at_most(kName, *iops, kDirectIoExcess * device_r_s,
                   fmt::format("application {:.0f} IOPS, device {:.0f} r/s", *iops, device_r_s),
                   fmt::format("O_DIRECT random reads: the application's {:.0f} IOPS are more than {} x the device's "
                               "{:.0f} r/s: the page cache or another layer answered, not the drive",
                               *iops, kDirectIoExcess, device_r_s));
  }
  const auto app = application_bytes(test, in.window_s);
  if (!app)
    return finding(kName, CheckOutcome::not_applicable,
                   test.kind == "video" ? "video: its MB/s are per pass time, which gives no byte count over the window"
                                        : "the test recorded no bytes or throughput");
  const double device = *in.device_read_bytes + *in.device_write_bytes;
  return at_most(kName, *app, kDirectIoExcess * device,
                 fmt::format("application {:.0f} bytes, device {:.0f} bytes", *app, device),
                 fmt::format("O_DIRECT work: the application moved {:.1f} MB, more than {} x the {:.1f} MB the device "
                             "read and wrote: the page cache or another layer answered, not the drive",
                             *app / 1e6, kDirectIoExcess, device / 1e6));
}

}  // namespace

PhysicsFinding direct_io_check(const results::TestRecord& test, const PhysicsInputs& in) {
  constexpr const char* kName = "direct_io";
  if (config_value(test, "direct") != Json(true))
    return finding(kName, CheckOutcome::not_applicable, "not O_DIRECT work (direct: true)");
  if (no_io_engine(test)) return finding(kName, CheckOutcome::not_applicable, kNoIo);
  PhysicsFinding counts = direct_io_counts(test, in);
  // A loop device without direct I/O counts every request its backing file's page cache then
  // answers: the counts cannot tell, so it is said whatever they found (unless they warned already).
  if (counts.outcome == CheckOutcome::warning || in.page_cache_loops.empty()) return counts;
  return finding(kName, CheckOutcome::warning,
                 fmt::format("O_DIRECT work on a loop device that reads and writes its backing file through the page "
                             "cache: {}; its requests need not reach the drive, so the numbers may be the page "
                             "cache's (losetup --direct-io=on makes a loop device that bypasses it)",
                             in.page_cache_loops));
}

PhysicsFinding tpmc_check(const results::TestRecord& test) {
  constexpr const char* kName = "tpmc_per_warehouse";
  // tpcc records efficiency_pct only with think: tpcc at think_scale 1 (tpcc_report.cpp).
  if (test.kind != "tpcc" || test.find_metric(cat::efficiency_pct.name) == nullptr)
    return finding(kName, CheckOutcome::not_applicable, "not a tpcc test with TPC-C's keying and think times");
  const Json w = config_value(test, "warehouses");
  const auto tpmc = positive_metric(test, cat::tpm_c);
  if (!w.is_number() || !tpmc) return finding(kName, CheckOutcome::not_applicable, "no tpm_c or warehouses");
  const double warehouses = w.get<double>();
  const double most = kTpmCPerWarehouse * warehouses;
  if (*tpmc <= most)
    return finding(kName, CheckOutcome::passed,
                   fmt::format("tpm_c {:.2f} within 12.86 x {:g} warehouses = {:.2f}", *tpmc, warehouses, most));
  return finding(kName, CheckOutcome::failed,
                 fmt::format("tpm_c {:.2f} is above 12.86 per warehouse x {:g} = {:.2f}, which TPC-C's keying and "
                             "think times allow (clause 4.2): not a TPC-C result for this database size (more users "
                             "than 10 per warehouse, or the terminals did not keep their think times)",
                             *tpmc, warehouses, most));
}

PhysicsFinding harness_check(const results::TestRecord& test, const PhysicsInputs& in) {
  constexpr const char* kName = "harness_ceiling";
  if (!in.harness_iops_per_cpu_s) return finding(kName, CheckOutcome::not_applicable, in.ceiling_reason);
  if (no_io_engine(test)) return finding(kName, CheckOutcome::not_applicable, kNoIo);
  if (is_curve(test)) return finding(kName, CheckOutcome::not_applicable, kCurve);
  std::optional<double> ios = positive_metric(test, cat::ios);
  if (!ios && in.window_s > 0)
    if (const auto iops = positive_metric(test, cat::iops)) ios = *iops * in.window_s;
  if (!ios) return finding(kName, CheckOutcome::not_applicable, "the test recorded no I/Os");
  if (!in.process_cpu_s || !(*in.process_cpu_s > 0))
    return finding(kName, CheckOutcome::not_applicable, "no CPU time of the process over the measured phase");
  const double per_cpu = *ios / *in.process_cpu_s;
  const double ceiling = *in.harness_iops_per_cpu_s;
  if (per_cpu < kHarnessShare * ceiling)
    return finding(kName, CheckOutcome::passed,
                   fmt::format("{:.0f} I/Os per CPU-second, {:.0f}% of the harness's {:.0f}", per_cpu,
                               100 * per_cpu / ceiling, ceiling));
  return finding(kName, CheckOutcome::warning,
                 fmt::format("{:.0f} I/Os per CPU-second of drivelab is {:.0f}% of the harness's own ceiling on this "
                             "host ({:.0f} with the null engine): the result may be the harness's, not the drive's",
                             per_cpu, 100 * per_cpu / ceiling, ceiling));
}

std::vector<PhysicsFinding> physics_checks(const results::TestRecord& test, const PhysicsInputs& in) {
  return {link_check(test, in), direct_io_check(test, in), tpmc_check(test), harness_check(test, in)};
}

Json checks_json(const std::vector<PhysicsFinding>& findings) {
  Json out = Json::array();
  for (const PhysicsFinding& f : findings)
    out.push_back({{"check", f.check}, {"outcome", outcome_name(f.outcome)}, {"detail", f.detail}});
  return out;
}

}  // namespace drivelab::telemetry
