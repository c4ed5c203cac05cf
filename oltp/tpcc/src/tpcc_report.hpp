#pragma once
// What a TPC-C run writes into its record: interval values, headline metrics, per-type groups,
// histograms, server counter differences and the warnings that say when the driver rather than
// the drive was measured. Names, units and meanings are listed in docs/oltp-tpcc.md section 5.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "drivelab/core/cpu_usage.hpp"
#include "drivelab/oltp/tpcc/tpcc_config.hpp"
#include "drivelab/oltp/tpcc/tpcc_driver_options.hpp"
#include "drivelab/results/recorder.hpp"

namespace drivelab::oltp::tpcc::detail {

/// TPC-C's ceiling: with the clause 5.2.5 keying and think times, 10 terminals per warehouse
/// cannot produce more than about 12.86 New-Orders per minute per warehouse.
inline constexpr double kMaxTpmCPerWarehouse = 12.86;

/// Queue wait above this share of the response time at p50 means the pool, not the database,
/// shaped the response times: warned.
inline constexpr double kQueueWaitWarnShare = 0.10;

/// A transaction type's service time p99 at or above this multiple of its p50 means the
/// service time itself stalled (the server or its drive held the connections: I/O, checkpoint or
/// lock waits), not the pool's size. A steady database keeps each type's p99 within a few times
/// its p50 (a type's work varies about 3x: 5 to 15 order lines, clause 2.4.1.3).
inline constexpr double kServiceStallRatio = 10.0;

/// Service time p99 / p50 is read from a type with at least this many transactions (else from
/// all types together).
inline constexpr std::uint64_t kServiceStallMinSamples = 100;

/// The warning of a run whose queue wait is above kQueueWaitWarnShare of the response time at
/// p50, or nothing. It says what was measured (queue wait and response time at p50, the pool's
/// connections and busy share, the service time p50 / p99 on a connection, and the type with the
/// largest p99 / p50) and what the numbers point at: the service time steady (every type's
/// p99 below kServiceStallRatio x its p50): the pool shaped the response times, raise
/// `connections` if the database has capacity left (open loop: or lower `rate`); the service time
/// stalled: the database server or its drive held the connections, and more connections would
/// not help.
std::optional<std::string> pool_wait_warning(const tpcc::DriverTotals& totals, bool open_loop);

/// Time a login may take after it is due before it counts as slow (a login to a local server
/// takes milliseconds; a connect time-out is 10 s).
inline constexpr double kLoginGraceS = 1.0;

/// The warning when only `logged_in` of `users` dedicated users were connected as the measured
/// phase began after `warmup_s` of warm-up. If the warm-up ended before the login schedule (user
/// i at i / login_rate; 0 = all at once) plus kLoginGraceS, the warm-up was too short: make it at
/// least users / login_rate + kLoginGraceS. Otherwise the missing users were still connecting
/// long after their login was due: the server accepts sessions slowly (a connect waits up to its
/// time-out), which a longer warm-up would not fix.
std::string login_lag_warning(int logged_in, int users, double login_rate_per_s, double warmup_s);

/// One interval's values, in this order: tps, tpm_c, latency_avg_ms, latency_p95_ms, latency_p99_ms,
/// retries, errors, reconnects, queue_len_avg, queue_len_max, pool_util_pct.
results::Interval to_interval(const tpcc::IntervalStats& iv, double t_s);

/// after - before for every number present in both (server counters are cumulative).
results::Json counter_delta(const results::Json& before, const results::Json& after);

struct RunFacts {
  const tpcc::TpccConfig* config = nullptr;
  CpuTimes cpu;  ///< this process during the measured phase
  std::uint64_t peak_rss_bytes = 0;
  results::Json counters_before;  ///< null when unavailable
  results::Json counters_after;
  /// profile: hammerdb: New-Orders per minute from SUM(d_next_o_id) before and after the
  /// measured phase (HammerDB's NOPM); empty otherwise or when it could not be read.
  std::optional<double> nopm_db;
  /// This driver's terminals (the mix check's allowance for partial decks, mix_shortfalls).
  int terminals = 0;
};

/// Headline metrics, groups, histograms, details and warnings of the measured phase. Returns why
/// the test is not complete when the completed transactions miss clause 5.2.4.2's minimum mix
/// under profile: tpcc, whose deck promises it (mix_shortfalls); under profile: hammerdb, whose
/// independent draw does not, a miss is a warning. `after_rates`, when given, is called right
/// after the rate headlines (tps, tpm_c, nopm under profile: hammerdb), so what it records (the
/// sizing answers of a curve) comes among the summary's first columns.
std::optional<std::string> record_tpcc_results(results::TestRecorder& rec, const tpcc::DriverTotals& totals,
                                               const RunFacts& facts, const std::function<void()>& after_rates = {});

/// One run of a `rate: curve` (the closed-loop max run or an open-loop point) and what it measured.
struct CurveRun {
  std::string group;         ///< "max", "point_050" (runner::curve_point_group)
  double requested_pct = 0;  ///< of the max run's TPS; 0 for the max run
  double requested_tps = 0;  ///< this host's arrival rate; 0 = closed loop
  tpcc::DriverTotals totals;

  double tps() const noexcept;             ///< committed transactions of all types per second
  double tpm_c() const noexcept;           ///< committed New-Orders per minute
  std::uint64_t commits() const noexcept;  ///< committed transactions of all types
  /// "curve point 50%: requested ..., achieved ..., p99 ..." (runner::curve_run_line).
  std::string console_line() const;
};

/// The response time figure a bound is on (`slo:`), in ms: the bound's percentile of its type's
/// response times (SloBound::subject, a tpcc::to_string(TxType)), or of all types' (subject "");
/// NaN when the run completed none of them (no figure, so no curve sample: runner::max_rate_within).
double slo_figure_ms(const tpcc::DriverTotals& totals, const runner::SloBound& bound);

/// A point's metric groups: `<group>` (requested_pct, arrival_rate, tps, tpm_c, response time
/// avg/p50/p90/p95/p99/max, queue wait and service time p99, errors, measured_s) and
/// `<group>.<type>` per transaction type (tps, response time avg/p50/p90/p99/max), with the
/// histograms response_time.<group> and response_time.<group>.<type>.
void record_curve_point(results::TestRecorder& rec, const CurveRun& run);

/// details["points"]: every run of the curve in order, {group, requested_pct, requested_tps,
/// achieved_tps, tpm_c, latency_avg_ms, latency_p99_ms, <type>_p90_ms, <type>_p99_ms, measured_s}.
results::Json curve_points_json(const std::vector<CurveRun>& runs);

/// The sizing answer of `slo` over `runs` (runner::record_slo_answers: the answer within every
/// bound is the lowest of theirs, the first crossing of any): headline metrics max_tps_under_slo
/// and max_tpmc_under_slo (tpm_c interpolated between the same two runs) when there is an answer,
/// a console line per bound, details["slo"] with each bound's answer and bracketing runs.
/// `cut_after`: the group of the last run when the curve did not run all its points, else "".
void record_slo_answers(results::TestRecorder& rec, const std::vector<CurveRun>& runs,
                        const std::vector<runner::SloBound>& slo, const std::string& cut_after);

/// Peak resident set size of this process (VmHWM), 0 if unknown.
std::uint64_t peak_rss_bytes();

}  // namespace drivelab::oltp::tpcc::detail
