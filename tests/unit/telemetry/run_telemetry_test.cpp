// The runner's telemetry end to end (issue 33's acceptance tests), through run_protocol:
//  - a 4 KiB O_DIRECT random-read io test on a loop device in direct-I/O mode over the disk: the
//    device's reads equal the application's I/Os within 2%, and its r_await and aqu-sz agree with
//    sysstat's `iostat -x` within 5%, iostat sampling a window that holds the whole run (on this
//    loop device: the same I/Os; its rates scaled to the measured phase's length);
//  - the same test on a partition of a loop device (losetup -P): the partition is the headline and
//    counts the test's reads; its whole disk, below it, counts them again and is never added;
//  - a short TPC-C run on SQLite in a directory of the build tree (a block-backed filesystem, not
//    tmpfs): device write bytes and write I/Os per New-Order and per transaction (printed: the
//    figures docs/telemetry.md quotes).
// The loop tests need root (skip otherwise); the TPC-C one skips where the build tree has no block
// device.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "drivelab/core/process.hpp"
#include "drivelab/emulators/register.hpp"
#include "drivelab/oltp/register.hpp"
#include "drivelab/results/summary.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"
#include "drivelab/telemetry/test_telemetry.hpp"
#include "filled_loop.hpp"

namespace drivelab::telemetry {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct RunTelemetry : ::testing::Test {
  fs::path dir = fs::path(DRIVELAB_BINARY_DIR) / "test-scratch" /
                 ("run_telemetry_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  std::ostringstream out;

  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir / "target");
  }
  void TearDown() override { fs::remove_all(dir); }

  runner::RunOutcome run(const std::string& yaml, const fs::path& target) {
    runner::Registry reg;
    emulators::register_emulators(reg);
    oltp::register_emulators(reg);
    config::Diagnostics diags;
    config::Document doc = config::Document::load_string(yaml, "p.yaml", diags);
    runner::Protocol p = runner::decode_protocol(doc, reg, diags);
    EXPECT_TRUE(diags.empty()) << diags.to_string();
    runner::RunOptions o;
    o.target = target;
    o.out_dir = dir / "out";
    o.out = &out;
    runner::StopFlag stop;
    return runner::run_protocol(p, o, stop);
  }

  /// True once the run's journal holds an interval (the measured phase is a second old).
  bool journal_has_interval() const {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir / "out", ec)) {
      if (!e.path().string().ends_with(".journal.jsonl")) continue;
      std::ifstream in(e.path());
      std::ostringstream whole;
      whole << in.rdbuf();
      if (whole.str().find("\"event\":\"interval\"") != std::string::npos) return true;
    }
    return false;
  }
};

double metric(const results::TestRecord& t, std::string_view name) {
  const results::Metric* m = t.find_metric(name);
  EXPECT_NE(m, nullptr) << name;
  return m != nullptr ? m->value : std::nan("");
}

/// A 4 KiB O_DIRECT random-read io test of `duration` over the first `size` of the device.
std::string random_read_test(const char* duration, const char* size) {
  return std::string("protocol: p\ntests:\n  - {name: rr, kind: io, warmup: 0s, duration: ") + duration +
         ", interval: 1s,\n     io: {engine: io_uring, rw: randread, xfersize: 4k, iodepth: 4, direct: true, "
         "file_size: " +
         size + "}}\n";
}

TEST_F(RunTelemetry, DirectRandomReadsOnALoopDeviceAreTheDevicesReadsAndIostatAgrees) {
  testing::FilledLoop l;
  if (!l.loop) GTEST_SKIP() << l.why;
  ASSERT_TRUE(l.why.empty()) << l.why;
  const std::string name = fs::path(l.loop->path()).filename().string();
  const auto iostat = find_program("iostat", {"/usr/bin", "/usr/sbin"});
  // iostat over a window that holds the whole run (kIostatS from before prepare to after cleanup):
  // on this loop device it sees exactly the test's reads, the same I/Os the record's figures are
  // of, over a longer window (its rates scale by kIostatS / window_s; the awaits do not).
  constexpr double kIostatS = 8;
  CommandResult io_out{.exit_code = -1, .output = "not run"};
  std::thread sampler;
  if (iostat) {
    sampler = std::thread(
        [&] { io_out = run_command({iostat->string(), "-x", "-y", "-d", "-o", "JSON", name, "8", "1"}, 20000ms); });
    std::this_thread::sleep_for(500ms);  // iostat's first reading
  }
  const runner::RunOutcome r = run(random_read_test("4s", "64MiB"), l.loop->path());
  if (sampler.joinable()) sampler.join();
  ASSERT_EQ(r.record.tests.size(), 1u);
  const results::TestRecord& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  const nlohmann::json& tel = t.details.at("telemetry");
  EXPECT_EQ(tel.at("devices").at(0).at("name"), name) << tel.dump();
  // The application's I/Os are the device's reads (O_DIRECT: no page cache, no readahead).
  const double ios = metric(t, "ios"), reads = metric(t, "device_read_ios");
  EXPECT_NEAR(reads, ios, 0.02 * ios) << "device reads within 2% of the application's I/Os";
  EXPECT_NEAR(metric(t, "device_read_ios_per_io"), 1.0, 0.02);
  EXPECT_NEAR(metric(t, "device_r_s"), metric(t, "iops"), 0.02 * metric(t, "iops")) << "r/s = IOPS within 2%";
  EXPECT_NEAR(metric(t, "device_rareq_bytes"), 4096, 82);
  EXPECT_EQ(metric(t, "device_write_ios"), 0);
  for (const results::Interval& iv : t.intervals) {
    const auto iops = results::value_of(iv.values, results::catalogue::iops);
    const auto r_s = results::value_of(iv.values, results::catalogue::device_r_s);
    ASSERT_TRUE(iops && r_s);
    if (iv.duration_s > 0.9) {
      EXPECT_NEAR(*r_s, *iops, 0.05 * *iops) << "interval at " << iv.t_s;
    }
  }
  std::cout << "io on " << name << (l.direct ? " (direct I/O)" : " (buffered)") << ": IOPS " << metric(t, "iops")
            << ", r/s " << metric(t, "device_r_s") << ", r_await " << metric(t, "device_r_await_ms") << " ms, aqu-sz "
            << metric(t, "device_aqu_sz") << ", %util " << metric(t, "device_util_pct") << "\n"
            << results::format_summary(r.record);
  if (!iostat) GTEST_SKIP() << "sysstat's iostat is not installed: r_await and aqu-sz not compared with it";
  ASSERT_EQ(io_out.exit_code, 0) << io_out.output;
  const nlohmann::json j = nlohmann::json::parse(io_out.output);
  const nlohmann::json* d = testing::iostat_disk(j, name);
  ASSERT_NE(d, nullptr) << io_out.output;
  const double io_await = d->at("r_await").get<double>(), io_aqu = d->at("aqu-sz").get<double>();
  const double scale = kIostatS / t.details.at("telemetry").at("window_s").get<double>();
  std::cout << "iostat over " << kIostatS << " s holding the run: r_await " << io_await << " ms, aqu-sz " << io_aqu
            << " (x " << scale << ": " << io_aqu * scale << "), r/s " << d->at("r/s") << " (x " << scale << ": "
            << d->at("r/s").get<double>() * scale << ")\n";
  // Within 5%, and iostat's two decimals.
  EXPECT_NEAR(metric(t, "device_r_await_ms"), io_await, 0.05 * io_await + 0.005) << "r_await within 5% of iostat's";
  EXPECT_NEAR(metric(t, "device_aqu_sz"), io_aqu * scale, 0.05 * io_aqu * scale + 0.005 * scale)
      << "aqu-sz within 5% of iostat's over the same I/Os";
  EXPECT_NEAR(metric(t, "device_r_s"), d->at("r/s").get<double>() * scale, 0.02 * metric(t, "device_r_s"));
}

