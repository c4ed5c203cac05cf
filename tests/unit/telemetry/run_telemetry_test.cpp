// The runner's telemetry end to end (issue 33's acceptance tests), through run_protocol:
//  - a 4 KiB O_DIRECT random-read io test on a loop device in direct-I/O mode over the disk: the
//    device's reads equal the application's I/Os within 2%, and its r_await and aqu-sz agree with
//    sysstat's `iostat -x` within 5%, iostat sampling a window that holds the whole run (on this
//    loop device: the same I/Os; its rates scaled to the measured phase's length);
//  - the same test on a partition of a loop device (losetup -P): the partition is the headline and
//    counts the test's reads; its whole disk, below it, counts them again and is never added;
//  - a short TPC-C run on SQLite in a directory of the build tree (a block-backed filesystem, not
//    tmpfs): device write bytes and write I/Os per New-Order and per transaction (printed: the
//    figures docs/telemetry.md quotes);
//  - O_DIRECT random reads on ext4 mounted with data=journal, which answers them from the page
//    cache: the direct-I/O check warns, naming the application's IOPS and the device's r/s;
//  - the run's details: drive health (on a VM: why there is none, once) and the harness's ceiling;
//    `harness_ceiling: false` turns it off, and the key is validated.
// The loop tests need root (skip otherwise); the TPC-C one skips where the build tree has no block
// device.
#include <sys/mount.h>

#include <cerrno>
#include <chrono>
#include <cstring>
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
#include "protocol_run_fixture.hpp"

