#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "drivelab/config/document.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/emulators/register.hpp"
#include "drivelab/io/engine.hpp"
#include "drivelab/results/recorder.hpp"
#include "drivelab/runner/emulator.hpp"
#include "emulator_harness.hpp"
#include "temp_dir.hpp"

namespace drivelab::emulators {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

using drivelab::test_support::TempDir;

// One test of kind `io` driven through the Emulator interface, as the runner drives it.
struct IoTest : drivelab::test_support::EmulatorHarness {
  IoTest(const fs::path& target, const std::string& io_yaml, std::chrono::nanoseconds warmup,
         std::chrono::nanoseconds duration, std::chrono::nanoseconds interval)
      : EmulatorHarness(&register_emulators, "io", target, io_yaml, warmup, duration, interval) {}
  double interval_ios_sum() const { return interval_sum("ios"); }
};

std::string usable_engine() { return io::probe_engine("io_uring").usable ? "io_uring" : "psync"; }

TEST(IoEmulator, TwoSecondRandomReadOnA64MiBFile) {
  TempDir dir;
  IoTest t(dir.path(),
           "{engine: " + usable_engine() +
               ", rw: randread, xfersize: 4k, iodepth: 8, file_size: 64MiB, "
               "keep_file: false}",
           200ms, 2s, 500ms);
  t.emulator->prepare(t.ctx);
  EXPECT_TRUE(fs::exists(dir.path() / "drivelab-unit.dat"));
  t.emulator->warmup(t.ctx);
  t.emulator->run(t.ctx);
  t.emulator->verify(t.ctx);
  t.emulator->cleanup(t.ctx);
  EXPECT_FALSE(fs::exists(dir.path() / "drivelab-unit.dat")) << "keep_file: false removes the file";

  EXPECT_GT(t.metric("iops"), 0);
  const double ios = t.metric("ios");
  EXPECT_GT(ios, 0);
  EXPECT_EQ(ios, t.interval_ios_sum());
  EXPECT_EQ(t.metric("bytes"), ios * 4096);
  EXPECT_LE(t.metric("latency_p50_us"), t.metric("latency_p99_us"));
  EXPECT_LE(t.metric("latency_p99_us"), t.metric("latency_max_us"));
  ASSERT_EQ(t.record.histograms.count("latency"), 1u);
  EXPECT_EQ(static_cast<double>(t.record.histograms.at("latency").count()), ios);
  ASSERT_GE(t.record.intervals.size(), 4u);
  EXPECT_GE(drivelab::test_support::expect_interval_latency_histograms(t.record, "us"), 4u);
  const auto& names = t.record.intervals.front().values;
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names[0].first, "iops");
  EXPECT_EQ(names[1].first, "mb_s");
  EXPECT_EQ(names[2].first, "latency_avg_us");
  EXPECT_EQ(names[3].first, "latency_p99_us");
  EXPECT_FALSE(t.record.checks.empty());
  for (const auto& c : t.record.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
  EXPECT_TRUE(t.record.details.contains("achieved_queue_depth"));
}

// libaio on a buffered file: the data path works, the O_DIRECT caveat is recorded as a warning,
// and CPU accounting lands in the record (fio's usr_cpu/sys_cpu and IOPS per CPU-second).
TEST(IoEmulator, LibaioBufferedWarnsAndRecordsCpu) {
  if (!io::probe_engine("libaio").usable) GTEST_SKIP() << io::probe_engine("libaio").reason;
  TempDir dir;
  IoTest t(dir.path(), "{engine: libaio, rw: randread, iodepth: 4, file_size: 8MiB, direct: false, keep_file: false}",
           0s, 300ms, 100ms);
  t.emulator->prepare(t.ctx);
  t.emulator->warmup(t.ctx);
  t.emulator->run(t.ctx);
  t.emulator->verify(t.ctx);
  t.emulator->cleanup(t.ctx);
  const bool warned = std::any_of(t.record.warnings.begin(), t.record.warnings.end(), [](const std::string& w) {
    return w.find("asynchronous only with O_DIRECT") != std::string::npos;
  });
  EXPECT_TRUE(warned);
  EXPECT_GT(t.metric("ios"), 0);
  EXPECT_GE(t.metric("cpu_usr_pct"), 0);
  EXPECT_GE(t.metric("cpu_sys_pct"), 0);
  EXPECT_GT(t.metric("cpu_usr_pct") + t.metric("cpu_sys_pct"), 0) << "a 300 ms run of I/O uses some CPU";
  EXPECT_GT(t.metric("iops_per_cpu_s"), 0);
  // fio's definition (the job threads alone) is a part of the process-wide figure.
  const double jobs = t.metric("cpu_jobs_usr_pct") + t.metric("cpu_jobs_sys_pct");
  EXPECT_GT(jobs, 0);
  EXPECT_LE(jobs, t.metric("cpu_usr_pct") + t.metric("cpu_sys_pct") + 5.0);
  EXPECT_EQ(t.record.details.at("engine"), "libaio");
  EXPECT_EQ(t.record.details.at("iodepth_batch").at("complete_max"), 1);
  for (const auto& c : t.record.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
}

// The io_uring options of the job reach the engine: the record lists what the engine really used.
TEST(IoEmulator, UringOptionsAreUsedAndRecorded) {
  if (!io::probe_engine("io_uring").usable) GTEST_SKIP() << io::probe_engine("io_uring").reason;
  TempDir dir;
  IoTest t(dir.path(),
           "{engine: io_uring, iodepth: 8, file_size: 8MiB, fixedbufs: true, sqthread_poll: true, "
           "sq_thread_idle: 10ms, keep_file: false}",
           0s, 300ms, 100ms);
  t.emulator->prepare(t.ctx);
  t.emulator->warmup(t.ctx);
  t.emulator->run(t.ctx);
  t.emulator->verify(t.ctx);
  t.emulator->cleanup(t.ctx);
  EXPECT_GT(t.metric("ios"), 0);
  const auto used = t.record.details.at("engine_features_in_use").get<std::vector<std::string>>();
  for (const char* f : {"sqthread_poll", "registered_files", "registered_buffers"})
    EXPECT_NE(std::find(used.begin(), used.end(), f), used.end()) << f;
  for (const auto& c : t.record.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
}

TEST(IoEmulator, NullEngineTouchesNoFileAndStopsOnRequest) {
  TempDir dir;
  IoTest t(dir.path(), "{engine: null, iodepth: 16}", 0s, 60s, 100ms);
  t.emulator->prepare(t.ctx);
  EXPECT_TRUE(fs::is_empty(dir.path()));
  t.emulator->warmup(t.ctx);
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);
    t.stop.request();
  });
  t.emulator->run(t.ctx);  // returns on the stop request, not after 60 s
  stopper.join();
  t.emulator->verify(t.ctx);
  t.emulator->cleanup(t.ctx);
  EXPECT_GT(t.metric("ios"), 0);
  EXPECT_EQ(t.metric("ios"), t.interval_ios_sum());
  EXPECT_LT(t.record.measured_s, 60.0);
  for (const auto& c : t.record.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
}

TEST(IoEmulator, AShortReadFailsTheTestWithTheOffsetAndFile) {
  TempDir dir;
  IoTest t(dir.path(), "{engine: psync, rw: read, xfersize: 4k, iodepth: 1, file_size: 1MiB}", 0s, 5s, 1s);
  t.emulator->prepare(t.ctx);
  // Someone truncates the file under the test: reads past the new end return 0 bytes.
  fs::resize_file(dir.path() / "drivelab-unit.dat", 64 * 1024);
  t.emulator->warmup(t.ctx);
  try {
    t.emulator->run(t.ctx);
    ADD_FAILURE() << "expected the run to fail";
  } catch (const EnvironmentError& e) {
    // io::storage_failure's wording; the seconds vary.
    const std::string what = e.what();
    EXPECT_TRUE(what.starts_with("storage failure: read of 4096 bytes at offset 65536 from " +
                                 (dir.path() / "drivelab-unit.dat").string() + ": short transfer of 0 bytes, "))
        << what;
    EXPECT_TRUE(what.ends_with(" s into the measured phase")) << what;
  }
  t.emulator->cleanup(t.ctx);
  EXPECT_EQ(t.metric("ios"), 16);  // the 16 blocks before the cut were measured and kept
}

}  // namespace
}  // namespace drivelab::emulators
