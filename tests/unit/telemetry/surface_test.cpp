// Issue 33, "Everywhere a user looks": drive health, the physics checks and a shared device where
// a user reads them: the console summary (results/summary.hpp), the report (Markdown, HTML, CSV)
// and the Prometheus exporter.
//  - real runs through run_protocol: an io test in a directory of the build tree (on this VM the
//    root filesystem on vda: the device is shared with the system, said once; no drive health, and
//    why, once); O_DIRECT random reads on ext4 mounted with data=journal (root; a loop device over a
//    file on the disk), which the direct_io check warns of: the warning is on the device lines
//    and the report's check lines and CSV rows, and served as drivelab_test_physics_check;
//  - drive health from captured nvme-cli outputs (tests/data/health, a throttling event among
//    them; no NVMe drive on this VM): the summary's drive line, the report's device columns and
//    the exporter's drivelab_drive_* gauges.
#include <sys/mount.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "drivelab/metrics/prometheus.hpp"
#include "drivelab/report/report.hpp"
#include "drivelab/results/summary.hpp"
#include "drivelab/telemetry/health_record.hpp"
#include "drivelab/telemetry/test_telemetry.hpp"
#include "filled_loop.hpp"
#include "protocol_run_fixture.hpp"
#include "health_data.hpp"
#include "http_get.hpp"  // tests/support

