// `drivelab report` through the real binary: exit statuses, the gnuplot decision, --label and
// --published on the checked-in real records (tests/golden/report_run_*.json); a merged multi-host
// record (multihost_records.hpp) through the binary.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "drivelab/report/report.hpp"
#include "multihost_records.hpp"
#include "report_test_util.hpp"

namespace drivelab::report {
namespace {

using testing::golden_record_args;
using testing::read_text;
using testing::run_command;
using testing::TempDir;

const std::filesystem::path kSource = DRIVELAB_SOURCE_DIR;

TEST(ReportCli, UnknownSchemaExitsWithBadInput) {
  TempDir dir;
  const auto p = dir / "future.json";
  std::ofstream(p) << R"({"schema": "drivelab.run/2", "run_id": "x", "status": "complete", "tests": []})";
  const int rc =
      run_command({DRIVELAB_EXE, "report", p.string(), "--md", (dir / "o.md").string()}, dir / "out", dir / "err");
  EXPECT_EQ(rc, 2);
  EXPECT_NE(read_text(dir / "err").find("unsupported result schema 'drivelab.run/2'"), std::string::npos)
      << read_text(dir / "err");
}

TEST(ReportCli, MissingGnuplotIsAClearErrorAndNoChartsWorksWithout) {
  TempDir dir;
  std::vector<std::string> args{DRIVELAB_EXE, "report"};
  for (const auto& i : testing::golden_records()) args.push_back(i.string());
  args.insert(args.end(), {"--html", (dir / "r.html").string()});
  // env -i PATH=<empty dir>: no gnuplot anywhere.
  std::vector<std::string> env_args{"env", "-i", "PATH=" + dir.path().string()};
  env_args.insert(env_args.end(), args.begin(), args.end());
  EXPECT_EQ(run_command(env_args, dir / "out", dir / "err"), 3);
  EXPECT_NE(read_text(dir / "err").find("gnuplot not found"), std::string::npos) << read_text(dir / "err");
  env_args.push_back("--no-charts");
  EXPECT_EQ(run_command(env_args, dir / "out", dir / "err"), 0) << read_text(dir / "err");
  const std::string html = read_text(dir / "r.html");
  EXPECT_NE(html.find("Charts not drawn (--no-charts)."), std::string::npos);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
}

TEST(ReportCli, PublishedDrivesBesideMeasuredAndLabels) {
  const auto csv = kSource / "../shared/data/published_results.csv";
  if (!std::filesystem::exists(csv)) GTEST_SKIP() << "no " << csv;
  TempDir dir;
  std::vector<std::string> args{DRIVELAB_EXE, "report"};
  for (const auto& i : testing::golden_records()) args.push_back(i.string());
  args.insert(args.end(),
              {"--label", "Disk A", "--label", "Disk A", "--label", "Loop B", "--label", "Loop B", "--published",
               csv.string(), "--md", (dir / "r.md").string(), "--csv", (dir / "r.csv").string()});
  ASSERT_EQ(run_command(args, dir / "out", dir / "err"), 0) << read_text(dir / "err");
  const std::string md = read_text(dir / "r.md");
  const auto sec = md.find("\n## 4k_random_read\n");
  ASSERT_NE(sec, std::string::npos);
  const std::string table = md.substr(sec, md.find("\n## ", sec + 5) - sec);
  for (const std::string d : {"| Disk A |", "| Loop B |"})
    EXPECT_NE(table.find(d), std::string::npos) << d << "\n" << table;
  // The measured test is an io QD16 randread, the published peaks the lab's 128-thread curve:
  // the labelled drives are ranked "of 2", the published drives are in the reference block.
  EXPECT_NE(table.find(" of 2)"), std::string::npos) << table;
  EXPECT_EQ(table.find("| Toshiba XG6 1TB |"), std::string::npos) << table;
  const auto ref = md.find("\n## 4k_random_read (other configuration)\n");
  ASSERT_NE(ref, std::string::npos) << md;
  const std::string block = md.substr(ref, md.find("\n## ", ref + 5) - ref);
  for (const std::string d : {"| Toshiba XG6 1TB |", "| Sabrent Rocket NVMe 4.0 2TB |", "| KIOXIA XG8 2TB |"})
    EXPECT_NE(block.find(d), std::string::npos) << d << "\n" << block;
  EXPECT_NE(
      read_text(dir / "r.csv").find("4k_random_read (other configuration),iops,1/s,higher,Toshiba XG6 1TB,published,"),
      std::string::npos);
}

TEST(ReportCli, AMultiHostRecordBesidePublishedFourVmSumsWithItsHostChartOrNone) {
  const auto csv = kSource / "../shared/data/published_results.csv";
  if (!std::filesystem::exists(csv)) GTEST_SKIP() << "no " << csv;
  if (!find_program("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (Debian package gnuplot-nox); CI installs it";
  TempDir dir;
  const auto merged = dir / "merged.json";
  std::ofstream(merged) << testing::merged_record("job-cli", testing::four_hosts(), 4.9).dump(2);
  const std::vector<std::string> args{DRIVELAB_EXE,
                                      "report",
                                      merged.string(),
                                      "--label",
                                      "Lab",
                                      "--published",
                                      csv.string(),
                                      "--md",
                                      (dir / "r.md").string(),
                                      "--html",
                                      (dir / "r.html").string()};
  ASSERT_EQ(run_command(args, dir / "out", dir / "err"), 0) << read_text(dir / "err");
  const std::string md = read_text(dir / "r.md");
  const auto sec = md.find("\n## sqlserver_oltp_4vms\n");
  ASSERT_NE(sec, std::string::npos) << md;
  const std::string table = md.substr(sec, md.find("\n## ", sec + 5) - sec);
  // The CD6 review's 4-VM sum (12,633.7 TPS) and the 4-host system, ranked "of 2" (by medians: one
  // value each, not tested); the hosts below.
  EXPECT_NE(table.find("| KIOXIA CD6 | published | 12,634 TPS (1st of 2, not tested) |"), std::string::npos) << table;
  EXPECT_NE(table.find("| Lab (4 hosts) | measured | 405 TPS (2nd of 2, not tested) |"), std::string::npos) << table;
  EXPECT_NE(table.find("| ↳ host d (rank 3) | host, complete | 105 TPS |"), std::string::npos) << table;
  const auto chart = dir / "r_charts" / "sqlserver_oltp_4vms_hosts_Lab__4_hosts__1.gp";
  ASSERT_TRUE(std::filesystem::exists(chart));
  EXPECT_NE(read_text(chart).find("title 'host b (rank 1)'"), std::string::npos);
  EXPECT_NE(read_text(dir / "r.html").find("id=\"chart-sqlserver_oltp_4vms_hosts_Lab__4_hosts__1\""),
            std::string::npos);
  // --no-charts: no chart at all, the per-host one included.
  std::filesystem::remove_all(dir / "r_charts");
  auto no_charts = args;
  no_charts.push_back("--no-charts");
  ASSERT_EQ(run_command(no_charts, dir / "out", dir / "err"), 0) << read_text(dir / "err");
  EXPECT_FALSE(std::filesystem::exists(dir / "r_charts"));
  EXPECT_EQ(read_text(dir / "r.html").find("<svg"), std::string::npos);
  EXPECT_NE(read_text(dir / "r.html").find("↳ host b (rank 1)"), std::string::npos);
}

TEST(ReportCli, DeviceColumnsAndDeviceLatencyChartOfARealRun) {
  // A real 2 s io test on a file of the test's directory: its record carries the runner's device
  // telemetry (docs/telemetry.md) when the directory is on a block device.
  TempDir dir;
  const auto target = dir / "target";
  const auto out = dir / "results";
  std::filesystem::create_directories(target);
  ASSERT_EQ(
      run_command({DRIVELAB_EXE, "io", "--target",   target.string(), "--out",    out.string(), "--rw",     "randread",
                   "--bs",       "4k", "--size",     "16MiB",         "--direct", "true",       "--warmup", "0s",
                   "--duration", "2s", "--interval", "500ms"},
                  dir / "io.out", dir / "io.err"),
      0)
      << read_text(dir / "io.err");
  const std::string record = read_text(out / "latest.json");
  if (record.find("\"device_r_s\"") == std::string::npos)
    GTEST_SKIP() << "the test directory has no block device (details.telemetry.no_device)";
  std::vector<std::string> args{DRIVELAB_EXE,
                                "report",
                                (out / "latest.json").string(),
                                "--md",
                                (dir / "r.md").string(),
                                "--csv",
                                (dir / "r.csv").string()};
  const bool charts = find_program("gnuplot").has_value();
  if (charts) args.insert(args.end(), {"--html", (dir / "r.html").string()});
  ASSERT_EQ(run_command(args, dir / "out", dir / "err"), 0) << read_text(dir / "err");
  const std::string md = read_text(dir / "r.md");
  const auto sec = md.find(": device\n\nWhat the drive did");
  ASSERT_NE(sec, std::string::npos) << md;
  const std::string table = md.substr(sec, md.find("\n## ", sec) - sec);
  for (const char* header : {"| device_r_s (1/s) |", "| device_rmb_s (MB/s) |", "| device_r_await_ms (ms) |",
                             "| device_aqu_sz (requests) |", "| device_read_ios_per_io (ratio) |",
                             "| device_util_pct (%; no saturation figure for NVMe, RAID, dm or loop devices) |"})
    EXPECT_NE(table.find(header), std::string::npos) << header << "\n" << table;
  EXPECT_EQ(table.find(" of 1)"), std::string::npos) << "device columns are never ranked\n" << table;
  // Each header names its column's unit and the cells are bare numbers in it, as iostat -x's
  // columns are: no "377.7 µs" under "device_r_await_ms (ms)", no "(device)" for aqu-sz's requests.
  EXPECT_EQ(table.find("(device)"), std::string::npos) << table;
  {
    std::istringstream lines(table);
    std::string line;
    std::size_t rows = 0;
    while (std::getline(lines, line)) {
      if (!line.starts_with("| ") || line.starts_with("| Drive ")) continue;
      ++rows;
      std::vector<std::string> cells;
      for (std::size_t at = 1, next = 0; (next = line.find(" |", at)) != std::string::npos; at = next + 2)
        cells.push_back(line.substr(at + 1, next - at - 1));
      ASSERT_GT(cells.size(), 2u) << line;
      for (std::size_t k = 2; k < cells.size(); ++k)
        EXPECT_EQ(cells[k].find_first_not_of("0123456789.,-<"), std::string::npos)
            << "column " << k << ": '" << cells[k] << "' is not a bare number in its header's unit\n"
            << table;
    }
    EXPECT_GT(rows, 0u) << table;
  }
  // Not among the ranked columns above it.
  EXPECT_EQ(md.substr(0, sec).find("device_r_s"), std::string::npos) << md;
  EXPECT_NE(read_text(dir / "r.csv").find(",device_r_s,1/s,unranked,"), std::string::npos) << read_text(dir / "r.csv");
  if (!charts) GTEST_SKIP() << "gnuplot is not installed (Debian package gnuplot-nox); CI installs it";
  std::string gp;
  for (const auto& e : std::filesystem::directory_iterator(dir / "r_charts"))
    if (e.path().string().ends_with("_device_latency.gp")) gp = read_text(e.path());
  ASSERT_FALSE(gp.empty());
  EXPECT_NE(gp.find("device r_await'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("application mean'"), std::string::npos) << gp;
  EXPECT_NE(read_text(dir / "r.html").find("_device_latency\""), std::string::npos);
}

}  // namespace
}  // namespace drivelab::report
