#pragma once
// Private: the per-test view shared by the Markdown and HTML writers.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "drivelab/report/report.hpp"

namespace drivelab::report {

/// One test: its metric tables and its drives in display order (first table's ranking first).
struct TestView {
  std::string test;
  std::vector<const MetricTable*> tables;
  /// The test's device tables (MetricTable::device), printed as a table of their own under `tables`.
  std::vector<const MetricTable*> device_tables;
  std::vector<std::string> drives;
  std::vector<std::string> left_out;  ///< drives with partial results kept out of the ranking
  /// Reference block of published rows of another configuration (MetricTable::other_configuration).
  std::string other_configuration;
  /// Per-host rows of the multi-host systems among `drives` and `left_out`, in the tables' order
  /// (MetricTable::host_cells): each writer prints a system's rows right under the system's row.
  std::vector<Cell::HostOf> host_rows;
  std::vector<std::string> host_row_systems;  ///< the system (drive) of each of host_rows
  bool lab_conventions = false;               ///< some table is a lab-convention metric
};

/// The indexes of `v`'s host rows under system `system` (shown among the ranked drives, or with
/// `left_out` among the partial ones), in order: what each writer prints right under that system.
std::vector<std::size_t> host_rows_of(const TestView& v, const std::string& system, bool left_out);
/// The drive's first cell in `v`'s tables (ranked, or with `left_out` the partial ones): the one
/// whose origin and partial flag label the drive's row; nullptr if no table has it.
const Cell* first_cell(const TestView& v, const std::string& drive, bool left_out = false);
/// The cell of host row `i` of `v` in table `t`; nullptr if the table has none.
const Cell* find_host_cell(const MetricTable& t, const TestView& v, std::size_t i);
/// "↳ host b (rank 1)", and the Source column of a host row: "host, complete".
std::string host_row_label(const Cell::HostOf& h);
std::string host_row_source(const Cell::HostOf& h);
/// The line under a test's heading when it has lab-convention columns.
extern const char* const kLabConventionsText;

/// The line under a reference block's heading.
std::string other_configuration_text(const TestView& v);

/// Row label suffix of a drive's partial results shown apart (ReportOptions::include_partial off).
inline constexpr const char* kLeftOutSuffix = " (partial, not ranked)";

std::vector<TestView> test_views(const Report& r);

/// One row of a test's table (TestView), as both writers print it.
struct TableRow {
  enum class Kind { drive, left_out, host };
  Kind kind = Kind::drive;
  const std::string* drive = nullptr;  ///< drive and left_out rows: the drive
  const Cell* first = nullptr;         ///< drive and left_out rows: first_cell (origin, partial)
  std::size_t host = 0;                ///< host rows: the index in TestView::host_rows
  std::vector<const Cell*> cells;      ///< per table of the view: the row's cell, or nullptr
};
/// Calls `emit` for each row of `v` in display order: each ranked drive and its host rows, then
/// each left-out drive (ReportOptions::include_partial off) and its host rows.
void for_each_row(const TestView& v, const std::function<void(const TableRow&)>& emit);
/// The same over `tables` (v.tables or v.device_tables): a drive without a cell in any of them is
/// left out.
void for_each_row(const TestView& v, const std::vector<const MetricTable*>& tables,
                  const std::function<void(const TableRow&)>& emit);
/// The paragraph above a test's device table.
extern const char* const kDeviceTableText;

/// A check that a number is physical that warned or failed, in one result of a test (Result::checks).
struct CheckLine {
  const Result* result = nullptr;
  const results::CheckSeen* check = nullptr;
};
/// The check lines of `test`'s measured results, in input order.
std::vector<CheckLine> check_lines(const Report& r, const std::string& test);
/// "Samsung 980 PRO (results/a.json): direct_io warning: O_DIRECT random reads: ..."
std::string check_line_text(const CheckLine& c);
/// The paragraph above a test's check lines.
extern const char* const kChecksText;
/// The CSV value of a check's outcome: 1 for a warning, 2 for a failure (as the Prometheus
/// exporter's drivelab_test_physics_check ranks them).
double check_outcome_value(const results::CheckSeen& c);
/// The drive's cell in the ranked cells, or with `left_out` in MetricTable::left_out.
const Cell* find_cell(const MetricTable& t, const std::string& drive, bool left_out = false);
/// "12.3K IOPS (1st of 3) [min 12.0K IOPS, max 12.5K IOPS, n=2; mean 12.3K IOPS, 95% CI 9.1K IOPS
/// to 15.4K IOPS]": each value as results::format_quantity in the table's unit; "(2nd of 3, not
/// tested)" when the rank was set by medians alone (a drive with one repetition); "-" without a value.
std::string cell_text(const MetricTable& t, const Cell& c);
/// A comparison's change of the geometric means with its 95% interval ("-9.8% [-11.2%, -8.3%]";
/// "-" when not tested), its verdict ("slower", "no difference detected", "not tested (needs 2+
/// repetitions on both)") and the change it could have detected ("±2.1%", "-").
std::string comparison_change(const Comparison& c);
std::string comparison_verdict(const Comparison& c);
std::string comparison_detectable(const Comparison& c);
/// The paragraph under the Comparisons heading (Markdown and HTML).
extern const char* const kComparisonsText;
/// "iops (higher is better)" (the cells carry the unit: a latency column may mix µs and ms)
std::string header_text(const MetricTable& t);

}  // namespace drivelab::report
