#pragma once
/// \file curve.hpp
/// Rules shared by every kind that runs curves: vdbench-style curves (kind `vdbench`,
/// docs/synthetic.md; kinds `replay` and `vdi`, docs/vdi.md): a max run, then points at a
/// percentage of its rate; and the OLTP curves of kinds `tpcc` and `sysbench` (`rate: curve`,
/// docs/oltp-tpcc.md, docs/oltp-sysbench.md). Also the sizing answer read off a curve: the
/// highest rate whose latency figure stays within a bound (an SLO, issue 32).
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/config/document.hpp"
#include "drivelab/core/histogram.hpp"
#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/catalogue_types.hpp"
#include "drivelab/results/record.hpp"
#include "drivelab/results/recorder.hpp"
#include "drivelab/runner/emulator.hpp"

namespace drivelab::runner {

/// The most points a `curve:` list takes (kinds vdbench, replay, vdi, tpcc, sysbench): each point
/// is a run of its own warm-up and measured time, and vdbench's curves have about ten; a longer
/// list is refused at its key rather than planned.
inline constexpr std::size_t kMaxCurvePoints = 1000;

/// The OLTP kinds' default `curve:` (tpcc `rate: curve`): vdbench's default points (10, 50, 70,
/// 80, 90, 100%: VdbenchConfig::curve), then past the max run to 110 and 120%, as the review
/// labs' curves go (docs/synthetic.md, the published peaks "of its curve to 120%").
inline constexpr std::array<double, 8> kDefaultSizingCurve{10, 50, 70, 80, 90, 100, 110, 120};

/// Decodes a `curve:` list of percentages of the max run (numbers, "50" or "50%"), each above 0
/// and at most 1000, at most kMaxCurvePoints of them. Errors at the node ("expected a list of
/// percentages of the max run, e.g. [10, 50, 70, 80, 90, 100, 110, 120]") or at the element
/// ("curve points must be above 0 and at most 1000%, found 0"). Returns the points given, or
/// nothing when none were valid (the caller keeps its default).
std::vector<double> decode_curve(const config::Node& curve);

/// The metric group of the curve point at pct %: "point_050", "point_120"; a fractional
/// percentage gives "point_12_5".
std::string curve_point_group(double pct);

/// The console line of an OLTP `rate: curve` before its run (Emulator::schedule): "rate: curve:
/// closed-loop max run + 8 open-loop points, each warm-up 60 s + measured 300 s: 3240 s after the
/// load".
std::string rate_curve_schedule(std::size_t points, const TestSettings& settings);

/// The percentiles an OLTP `slo:` bounds (kind sysbench: `p<N>_ms`; kind tpcc also
/// `<type>_p<N>_ms`): the review labs' and TPC-C's 90th (clause 5.2.5.3), 95th (sysbench's
/// default --percentile) and 99th.
inline constexpr std::array<int, 3> kOltpSloPercentiles{90, 95, 99};

/// A bound of a sizing question, as the protocol's `slo:` states it.
struct SloBound {
  std::string key;     ///< the `slo:` key ("p99_ms", "new_order_p99_ms")
  std::string figure;  ///< what is bounded, as people read it ("p99 latency", "New-Order p99")
  double bound_ms = 0;
  double percentile = 99;  ///< the percentile bounded (kOltpSloPercentiles; vdbench's mean_ms: 0)
  /// Whose figure it is, as the kind names it in the key's prefix: "" for the kind's every
  /// transaction (`p99_ms`), "new_order" for `new_order_p99_ms` (kind tpcc maps it to its TxType).
  std::string subject;
};

/// One kind of figure an OLTP `slo:` bounds (decode_slo): keys `<name>_p<N>_ms` (`p<N>_ms` when
/// name is ""), read by people as `figure` with "{}" replaced by "p<N>" ("New-Order {}",
/// "{} latency").
struct SloSubject {
  std::string_view name;
  std::string_view figure;
};

/// Decodes an OLTP `slo:` mapping: for each N of kOltpSloPercentiles and each subject in order,
/// the key `<subject>_p<N>_ms` in ms (0.001 .. 1e7). Undefined `n`: none. Errors at the key
/// (MapReader: not a number, out of range, an unknown key) and at `n` when it gives no bound:
/// "slo needs at least one bound in ms" + `keys_hint` (": p99_ms, ...").
std::vector<SloBound> decode_slo(const config::Node& n, std::span<const SloSubject> subjects,
                                 std::string_view keys_hint);

/// Writes an OLTP test's `rate` into its effective configuration `j`: the number of an open loop
/// (rate_per_s > 0), or "curve" with `curve` and `slo` (as {key: bound_ms}, when given). Nothing
/// for a closed loop, so its records keep their keys.
void rate_to_json(results::Json& j, double rate_per_s, bool rate_curve, const std::vector<double>& curve,
                  const std::vector<SloBound>& slo);

/// The warning when `slo:` (at `slo`) is given on a test that is not a `rate: curve`: it is then
/// ignored (it is kept so that one override turns a curve into a run). file:line:col: key: text,
/// as a config::Diagnostic reads; "" when `slo` is undefined or `rate_curve`.
std::string slo_without_curve_warning(const config::Node& slo, bool rate_curve);

/// Refuses, at the `rate` key of `section`, an open-loop rate at which fewer than one arrival is
/// expected in the measured phase (rate x duration < 1): such a test would measure nothing.
void check_rate_for_duration(const config::Node& section, double rate_per_s, const TestSettings& settings);

/// Whether an open loop held its rate: `achieved` per second within the Poisson count's noise of
/// `requested` over `measured_s` (3 standard deviations of the expected arrivals requested x
/// measured_s, at least kRateHeldShare short).
inline constexpr double kRateHeldShare = 0.05;
bool rate_held(double requested, double achieved, double measured_s) noexcept;
/// The tolerance rate_held allows: max(kRateHeldShare, 3 / sqrt(expected arrivals)).
double rate_tolerance(double requested, double measured_s) noexcept;

/// Why an OLTP test fails whose measured phase completed no transaction (its latency figures
/// would read 0 ms and its TPS 0 as if measured): "the measured phase (10 s) completed no
/// transaction", with the open loop's expected arrivals (rate_per_s x measured_s) when
/// rate_per_s > 0, and what to change.
std::string nothing_completed(double rate_per_s, double measured_s);

/// The console line after a run of an OLTP `rate: curve` (as vdbench prints each run): "curve
/// point 50%: requested 1,234.5 TPS, achieved 1,230.2 TPS (99.7%), p99 4.20 ms", flagged
/// "; SATURATED: achieved below the requested rate" when the rate was not held (rate_held); the
/// max run: "curve max run: 2,469.0 TPS (closed loop), p99 9.80 ms". A run that completed nothing
/// says so.
std::string curve_run_line(const std::string& group, double pct, double requested, double achieved, double p99_ms,
                           double measured_s);

/// The warning of an open-loop point that completed more than the closed-loop max run by more than
/// the Poisson noise of its own count (rate_tolerance of the max run's rate over the point's
/// measured time), or "" when it did not. Such a point does not make the sizing answer wrong (the
/// answer reads every run's achieved rate), but the max run was not the maximum: with every
/// session busy the database served less than with fewer waiting (lock and latch contention),
/// or the max run ran colder (docs/oltp-tpcc.md, "A point above the max run"). "point_120
/// completed 545.0 TPS, 26.5% more than the max run's 431.0 TPS (closed loop): ...".
std::string above_max_run(const std::string& group, double achieved, double max_run, double measured_s);

/// The console line of an OLTP curve point stopped (or failed) during its measured phase: such a
/// fragment is left out of the curve and of the sizing answer — its rate is mostly the warm-up's
/// backlog draining (a fresh review saw a point cut 0.44 s in at 118% of its rate become the
/// answer's upper bracket). "point_100 was cut 0.443 s into its 3 s measured phase: left out of
/// the curve and its answer".
std::string cut_point_line(const std::string& group, double measured_s, std::chrono::nanoseconds duration);

/// What kinds tpcc and sysbench do as each run of their `rate: curve` finishes (`Run`: their
/// CurveRun, with group, tps(), totals.measured_s and console_line()): `record(rec, run)` records its
/// metric groups, which are journaled at once (TestRecorder::flush_groups: a killed curve recovers
/// the runs it finished), the console line, and above_max_run's warning against `max_run` (none
/// for the max run itself).
template <class Run, class RecordRun>
void report_curve_run(results::TestRecorder& rec, const Run& run, const Run& max_run, RecordRun&& record) {
  record(rec, run);
  rec.flush_groups();
  rec.message(run.console_line());
  if (&run == &max_run) return;
  if (std::string w = above_max_run(run.group, run.tps(), max_run.tps(), run.totals.measured_s); !w.empty())
    rec.warning(std::move(w));
}

/// The rates an OLTP curve run's group `group` starts with (kinds tpcc and sysbench, their
/// record_curve_point): requested_pct (0 for the closed-loop max run); for an open-loop point
/// (requested_tps > 0) arrival_rate, the `arrivals` of its measured phase per second of
/// `measured_s` (0 when nothing was measured), with the rate requested in its description; and
/// the achieved `tps`, described by `tps_what`.
void record_curve_run_rates(results::TestRecorder& rec, const std::string& group, double requested_pct,
                            double requested_tps, std::uint64_t arrivals, double measured_s, double tps,
                            std::string_view tps_what);

/// The latency figures of an OLTP curve run's group `group` (kinds tpcc and sysbench, their
/// record_curve_point): avg, p50, p90, p95, p99 and max of `h` (its transactions of every type)
/// in ms, of the family latency, read from the histogram `histogram_name` (record_group_latency).
void record_curve_run_latency(results::TestRecorder& rec, const std::string& group, const LatencyHistogram& h,
                              std::string_view histogram_name);

/// One open-loop point of an OLTP `rate: curve` (kind sysbench), as run_rate_curve hands it over.
struct RateCurvePoint {
  std::size_t index = 0;  ///< 1 for the first point (0 is the max run): the point's random stream
  double pct = 0;         ///< of the job's max run rate
  std::string group;      ///< curve_point_group(pct)
  double rate_per_s = 0;  ///< this host's arrival rate: its share of pct % of the job's max run
};

/// The console line as an OLTP curve point starts: "curve point 50%: 1,222 TPS requested (open
/// loop)", the rate as curve_run_line gives it after the point.
std::string curve_point_start_line(const RateCurvePoint& p);

/// Runs the open-loop points of an OLTP `rate: curve` after its closed-loop max run measured
/// `max_rate` (this host's, per second), in `curve` order. As vdbench's curves on several hosts
/// (docs/multihost.md): the points are percentages of the job's max run (max_rate summed over the
/// hosts), each host offering its share (sum / hosts); every decision to go on is taken on the
/// sums, so the hosts run the same points. `stopped` is asked before the curve and before each
/// point; `run_point` runs one point and returns whether the test was stopped or failed during
/// it; the curve ends after the first point stopped on any host. Collective on several hosts
/// (TestContext::sum_over_hosts). Returns the job's max run rate, 0 when the max run completed
/// nothing (no point is run then: there is no rate to take a share of), and whether every point
/// ran to its end (false when a stop or a failure on any host cut the curve short).
struct RateCurveResult {
  double max_rate = 0;
  bool complete = false;
};
RateCurveResult run_rate_curve(const TestContext& ctx, double max_rate, const std::vector<double>& curve,
                               const std::function<bool()>& stopped,
                               const std::function<bool(const RateCurvePoint&)>& run_point);

/// vdbench's curve rate: pct % of the max run's average IOPS (both truncated to integers, as
/// vdbench computes it, RD_entry.set_iorate), rounded UP to a multiple of 100 when above 1,000
/// IOPS, else of 10. 0 when max_iops or pct is not positive.
/// curve_rate(12345.6, 10) = 1300, curve_rate(950, 50) = 480, curve_rate(2000, 50) = 1000.
std::uint64_t curve_rate(double max_iops, double pct) noexcept;

/// One run of a curve as a sizing answer reads it.
struct CurveSample {
  std::string group;  ///< the run's metric group ("max", "point_050")
  double rate = 0;    ///< achieved rate (IOPS, TPS)
  double value = 0;   ///< the latency figure the bound is on, in the bound's unit
  /// The rate the run was asked for, which orders the curve: a point's requested rate; the
  /// closed-loop max run asks for all the target gives (curve_sample_requested: +infinity, so it
  /// comes last). 0 when not known: the achieved rate orders the sample.
  double requested = 0;
};

/// CurveSample::requested of a run asked for `requested_rate` (0: the closed-loop max run, +infinity).
double curve_sample_requested(double requested_rate) noexcept;

/// How a sizing answer was found (max_rate_within).
enum class SloOutcome {
  interpolated,         ///< between the two points that bracket the crossing
  first_point_exceeds,  ///< the lowest-rate point is already above the bound: no answer (rate 0)
  bound_not_reached,    ///< no point is above the bound: the highest achieved rate, a lower bound
  no_points,            ///< nothing measured: no answer (rate 0)
  /// bound_not_reached on a curve that did not run all its points (stopped, failed): the
  /// highest rate measured is only a lower bound of a partial curve (qualify)
  interrupted_lower_bound,
};
std::string_view to_string(SloOutcome o) noexcept;

/// The highest rate whose figure stays within a bound, and the points that bracket it.
struct SloAnswer {
  double rate = 0;
  SloOutcome outcome = SloOutcome::no_points;
  std::optional<CurveSample> below;  ///< the last point within the bound before the crossing
  std::optional<CurveSample> above;  ///< the first point beyond it
  /// interpolated: where the answer lies from below (0) to above (1), to interpolate other
  /// figures of the two points (tpmC) the same way; 0 otherwise.
  double fraction = 0;
  /// The curve did not run all its points: the group of its last run ("max", "point_080"); ""
  /// for a complete curve (qualify).
  std::string cut_after;

