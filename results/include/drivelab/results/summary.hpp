#pragma once
/// \file summary.hpp
/// Plain-text sinks for people: the live interval line and the end-of-run summary table, and the
/// one place numbers are formatted for people (the report uses the same functions). (Sinks only
/// format finished data; google/benchmark's reporters are the model.) Output is ASCII apart from
/// "µs", "°C" and the names and texts taken from the record. The record itself keeps machine units
/// ("1/s", "1/min", "us"); only what people read is formatted here.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/results/record.hpp"

namespace drivelab::results {

/// A number for people: 3-4 significant digits without exponent for ordinary magnitudes
/// (8.12, 20.3, 123.4, 0.0123), integers as integers (512, 760160), larger values in full without
/// decimals (12346); exponent notation only below 0.001 or from 10^12 on ("1.23e-05"); "-" for
/// NaN, "inf"/"-inf" for infinities.
std::string format_number(double v);

/// An integer with thousands separators, rounded to the nearest: 1561.4 -> "1,561", -40497 ->
/// "-40,497", 999.5 -> "1,000"; NaN and infinities as format_number.
std::string format_grouped(double v);

/// A ratio (unit "ratio": device reads per I/O, bytes written per application byte), the one rule
/// wherever one is shown (console device line, report, comparison): three significant digits,
/// whole values too ("1.00", "2.00", "12.0", "0.405"), so 1 and 1.004 read alike; from 1,000 on
/// as format_grouped; "0" for none; "<0.001" for a positive ratio that rounds to nothing at three
/// decimals (a few background writes over a read test are no demand to size with); NaN "-".
std::string format_ratio(double v);

/// A value as a bare number in its record unit (record.hpp Metric::unit), unscaled and without the
/// unit, for a column whose header names the unit (the reporter's device tables, like iostat -x's
/// columns): "ratio" as format_ratio; a rate ("1/s", "1/min", "MB/s") from 1,000 on, "count" and
/// "bytes" when whole or from 1,000 on, as format_grouped; else format_number ("0.378" in ms).
std::string format_bare(double value, std::string_view unit);

/// One formatter per quantity kind, each "<number> <unit>" as reviews write it. Shared rules:
/// NaN gives "-" (no unit), infinities "inf"/"-inf" with the unit; a negative value keeps its sign
/// and is formatted as its magnitude would be.

/// A rate of transactions or queries (`word`: "TPS", "tpmC", "NOPM", "QPS", "fps"): from 1,000 on
/// an integer with separators ("1,561 TPS", "40,497 tpmC"), below as format_number ("13.6 TPS").
std::string format_rate(double per_unit, std::string_view word);
/// I/Os per second: below 10,000 as format_rate ("5,230 IOPS", "512 IOPS"); from 10,000 on in
/// thousands with one decimal ("69.3K IOPS", "760.2K IOPS"); from 10^6 on in millions, two
/// decimals below 10M and one above ("1.52M IOPS", "12.5M IOPS"). A value that rounds up to the
/// next suffix takes it (999,960 -> "1.00M IOPS", 9,999.6 -> "10.0K IOPS").
std::string format_iops(double iops);
/// MB/s (MB = 10^6 bytes): from 1,000 on an integer with separators ("7,012 MB/s"), from 10 on one
/// decimal ("283.8 MB/s"), below as format_number ("9.06 MB/s").
std::string format_throughput(double mb_s);
/// A latency or response time given in `unit` ("ns", "us", "ms" or "s"), shown in the unit that
/// keeps 3-4 significant digits: below 1 ms in µs ("850 µs", "85.3 µs"), below 1 s in ms
/// ("1.23 ms", "123.4 ms"), else in s ("1.23 s"); numbers as format_number. An unknown unit gives
/// format_number and the unit as given.
std::string format_latency(double value, std::string_view unit);

/// A metric's value as people read it, by its record unit (record.hpp Metric::unit) and, for rates,
/// its name: "1/s" -> IOPS when the name has "iops", TPS for "tps", QPS for "qps", fps for "fps",
/// else "<n>/s"; "1/min" -> tpmC for "tpm_c"/"tpmc", NOPM for "nopm", else "<n>/min"; "MB/s" ->
/// format_throughput; "ns"/"us"/"ms" -> format_latency; "s" -> "12.3 s" (format_number); "count"
/// and "bytes" -> format_bare (with " bytes"); "%" -> "12.3%"; "ratio" -> format_ratio; "" -> format_number;
/// any other unit -> format_number and the unit.
std::string format_quantity(double value, std::string_view unit, std::string_view name = {});
/// The unit as people read it, for axis labels: "IOPS", "TPS", "tpmC", "/s", "MB/s", "µs", "ms"...
/// (the words of format_quantity; the record's unit when it has none).
std::string unit_label(std::string_view unit, std::string_view name = {});

/// "[  10s ] oltp  tps 123.4  latency_avg_ms 8.12  latency_p99_ms 20.3" — the first `max_values` values
/// of the interval, numbers as format_number (sysbench's --report-interval line is the model).
std::string format_interval_line(const std::string& test_name, const Interval& interval, std::size_t max_values = 6);

/// A fixed-width table: a header (run id, protocol, status, target), one row per test with kind,
/// status and its first 5 headline metrics, each as format_quantity with the metric's name before
/// it ("latency_p99_ms 20.3 ms") unless the unit's word names it ("512.3 TPS", "69.3K IOPS",
/// "40,497 tpmC"), columns aligned across rows (a repeated run's tests named "oltp #2", the
/// discarded "oltp #1 (discarded)"); a repeated run's table of its repetitions (RunRecord::
/// repetitions: per test its first summarized metric, N, mean, CV and the mean's 95% interval); then
/// the device lines (per test the headline device's iostat -x figures, its demand per unit of
/// work, once per device the other filesystems and swap it also carries, the drive health line
/// of each drive read, each physics check that warned or failed with its reason; once per run
/// why no drive health was read, and the harness's ceiling it measured); the failed checks, the warnings (run and
/// tests; a check's warning shown on its device line is not repeated), and every status other than complete with its
/// reason. Ends with a newline; no trailing spaces.
std::string format_summary(const RunRecord& record);
/// As above, then a last line "record: <record_path>".
std::string format_summary(const RunRecord& record, const std::filesystem::path& record_path);

/// One drive's health over a test, as the runner records it in the test's details.health
/// (telemetry/health_record.hpp; docs/telemetry.md "Drive health in a run"): what the summary,
/// the report and the Prometheus exporter show of it. A figure the record lacks is nullopt.
struct DriveHealthSeen {
  std::string device;  ///< "/dev/nvme0"
  std::string model;
  std::string reason;  ///< a drive without a reading: why (the figures are all nullopt)
  /// The composite temperature before and after the measured phase and the higher of the two (°C).
  std::optional<double> temperature_before_c, temperature_after_c, temperature_max_c;
  std::optional<double> warning_temp_c;  ///< WCTEMP (°C)
  /// Thermal-management transitions (TMT1 + TMT2) and the seconds spent in them over the test.
  std::optional<double> tmt_transitions, tmt_seconds;
  std::optional<double> media_errors;     ///< media and data integrity errors counted over the test
  std::optional<double> percentage_used;  ///< NVMe percentage used after the test (%)
  bool throttled = false;                 ///< the record's `throttled`
};
/// Each drive of `t.details.health.drives`, in order; empty when the test has no health readings.
std::vector<DriveHealthSeen> drive_health_seen(const TestRecord& t);
/// "drive /dev/nvme0 (Samsung SSD 980 PRO 1TB): 41 -> 58 °C (max 58 °C, WCTEMP 82 °C), thermal
/// management +4 transitions in 12 s, media errors +0, 3% used"; "drive /dev/sdb: no reading: ...".
std::string drive_health_text(const DriveHealthSeen& d);
/// Why the run read no drive health: its details.health.reason when `available` is false ("no
/// NVMe or SATA/SAS device under the target (virtio: vda)"); "" when it read some or did not say.
std::string no_health_reason(const RunRecord& record);

/// One check that a number is physical (details.telemetry.checks; telemetry/physics.hpp).
struct CheckSeen {
  std::string check;    ///< "link", "direct_io", "tpmc_per_warehouse", "harness_ceiling"
  std::string outcome;  ///< "passed", "warning", "failed", "not_applicable"
  std::string detail;   ///< the warning or failure, or why it passed or does not apply
};
/// Every check of `t.details.telemetry.checks`, in order.
std::vector<CheckSeen> checks_seen(const TestRecord& t);
/// details.telemetry.shared.text: the other filesystems and swap whose I/O the device counts ("/
/// is also on vda: its I/O is counted"); "" when none.
std::string shared_device_text(const TestRecord& t);

/// Rows of cells as left-aligned columns two spaces apart (widths in terminal columns: "µs" is
/// two), a rule of dashes under the first row when `header_rule`, trailing spaces trimmed, each
/// line ending in a newline: the summary table's layout, for other tables (`drivelab compare`).
std::string format_columns(const std::vector<std::vector<std::string>>& rows, bool header_rule = true);

}  // namespace drivelab::results
