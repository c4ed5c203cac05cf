#pragma once
/// \file summary.hpp
/// Plain-text sinks for people: the live interval line and the end-of-run summary table.
/// (Sinks only format finished data; google/benchmark's reporters are the model.) Output is ASCII
/// apart from names and texts taken from the record, so it pastes anywhere.
#include <filesystem>
#include <string>

#include "drivelab/results/record.hpp"

namespace drivelab::results {

/// A number for people: 3-4 significant digits without exponent for ordinary magnitudes
/// (8.12, 20.3, 123.4, 0.0123), integers as integers (512, 760160), larger values in full without
/// decimals (12346); exponent notation only below 0.001 or from 10^12 on ("1.23e-05"); "-" for
/// NaN, "inf"/"-inf" for infinities.
std::string format_number(double v);

/// "[  10s ] oltp  tps 123.4  lat_avg_ms 8.12  lat_p99_ms 20.3" — the first `max_values` values
/// of the interval, numbers as format_number (sysbench's --report-interval line is the model).
std::string format_interval_line(const std::string& test_name, const Interval& interval,
                                 std::size_t max_values = 6);

/// A fixed-width table: a header (run id, protocol, status, target), one row per test with kind,
/// status and its first 5 headline metrics ("tps 512.3 1/s"), columns aligned across rows; then
/// the failed checks, the warnings (run and tests), and every status other than complete with its
/// reason. Ends with a newline; no trailing spaces.
std::string format_summary(const RunRecord& record);
/// As above, then a last line "record: <record_path>".
std::string format_summary(const RunRecord& record, const std::filesystem::path& record_path);

}  // namespace drivelab::results
