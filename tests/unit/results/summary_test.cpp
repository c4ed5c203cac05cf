// The text sinks, pinned byte for byte: reviewers paste this output, so changes must be deliberate.
#include "drivelab/results/summary.hpp"

#include <gtest/gtest.h>

#include <limits>

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

TEST(Summary, IntervalLine) {
  const Interval i{10, 5, {{"tps", 123.44}, {"lat_avg_ms", 8.123}, {"lat_p99_ms", 20.34}}};
  EXPECT_EQ(format_interval_line("oltp", i), "[  10s ] oltp  tps 123.4  lat_avg_ms 8.12  lat_p99_ms 20.3");
  EXPECT_EQ(format_interval_line("oltp", i, 1), "[  10s ] oltp  tps 123.4");
  EXPECT_EQ(format_interval_line("fio", Interval{62.5, 2.5, {{"iops", 760160}}}),
            "[ 62.5s ] fio  iops 760160");
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
  r.target = Json{{"path", "/mnt/dut"}, {"kind", "directory"}, {"filesystem", "ext4"},
                  {"block_device", "nvme0n1"}, {"model", "Samsung SSD 980 PRO 1TB"},
                  {"firmware", "5B2QGXA7"}};
  r.warnings = {"debug build: results are not representative"};

  TestRecord oltp;
  oltp.name = "oltp";
  oltp.kind = "tpcc";
  oltp.status = Status::complete;
  oltp.metrics = {{"tps", 512.345, "1/s", ""},     {"lat_avg_ms", 8.123, "ms", ""},
                  {"lat_p99_ms", 20.34, "ms", ""}, {"tpmc", 30741, "1/min", ""},
                  {"errors", 0, "count", ""},      {"rollbacks", 12, "count", "not shown: 6th"}};
  oltp.checks = {{"consistency_1", true, ""},
                 {"consistency_2", false, "W_YTD != sum(D_YTD) in warehouse 3"}};
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
      "--------  ------  -----------  ----------------  ------------------  ------------------  "
      "----------------  --------------\n"
      "oltp      tpcc    complete     tps 512.3 1/s     lat_avg_ms 8.12 ms  lat_p99_ms 20.3 ms  "
      "tpmc 30741 1/min  errors 0 count\n"
      "seq-read  fio     interrupted  mb_s 3211 MB/s    iops 25684 1/s      lat_avg_us 99.7 us\n"
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
            "spot  fio   complete  iops 1000 1/s\n");
  r.tests.clear();
  EXPECT_EQ(format_summary(r), "run r  status complete\n\nno tests\n");
}

}  // namespace
}  // namespace drivelab::results
