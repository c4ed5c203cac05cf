// The block-device counters of a real loop device doing known I/O: 1000 4 KiB O_DIRECT reads are
// 1000 reads of 8 sectors in its stat file; and, when sysstat's iostat is installed, r_await and
// aqu-sz computed here agree with `iostat -x -y <dev> 1 1` over the same steady load.
// Needs root (a loop device); skips otherwise.
#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <iostream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "filled_loop.hpp"
#include "drivelab/core/process.hpp"
#include "drivelab/telemetry/block_stats.hpp"
#include "drivelab/telemetry/device_stack.hpp"

namespace drivelab::telemetry {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kDeviceBytes = testing::kFilledLoopBytes;
constexpr std::size_t kBlock = 4096;
using testing::FilledLoop;

/// `n` random 4 KiB O_DIRECT reads of `path` (n < 0: until `stop`).
void random_reads(const std::string& path, long n, const std::atomic<bool>* stop, unsigned seed) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  void* buf = nullptr;
  ASSERT_EQ(::posix_memalign(&buf, 4096, kBlock), 0);
  std::uint64_t x = 0x9e3779b97f4a7c15ULL * (seed + 1);
  for (long i = 0; n < 0 ? !stop->load(std::memory_order_relaxed) : i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const off_t off = static_cast<off_t>((x % (kDeviceBytes / kBlock)) * kBlock);
    ASSERT_EQ(::pread(fd, buf, kBlock, off), static_cast<ssize_t>(kBlock));
  }
  std::free(buf);
  ::close(fd);
}

std::filesystem::path stat_file_of(const std::string& node) {
  const TargetStack t = device_stack_of(node);
  EXPECT_TRUE(t.stack) << t.reason;
  return t.stack ? t.stack->headline().stat_file() : std::filesystem::path{};
}

TEST(LoopDeviceCounters, AThousandDirectReadsAreAThousandReadsOfEightSectors) {
  FilledLoop l;
  if (!l.loop) GTEST_SKIP() << l.why;
  ASSERT_TRUE(l.why.empty()) << l.why;
  const TargetStack t = device_stack_of(l.loop->path());
  ASSERT_TRUE(t.stack) << t.reason;
  EXPECT_EQ(t.stack->headline().block.name, std::filesystem::path(l.loop->path()).filename().string());
  // The loop device's backing file is on the temp dir's filesystem: its device is below.
  ASSERT_GE(t.stack->devices.size(), 2u) << t.stack->describe();
  EXPECT_EQ(t.stack->devices[1].role, StackRole::backing_file_device) << t.stack->describe();

  const auto file = t.stack->headline().stat_file();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // udev's probe of the new device
  const auto a = read_block_stat(file);
  const auto t0 = Clock::now();
  random_reads(l.loop->path(), 1000, nullptr, 1);
  const auto b = read_block_stat(file);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  ASSERT_TRUE(a && b);
  const BlockRates r = block_rates(*a, *b, seconds);
  EXPECT_NEAR(r.r_s * seconds, 1000.0, 20.0) << "r/s x window within 2% of the reads issued";
  EXPECT_NEAR(static_cast<double>(r.read_bytes), 1000.0 * kBlock, 20.0 * kBlock);
  EXPECT_NEAR(r.rareq_sz, 4.0, 0.08);
  EXPECT_EQ(r.writes, 0u);
  EXPECT_GT(r.r_await, 0.0);
  std::cout << "loop " << (l.direct ? "(direct I/O)" : "(buffered)") << ": r/s " << r.r_s << ", r_await " << r.r_await
            << " ms, aqu-sz " << r.aqu_sz << ", %util " << r.util_pct << "\n";
}