  /// Whether `rate` is the answer a headline metric may carry: interpolated (on a complete or a
  /// cut curve: the crossing was measured) or bound_not_reached on a complete curve (a lower
  /// bound over everything the curve asked for, said in the metric's description). Not for
  /// first_point_exceeds and no_points (there is no answer: 0 would read as one) nor for
  /// interrupted_lower_bound (a partial curve's lower bound, not the answer).
  bool is_headline() const noexcept;
};

/// The sizing answer of a curve: points ordered by the rate they were asked for
/// (CurveSample::requested: the curve's order, as vdbench runs and reports it: 10%, 50%, ..., the
/// max run last; ties kept in the given order), so a point that stalled (asked for 20%, achieved
/// less than the 10% point) keeps its place instead of becoming the lowest; a point is within the
/// bound when value <= bound. The answer is the first crossing: the rate where the line from the
/// last point within the bound to the first point beyond it reaches the bound, linearly
/// interpolated (rate = r_below + (bound - v_below) x (r_above - r_below) / (v_above - v_below));
/// but never less than the highest rate a point before the crossing achieved (an overloaded point
/// that delivered less than one within the bound: that point is `below`, fraction 0). A point
/// within the bound after a crossing does not count (every lower rate must meet the bound too).
/// The first point beyond the bound: rate 0, first_point_exceeds. No point beyond it: the highest achieved rate,
/// bound_not_reached (the true answer lies above what was measured). No points: 0, no_points. A point whose rate or
/// value is not finite is left out.
SloAnswer max_rate_within(std::vector<CurveSample> points, double bound);

/// The answer `a` of a curve that did not run all its points (`cut_after`: the group of its last
/// run; "" for a complete curve: `a` unchanged). A crossing among the runs stands (interpolated,
/// first_point_exceeds: every point run beyond it would be beyond the bound too, as the answer
/// is the first crossing); bound_not_reached becomes interrupted_lower_bound.
SloAnswer qualify(SloAnswer a, std::string cut_after);

/// One line for people: "max IOPS with p99 latency <= 5 ms: 12,345 IOPS (between max 11,000 IOPS
/// at 4.1 ms and point_120 13,000 IOPS at 6.2 ms)", or why there is no answer (first point
/// already beyond the bound; bound not reached, a lower bound; "at least 1,234 TPS (curve
/// interrupted after point_080: ...)"). A cut curve's crossing adds "; the curve was cut after
/// point_080". `rate_word`: "IOPS", "TPS".
std::string describe(const SloAnswer& a, const SloBound& b, std::string_view rate_word);

/// The record's details entry of one answer: {key, figure, bound_ms, metric, answer, rate_unit,
/// outcome, reason, below: {group, rate, value_ms}, above: {...}}, and cut_after when the curve
/// was cut; `metric` names the headline metric it gives. `answer` is null when there is none
/// (first_point_exceeds, no_points); for interrupted_lower_bound it is the lower bound.
results::Json to_json(const SloAnswer& a, const SloBound& b, std::string_view metric, std::string_view rate_word);

/// One bound of a sizing question and each curve run's figure for it (CurveSample::value, in the
/// bound's unit).
struct SloQuestion {
  SloBound bound;
  std::vector<CurveSample> samples;
};

/// How a kind records the answers of its curve's sizing questions (record_slo_answers).
struct SloRecording {
  const results::MetricDef* rate_metric = nullptr;            ///< max_tps_under_slo
  std::string_view rate_word;                                 ///< "TPS"
  const results::MetricDef* figure_metric = nullptr;          ///< another figure at the answer: max_qps_under_slo
  std::string_view figure_word;                               ///< "qps", "tpm_c"
  std::function<double(const std::string& group)> figure_of;  ///< that figure of a run, by its group
  std::string cut_after;  ///< SloAnswer::cut_after: "" when the curve ran all its points
};

/// Answers each question (max_rate_within, qualify with how.cut_after), writes its describe()
/// line to the console (TestRecorder::message) and records details["slo"] (to_json of each). The
/// answer within every bound is the lowest (the first crossing of any; on a tie the lower bound
/// of a cut curve). When it is_headline(): headline metrics how.rate_metric (the rate) and
/// how.figure_metric (figure_of interpolated between the same runs, figure_at), described by its
/// line ("within every slo bound; the lowest: " first when there are several). Otherwise no
/// headline metric: a missing answer is not recorded as 0, nor a partial curve's lower bound as
/// the answer; details and the console say why. No questions: nothing.
void record_slo_answers(results::TestRecorder& rec, std::vector<SloQuestion> questions, const SloRecording& how);

/// record_slo_answers over the runs of an OLTP `rate: curve` (kinds tpcc and sysbench; `Run`:
/// their CurveRun, with group and tps()): a question per bound of `slo`, in which each run's
/// sample is {group, tps(), figure_ms(run, bound)} (NaN when the run has no such figure); the
/// rate max_tps_under_slo in "TPS", and the other figure `figure_metric` in `figure_word`, a run's
/// read by `figure(run)`. `cut_after`: SloRecording::cut_after.
template <class Run, class FigureMs, class Figure>
void record_oltp_slo_answers(results::TestRecorder& rec, const std::vector<Run>& runs, const std::vector<SloBound>& slo,
                             FigureMs&& figure_ms, const results::MetricDef& figure_metric,
                             std::string_view figure_word, Figure&& figure, const std::string& cut_after) {
  std::vector<SloQuestion> questions;
  for (const SloBound& b : slo) {
    SloQuestion& q = questions.emplace_back();
    q.bound = b;
    for (const Run& r : runs)
      q.samples.push_back({r.group, r.tps(), figure_ms(r, b), curve_sample_requested(r.requested_tps)});
  }
  const auto figure_of = [&](const std::string& group) {
    for (const Run& r : runs)
      if (r.group == group) return figure(r);
    return 0.0;
  };
  record_slo_answers(rec, std::move(questions),
                     {.rate_metric = &results::catalogue::max_tps_under_slo,
                      .rate_word = "TPS",
                      .figure_metric = &figure_metric,
                      .figure_word = figure_word,
                      .figure_of = figure_of,
                      .cut_after = cut_after});
}

/// Another figure of the curve's runs at the answer `a` (tpmC, QPS): linearly interpolated
/// between the bracketing runs with a.fraction (interpolated), the highest run's
/// (bound_not_reached), else 0. `figure_of` gives a run's figure by its group.
double figure_at(const SloAnswer& a, const std::function<double(const std::string& group)>& figure_of);

}  // namespace drivelab::runner
