// The text sinks, pinned byte for byte: reviewers paste this output, so changes must be deliberate.
#include "drivelab/results/summary.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <utility>

namespace drivelab::results {
namespace {

TEST(Summary, FormatNumber) {
  EXPECT_EQ(format_number(0), "0");
  EXPECT_EQ(format_number(-0.0), "0");
  EXPECT_EQ(format_number(8.123), "8.12");
  EXPECT_EQ(format_number(-8.123), "-8.12");
  EXPECT_EQ(format_number(20.34), "20.3");
  EXPECT_EQ(format_number(123.44), "123.4");
  EXPECT_EQ(format_number(512), "512");
  EXPECT_EQ(format_number(760160), "760160");
  EXPECT_EQ(format_number(12345.6), "12346");
  EXPECT_EQ(format_number(0.5), "0.500");
  EXPECT_EQ(format_number(0.01234), "0.0123");
  EXPECT_EQ(format_number(0.001234), "0.00123");
  EXPECT_EQ(format_number(0.0000123), "1.23e-05");
  EXPECT_EQ(format_number(2.5e12), "2.5e+12");
  EXPECT_EQ(format_number(std::numeric_limits<double>::quiet_NaN()), "-");
  EXPECT_EQ(format_number(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_number(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(Summary, FormatGrouped) {
  EXPECT_EQ(format_grouped(0), "0");
  EXPECT_EQ(format_grouped(-0.4), "0");
  EXPECT_EQ(format_grouped(999), "999");
  EXPECT_EQ(format_grouped(999.5), "1,000");
  EXPECT_EQ(format_grouped(1561.4), "1,561");
  EXPECT_EQ(format_grouped(-40497), "-40,497");
  EXPECT_EQ(format_grouped(760160), "760,160");
  EXPECT_EQ(format_grouped(1234567890), "1,234,567,890");
  EXPECT_EQ(format_grouped(std::numeric_limits<double>::quiet_NaN()), "-");
  EXPECT_EQ(format_grouped(std::numeric_limits<double>::infinity()), "inf");
}

TEST(Summary, FormatRatesAsReviewsWriteThem) {
  EXPECT_EQ(format_rate(1561.2, "TPS"), "1,561 TPS");
  EXPECT_EQ(format_rate(40497, "tpmC"), "40,497 tpmC");
  EXPECT_EQ(format_rate(13.63, "TPS"), "13.6 TPS");
  EXPECT_EQ(format_rate(999.4, "TPS"), "999.4 TPS");
  EXPECT_EQ(format_rate(0, "TPS"), "0 TPS");
  EXPECT_EQ(format_rate(-1561, "TPS"), "-1,561 TPS");
  EXPECT_EQ(format_rate(std::numeric_limits<double>::quiet_NaN(), "TPS"), "-");
  EXPECT_EQ(format_rate(std::numeric_limits<double>::infinity(), "TPS"), "inf TPS");
}

TEST(Summary, FormatIopsWithKAndMSuffixes) {
  EXPECT_EQ(format_iops(0), "0 IOPS");
  EXPECT_EQ(format_iops(512), "512 IOPS");
  EXPECT_EQ(format_iops(5230.4), "5,230 IOPS");
  EXPECT_EQ(format_iops(9999.4), "9,999 IOPS");
  EXPECT_EQ(format_iops(9999.6), "10.0K IOPS");  // rounds up to the next suffix
  EXPECT_EQ(format_iops(69312), "69.3K IOPS");
  EXPECT_EQ(format_iops(760160), "760.2K IOPS");
  EXPECT_EQ(format_iops(999949), "999.9K IOPS");
  EXPECT_EQ(format_iops(999960), "1.00M IOPS");
  EXPECT_EQ(format_iops(1523000), "1.52M IOPS");
  EXPECT_EQ(format_iops(9996000), "10.0M IOPS");
  EXPECT_EQ(format_iops(12500000), "12.5M IOPS");
  EXPECT_EQ(format_iops(-69312), "-69.3K IOPS");
  EXPECT_EQ(format_iops(std::numeric_limits<double>::quiet_NaN()), "-");
}

TEST(Summary, FormatThroughput) {
  EXPECT_EQ(format_throughput(283.84), "283.8 MB/s");
  EXPECT_EQ(format_throughput(9.063), "9.06 MB/s");
  EXPECT_EQ(format_throughput(7012.4), "7,012 MB/s");
  EXPECT_EQ(format_throughput(999.96), "1,000 MB/s");
  EXPECT_EQ(format_throughput(0), "0 MB/s");
  EXPECT_EQ(format_throughput(-12.34), "-12.3 MB/s");
  EXPECT_EQ(format_throughput(std::numeric_limits<double>::quiet_NaN()), "-");
}

TEST(Summary, FormatLatencyChoosesMicrosecondsMillisecondsOrSeconds) {
  EXPECT_EQ(format_latency(1.234, "ms"), "1.23 ms");
  EXPECT_EQ(format_latency(0.85, "ms"), "850 µs");
  EXPECT_EQ(format_latency(850, "us"), "850 µs");
  EXPECT_EQ(format_latency(85.31, "us"), "85.3 µs");
  EXPECT_EQ(format_latency(999.9, "us"), "999.9 µs");
  EXPECT_EQ(format_latency(999.96, "us"), "1.00 ms");
  EXPECT_EQ(format_latency(1894, "us"), "1.89 ms");
  EXPECT_EQ(format_latency(123440, "us"), "123.4 ms");
  EXPECT_EQ(format_latency(2500, "ms"), "2.50 s");
  EXPECT_EQ(format_latency(1.5, "s"), "1.50 s");
  EXPECT_EQ(format_latency(168000, "ns"), "168 µs");
  EXPECT_EQ(format_latency(0, "ms"), "0 ms");
  EXPECT_EQ(format_latency(0, "us"), "0 µs");
  EXPECT_EQ(format_latency(-1.234, "ms"), "-1.23 ms");
  EXPECT_EQ(format_latency(std::numeric_limits<double>::quiet_NaN(), "ms"), "-");
  EXPECT_EQ(format_latency(7, "ticks"), "7 ticks");
}

TEST(Summary, FormatQuantityByUnitAndName) {
  EXPECT_EQ(format_quantity(1561.2, "1/s", "tps"), "1,561 TPS");
  EXPECT_EQ(format_quantity(40497, "1/min", "tpm_c"), "40,497 tpmC");
  EXPECT_EQ(format_quantity(40497, "1/min", "nopm"), "40,497 NOPM");
  EXPECT_EQ(format_quantity(69312, "1/s", "iops"), "69.3K IOPS");
  EXPECT_EQ(format_quantity(760160, "1/s", "peak_iops"), "760.2K IOPS");
  EXPECT_EQ(format_quantity(2513, "1/s", "qps"), "2,513 QPS");
  EXPECT_EQ(format_quantity(24, "1/s", "write_fps"), "24 fps");
  EXPECT_EQ(format_quantity(1234.4, "1/s", "reads_s"), "1,234/s");
  EXPECT_EQ(format_quantity(12.5, "1/min", "restarts"), "12.5/min");
  EXPECT_EQ(format_quantity(283.84, "MB/s", "throughput_mb_s"), "283.8 MB/s");
  EXPECT_EQ(format_quantity(0.85, "ms", "latency_p99_ms"), "850 µs");
  EXPECT_EQ(format_quantity(12.34, "s", "total_s"), "12.3 s");
  EXPECT_EQ(format_quantity(123456, "count", "ios"), "123,456");
  EXPECT_EQ(format_quantity(2.5, "count", "queue_len_avg"), "2.50");
  EXPECT_EQ(format_quantity(1048576, "bytes", "wal_bytes"), "1,048,576 bytes");
  EXPECT_EQ(format_quantity(12.34, "%", "pool_util_pct"), "12.3%");
  EXPECT_EQ(format_quantity(0.5, "ratio", "hit"), "0.500");
  EXPECT_EQ(format_quantity(std::numeric_limits<double>::quiet_NaN(), "1/s", "tps"), "-");
  EXPECT_EQ(unit_label("1/s", "iops"), "IOPS");
  EXPECT_EQ(unit_label("1/min", "tpm_c"), "tpmC");
  EXPECT_EQ(unit_label("1/s", "reads_s"), "/s");
  EXPECT_EQ(unit_label("us"), "µs");
  EXPECT_EQ(unit_label("MB/s"), "MB/s");
}

TEST(Summary, IntervalLine) {
  const Interval i{10, 5, {{"tps", 123.44}, {"lat_avg_ms", 8.123}, {"lat_p99_ms", 20.34}}};
  EXPECT_EQ(format_interval_line("oltp", i), "[  10s ] oltp  tps 123.4  lat_avg_ms 8.12  lat_p99_ms 20.3");
  EXPECT_EQ(format_interval_line("oltp", i, 1), "[  10s ] oltp  tps 123.4");
  EXPECT_EQ(format_interval_line("fio", Interval{62.5, 2.5, {{"iops", 760160}}}), "[ 62.5s ] fio  iops 760160");
  EXPECT_EQ(format_interval_line("x", Interval{1234, 5, {}}), "[ 1234s ] x");
  EXPECT_EQ(format_interval_line("x", Interval{5, 5, {{"lat_ms", std::numeric_limits<double>::quiet_NaN()}}}),
            "[   5s ] x  lat_ms -");
}

RunRecord fixed_record() {
  RunRecord r;
  r.run_id = "20261129T195344Z-1a2b3c";
  r.protocol = "review-quick";
  r.status = Status::interrupted;
  r.reason = "stopped by SIGINT";
  r.target = Json{{"path", "/mnt/dut"},
                  {"kind", "directory"},
                  {"filesystem", "ext4"},
                  {"block_device", "nvme0n1"},
                  {"model", "Samsung SSD 980 PRO 1TB"},
                  {"firmware", "5B2QGXA7"}};
  r.warnings = {"debug build: results are not representative"};

  TestRecord oltp;
  oltp.name = "oltp";
  oltp.kind = "tpcc";
  oltp.status = Status::complete;
  oltp.metrics = {{"tps", 512.345, "1/s", ""},     {"lat_avg_ms", 8.123, "ms", ""},
                  {"lat_p99_ms", 20.34, "ms", ""}, {"tpmc", 30741, "1/min", ""},
                  {"errors", 0, "count", ""},      {"rollbacks", 12, "count", "not shown: 6th"}};
  oltp.checks = {{"consistency_1", true, ""}, {"consistency_2", false, "W_YTD != sum(D_YTD) in warehouse 3"}};
  oltp.warnings = {"buffer pool larger than the database"};

  TestRecord fio;
  fio.name = "seq-read";
  fio.kind = "fio";
  fio.status = Status::interrupted;
  fio.reason = "stopped by SIGINT";
  fio.metrics = {{"mb_s", 3210.7, "MB/s", ""}, {"iops", 25684, "1/s", ""}, {"lat_avg_us", 99.71, "us", ""}};

  TestRecord render;
  render.name = "render";
  render.kind = "render";
  render.status = Status::skipped;
  render.reason = "run interrupted before this test";

  r.tests = {oltp, fio, render};
  return r;
}

TEST(Summary, Table) {
  const std::string expected =
      "run 20261129T195344Z-1a2b3c  protocol review-quick  status interrupted\n"
      "target /mnt/dut  ext4 on nvme0n1  Samsung SSD 980 PRO 1TB  fw 5B2QGXA7\n"
      "\n"
      "test      kind    status       headline metrics\n"
      "--------  ------  -----------  ----------------  ---------------  ---------------  "
      "-----------  --------\n"
      "oltp      tpcc    complete     512.3 TPS         lat_avg 8.12 ms  lat_p99 20.3 ms  "
      "30,741 tpmC  errors 0\n"
      "seq-read  fio     interrupted  3,211 MB/s        25.7K IOPS       lat_avg 99.7 µs\n"
      "render    render  skipped\n"
      "\n"
      "failed checks:\n"
      "  oltp: consistency_2: W_YTD != sum(D_YTD) in warehouse 3\n"
      "\n"
      "warnings:\n"
      "  run: debug build: results are not representative\n"
      "  oltp: buffer pool larger than the database\n"
      "\n"
      "not complete:\n"
      "  seq-read: interrupted: stopped by SIGINT\n"
      "  render: skipped: run interrupted before this test\n"
      "  run: interrupted: stopped by SIGINT\n";
  EXPECT_EQ(format_summary(fixed_record()), expected);
  EXPECT_EQ(format_summary(fixed_record(), "results/20261129T195344Z-1a2b3c.json"),
            expected + "\nrecord: results/20261129T195344Z-1a2b3c.json\n");
}

TEST(Summary, CleanRunHasNoTrailingSections) {
  RunRecord r;
  r.run_id = "r";
  r.status = Status::complete;
  TestRecord t;
  t.name = "spot";
  t.kind = "fio";
  t.status = Status::complete;
  t.metrics = {{"iops", 1000, "1/s", ""}};
  r.tests = {t};
  EXPECT_EQ(format_summary(r),
            "run r  status complete\n"
            "\n"
            "test  kind  status    headline metrics\n"
            "----  ----  --------  ----------------\n"
            "spot  fio   complete  1,000 IOPS\n");
  r.tests.clear();
  EXPECT_EQ(format_summary(r), "run r  status complete\n\nno tests\n");
}

TEST(FormatColumns, AlignsByTerminalColumnsWithARuleUnderTheHeader) {
  // "µs" is two bytes but two columns; trailing spaces are trimmed.
  EXPECT_EQ(format_columns({{"metric", "value"}, {"latency", "850 µs"}, {"iops", ""}}),
            "metric   value\n-------  ------\nlatency  850 µs\niops\n");
  EXPECT_EQ(format_columns({{"a", "b"}, {"cc", "d"}}, false), "a   b\ncc  d\n");
}

TEST(Summary, DeviceLineShowsATinyRatioAsBelowOneThousandth) {
  // CI's quick run printed "writes per I/O 1.6e-05" for a read test's few background writes.
  RunRecord r;
  r.run_id = "20261207T000000Z-000000";
  r.status = Status::complete;
  TestRecord t;
  t.name = "4k-random-read";
  t.kind = "io";
  t.status = Status::complete;
  t.metrics = {{"iops", 91827, "1/s", ""},
               {"device_read_ios_per_io", 1.0, "1", ""},
               {"device_write_ios_per_io", 1.6e-05, "1", ""}};
  t.details["telemetry"] = Json{{"devices", Json::array({Json{{"name", "vda"}, {"role", "headline"}}})}};
  r.tests = {t};
  const std::string out = format_summary(r);
  // A whole ratio reads as the report shows it (format_quantity of unit "ratio"): "1.00", not "1".
  EXPECT_NE(out.find("4k-random-read: vda  reads per I/O 1.00  writes per I/O <0.001"), std::string::npos) << out;
  EXPECT_EQ(format_quantity(1.0, "ratio", "device_read_ios_per_io"), "1.00");
  EXPECT_EQ(format_quantity(1.6e-05, "ratio", "device_write_ios_per_io"), "<0.001");
}

TEST(Summary, ARatioHasOneRule) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::pair<double, const char*> cases[] = {
      {1.0, "1.00"},    {1.004, "1.00"},      {2.0, "2.00"},       {12.0, "12.0"}, {123.0, "123"}, {4096.0, "4,096"},
      {0.405, "0.405"}, {0.00148, "0.00148"}, {1.6e-05, "<0.001"}, {0, "0"},       {nan, "-"}};
  for (const auto& [v, text] : cases) {
    EXPECT_EQ(format_ratio(v), text) << v;
    EXPECT_EQ(format_quantity(v, "ratio", "device_read_bytes_per_byte"), text) << "the same rule in a report: " << v;
  }
}

TEST(Summary, ABareNumberIsInItsUnitUnscaled) {
  // A column whose header names the unit (the reporter's device tables): no unit, no rescaling.
  struct Case {
    double value;
    const char* unit;
    const char* text;
  };
  for (const Case& c : {Case{0.3777, "ms", "0.378"}, Case{16.4, "ms", "16.4"}, Case{61227.3, "1/s", "61,227"},
                        Case{90.4, "1/s", "90.4"}, Case{1253.8, "MB/s", "1,254"}, Case{4096, "bytes", "4,096"},
                        Case{86.7, "%", "86.7"}, Case{24.7, "", "24.7"}, Case{1.0, "ratio", "1.00"}})
    EXPECT_EQ(format_bare(c.value, c.unit), c.text) << c.value << " " << c.unit;
}

/// A test of `name` on vda with the telemetry details the runner writes (test_telemetry.hpp).
TestRecord device_test(const std::string& name, Json checks) {
  TestRecord t;
  t.name = name;
  t.kind = "io";
  t.status = Status::complete;
  t.metrics = {{"iops", 1000, "1/s", ""}, {"device_r_s", 100, "1/s", ""}};
  t.details["telemetry"] =
      Json{{"devices", Json::array({Json{{"name", "vda"}, {"role", "headline"}}})},
           {"shared",
            Json{{"text", "/ is also on vda: its I/O is counted"},
                 {"uses", Json::array({Json{{"what", "/"}, {"swap", false}, {"on", "vda"}, {"counted_in", "vda"}}})}}},
           {"checks", std::move(checks)}};
  return t;
}

TEST(Summary, DeviceLinesSayASharedDeviceOnceTheChecksThatWarnedAndWhyNoHealthOnce) {
  RunRecord r;
  r.run_id = "r";
  r.status = Status::complete;
  r.details["health"] =
      Json{{"available", false}, {"reason", "no NVMe or SATA/SAS device under the target (virtio: vda)"}};
  const Json warned = Json::array({Json{{"check", "link"}, {"outcome", "not_applicable"}, {"detail", "virtual"}},
                                   Json{{"check", "direct_io"}, {"outcome", "warning"}, {"detail", "page cache"}},
                                   Json{{"check", "harness_ceiling"}, {"outcome", "passed"}, {"detail", "10%"}}});
  TestRecord a = device_test("a", warned);
  a.warnings = {"page cache", "another warning"};
  r.tests = {a, device_test("b", Json::array())};
  EXPECT_EQ(format_summary(r),
            "run r  status complete\n"
            "\n"
            "test  kind  status    headline metrics\n"
            "----  ----  --------  ----------------\n"
            "a     io    complete  1,000 IOPS\n"
            "b     io    complete  1,000 IOPS\n"
            "\n"
            "devices (iostat -x over the measured phase; %util is no saturation figure for NVMe, RAID, dm or loop "
            "devices):\n"
            "  a: vda  r/s 100  shared: / is also on vda: its I/O is counted\n"
            "    check direct_io: warning: page cache\n"
            "  b: vda  r/s 100\n"
            "  drive health: not read: no NVMe or SATA/SAS device under the target (virtio: vda)\n"
            "\n"
            "warnings:\n"
            "  a: another warning\n");
}

TEST(Summary, ADrivesHealthIsUnderItsTestsDeviceLine) {
  RunRecord r;
  r.run_id = "r";
  r.status = Status::complete;
  r.details["health"] = Json{{"available", true}};
  TestRecord t = device_test("a", Json::array());
  t.details["health"] =
      Json{{"drives", Json::array({Json{{"device", "/dev/nvme0"},
                                        {"model", "M"},
                                        {"temperature_c", Json{{"before", 40}, {"after", 52.5}, {"max", 52.5}}},
                                        {"warning_temp_c", 84},
                                        {"percentage_used", Json{{"before", 2}, {"after", 3}}},
                                        {"delta", Json{{"tmt1_transitions", 4},
                                                       {"tmt2_transitions", 1},
                                                       {"tmt1_seconds", 137},
                                                       {"tmt2_seconds", 3},
                                                       {"media_errors", 0}}},
                                        {"throttled", true}},
                                   Json{{"device", "/dev/nvme1"}, {"reason", "after the test: timed out"}}})}};
  r.tests = {t};
  const std::vector<DriveHealthSeen> seen = drive_health_seen(t);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].tmt_transitions, 5);
  EXPECT_EQ(seen[0].tmt_seconds, 140);
  EXPECT_EQ(seen[0].percentage_used, 3);
  const std::string out = format_summary(r);
  EXPECT_NE(out.find("  a: vda  r/s 100  shared: / is also on vda: its I/O is counted\n"
                     "    drive /dev/nvme0 (M): 40 °C -> 52.5 °C (max 52.5 °C, WCTEMP 84 °C), thermal management +5 "
                     "transitions in 140 s, media errors +0, 3% used, throttled\n"
                     "    drive /dev/nvme1: no reading: after the test: timed out\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("drive health: not read"), std::string::npos) << out;
}

}  // namespace
}  // namespace drivelab::results
