#pragma once
/// \file vdbench_config.hpp
/// The `vdbench:` section of a test of kind `vdbench`: vdbench-style workload definitions, a run
/// rate (`iorate`) and curves (docs/synthetic.md has the full model and the source of each rule).
///
///     - name: sql-8k
///       kind: vdbench
///       warmup: 30s        # per point (the max run's warm-up is the test's warm-up phase)
///       duration: 60s      # per point
///       interval: 5s
///       vdbench:
///         threads: 128     # outstanding I/Os (vdbench threads=)
///         file_size: 16GiB
///         iorate: curve    # max | <IOPS> | curve
///         curve: [10, 50, 70, 80, 90, 100, 110, 120]
///         stopcurve: 10    # ms of mean latency that ends the curve (vdbench stopcurve=)
///         slo: {p99_ms: 5, mean_ms: 2}  # sizing answers: max IOPS within each bound
///         workloads:
///           - {name: data, xfersize: 8k, rdpct: 70, seekpct: 100}
///           - {name: log, xfersize: 64k, rdpct: 0, seekpct: 0, skew: 5}
///
/// Rules taken from vdbench 5.04 (user guide and behaviour): defaults xfersize 4k, rdpct 100,
/// seekpct 100 (random); seekpct n = each I/O is random with probability n%, otherwise the next
/// block after the workload's previous I/O; skew = share of all I/O, unspecified skews share what
/// is left evenly; curve points are percentages of the max run's average IOPS, rounded up to a
/// multiple of 100 above 1,000 IOPS and of 10 below (RD_entry.set_iorate); inter-arrival
/// distribution exponential by default.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "drivelab/config/document.hpp"
#include "drivelab/core/pacing.hpp"
#include "drivelab/core/steady_state.hpp"
#include "drivelab/io/target_file.hpp"
#include "drivelab/results/record.hpp"
#include "drivelab/runner/curve.hpp"

namespace drivelab::emulators {

/// One entry of an xfersize distribution: `size_bytes` for `pct` % of the workload's I/Os.
struct XferShare {
  std::uint64_t size_bytes = 4096;
  double pct = 100;
};

/// One vdbench workload definition (WD). Percent ranges are of the test's target region.
struct WorkloadDef {
  std::string name;
  std::vector<XferShare> xfersize{XferShare{}};  ///< shares add up to 100
  double rdpct = 100;                            ///< % reads (vdbench rdpct=, default 100)
  double seekpct = 100;                          ///< % random I/Os; 0 sequential (vdbench seekpct=, default 100)
  double range_lo_pct = 0;                       ///< range=(lo,hi) or hotband=(lo,hi), % of the region
  double range_hi_pct = 100;
  bool hotband = false;          ///< the range was given as hotband= (see docs/synthetic.md)
  std::optional<double> skew{};  ///< % of all I/O; unset: an even share of what is left
  double compratio = 1;          ///< written data compresses about compratio:1 (vdbench compratio=)
  double dedupratio = 1;         ///< 1/dedupratio of written dedup units are unique (vdbench dedupratio=)

  double mean_xfersize_bytes() const noexcept;
};

enum class IorateMode { max, fixed, curve };

struct VdbenchConfig {
  std::string engine = "io_uring";  ///< io::make_engine name (io_uring, libaio, psync, null)
  std::uint32_t threads = 8;        ///< outstanding I/Os of the test (vdbench threads=)
  std::uint32_t jobs = 0;           ///< engine threads; 0 = auto (async 1, sync = threads)
  std::uint64_t file_size_bytes = std::uint64_t{1} << 30;
  /// The part of the target the workloads address (emulators/region.hpp: `region: first 25%`):
  /// of the device on a block device (file_size is then unused), of the file otherwise; unset:
  /// the first file_size bytes. vdbench's sd= `offset=` + `size=` (or `range=` on the SD).
  std::optional<io::Region> region;
  bool direct = true;
  bool keep_file = true;
  IorateMode iorate = IorateMode::max;
  double iorate_iops = 0;                              ///< for IorateMode::fixed
  std::vector<double> curve{10, 50, 70, 80, 90, 100};  ///< % of the max run (vdbench default)
  double stopcurve_ms = 0;                             ///< 0 = none
  /// `slo:` (iorate curve): the highest IOPS whose p99 (slo_p99_ms) and mean (slo_mean_ms)
  /// latency from the intended start stay within the bound, each interpolated between the two
  /// runs that bracket it (runner/curve.hpp max_rate_within); headline metrics
  /// max_iops_under_p99 and max_iops_under_mean. At least one of the two when `slo:` is given.
  std::optional<double> slo_p99_ms;
  std::optional<double> slo_mean_ms;
  ArrivalDistribution distribution = ArrivalDistribution::exponential;
  std::optional<SteadyStateCriterion> ss;  ///< fio ss=
  std::chrono::nanoseconds ss_dur{std::chrono::seconds(30)};
  std::chrono::nanoseconds ss_ramp{0};
  bool ss_stop = false;                  ///< end the max run once steady (fio: stops the job)
  std::uint32_t dedupunit_bytes = 4096;  ///< dedup granularity (vdbench dedupunit=)
  std::vector<WorkloadDef> workloads{WorkloadDef{.name = "default"}};
};

/// Decodes a `vdbench:` section (undefined node: all defaults). Every problem is recorded in
/// section.diagnostics() with its path, e.g. "tests[0].vdbench.workloads[1].xfersize: xfersize
/// shares must add up to 100, found 90".
VdbenchConfig decode_vdbench(const config::Node& section);

/// The effective configuration with the same keys (re-decodable), skews resolved.
results::Json to_json(const VdbenchConfig& c);

/// Each workload's share of the I/O in % (unspecified skews split the rest evenly, vdbench
/// HandleSkew). Sums to 100 when decode_vdbench accepted the workloads.
std::vector<double> effective_skews(const std::vector<WorkloadDef>& workloads);

/// vdbench's curve rate (runner/curve.hpp, shared with the VDI replay curves).
using runner::curve_rate;

/// "(4k,25,8k,75)" -> {{4096,25},{8192,75}}; "8k" -> {{8192,100}}. Throws std::invalid_argument.
std::vector<XferShare> parse_xfersize(std::string_view text);

}  // namespace drivelab::emulators
