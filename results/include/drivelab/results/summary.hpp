#pragma once
/// \file summary.hpp
/// Plain-text sinks for people: the live interval line and the end-of-run summary table.
/// (Sinks only format finished data; google/benchmark's reporters are the model.)
#include <string>

#include "drivelab/results/record.hpp"

namespace drivelab::results {

/// "[  10s ] oltp: tps 123.4  lat_avg_ms 8.1  lat_p99_ms 20.3" — the first `max_values` values
/// of the interval, numbers with 3-4 significant digits.
std::string format_interval_line(const std::string& test_name, const Interval& interval,
                                 std::size_t max_values = 6);

/// A fixed-width table: one row per test with status and its headline metrics, then checks that
/// failed and warnings, then where the record was written.
std::string format_summary(const RunRecord& record);

}  // namespace drivelab::results
