#pragma once
/// \file compare.hpp
/// Whether a difference is real: a candidate's runs against a baseline's, per test and headline
/// metric (`drivelab compare BASELINE... -- CANDIDATE...`), the reporter's comparisons and tied
/// ranks (report.hpp), and the run-to-run noise of one setup (`drivelab noise`). The statistics
/// are core/inference.hpp's (issue 32; docs/confidence.md): the difference is the ratio of the
/// geometric means with its 95% interval (Welch's t on the log values), Mann-Whitney as a
/// cross-check where both sides have N >= 5, Holm's correction across the metrics of a test, and
/// the smallest change the data could have detected at 80% power.
///
/// Every complete result of a test on a side is one value (one run, or one repetition of a
/// record with repetitions: report::add_record makes one Result per test record). Partial results
/// (interrupted, failed) are left out, with a note, as the reporter leaves them out of its ranks.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/core/inference.hpp"
#include "drivelab/report/dataset.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::report {

/// The metrics compared per test: the first five headline metrics with a direction
/// (docs/results.md: the first five metrics of a test are its headline).
inline constexpr std::size_t kHeadlineMetrics = 5;

/// The inference library's direction of a ranked metric (Better::unranked has none: nullopt).
std::optional<inference::Better> inference_better(Better b) noexcept;

/// One metric of one test: the candidate's values against the baseline's.
struct MetricComparison {
  std::string metric;
  std::string unit;
  Better better = Better::unranked;
  std::vector<double> baseline;   ///< finite values, one per complete run or repetition, in input order
  std::vector<double> candidate;  ///< as `baseline`
  /// compare_ratio(baseline, candidate); nullopt when not tested (`not_tested` says why).
  std::optional<inference::RatioEstimate> estimate;
  std::string not_tested;  ///< "needs 2+ values on both sides (baseline 1, candidate 5)", "a value is not > 0"
  /// Holm-adjusted p-value across the tested metrics of the test (apply_holm); NaN when not tested.
  double p_holm = inference::kNaN;
  inference::Verdict verdict = inference::Verdict::no_difference;
  /// The verdict is worse and the interval of the change lies wholly beyond the margin in the
  /// worse direction (apply_holm's `margin_pct`; 0: beyond no change at all).
  bool worse_beyond_margin = false;

  bool tested() const noexcept { return estimate.has_value(); }
  /// Geometric mean of a side's values (NaN when empty or a value is not > 0).
  static double geometric_mean(const std::vector<double>& values) noexcept;
  /// (ratio - 1) x 100, and the interval of it; NaN when not tested.
  double change_pct() const noexcept;
  inference::Interval change_ci_pct() const noexcept;
};

/// Compares `baseline` with `candidate` (compare_ratio at `level` and `power`). Not tested (no
/// estimate, `not_tested` set) when a side has fewer than 2 values, a value is not finite and
/// > 0 (a ratio needs positive values), or the metric has no direction.
MetricComparison compare_values(std::string metric, std::string unit, Better better, std::vector<double> baseline,
                                std::vector<double> candidate, double level = 0.95, double power = 0.80);

/// Holm's step-down correction (inference::holm_adjust) across the tested metrics of `metrics`
/// (the metrics of one test, one pair of sides), then each one's verdict (inference::verdict with
/// the adjusted p) and worse_beyond_margin: verdict worse and the interval of the change wholly
/// below -margin_pct % (a metric better higher) or above +margin_pct % (better lower).
void apply_holm(std::vector<MetricComparison>& metrics, double margin_pct = 0);

/// The word of a verdict as printed: "faster" / "slower" for a metric that is a rate, a throughput,
/// a latency or an elapsed time (the catalogue's MetricKind; a metric the catalogue does not know:
/// better_for_unit's rate and time units), "better" / "worse" for any other (CPU per operation,
/// efficiency); "no difference detected"; "not tested" when there is no estimate.
std::string verdict_word(const MetricComparison& m);

/// Options of a comparison of two sides.
struct CompareOptions {
  double level = 0.95;
  double power = 0.80;
  /// --fail-if-worse P: a candidate worse by more than P % with confidence makes the exit status
  /// 1; nullopt: any metric judged worse does (margin 0).
  std::optional<double> fail_if_worse_pct;
};

/// One test: its N per side and its metrics, Holm across them.
struct TestComparison {
  std::string test;            ///< test key (report::test_key; `name (config N)` for another workload on a side)
  std::size_t n_baseline = 0;  ///< complete results of the test on the side
  std::size_t n_candidate = 0;
  std::string config_difference;  ///< "" when both sides ran the same configuration; else what differs
  std::vector<MetricComparison> metrics;
};

/// Exit statuses of `drivelab compare`, as diff(1) has them.
inline constexpr int kCompareNoWorse = 0;
inline constexpr int kCompareWorse = 1;
inline constexpr int kCompareBadInput = 2;

struct CompareResult {
  CompareOptions options;
  std::vector<TestComparison> tests;
  /// Bad input, each one line naming the test and side: N < 2 on a side, no common test. Any makes
  /// the exit status 2 (what could be compared is still shown).
  std::vector<std::string> problems;
  /// Tests or metrics on one side only, partial results left out, configurations that differ,
  /// metrics not tested, the inputs' own notes.
  std::vector<std::string> notes;

  /// 2 when `problems` is not empty; 1 when a metric is worse_beyond_margin; else 0.
  int exit_status() const noexcept;
};

/// Compares every test key present on both sides (their complete measured results; other origins
/// are not runs of ours and are ignored with a note) metric by metric: the headline metrics with a
/// direction that both sides have (name and unit), in the baseline's order.
CompareResult compare(const Dataset& baseline, const Dataset& candidate, const CompareOptions& opt = {});

/// The aligned table printed by `drivelab compare` (docs/confidence.md), then the notes and
/// problems.
std::string to_text(const CompareResult& r);
/// The `--json FILE` document, schema "drivelab.compare/1" (docs/confidence.md lists every key).
results::Json to_json(const CompareResult& r);

/// Run-to-run noise of one setup (`drivelab noise`): per test and headline metric, the summary of
/// its complete results and the change a comparison of two such sets (same N, same spread) would
/// detect at 80% power (compare_ratio of the values against themselves: detectable_change).
struct NoiseRow {
  std::string test, metric, unit;
  Better better = Better::unranked;
  inference::Summary summary;
  double detectable_change_pct = inference::kNaN;  ///< NaN: fewer than 2 values, or a value not > 0
};
std::vector<NoiseRow> noise_rows(const Dataset& runs);
/// The aligned table of `drivelab noise`.
std::string noise_text(const std::vector<NoiseRow>& rows);

}  // namespace drivelab::report
