#pragma once
/// \file report.hpp
/// Ranking and output of `drivelab report`: results grouped by test and drive, each drive ranked
/// per metric in the metric's direction ("2nd of 9", as reviews say), repetitions summarised as
/// min/median/max and the mean with its 95% interval, drives tied where the 95% intervals of their
/// ratio cannot tell them apart, and each drive compared with the best with an interval
/// (report/compare.hpp, core/inference.hpp). Writers for
/// CSV, Markdown and one self-contained HTML page with charts (gnuplot, inlined SVG; PNG and SVG
/// files beside it). Model and every rule: docs/reporter.md.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "drivelab/core/process.hpp"
#include "drivelab/core/inference.hpp"
#include "drivelab/report/compare.hpp"
#include "drivelab/report/dataset.hpp"

namespace drivelab::report {

/// One drive's value of one metric of one test, over its repetitions (results of the same test
/// on the same drive).
struct Cell {
  std::string drive;
  Origin origin = Origin::measured;
  double median = 0;  ///< median of the repetitions (mean of the middle two for an even count)
  double min = 0;
  double max = 0;
  std::size_t n = 0;           ///< repetitions with a finite value
  bool partial = false;        ///< at least one repetition is not complete
  std::vector<double> values;  ///< the repetitions' finite values, in input order
  double mean = inference::kNaN;
  /// 95% interval of the mean (Student t, inference::summarize); invalid when n < 2.
  inference::Interval mean_ci{};
  /// 1 = best; 0 = not ranked. A drive's rank is 1 + the number of drives beyond doubt better than
  /// it: the 95% interval of their ratio (inference::compare_ratio) excludes 1 in the metric's
  /// direction. Where that cannot be tested (a side with fewer than 2 repetitions, or a value not
  /// > 0) a strictly better median counts instead, so single runs rank by median as before.
  /// Drives that cannot be told apart therefore share a rank (a tie).
  int rank = 0;
  int of = 0;  ///< ranked drives in this table
  /// Ranked cells: the drive has 2+ repetitions and no place was lost on medians alone (a drive
  /// with a better median that could not be tested against it). False: "not tested".
  bool rank_tested = false;
  std::vector<std::string> sources;
  unsigned hosts = 1;  ///< hosts the value is of (Result::hosts); a host row: its system's count
  /// Set on the per-host rows of a multi-host system (MetricTable::host_cells), never ranked.
  struct HostOf {
    std::string name;       ///< host name
    int rank = 0;           ///< MPI rank
    std::string status;     ///< the host's status for the test; "complete, missing" when repetitions differ
    bool left_out = false;  ///< under the system's partial row (MetricTable::left_out), not its ranked row
  };
  std::optional<HostOf> host;
};

/// "1st", "2nd", "3rd", "4th", "11th", "21st", ...
std::string ordinal(int n);
/// "2nd of 9"; "" when not ranked.
std::string place(const Cell& c);

struct MetricTable {
  std::string test;
  std::string metric;
  std::string unit;
  Better better = Better::unranked;
  std::vector<Cell> cells;  ///< best first; unranked (no finite value) last
  /// Partial results kept out of the ranking (ReportOptions::include_partial off): one cell per
  /// drive over its partial repetitions, in first-seen order, `partial` set, never ranked
  /// (rank 0) and never compared. A drive can have a cell in both lists.
  std::vector<Cell> left_out;
  /// Set for the reference block of published rows measured on another configuration than the
  /// test of their name (test `<name> (other configuration)`): what each side ran. Such a table
  /// is never ranked (rank 0) and never compared.
  std::string other_configuration;
  /// Per-host rows of the multi-host systems in `cells` and `left_out` (Cell::host set, `drive`
  /// is the system's drive): one per system, rank and host name over the system's repetitions,
  /// by system then rank. Never ranked (rank 0), never compared, never charted as bars.
  std::vector<Cell> host_cells;
  /// A metric of the group `lab_conventions` (the review labs' sum of per-host rates, mean of
  /// per-host averages and p99s): shown labelled as such, never ranked, never the headline.
  bool lab_convention = false;
  /// A figure of the device under the target over the measured phase (the runner's telemetry,
  /// docs/telemetry.md: iostat -x r/s, w/s, rMB/s, wMB/s, r_await, w_await, aqu-sz, the demand
  /// per unit of work, %util with its caveat): what the drive did, not a figure of merit. Shown
  /// in the test's device table, never ranked, compared or charted as bars.
  bool device = false;
};

/// A drive against the leader (the best measured drive) of a table: the leader's repetitions as
/// the baseline, the drive's as the candidate (compare_values: the change with its 95% interval,
/// Welch's t on logs), Holm's correction across the test's metrics of the same pair of drives.
/// With fewer than two repetitions on either side the result is not tested (result.not_tested).
struct Comparison {
  std::string test, metric, unit;
  std::string leader, other;
  double diff_pct = 0;  ///< (other.median - leader.median) / leader.median x 100
  MetricComparison result;
};

struct Report {
  std::vector<std::string> tests;       ///< test keys in first-seen order
  std::vector<MetricTable> tables;      ///< per test, ranked metrics in order
  std::vector<Comparison> comparisons;  ///< measured drives only (each against the table's best)
  Dataset data;
};

struct ReportOptions {
  /// Rank partial results (a test that is not `complete`: interrupted, failed, or cut short by a
  /// killed process) together with the complete ones, as repetitions of their drive, marked
  /// "(partial)" (`drivelab report --include-partial`). Off by default: a test stopped early ran
  /// a shorter (and often colder) measured phase than a complete one, so like fio or vdbench
  /// users expect, only like is ranked with like; partial results are shown apart, unranked, with
  /// a note saying why (docs/reporter.md, "Partial runs").
  bool include_partial = false;
};

/// Test key of the reference block of published rows whose configuration is not the one the
/// measured test `test` ran: "4k_random_read (other configuration)".
std::string other_configuration_key(const std::string& test);

/// Groups and ranks. A published row joins the table of the measured test of its name (or of
/// that name's variant, `name (config N)`) that ran its configuration (`measures`); when the name
/// has measured or imported results but none ran it, the row goes to the unranked reference
/// block `other_configuration_key(name)`, with a note saying what each side ran. A name with only
/// published rows is a table of published numbers, ranked among themselves. Metrics in a test's tables: the first five
/// headline metrics of its measured results that have a direction, then every other directed metric of imported (fio,
/// sysbench, published) results of the same test. Partial results go to MetricTable::left_out (with one note each in
/// data.notes) unless `opt.include_partial`. Multi-host results (docs/reporter.md "Multi-host records"): test keys
/// hosts_test_key (an N-host result ranks only against N-host results), per-host rows in MetricTable::host_cells, and
/// after the test's tables one unranked `lab_convention` table per lab-convention metric. Then the
/// test's `device` tables, one per device column its measured results recorded (docs/reporter.md
/// "Device columns").
Report build_report(Dataset data, const ReportOptions& opt = {});

std::string to_csv(const Report& r);
std::string to_markdown(const Report& r);

struct ChartOptions {
  std::filesystem::path dir;        ///< where NAME.svg, NAME.png and NAME.gp are written
  std::string gnuplot = "gnuplot";  ///< program (PATH search)
};
/// One drawn chart.
struct Chart {
  std::string test;  ///< the test key whose section shows it
  std::string name;  ///< file stem
  std::string title;
  std::string svg;  ///< SVG markup, ready to inline (XML prolog removed)
};
/// Draws every chart (latency-vs-IOPS curves, bars, time series; per multi-host result, the first
/// interval value (tps, iops, eps) of each host over time, `<test>_hosts_<drive>_<n>`) with gnuplot. Throws
/// EnvironmentError if gnuplot cannot be run or fails (its stderr in the message).
std::vector<Chart> draw_charts(const Report& r, const ChartOptions& opt);
/// Finds `program` on PATH (or as given if it has a slash); nullopt if not executable. The one
/// program search of core/process.hpp, named here for the reporter's callers and tests.
using drivelab::find_program;

/// The HTML page: tables, comparisons, partial runs and the charts' SVG inline; opens offline.
/// `charts_note` is shown instead of charts when they were not drawn.
std::string to_html(const Report& r, const std::vector<Chart>& charts, const std::string& charts_note);

}  // namespace drivelab::report