TEST_F(RunTelemetry, ATestOnAPartitionCountsThePartitionItsDiskIsBelowAndNotAdded) {
  std::string why;
  auto loop = testing::LoopDevice::create(testing::kFilledLoopBytes, why, /*partscan=*/true);
  if (!loop) GTEST_SKIP() << why;
  if (!loop->add_partition()) GTEST_SKIP() << "the kernel shows no partition of " << loop->path();
  const std::string part = loop->partition(1);
  std::this_thread::sleep_for(200ms);  // udev's probe of the new partition
  const runner::RunOutcome r = run(random_read_test("2s", "4MiB"), part);
  ASSERT_EQ(r.record.tests.size(), 1u);
  const results::TestRecord& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  const nlohmann::json& devices = t.details.at("telemetry").at("devices");
  ASSERT_GE(devices.size(), 2u) << devices.dump();
  EXPECT_EQ(devices[0].at("name"), fs::path(part).filename().string());
  EXPECT_EQ(devices[1].at("name"), fs::path(loop->path()).filename().string());
  EXPECT_EQ(devices[1].at("role"), "whole_disk");
  const double ios = metric(t, "ios");
  EXPECT_NEAR(metric(t, "device_read_ios"), ios, 0.02 * ios) << "the partition only: not partition + disk";
  // The disk counted the same reads (and nothing else): shown, never added to the headline.
  EXPECT_NEAR(devices[1].at("test").at("device_r_s").get<double>(), metric(t, "device_r_s"),
              0.02 * metric(t, "device_r_s"));
}

TEST_F(RunTelemetry, ATpccRunOnSqliteReportsTheDevicesWritesPerNewOrderAndPerTransaction) {
  {
    TestTelemetry probe(dir / "target");
    if (!probe.stack()) GTEST_SKIP() << "the build tree has no block device: " << probe.reason();
  }
  const runner::RunOutcome r =
      run("protocol: p\ntests:\n"
          "  - {name: tpcc, kind: tpcc, warmup: 2s, duration: 5s, interval: 1s,\n"
          "     tpcc: {warehouses: 1, users: 2, scale_items: 1000}}\n",
          dir / "target");
  ASSERT_EQ(r.record.tests.size(), 1u);
  const results::TestRecord& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  const double per_no = metric(t, "device_write_bytes_per_new_order");
  const double per_txn = metric(t, "device_write_bytes_per_txn");
  EXPECT_GT(per_no, 0) << "a committed New-Order writes to the device (SQLite's journal, synchronous=FULL)";
  EXPECT_GT(metric(t, "device_write_ios_per_new_order"), 0);
  EXPECT_GT(per_txn, 0);
  EXPECT_GT(metric(t, "device_write_ios_per_txn"), 0);
  EXPECT_NEAR(per_no * metric(t, "new_orders"), per_txn * metric(t, "transactions"),
              1e-6 * metric(t, "device_write_bytes"))
      << "both are the same device bytes";
  std::cout << "tpcc on SQLite (" << t.details.at("telemetry").at("stack").get<std::string>() << "), "
            << metric(t, "new_orders") << " New-Orders of " << metric(t, "transactions") << " transactions in "
            << t.details.at("telemetry").at("window_s") << " s: per New-Order " << per_no << " bytes in "
            << metric(t, "device_write_ios_per_new_order") << " writes, per transaction " << per_txn << " bytes in "
            << metric(t, "device_write_ios_per_txn") << " writes (" << metric(t, "device_flush_ios_per_txn")
            << " flushes)\n"
            << results::format_summary(r.record);
}

}  // namespace
}  // namespace drivelab::telemetry
