#pragma once
// What an open-loop sysbench run and a `rate: curve` add to the record (docs/oltp-sysbench.md,
// "Rate and sizing curves"): the open loop's arrival rate, queue wait and execution time, the
// warning when the rate was not held, each curve run's metric group and details["points"], and
// the sizing answer of `slo:` (runner/curve.hpp max_rate_within), as kind tpcc records its own.
#include <optional>
#include <string>
#include <vector>

#include "drivelab/oltp/sysbench/sysbench_config.hpp"
#include "drivelab/oltp/sysbench/sysbench_driver.hpp"
#include "drivelab/results/recorder.hpp"

namespace drivelab::oltp::sysbench::detail {

/// One run of a `rate: curve` (the closed-loop max run or an open-loop point) and what it measured.
struct CurveRun {
  std::string group;         ///< "max", "point_050" (runner::curve_point_group)
  double requested_pct = 0;  ///< of the max run's TPS; 0 for the max run
  double requested_tps = 0;  ///< this host's arrival rate; 0 = closed loop
  DriverTotals totals;

  double tps() const noexcept;  ///< events (transactions) per second of the measured time
  double qps() const noexcept;  ///< queries per second
  /// "curve point 50%: requested ..., achieved ..., p99 ..." (runner::curve_run_line).
  std::string console_line() const;
};

/// Why an open-loop run did not hold its rate, or nothing (also nothing for a closed loop). Not
/// held: arrivals were dropped, or the events completed per second fell short of the rate by
/// more than the Poisson count's noise explains (3 standard deviations of rate x measured time
/// arrivals, at least 5%: runner::rate_held). The text gives the completed TPS, the events still
/// queued and the queue wait p99, and what limited the rate: `threads` workers at the mean
/// execution time serve at most threads / execution time (Little's law) TPS; when that is below
/// the rate, raise threads, else the database did not keep up.
std::optional<std::string> rate_not_held(const DriverTotals& totals, int threads);

/// The headline metrics of an open-loop run (rate: N), after sysbench's: arrival_rate,
/// arrivals_dropped, queue_wait_{avg,p50,p95,p99,max}_ms, service_time_{...}_ms, their histograms
/// queue_wait and service_time, details rate and queued_at_end; and the rate_not_held warning.
void record_open_loop(results::TestRecorder& rec, const DriverTotals& totals, int threads);

/// A curve run's metric group `<group>`: requested_pct, arrival_rate (open loop), tps, qps,
/// latency avg/p50/p90/p95/p99/max, queue wait and execution time p99 (open loop), ignored_errors,
/// arrivals_dropped (open loop), measured_s; with the histograms latency.<group> (and
/// queue_wait.<group>, service_time.<group>).
void record_curve_point(results::TestRecorder& rec, const CurveRun& run);

/// details["points"]: every run of the curve in order, {group, requested_pct, requested_tps,
/// achieved_tps, qps, latency_avg_ms, latency_p90_ms, latency_p95_ms, latency_p99_ms,
/// queue_wait_p99_ms, arrivals_dropped, held, measured_s} (report/src/dataset.cpp reads the
/// curve from achieved_tps and latency_*_ms).
results::Json curve_points_json(const std::vector<CurveRun>& runs, int threads);

/// The warnings of a curve's points up to 100% that did not hold their rate (rate_not_held);
/// points beyond 100% are past the max run by design: their "held" is in details["points"].
void warn_points_not_held(results::TestRecorder& rec, const std::vector<CurveRun>& runs, int threads);

/// The sizing answer of `slo` over `runs` (runner::record_slo_answers; within every bound: the
/// lowest answer, the first crossing of any): headline metrics max_tps_under_slo and
/// max_qps_under_slo (qps interpolated between the same two runs) when there is an answer, a
/// console line per bound, details["slo"] with each bound's answer and bracketing runs.
/// `cut_after`: the group of the last run when the curve did not run all its points, else "".
void record_slo_answers(results::TestRecorder& rec, const std::vector<CurveRun>& runs,
                        const std::vector<runner::SloBound>& slo, const std::string& cut_after);

}  // namespace drivelab::oltp::sysbench::detail
