#pragma once
/// \file curve.hpp
/// Rules shared by every kind that runs curves: vdbench-style curves (kind `vdbench`,
/// docs/synthetic.md; kinds `replay` and `vdi`, docs/vdi.md): a max run, then points at a
/// percentage of its rate; and the OLTP curves of kinds `tpcc` and `sysbench` (`rate: curve`,
/// docs/oltp-tpcc.md, docs/oltp-sysbench.md). Also the sizing answer read off a curve: the
/// highest rate whose latency figure stays within a bound (an SLO, issue 32).
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/config/document.hpp"
#include "drivelab/results/record.hpp"
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

/// One open-loop point of an OLTP `rate: curve` (kind sysbench), as run_rate_curve hands it over.
struct RateCurvePoint {
  std::size_t index = 0;  ///< 1 for the first point (0 is the max run): the point's random stream
  double pct = 0;         ///< of the job's max run rate
  std::string group;      ///< curve_point_group(pct)
  double rate_per_s = 0;  ///< this host's arrival rate: its share of pct % of the job's max run
};

/// Runs the open-loop points of an OLTP `rate: curve` after its closed-loop max run measured
/// `max_rate` (this host's, per second), in `curve` order. As vdbench's curves on several hosts
/// (docs/multihost.md): the points are percentages of the job's max run (max_rate summed over the
/// hosts), each host offering its share (sum / hosts); every decision to go on is taken on the
/// sums, so the hosts run the same points. `stopped` is asked before the curve and before each
/// point; `run_point` runs one point and returns whether the test was stopped or failed during
/// it; the curve ends after the first point stopped on any host. Collective on several hosts
/// (TestContext::sum_over_hosts). Returns the job's max run rate: 0 when the max run completed
/// nothing (no point is run then: there is no rate to take a share of).
double run_rate_curve(const TestContext& ctx, double max_rate, const std::vector<double>& curve,
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
};

/// How a sizing answer was found (max_rate_within).
enum class SloOutcome {
  interpolated,         ///< between the two points that bracket the crossing
  first_point_exceeds,  ///< the lowest-rate point is already above the bound: answer 0
  bound_not_reached,    ///< no point is above the bound: the highest achieved rate, a lower bound
  no_points,            ///< nothing measured: answer 0
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
};

/// The sizing answer of a curve: points ordered by achieved rate (ties kept in the given order),
/// a point is within the bound when value <= bound. The answer is the first crossing: the rate
/// where the line from the last point within the bound to the first point beyond it reaches the
/// bound, linearly interpolated (rate = r_below + (bound - v_below) x (r_above - r_below) /
/// (v_above - v_below)); a point within the bound at a higher rate after a crossing does not
/// count (every lower rate must meet the bound too). The first point beyond the bound: rate 0,
/// first_point_exceeds. No point beyond it: the highest achieved rate, bound_not_reached (the
/// true answer lies above what was measured). No points: 0, no_points. A point whose rate or
/// value is not finite is left out.
SloAnswer max_rate_within(std::vector<CurveSample> points, double bound);

/// A bound of a sizing question, as the protocol's `slo:` states it.
struct SloBound {
  std::string key;     ///< the `slo:` key ("p99_ms", "new_order_p99_ms")
  std::string figure;  ///< what is bounded, as people read it ("p99 latency", "New-Order p99")
  double bound_ms = 0;
};

/// One line for people: "max IOPS with p99 latency <= 5 ms: 12,345 IOPS (between max 11,000 IOPS
/// at 4.1 ms and point_120 13,000 IOPS at 6.2 ms)", or why there is no answer (first point
/// already beyond the bound; bound not reached, a lower bound). `rate_word`: "IOPS", "TPS".
std::string describe(const SloAnswer& a, const SloBound& b, std::string_view rate_word);

/// The record's details entry of one answer: {key, figure, bound_ms, answer, outcome, reason,
/// below: {group, rate, value_ms}, above: {...}}; `metric` names the headline metric it gave.
results::Json to_json(const SloAnswer& a, const SloBound& b, std::string_view metric, std::string_view rate_word);

/// One bound of a sizing question and each curve run's figure for it (CurveSample::value, in the
/// bound's unit).
struct SloQuestion {
  SloBound bound;
  std::vector<CurveSample> samples;
};

/// The answers of a curve's sizing questions (answer_slo).
struct SloAnswers {
  results::Json details = results::Json::array();  ///< to_json of each question's answer, in order
  SloAnswer binding;         ///< within every bound: the lowest answer (the first crossing of any)
  std::string binding_text;  ///< describe() of `binding`, prefixed "within every slo bound; the
                             ///< lowest: " when there are several questions
};

/// Answers each question (max_rate_within), writes its describe() line to the console
/// (TestRecorder::message) and returns the answers; `metric` names the headline metric the caller
/// records the binding answer as (max_tps_under_slo). No questions: no answers, binding no_points.
SloAnswers answer_slo(results::TestRecorder& rec, std::vector<SloQuestion> questions, std::string_view metric,
                      std::string_view rate_word);

/// Another figure of the curve's runs at the answer `a` (tpmC, QPS): linearly interpolated
/// between the bracketing runs with a.fraction (interpolated), the highest run's
/// (bound_not_reached), else 0. `figure_of` gives a run's figure by its group.
double figure_at(const SloAnswer& a, const std::function<double(const std::string& group)>& figure_of);

}  // namespace drivelab::runner