TEST(LoopDeviceCounters, APartitionIsTheHeadlineAndItsDiskCountsTheSameReadsAgain) {
  std::string why;
  auto loop = testing::LoopDevice::create(kDeviceBytes, why, /*partscan=*/true);
  if (!loop) GTEST_SKIP() << why;
  if (!loop->add_partition()) GTEST_SKIP() << "the kernel shows no partition of " << loop->path();
  const std::string part = loop->partition(1);
  const TargetStack t = device_stack_of(part);
  ASSERT_TRUE(t.stack) << t.reason;
  // loopNpK; below: loopN (whole disk of loopNpK), <disk> (holds the backing file of loopN)
  ASSERT_EQ(t.stack->devices.size(), 3u) << t.stack->describe();
  EXPECT_EQ(t.stack->headline().block.name, std::filesystem::path(part).filename().string());
  EXPECT_EQ(t.stack->devices[1].role, StackRole::whole_disk);
  EXPECT_EQ(t.stack->devices[1].block.name, std::filesystem::path(loop->path()).filename().string());
  EXPECT_EQ(t.stack->devices[2].role, StackRole::backing_file_device);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // udev's probe of the new partition
  const auto p0 = read_block_stat(t.stack->devices[0].stat_file());
  const auto d0 = read_block_stat(t.stack->devices[1].stat_file());
  // 1000 reads within the partition's 4 MiB.
  const int fd = ::open(part.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  void* buf = nullptr;
  ASSERT_EQ(::posix_memalign(&buf, 4096, kBlock), 0);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(::pread(fd, buf, kBlock, static_cast<off_t>((i * 7 % 1024) * kBlock)), static_cast<ssize_t>(kBlock));
  std::free(buf);
  ::close(fd);
  const auto p1 = read_block_stat(t.stack->devices[0].stat_file());
  const auto d1 = read_block_stat(t.stack->devices[1].stat_file());
  ASSERT_TRUE(p0 && p1 && d0 && d1);
  const BlockRates part_rates = block_rates(*p0, *p1, 1.0), disk_rates = block_rates(*d0, *d1, 1.0);
  EXPECT_NEAR(static_cast<double>(part_rates.reads), 1000.0, 20.0) << "the headline counts the test's reads";
  // The disk counts the same reads again: adding the two would report 2000 (TPC-Council/HammerDB#913).
  EXPECT_NEAR(static_cast<double>(disk_rates.reads), 1000.0, 20.0);
}

TEST(LoopDeviceCounters, AwaitAndQueueSizeAgreeWithIostat) {
  const auto iostat = find_program("iostat", {"/usr/bin", "/usr/sbin"});
  if (!iostat)
    GTEST_SKIP() << "sysstat's iostat is not installed (Debian: sysstat; scripts/install-deps.sh test installs it): "
                    "r_await and aqu-sz not compared with iostat";
  FilledLoop l;
  if (!l.loop) GTEST_SKIP() << l.why;
  ASSERT_TRUE(l.why.empty()) << l.why;
  const std::string name = std::filesystem::path(l.loop->path()).filename().string();
  const auto file = stat_file_of(l.loop->path());
  // A steady load (4 readers) across the whole window, so that both windows see the same.
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (unsigned i = 0; i < 4; ++i) readers.emplace_back([&, i] { random_reads(l.loop->path(), -1, &stop, i); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto a = read_block_stat(file);
  const auto t0 = Clock::now();
  const CommandResult out =
      run_command({iostat->string(), "-x", "-y", "-d", "-o", "JSON", name, "1", "1"}, std::chrono::milliseconds(10000));
  const auto b = read_block_stat(file);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  stop = true;
  for (auto& t : readers) t.join();
  ASSERT_EQ(out.exit_code, 0) << out.output;
  ASSERT_TRUE(a && b);
  const nlohmann::json j = nlohmann::json::parse(out.output);
  const nlohmann::json* d = testing::iostat_disk(j, name);
  ASSERT_NE(d, nullptr) << out.output;
  const BlockRates r = block_rates(*a, *b, seconds);
  const double io_await = (*d).at("r_await").get<double>();
  const double io_aqu = (*d).at("aqu-sz").get<double>();
  std::cout << "over " << seconds << " s: r_await " << r.r_await << " ms (iostat " << io_await << "), aqu-sz "
            << r.aqu_sz << " (iostat " << io_aqu << "), r/s " << r.r_s << " (iostat " << (*d).at("r/s") << ")\n";
  EXPECT_NEAR(r.r_await, io_await, 0.05 * io_await + 0.005) << "within 5% (and iostat's two decimals)";
  EXPECT_NEAR(r.aqu_sz, io_aqu, 0.05 * io_aqu + 0.005) << "within 5% (and iostat's two decimals)";
}

}  // namespace
}  // namespace drivelab::telemetry
