#pragma once
// The intervals of a merge of hosts' records, merged by time (docs/results.md "Merging hosts",
// "Intervals by time"). Internal to results/: merge.cpp calls it for every test it merges, so the
// online merge (rank 0) and `drivelab results merge` share it through merge_host_records.
#include <map>
#include <string>
#include <vector>

#include "drivelab/results/record.hpp"
#include "merge_inputs.hpp"

namespace drivelab::results::detail {

/// A stall of a rank longer than this (s) makes the merged test, and the run, `failed`; a
/// shorter one is a warning. Three seconds: the barrier release and the interval clock's own
/// lateness are milliseconds on a quiet host, but a loaded 2-core host (a parallel build and test
/// suite, load ~10) was seen to close a 1 s interval 1.9 s late with every process running; a
/// paused VM or a SIGSTOPped rank is stopped for longer.
inline constexpr double kStallToleranceS = 3.0;

/// A rank's interval is stalled when it is longer than both the interval setting and the other
/// ranks' intervals over the same time by more than this fraction: its interval clock did not run
/// for half an interval at least (the process or its host was stopped: SIGSTOP, a paused VM).
inline constexpr double kStallFraction = 0.5;

/// A rank takes part in a window when its intervals placed in it (by their midpoint) cover at
/// least this fraction of the window.
inline constexpr double kCoverFraction = 0.5;

/// What the intervals of one merged test are, and what the merge found out about the ranks.
struct MergedIntervals {
  std::vector<Interval> intervals;
  /// One per flagged rank: "rank 1 (host b): stalled 5.30 s in the measured phase ...".
  std::vector<std::string> warnings;
  /// The flags beyond kStallToleranceS (the merged test's reason; empty: none).
  std::vector<std::string> beyond_tolerance;
  /// A time-limited test whose ranks did not all measure the same window (a rank measured more
  /// than kStallFraction of an interval outside the common window: a stall, a phase that ran
  /// long, a late start): per value its intervals carry (a rate the catalogue sums over hosts,
  /// on every rank), each rank's rate over the common window — the operations of its intervals
  /// inside the window (value x the part of the interval inside it; a stalled interval's spread
  /// evenly over its length) over the window's length — by rank as in `tests`. Empty otherwise:
  /// each rank's own rate over its own measured phase is then its rate over the common window up
  /// to the interval clock's jitter.
  std::map<std::string, std::vector<double>> window_rates;
  /// details.intervals of the merged test: {"merged_by": "time" | "index", "common_window_s":
  /// [start, end] (by time), "stalls": [{"rank", "stalled_s", "outside_common_window_s"}]}.
  Json details;
};

/// Merges the intervals of one test over `hosts` (tests[i] is hosts[i]'s). `interval_s` is the
/// test's interval setting (the run config's tests[].interval_s; 0 when unknown, -1 when the
/// hosts' settings differ). By time when the intervals follow one interval clock (their median
/// length within 25% of interval_s, or interval_s unknown), else by index (a render's pipeline
/// phases, hosts with different intervals). `time_limited`: the test ran `duration:` on every rank
/// (window_rates is computed only then: a fixed-work test's hosts end when their work is done). Pure.
MergedIntervals merge_test_intervals(const std::vector<const Host*>& hosts, const std::vector<const TestRecord*>& tests,
                                     double interval_s, bool time_limited);

}  // namespace drivelab::results::detail
