// A full disk in the middle of an OLTP run is a failed test (issue 15): TPC-C on SQLite, on a
// managed PostgreSQL and on a managed MariaDB, and sysbench on SQLite, each with its target on a
// small loop-mounted ext4 whose free space a ballast file takes once the measured phase has
// begun (after the load, so the space pre-check passes). Each ends `failed` with the
// out-of-space cause in the reason, never `complete` with the failed commits counted in_doubt,
// and keeps the intervals it finished. Needs root (loop devices); skips otherwise.
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../io/target_loop_device.hpp"
#include "protocol_run.hpp"

namespace drivelab::oltp {
namespace {

namespace fs = std::filesystem;
using test::ProtocolRun;
using test::TmpTarget;

constexpr std::uint64_t kMiB = 1ull << 20;

/// Takes all but `leave` bytes of the free space of the filesystem of `dir` (as root: the
/// reserved blocks too) with one preallocated file; returns its size.
std::uint64_t fill_leaving(const fs::path& dir, std::uint64_t leave) {
  struct statvfs v{};
  if (::statvfs(dir.c_str(), &v) != 0) return 0;
  std::uint64_t size = static_cast<std::uint64_t>(v.f_bfree) * v.f_frsize;
  size = size > leave ? size - leave : 0;
  const int fd = ::open((dir / "ballast").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return 0;
  // The extent tree takes blocks of its own: step down until the allocation fits.
  while (size > 0 && ::posix_fallocate(fd, 0, static_cast<off_t>(size)) != 0) size -= std::min(size, kMiB);
  ::close(fd);
  if (leave == 0) {
    // Every block: what the step-down left is taken 4 KiB at a time, until the filesystem says no.
    const int top = ::open((dir / "ballast-top").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (top >= 0) {
      const std::string block(4096, 'x');
      for (int i = 0; i < 4096 && ::write(top, block.data(), block.size()) == static_cast<ssize_t>(block.size()); ++i)
        size += block.size();
      ::fsync(top);
      ::close(top);
    }
  }
  return size;
}

/// A loop-mounted ext4 of `size` whose root and target directory the server users can reach.
struct SmallDisk {
  std::string why;  // before `loop`: create() writes it
  std::optional<testing::LoopDevice> loop;
  fs::path target;

  explicit SmallDisk(std::uint64_t size) : loop(testing::LoopDevice::create(size, why)) {
    if (!loop) return;
    if (!loop->make_ext4() || !loop->mount_ext4()) {
      why = "mkfs.ext4 or mount failed";
      loop.reset();
      return;
    }
    const auto open = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                      fs::perms::others_exec;
    fs::permissions(loop->dir(), open);  // mkdtemp made it 0700: the servers' users must pass
    target = loop->dir() / "mnt" / "target";
    fs::create_directories(target);
    fs::permissions(target, open);
  }
};

/// Runs `yaml` on `disk` and fills the disk once the first interval is journaled, leaving `leave`
/// bytes (0: every block); returns the test's record.
results::TestRecord run_until_full(SmallDisk& disk, const std::string& yaml, std::uint64_t& ballast,
                                   std::uint64_t leave = 1 * kMiB) {
  TmpTarget out;  // the results stay off the full disk
  ProtocolRun r;
  r.out_dir = out.path() / "out";
  std::thread filler([&] {
    r.wait_for_measured_phase();
    ballast = fill_leaving(disk.target, leave);
  });
  const auto outcome = r.run(yaml, disk.target);
  filler.join();
  EXPECT_EQ(outcome.record.tests.size(), 1u) << r.out.str();
  return outcome.record.tests.at(0);
}

/// What every full-disk run must show: failed, with the storage cause in the reason, measured
/// intervals kept, nothing counted in_doubt, ended by the failure (not by the 60 s duration).
void expect_failed_by_the_full_disk(const results::TestRecord& t, const std::string& cause) {
  ::testing::Test::RecordProperty("reason", t.reason);  // in --gtest_output, for a look at the text
  EXPECT_EQ(t.status, results::Status::failed) << t.reason;
  EXPECT_NE(t.reason.find("storage failure: "), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find(cause), std::string::npos) << t.reason;
  EXPECT_FALSE(t.intervals.empty());
  EXPECT_LT(t.measured_s, 45.0);
  if (t.details.contains("in_doubt")) {
    EXPECT_EQ(t.details["in_doubt"], 0) << t.details.dump();
  }
}

TEST(StorageFull, SqliteTpccFailsWithTheFullDiskInTheReason) {
  SmallDisk disk(256 * kMiB);
  if (!disk.loop) GTEST_SKIP() << "no loop device here: " << disk.why;
  std::uint64_t ballast = 0;
  const auto t = run_until_full(disk,
                                "protocol: p\nseed: 3\ntests:\n"
                                "  - {name: full, kind: tpcc, warmup: 0s, duration: 60s, interval: 1s,\n"
                                "     tpcc: {warehouses: 1, scale_items: 1000, users: 4}}\n",
                                ballast);
  EXPECT_GT(ballast, 100 * kMiB);
  // SQLITE_FULL's own text; before issue 15 each such COMMIT was counted in_doubt and the test
  // ended complete.
  expect_failed_by_the_full_disk(t, "database or disk is full");
  ASSERT_NE(t.find_metric("transactions"), nullptr);
  EXPECT_GT(t.find_metric("transactions")->value, 0.0);
}

TEST(StorageFull, SqliteSysbenchFailsWithTheFullDiskInTheReason) {
  SmallDisk disk(256 * kMiB);
  if (!disk.loop) GTEST_SKIP() << "no loop device here: " << disk.why;
  std::uint64_t ballast = 0;
  const auto t = run_until_full(disk,
                                "protocol: p\nseed: 3\ntests:\n"
                                "  - {name: full, kind: sysbench, warmup: 0s, duration: 60s, interval: 1s,\n"
                                "     sysbench: {workload: oltp_write_only, tables: 2, table_size: 10000, threads: 4,\n"
                                "                journal_mode: DELETE}}\n",
                                ballast, 0);
  // oltp_write_only deletes and inserts the same rows: in WAL mode a database whose WAL has
  // reached its checkpoint size writes only into blocks it has, and a fast run could go on with
  // the disk full; a rollback journal is a new file every transaction, and no block is left.
  EXPECT_GT(ballast, 100 * kMiB);
  expect_failed_by_the_full_disk(t, "database or disk is full");
}

TEST(StorageFull, ManagedPostgresTpccFailsWithTheServerLogInTheReason) {
  SmallDisk disk(384 * kMiB);
  if (!disk.loop) GTEST_SKIP() << "no loop device here: " << disk.why;
  std::uint64_t ballast = 0;
  const auto t =
      run_until_full(disk,
                     "protocol: p\nseed: 3\ntests:\n"
                     "  - name: full\n    kind: tpcc\n    warmup: 0s\n    duration: 60s\n    interval: 1s\n"
                     "    tpcc:\n      backend: postgres\n      server: {managed: postgres, buffer: 32MiB}\n"
                     "      warehouses: 1\n      scale_items: 1000\n      users: 4\n      reconnect_timeout: 2s\n",
                     ballast);
  EXPECT_GT(ballast, 50 * kMiB);
  // ENOSPC's text, from the client's error or the server log quoted in the reason.
  expect_failed_by_the_full_disk(t, "No space left on device");
  EXPECT_NE(t.reason.find("server log ("), std::string::npos) << t.reason;
}

TEST(StorageFull, ManagedMariadbTpccFailsWithTheFullDiskInTheReason) {
  SmallDisk disk(512 * kMiB);
  if (!disk.loop) GTEST_SKIP() << "no loop device here: " << disk.why;
  std::uint64_t ballast = 0;
  const auto t =
      run_until_full(disk,
                     "protocol: p\nseed: 3\ntests:\n"
                     "  - name: full\n    kind: tpcc\n    warmup: 0s\n    duration: 60s\n    interval: 1s\n"
                     "    tpcc:\n      backend: mysql\n      server: {managed: mariadb, buffer: 32MiB}\n"
                     "      warehouses: 1\n      scale_items: 1000\n      users: 4\n      reconnect_timeout: 2s\n",
                     ballast);
  EXPECT_GT(ballast, 50 * kMiB);
  expect_failed_by_the_full_disk(t, "server log (");
}

}  // namespace
}  // namespace drivelab::oltp
