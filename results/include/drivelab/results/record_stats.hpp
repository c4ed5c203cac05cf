#pragma once
/// \file record_stats.hpp
/// The statistics a record carries about its own numbers (issue 32; docs/results.md
/// "Repetitions", docs/confidence.md): the summary of a repeated run's repetitions per test, and
/// one test's within-run confidence interval of its rate by batch means. The computations are
/// core/inference.hpp's; this file decides what goes in (which tests, metrics and intervals) and
/// how it is written. Pure and deterministic: the runner, `results recover` and `results merge`
/// call it on the record they hold and get the same answer.
#include <optional>
#include <string>

#include "drivelab/core/inference.hpp"
#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::results {

/// "oltp" for a test of a run that does not repeat; "oltp (repetition 2)" for one that does.
std::string test_label(const TestRecord& t);

/// True when `t` counts in its test's statistics: a repetition (repetition > 0) that is complete
/// and not discarded.
bool counts_as_repetition(const TestRecord& t) noexcept;

/// RunRecord::repetitions of `r`: one object per test name that has repetitions (repetition > 0),
/// in the order of their first repetition:
///   {"test": name, "n": repetitions counted, "metrics": [{"name", "unit", "n", "mean", "median",
///    "stddev", "cv", "ci95_low", "ci95_high"[, "median_ci95_low", "median_ci95_high"]}]}
/// Counted: counts_as_repetition(). Metrics: the headline metrics of the counted repetitions that
/// are figures of merit (the catalogue's Direction higher or lower; a name the catalogue does not
/// know counts too), in the order of the first counted repetition, each over the repetitions where
/// it is finite (its own n), by inference::summarize at 95% with the bootstrap seeded by r.seed:
/// mean and its Student t interval, median, sample standard deviation, cv = stddev / |mean|; the
/// median's interval only from n = inference::kMinBootstrapN. A figure that cannot be computed
/// (n = 1: stddev, cv, interval) is null. A test none of whose repetitions counts has n 0 and no
/// metrics. An empty array when no test repeats.
Json summarize_repetitions(const RunRecord& r);

/// One test's within-run confidence interval of its mean rate (issue 32 item 2): batch means over
/// the per-interval values of its rate (inference::batch_means at 95%, target ±2%). Within-run
/// noise only: it says nothing of how another run would come out.
struct WithinRun {
  const RateInterval* rate = nullptr;  ///< the rate and its bounds' metrics (catalogue.hpp)
  inference::BatchMeans batch_means;
  double measured_s = 0;  ///< the intervals used x their length
  std::size_t intervals = 0;
};

/// The intervals of `t` that batch_means takes: those of the rate's full length (the last, shorter
/// interval left out), when the test has at least 4 of them, all with the rate, and its intervals
/// are of one steady workload (no progress value changes between them, such as a curve's
/// point_pct, a preconditioning's pass or a render's phase: the rate then changes by design).
/// nullopt otherwise.
std::optional<WithinRun> within_run_confidence(const TestRecord& t);

/// The warning of a test whose interval is wider than ±2%, or whose batch means stayed correlated
/// ("" when neither): "iops: measured 30 s give ±4.1% at 95% (within-run noise only); about
/// 125 s would give ±2%".
std::string within_run_warning(const WithinRun& w);

}  // namespace drivelab::results