namespace drivelab::telemetry {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct RunTelemetry : testing::ProtocolRunTest {
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

/// The outcome of physics check `name` in a test's details.telemetry.checks ("" when absent).
std::string check_outcome(const results::TestRecord& t, const std::string& name) {
  for (const auto& c : t.details.at("telemetry").at("checks"))
    if (c.at("check") == name) return c.at("outcome").get<std::string>();
  return "";
}

bool has_warning(const results::TestRecord& t, const std::string& text) {
  for (const std::string& w : t.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
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
  // In direct-I/O mode the loop device's reads are the disk's; without it (a backing filesystem
  // that refuses O_DIRECT) they may be its page cache's, which the check says.
  EXPECT_EQ(check_outcome(t, "direct_io"), l.direct ? "passed" : "warning") << tel.at("checks").dump();
  if (!l.direct) {
    EXPECT_TRUE(has_warning(t, "loop/dio 0")) << out.str();
  }
  // A loop device has no health log: said once for the run.
  EXPECT_EQ(r.record.details.at("health").at("available"), false) << r.record.details.dump();
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

/// ext4 mounted with data=journal cannot do direct I/O and serves O_DIRECT reads through the page
/// cache (fs/ext4/file.c ext4_dio_read_iter: "Fallback to buffered I/O if the operation being
/// performed on the inode is not supported by direct I/O"): an io test's O_DIRECT random reads of
/// a file it has just written come from memory, and the loop device under it sees almost none.
TEST_F(RunTelemetry, DirectReadsThatExt4DataJournalAnswersFromThePageCacheAreWarned) {
  const testing::DataJournalExt4 ext4(dir / "mnt");
  if (!ext4.mounted) GTEST_SKIP() << ext4.why;
  const fs::path& mnt = ext4.mnt;
  fs::create_directories(mnt / "target");
  const runner::RunOutcome r = run(random_read_test("2s", "16MiB"), mnt / "target");
  ASSERT_EQ(r.record.tests.size(), 1u);
  const results::TestRecord& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  const nlohmann::json& tel = t.details.at("telemetry");
  EXPECT_EQ(tel.at("devices").at(0).at("name"), fs::path(ext4.loop->path()).filename().string()) << tel.dump();
  EXPECT_EQ(check_outcome(t, "direct_io"), "warning") << tel.at("checks").dump();
  EXPECT_TRUE(has_warning(t, "O_DIRECT random reads: the application's")) << out.str();
  std::cout << "O_DIRECT random reads on ext4 data=journal: IOPS " << metric(t, "iops") << ", the device's r/s "
            << metric(t, "device_r_s") << "\n"
            << results::format_summary(r.record);
}

/// A run says once, in its details, whether drive health can be read here and the harness's
/// ceiling it measured; the null engine's tests are not checked against either (their figures are
/// the harness's by design), and a test's I/Os per CPU-second are the ceiling's order.
TEST_F(RunTelemetry, TheRunSaysOnceWhetherHealthCanBeReadAndTheHarnessCeiling) {
  {
    TestTelemetry probe(dir / "target");
    if (!probe.stack()) GTEST_SKIP() << "the build tree has no block device: " << probe.reason();
  }
  const std::string test =
      ", kind: io, warmup: 0s, duration: 2s, interval: 1s,\n"
      "     io: {engine: null, rw: randread, xfersize: 4k, iodepth: 32, direct: true, "
      "file_size: 16MiB}}\n";
  const runner::RunOutcome r = run("protocol: p\ntests:\n  - {name: a" + test + "  - {name: b" + test, dir / "target");
  const nlohmann::ordered_json& details = r.record.details;
  std::cout << details.dump(2) << "\n";
  const auto& health = details.at("health");
  if (!health.at("available").get<bool>()) {
    EXPECT_FALSE(health.at("reason").get<std::string>().empty());  // on a VM: "... (virtio: vda)"
  }
  const auto& ceiling = details.at("harness_ceiling");
  ASSERT_TRUE(ceiling.contains("iops_per_cpu_s")) << ceiling.dump();
  const double per_cpu = ceiling.at("iops_per_cpu_s").get<double>();
  EXPECT_GT(per_cpu, 0);
  EXPECT_LE(ceiling.at("wall_s").get<double>(), 1.5) << "at most about a second";
  ASSERT_EQ(r.record.tests.size(), 2u);
  for (const results::TestRecord& t : r.record.tests) {
    ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
    EXPECT_EQ(check_outcome(t, "direct_io"), "not_applicable") << t.details.at("telemetry").at("checks").dump();
    EXPECT_EQ(check_outcome(t, "harness_ceiling"), "not_applicable");
    EXPECT_EQ(t.details.contains("health"), health.at("available").get<bool>()) << "per test only when readable";
    std::cout << t.name << ": " << metric(t, "ios") / t.details.at("telemetry").at("process_cpu_s").get<double>()
              << " I/Os per CPU-second of the process, the ceiling " << per_cpu << "\n";
  }
}

TEST_F(RunTelemetry, TheHarnessCeilingCanBeTurnedOffAndItsKeyIsValidated) {
  const runner::RunOutcome r =
      run("protocol: p\nharness_ceiling: false\ntests:\n  - {name: a, kind: io, warmup: 0s, duration: 1s, "
          "interval: 1s,\n     io: {engine: null, rw: randread, xfersize: 4k, iodepth: 8, file_size: 4MiB}}\n",
          dir / "target");
  const auto& ceiling = r.record.details.at("harness_ceiling");
  EXPECT_EQ(ceiling.at("measured"), false);
  EXPECT_NE(ceiling.at("reason").get<std::string>().find("turned off"), std::string::npos);
  ASSERT_EQ(r.record.tests.size(), 1u);
  EXPECT_EQ(check_outcome(r.record.tests[0], "harness_ceiling"), "not_applicable");
  EXPECT_EQ(r.record.config.at("harness_ceiling"), false);

  runner::Registry reg;
  emulators::register_emulators(reg);
  config::Diagnostics diags;
  config::Document doc =
      config::Document::load_string("protocol: p\nharness_ceiling: maybe\ntests: []\n", "p.yaml", diags);
  (void)runner::decode_protocol(doc, reg, diags);
  EXPECT_NE(diags.to_string().find("p.yaml:2"), std::string::npos) << diags.to_string();
  EXPECT_NE(diags.to_string().find("harness_ceiling"), std::string::npos) << diags.to_string();
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