namespace drivelab::telemetry {
namespace {

namespace fs = std::filesystem;

using Surface = testing::ProtocolRunTest;

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// The value of the sample `series` ("name{labels}") in exposition text `text`; NaN when absent.
double served(const std::string& text, const std::string& series) {
  const auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return std::nan("");
  return std::stod(text.substr(at + series.size() + 2));
}

/// The report of one record (as `drivelab report` reads a file).
report::Report report_of(const results::RunRecord& record) {
  report::Dataset data;
  report::add_record(data, record, "run.json", "");
  return report::build_report(std::move(data));
}

TEST_F(Surface, ADirectoryOfTheSystemDiskIsSharedAndTheRunSaysOnceWhyThereIsNoHealth) {
  {
    TestTelemetry probe(dir / "target");
    if (!probe.stack()) GTEST_SKIP() << "the build tree has no block device: " << probe.reason();
  }
  const std::string test =
      ", kind: io, warmup: 0s, duration: 1s, interval: 1s,\n"
      "     io: {engine: psync, rw: randread, xfersize: 4k, iodepth: 1, direct: false, file_size: 8MiB}}\n";
  const runner::RunOutcome r = run("protocol: p\ntests:\n  - {name: a" + test + "  - {name: b" + test, dir / "target");
  ASSERT_EQ(r.record.tests.size(), 2u);
  const std::string summary = results::format_summary(r.record);
  std::cout << summary;
  const std::string shared = results::shared_device_text(r.record.tests[0]);
  if (!shared.empty()) {
    // The record says it per test, the console once, on the first device line (another test's
    // loop device mounted meanwhile over a file on the same disk makes another text: said too).
    EXPECT_TRUE(shared.starts_with("/")) << shared;
    const auto& uses = r.record.tests[0].details.at("telemetry").at("shared").at("uses");
    ASSERT_FALSE(uses.empty());
    EXPECT_EQ(uses.at(0).at("counted_in"), r.record.tests[0].details.at("telemetry").at("devices").at(0).at("name"));
    EXPECT_EQ(count_of(summary, "shared: " + shared), 1u) << summary;
    EXPECT_LT(summary.find("  a: "), summary.find("shared: " + shared)) << "on the first test's line";
    EXPECT_GT(summary.find("  b: "), summary.find("shared: " + shared)) << summary;
    const std::string b = results::shared_device_text(r.record.tests[1]);
    EXPECT_EQ(count_of(summary, "shared: " + b), 1u) << summary;
  }
  const std::string why = results::no_health_reason(r.record);
  if (!why.empty()) {
    EXPECT_EQ(count_of(summary, "drive health: not read: " + why + "\n"), 1u) << summary;
    EXPECT_FALSE(r.record.tests[0].details.contains("health"));
  }
  for (const results::CheckSeen& c : results::checks_seen(r.record.tests[0]))
    if (c.outcome == "passed" || c.outcome == "not_applicable") {
      EXPECT_EQ(summary.find("check " + c.check + ":"), std::string::npos) << "a passing check is not printed";
    }
}

/// ext4 mounted with data=journal serves O_DIRECT reads through the page cache (fs/ext4/file.c,
/// ext4_dio_read_iter): the direct_io check warns (run_telemetry_test.cpp trips it the same way).
TEST_F(Surface, AWarnedCheckIsOnTheDeviceLinesTheReportAndTheExporter) {
  const testing::DataJournalExt4 ext4(dir / "mnt");
  if (!ext4.mounted) GTEST_SKIP() << ext4.why;
  const fs::path& mnt = ext4.mnt;
  fs::create_directories(mnt / "target");
  const runner::RunOutcome r =
      run("protocol: p\ntests:\n  - {name: rr, kind: io, warmup: 0s, duration: 2s, interval: 1s,\n"
          "     io: {engine: io_uring, rw: randread, xfersize: 4k, iodepth: 4, direct: true, file_size: 16MiB}}\n",
          mnt / "target");
  ASSERT_EQ(r.record.tests.size(), 1u);
  const results::TestRecord& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  std::string detail;
  for (const results::CheckSeen& c : results::checks_seen(t))
    if (c.check == "direct_io") detail = c.outcome == "warning" ? c.detail : "";
  ASSERT_FALSE(detail.empty()) << t.details.at("telemetry").at("checks").dump();

  // The console: on the test's device lines with its reason, not again among the warnings.
  const std::string summary = results::format_summary(r.record);
  std::cout << summary;
  EXPECT_EQ(count_of(summary, detail), 1u) << summary;
  EXPECT_NE(summary.find("    check direct_io: warning: " + detail + "\n"), std::string::npos) << summary;
  // The loop device's filesystem is the test's own; the disk under its backing file is shared.
  const std::string loop_name = fs::path(ext4.loop->path()).filename().string();
  const std::string shared = results::shared_device_text(t);
  std::cout << "shared: " << shared << "\n";
  EXPECT_EQ(shared.find(mnt.string()), std::string::npos) << shared;
  if (!shared.empty()) {
    EXPECT_NE(shared.find("(below " + loop_name + ")"), std::string::npos) << shared;
  }

  // The report: a check line under the test, a CSV row with status `check`, never ranked.
  const report::Report rep = report_of(r.record);
  const std::string md = report::to_markdown(rep);
  EXPECT_NE(md.find("### rr: checks"), std::string::npos) << md;
  EXPECT_NE(md.find("direct_io warning: " + detail), std::string::npos) << md;
  const std::string csv = report::to_csv(rep);
  EXPECT_NE(csv.find("rr,check_direct_io,outcome,unranked,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",1,1,1,1,check,run.json,drive,1,,,,,,\n"), std::string::npos) << csv;
  const std::string html = report::to_html(rep, {}, "no charts");
  EXPECT_NE(html.find("<h3>rr: checks</h3>"), std::string::npos);

  // The exporter: one outcome 1 per check, the others 0.
  metrics::PrometheusExporter ex(metrics::parse_listen_address("127.0.0.1:0"), {"h", 0});
  ex.test_recorded({"rr", "io", 0, 2}, t);
  const std::string text = test_support::http_get(ex.port(), "/metrics").value_or("");
  EXPECT_NE(text.find(R"(drivelab_test_physics_check{host="h",rank="0",check="direct_io",kind="io",)"
                      R"(outcome="warning",test="rr"} 1)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(drivelab_test_physics_check{host="h",rank="0",check="direct_io",kind="io",)"
                      R"(outcome="passed",test="rr"} 0)"),
            std::string::npos)
      << text;
}

/// A WDC SN730's reading: `log`'s SMART log with the captured id-ctrl (WCTEMP 357 K).
HealthSnapshot sn730(const std::string& log) {
  HealthSnapshot s = parse_nvme_smart_log(testing::health_data(log), log);
  apply_nvme_id_ctrl(s, testing::health_data("nvme-cli-id-ctrl-wdc-sn730.json"), "id-ctrl");
  s.device = "/dev/nvme0";
  return s;
}

TEST(SurfaceHealth, AThrottlingDriveIsOnTheSummaryTheReportAndTheExporter) {
  const HealthSnapshot before = sn730("nvme-cli-2-smart-log.json");
  const HealthSnapshot after = sn730("nvme-cli-2-smart-log-after-throttle.json");
  const TestHealth h =
      test_health({{DriveHealthRead{before.device, before, ""}}, ""}, {{DriveHealthRead{after.device, after, ""}}, ""});
  results::RunRecord record;
  record.run_id = "20261207T120000Z-000001";
  record.status = results::Status::complete;
  record.details["health"] = {{"available", true}, {"drives", results::Json::array()}};
  results::TestRecord t;
  t.name = "oltp";
  t.kind = "tpcc";
  t.status = results::Status::complete;
  t.metrics = {{"tps", 512, "1/s", ""}, {"device_w_s", 412, "1/s", ""}};
  t.details["telemetry"] = {
      {"window_s", 60}, {"devices", results::Json::array({results::Json{{"name", "nvme0n1"}, {"role", "headline"}}})}};
  t.details["health"] = h.json;
  t.warnings = h.warnings;
  record.tests = {t};

  const results::DriveHealthSeen d = results::drive_health_seen(t).at(0);
  ASSERT_TRUE(d.temperature_before_c && d.temperature_after_c && d.temperature_max_c && d.warning_temp_c);
  EXPECT_EQ(d.tmt_transitions, 4);
  EXPECT_EQ(d.tmt_seconds, 137);
  EXPECT_EQ(d.media_errors, 0);
  EXPECT_EQ(d.percentage_used, static_cast<double>(*after.percentage_used));
  EXPECT_TRUE(d.throttled);
  const std::string summary = results::format_summary(record);
  std::cout << summary;
  const std::string line = fmt::format(
      "    drive /dev/nvme0 ({}): {} °C -> {} °C (max {} °C, WCTEMP {} °C), thermal management +4 transitions in "
      "137 s, media errors +0, {}% used, throttled\n",
      *before.model, results::format_number(*before.temperature_c), results::format_number(*after.temperature_c),
      results::format_number(*d.temperature_max_c), results::format_number(83.85),
      results::format_number(static_cast<double>(*after.percentage_used)));
  EXPECT_NE(summary.find("  oltp: nvme0n1  w/s 412\n" + line), std::string::npos) << summary << line;
  EXPECT_EQ(summary.find("drive health: not read"), std::string::npos);
  EXPECT_NE(summary.find("oltp: drive /dev/nvme0: thermal management transitions +4"), std::string::npos)
      << "the health warnings stay among the warnings";

  // The report: the health figures are device columns, never ranked.
  const std::string csv = report::to_csv(report_of(record));
  EXPECT_NE(csv.find("oltp,drive_tmt_transitions,count,unranked,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(fmt::format("oltp,drive_temperature_max_c,°C,unranked,")), std::string::npos) << csv;
  EXPECT_NE(csv.find(",4,4,4,1,device,"), std::string::npos) << csv;
  const std::string md = report::to_markdown(report_of(record));
  EXPECT_NE(md.find("drive_warning_temp_c (°C)"), std::string::npos) << md;

  // The exporter: per drive, the temperatures, WCTEMP, the transitions, the share used.
  metrics::PrometheusExporter ex(metrics::parse_listen_address("127.0.0.1:0"), {"h", 0});
  ex.test_recorded({"oltp", "tpcc", 0, 60}, t);
  const std::string text = test_support::http_get(ex.port(), "/metrics").value_or("");
  const std::string l = R"({host="h",rank="0",device="/dev/nvme0",kind="tpcc")";
  EXPECT_EQ(served(text, "drivelab_drive_thermal_management_transitions" + l + R"(,test="oltp"})"), 4) << text;
  EXPECT_EQ(served(text, "drivelab_drive_thermal_management_seconds" + l + R"(,test="oltp"})"), 137);
  EXPECT_EQ(served(text, "drivelab_drive_media_errors" + l + R"(,test="oltp"})"), 0);
  EXPECT_DOUBLE_EQ(served(text, "drivelab_drive_temperature_celsius" + l + R"(,reading="before",test="oltp"})"),
                   *before.temperature_c);
  EXPECT_DOUBLE_EQ(served(text, "drivelab_drive_temperature_celsius" + l + R"(,reading="max",test="oltp"})"),
                   *d.temperature_max_c)
      << text;
  EXPECT_DOUBLE_EQ(served(text, "drivelab_drive_warning_temperature_celsius" + l + R"(,test="oltp"})"), 83.85);
  EXPECT_DOUBLE_EQ(served(text, "drivelab_drive_percentage_used_ratio" + l + R"(,test="oltp"})"),
                   static_cast<double>(*after.percentage_used) / 100.0);
}

}  // namespace
}  // namespace drivelab::telemetry
