// Block-device targets end to end, through the real `drivelab` binary, on a 4 GiB loop device
// over a sparse file (issue 4's acceptance test):
//  - a device carrying a filesystem is refused for writes, with every reason and the exact flag,
//    until its identity (a loop device's backing file) is named; reads need no consent;
//  - then config/precondition.yaml runs on it: a full sequential fill plus one small random
//    pass, and a video test on the first 25% of the device;
//  - tests that need a directory are refused on a device, and --destroy-data-on on a directory
//    target is an error;
//  - the record's target.serial is the identity --destroy-data-on accepted, on the loop device and
//    on a device-mapper linear device over it (skipped without device-mapper);
//  - a second loop device over the backing file of a mounted one is refused, named or not, with a
//    message that names the mount, and the filesystem survives (issue 15);
//  - the device-stack matrix (issue 29): a loop device over a block device, under and over a
//    mounted one, three deep both ways, partscan partitions above and below: each write refused,
//    named or not, with the mount named, and the filesystem clean afterwards (fsck -n -f); a run
//    holds its whole stack (mounting a loop over the target fails with EBUSY) and a second run
//    writing the same blocks through an alias loop device is refused;
//  - a device that fills mid-run (a loop device whose sparse backing file lives on a small tmpfs)
//    ends each writing kind (io, vdbench, precondition, video) `failed`, exit status 1, with the
//    storage failure in its reason and the intervals measured before it kept (issue 15);
//  - a results directory that fills mid-run (a small tmpfs as --out): the running test and the
//    run fail with the journal's error, said on stderr, the record is not left "in progress",
//    and `results recover` on the journal says the same (issue 15).
// Skipped where loop devices cannot be made (not root). The device is always detached and the
// file removed (LoopDevice is RAII and autoclear).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "../unit/io/target_dm_device.hpp"
#include "../unit/io/target_loop_device.hpp"
#include "process.hpp"

namespace {

using drivelab::testing::Child;
using drivelab::testing::DmLinearDevice;
using drivelab::testing::LoopDevice;
using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;
using drivelab::testing::TmpfsMount;
using nlohmann::json;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

class LoopDeviceRun : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    auto d = LoopDevice::create(4 * kGiB, why);
    if (!d) GTEST_SKIP() << "no loop device here: " << why;
    loop_.emplace(std::move(*d));
  }
  drivelab::testing::Result drivelab(std::vector<std::string> args, const ScratchDir& dir) {
    args.insert(args.begin(), DRIVELAB_EXE);
    return drivelab::testing::run(std::move(args), dir.path(), std::chrono::seconds(900));
  }
  /// A short write test on a blank `device`, naming it `identity` (naming is checked even when
  /// not needed); the record goes to <dir>/out.
  drivelab::testing::Result write_named(const std::string& device, const std::string& identity, const ScratchDir& dir) {
    return drivelab(
        {"io", "--target", device, "--out", (dir.path() / "out").string(), "--quiet", "--rw", "write", "--file-size",
         "16MiB", "--duration", "1s", "--warmup", "0s", "--interval", "1s", "--destroy-data-on", identity},
        dir);
  }
  /// target.serial of the complete record in <dir>/out.
  json serial_in_record(const ScratchDir& dir) {
    json rec = json::parse(read_file(dir.path() / "out" / "latest.json"));
    EXPECT_EQ(rec["status"], "complete") << rec["reason"];
    return rec["target"]["serial"];
  }
  std::optional<LoopDevice> loop_;
};

TEST_F(LoopDeviceRun, FilesystemRefusedUntilNamedThenPreconditionAndRegionTest) {
  if (!loop_->make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  ScratchDir dir("loop-device");
  const std::string protocol = std::string(DRIVELAB_SOURCE_DIR) + "/config/precondition.yaml";
  const auto out = dir.path() / "out";
  const std::vector<std::string> shorten = {"--out",
                                            out.string(),
                                            "--quiet",
                                            "--set",
                                            "tests[0].precondition.random_pass_size=256MiB",
                                            "--set",
                                            "tests[*].warmup=0s",
                                            "--set",
                                            "tests[1].duration=2s",
                                            "--set",
                                            "tests[1].interval=1s"};
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), shorten.begin(), shorten.end());
    return args;
  };

  // 1. Writing is refused: the ext4 signature is named, and the exact flag to pass.
  const auto refused = drivelab(with({"run", protocol, "--target", loop_->path()}), dir);
  EXPECT_EQ(refused.status, 3) << refused.out << refused.err;
  EXPECT_TRUE(contains(refused.err, "refusing to write to " + loop_->path())) << refused.err;
  EXPECT_TRUE(contains(refused.err, "ext4 filesystem signature")) << refused.err;
  EXPECT_TRUE(contains(refused.err, "--destroy-data-on " + loop_->backing_file())) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(out / "latest.json")) << "a refused run leaves no record";

  // 2. The wrong identity is refused too, naming the right one.
  const auto wrong =
      drivelab(with({"run", protocol, "--target", loop_->path(), "--destroy-data-on", "S3X-NOT-IT"}), dir);
  EXPECT_EQ(wrong.status, 3);
  EXPECT_TRUE(contains(wrong.err, "names 'S3X-NOT-IT'")) << wrong.err;
  EXPECT_TRUE(contains(wrong.err, loop_->backing_file())) << wrong.err;

  // 3. Reading needs no consent (as with fio): a short random-read io test on the device.
  const auto read = drivelab({"io", "--target", loop_->path(), "--out", out.string(), "--quiet", "--rw", "randread",
                              "--file-size", "64MiB", "--duration", "1s", "--warmup", "0s", "--interval", "1s"},
                             dir);
  EXPECT_EQ(read.status, 0) << read.out << read.err;

  // 4. Named: fill + one 256 MiB random pass, then video on the first 25% (1 GiB).
  const auto ok =
      drivelab(with({"run", protocol, "--target", loop_->path(), "--destroy-data-on", loop_->backing_file()}), dir);
  ASSERT_EQ(ok.status, 0) << ok.out << ok.err;
  json rec = json::parse(read_file(out / "latest.json"));  // non-const: a missing key reads as null
  EXPECT_EQ(rec["status"], "complete");
  EXPECT_EQ(rec["target"]["kind"], "block_device");
  EXPECT_EQ(rec["target"]["capacity_bytes"], 4 * kGiB);
  EXPECT_EQ(rec["target"]["serial"], loop_->backing_file()) << "the record names the device as --destroy-data-on did";
  EXPECT_FALSE(rec["config"].contains("destroy_data_on")) << "named on the command line, not in the protocol";
  bool warned = false;
  for (const auto& w : rec["warnings"]) warned = warned || contains(w.get<std::string>(), "is destroyed");
  EXPECT_TRUE(warned) << rec["warnings"].dump();

  json& pre = rec["tests"][0];
  EXPECT_EQ(pre["kind"], "precondition");
  EXPECT_EQ(pre["status"], "complete") << pre["reason"];
  EXPECT_EQ(pre["metrics"]["region_bytes"]["value"].get<double>(), static_cast<double>(4 * kGiB));
  EXPECT_EQ(pre["metrics"]["bytes_written"]["value"].get<double>(), static_cast<double>(4 * kGiB + 256 * (kGiB >> 10)));
  EXPECT_GT(pre["metrics"]["fill_mb_s"]["value"].get<double>(), 0);
  EXPECT_GT(pre["metrics"]["random_mb_s"]["value"].get<double>(), 0);
  for (const auto& c : pre["checks"]) EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();
  std::cout << "precondition: fill " << pre["metrics"]["fill_mb_s"]["value"] << " MB/s, random "
            << pre["metrics"]["random_mb_s"]["value"] << " MB/s, " << pre["metrics"]["seconds"]["value"] << " s\n";

  json& video = rec["tests"][1];
  EXPECT_EQ(video["kind"], "video");
  EXPECT_EQ(video["status"], "complete") << video["reason"];
  EXPECT_EQ(video["details"]["file"]["region_offset_bytes"], 0);
  EXPECT_EQ(video["details"]["file"]["region_length_bytes"], kGiB);
  EXPECT_GT(video["metrics"]["write_mb_s"]["value"].get<double>(), 0);
  EXPECT_GT(video["metrics"]["read_mb_s"]["value"].get<double>(), 0);
  for (const auto& c : video["checks"]) EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();
  std::cout << "video on the first 25%: write " << video["metrics"]["write_mb_s"]["value"] << " MB/s, read "
            << video["metrics"]["read_mb_s"]["value"] << " MB/s\n";
}

TEST_F(LoopDeviceRun, TheRecordsSerialIsTheIdentityDestroyDataOnAccepts) {
  ScratchDir dir("device-serial");
  const auto on_loop = write_named(loop_->path(), loop_->backing_file(), dir);
  ASSERT_EQ(on_loop.status, 0) << on_loop.out << on_loop.err;
  EXPECT_EQ(serial_in_record(dir), loop_->backing_file());
}

TEST_F(LoopDeviceRun, TheRecordsSerialIsTheIdentityDestroyDataOnAcceptsOnADmDevice) {
  ScratchDir dir("dm-device-serial");
  std::string why;
  auto dm = DmLinearDevice::create(loop_->path(), 256 << 20, why);
  if (!dm) GTEST_SKIP() << "no device-mapper device here: " << why;
  const auto wrong = write_named(dm->path(), loop_->backing_file(), dir);
  EXPECT_EQ(wrong.status, 3) << wrong.out << wrong.err;
  EXPECT_TRUE(contains(wrong.err, "is '" + dm->uuid() + "'")) << wrong.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out" / "latest.json")) << "a refused run leaves no record";
  const auto on_dm = write_named(dm->path(), dm->uuid(), dir);
  ASSERT_EQ(on_dm.status, 0) << on_dm.out << on_dm.err;
  EXPECT_EQ(serial_in_record(dir), dm->uuid());
}

TEST_F(LoopDeviceRun, ASecondLoopDeviceOverAMountedOnesBackingFileIsRefusedEvenWhenNamed) {
  if (!loop_->make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  if (!loop_->mount_ext4()) GTEST_SKIP() << "cannot mount here";
  const auto mnt = loop_->dir() / "mnt";
  {
    std::ofstream(mnt / "keep.txt") << "still here\n";
  }
  ::sync();
  std::string why;
  auto alias = loop_->alias(why);
  ASSERT_TRUE(alias) << why;
  ScratchDir dir("loop-alias");
  const auto refused = write_named(alias->path(), alias->backing_file(), dir);
  EXPECT_EQ(refused.status, 3) << refused.out << refused.err;
  EXPECT_TRUE(contains(refused.err, "refusing to write to " + alias->path())) << refused.err;
  EXPECT_TRUE(contains(refused.err, alias->path() + " shares its backing file with " + loop_->path() + ", mounted at " +
                                        mnt.string() + " (ext4)"))
      << refused.err;
  EXPECT_TRUE(contains(refused.err, "naming the device does not lift this")) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out" / "latest.json")) << "a refused run leaves no record";
  std::cout << refused.err;
  // Nothing was written: the filesystem on the first device is intact.
  alias.reset();
  loop_->unmount();
  if (const auto fsck = drivelab::find_program("fsck.ext4", {"/usr/sbin", "/sbin"})) {
    const auto checked = drivelab::run_command({fsck->string(), "-n", "-f", loop_->path()}, std::chrono::seconds(120));
    EXPECT_EQ(checked.exit_code, 0) << checked.output;
  }
  ASSERT_TRUE(loop_->mount_ext4());
  EXPECT_EQ(read_file(mnt / "keep.txt"), "still here\n");
}

// ---- Issue 29: the device-stack matrix on real loop stacks ---------------------------------------
// A loop device whose backing "file" is a block device (`losetup /dev/loopM /dev/loopN`) was not
// linked to that device: with consent, drivelab wrote through a loop under a mounted stacked
// loop and through a loop stacked on a mounted one, and the live ext4 was corrupted. Each case
// mounts an ext4 somewhere in a stack, writes (named and not) through another device of it, and
// checks the refusal names the mount and the filesystem is intact afterwards (fsck -n -f).

class DeviceStackRun : public ::testing::Test {
 protected:
  LoopDevice make(std::uint64_t bytes = 64ull << 20, bool partscan = false) {
    std::string why;
    auto d = LoopDevice::create(bytes, why, partscan);
    if (!d) throw std::runtime_error("no loop device here: " + why);
    return std::move(*d);
  }
  LoopDevice over(const std::string& node, bool partscan = false) {
    std::string why;
    auto d = LoopDevice::over(node, why, partscan);
    if (!d) throw std::runtime_error("cannot stack a loop device on " + node + ": " + why);
    return std::move(*d);
  }
  void SetUp() override {
    std::string why;
    if (!LoopDevice::create(1 << 20, why)) GTEST_SKIP() << "no loop device here: " << why;
    if (!drivelab::find_program("mkfs.ext4", {"/usr/sbin", "/sbin"})) GTEST_SKIP() << "mkfs.ext4 not available";
  }
  drivelab::testing::Result write_to(const std::string& device, const std::vector<std::string>& extra,
                                     const ScratchDir& dir) {
    std::vector<std::string> args = {
        DRIVELAB_EXE, "io",       "--target",  device,        "--out", (dir.path() / "out").string(),
        "--quiet",    "--rw",     "randwrite", "--file-size", "16MiB", "--duration",
        "2s",         "--warmup", "0s",        "--interval",  "1s"};
    args.insert(args.end(), extra.begin(), extra.end());
    return drivelab::testing::run(std::move(args), dir.path(), std::chrono::seconds(120));
  }
  /// Writes through `target` (named by `identity`, and not named) while `mounted` has an ext4
  /// mounted at `mnt` (`node`, the device mounted): both refused with `expected` (which names the
  /// mount) in the message; then the filesystem is unmounted, checked clean and mounted again
  /// with its file. `mounted` is the LoopDevice that mounted it (its unmount/mount_ext4).
  void expect_refused_and_intact(const std::string& target, const std::string& identity, LoopDevice& mounted,
                                 const std::string& node, const std::string& expected, const char* label) {
    const auto mnt = mounted.dir() / "mnt";
    {
      std::ofstream(mnt / "keep.txt") << "still here\n";
    }
    ::sync();
    ScratchDir dir(std::string("stack-") + label);
    for (const bool name : {true, false}) {
      const auto r = write_to(
          target, name ? std::vector<std::string>{"--destroy-data-on", identity} : std::vector<std::string>{}, dir);
      EXPECT_EQ(r.status, 3) << label << (name ? " (named)" : " (not named)") << ": " << r.out << r.err;
      EXPECT_TRUE(contains(r.err, "refusing to write to " + target)) << label << ": " << r.err;
      EXPECT_TRUE(contains(r.err, expected)) << label << ": expected «" << expected << "» in\n" << r.err;
      EXPECT_TRUE(contains(r.err, "naming the device does not lift this")) << label << ": " << r.err;
      EXPECT_FALSE(std::filesystem::exists(dir.path() / "out" / "latest.json")) << "a refused run leaves no record";
      if (name) std::cout << label << ":\n" << r.err;
    }
    mounted.unmount();
    const auto fsck = drivelab::find_program("fsck.ext4", {"/usr/sbin", "/sbin"});
    ASSERT_TRUE(fsck);
    const auto checked = drivelab::run_command({fsck->string(), "-n", "-f", node}, std::chrono::seconds(120));
    EXPECT_EQ(checked.exit_code, 0) << label << ": " << checked.output;
    ASSERT_TRUE(mounted.mount_ext4(node == mounted.path() ? std::string() : node)) << label;
    EXPECT_EQ(read_file(mnt / "keep.txt"), "still here\n") << label;
  }
};

TEST_F(DeviceStackRun, ALoopOverAMountedDevice) {
  LoopDevice a = make();
  LoopDevice b = over(a.path());
  ASSERT_TRUE(a.make_ext4());
  ASSERT_TRUE(a.mount_ext4());
  expect_refused_and_intact(
      b.path(), b.backing_file(), a, a.path(),
      b.path() + " is a loop device over " + a.path() + ", mounted at " + (a.dir() / "mnt").string() + " (ext4)",
      "below");
}

TEST_F(DeviceStackRun, TheDeviceUnderAMountedLoop) {
  LoopDevice a = make();
  LoopDevice b = over(a.path());
  ASSERT_TRUE(b.make_ext4());
  ASSERT_TRUE(b.mount_ext4());
  expect_refused_and_intact(a.path(), a.backing_file(), b, b.path(),
                            a.path() + " is the backing device of the loop device " + b.path() + ", mounted at " +
                                (b.dir() / "mnt").string() + " (ext4)",
                            "above");
}

TEST_F(DeviceStackRun, ThreeDeepBothWays) {
  LoopDevice a = make();
  LoopDevice b = over(a.path());
  LoopDevice c = over(b.path());
  ASSERT_TRUE(a.make_ext4());
  ASSERT_TRUE(a.mount_ext4());
  expect_refused_and_intact(c.path(), c.backing_file(), a, a.path(),
                            c.path() + " is a loop device over " + b.path() + ", which is a loop device over " +
                                a.path() + ", mounted at " + (a.dir() / "mnt").string() + " (ext4)",
                            "depth-3-down");
  a.unmount();
  ASSERT_TRUE(b.drop_cache() && c.drop_cache()) << "c cached the superblock while a was mounted";
  ASSERT_TRUE(c.mount_ext4());
  expect_refused_and_intact(a.path(), a.backing_file(), c, c.path(),
                            a.path() + " is the backing device of the loop device " + b.path() +
                                ", which is the backing device of the loop device " + c.path() + ", mounted at " +
                                (c.dir() / "mnt").string() + " (ext4)",
                            "depth-3-up");
}

TEST_F(DeviceStackRun, PartscanPartitionsAboveAndBelow) {
  // A partition of a partscan loop over the target is mounted.
  LoopDevice a = make();
  LoopDevice b = over(a.path(), /*partscan=*/true);
  if (!b.add_partition()) GTEST_SKIP() << "the kernel makes no partition of " << b.path();
  ASSERT_TRUE(b.make_ext4_on(b.partition(1)));
  ASSERT_TRUE(b.mount_ext4(b.partition(1)));
  expect_refused_and_intact(a.path(), a.backing_file(), b, b.partition(1),
                            a.path() + " is the backing device of the loop device " + b.path() +
                                ", which has the partition " + b.partition(1) + ", mounted at " +
                                (b.dir() / "mnt").string() + " (ext4)",
                            "partscan-above");
  b.unmount();
  // A loop over a partition of the target is mounted; the target is the whole disk.
  LoopDevice disk = make(64ull << 20, /*partscan=*/true);
  ASSERT_TRUE(disk.add_partition());
  LoopDevice p = over(disk.partition(1));
  ASSERT_TRUE(p.make_ext4());
  ASSERT_TRUE(p.mount_ext4());
  expect_refused_and_intact(disk.path(), disk.backing_file(), p, p.path(),
                            disk.path() + " has the partition " + disk.partition(1) +
                                ", which is the backing device of the loop device " + p.path() + ", mounted at " +
                                (p.dir() / "mnt").string() + " (ext4)",
                            "partition-below");
}

TEST_F(DeviceStackRun, ARunHoldsItsWholeStackAgainstMountsAndASecondRunThroughAnAlias) {
  LoopDevice a = make();
  std::string why;
  auto alias = a.alias(why);
  ASSERT_TRUE(alias) << why;
  LoopDevice c = over(a.path());
  ASSERT_TRUE(c.make_ext4()) << "an ext4 that the run will overwrite: nobody may mount it meanwhile";
  ScratchDir dir("stack-held");
  // The first run holds the stack while it waits for its start time, then writes for 1 s.
  Child first({DRIVELAB_EXE,
               "io",
               "--target",
               a.path(),
               "--destroy-data-on",
               a.backing_file(),
               "--out",
               (dir.path() / "a").string(),
               "--rw",
               "randwrite",
               "--file-size",
               "16MiB",
               "--duration",
               "1s",
               "--warmup",
               "0s",
               "--interval",
               "1s",
               "--start-at",
               "+5s"},
              dir.path() / "a.out", dir.path() / "a.err");
  for (int i = 0; i < 200 && read_file(dir.path() / "a.out").find("waiting") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_TRUE(contains(read_file(dir.path() / "a.out"), "waiting")) << read_file(dir.path() / "a.err");
  // Mounting any device of the stack is refused by the kernel while the run holds it.
  EXPECT_FALSE(c.mount_ext4()) << c.path() << " (over the target) was mounted during the run";
  EXPECT_EQ(errno, EBUSY);
  // A second run writing the same blocks through the alias is refused, naming the other run.
  const auto second = drivelab::testing::run(
      {DRIVELAB_EXE, "io", "--target", alias->path(), "--destroy-data-on", alias->backing_file(), "--out",
       (dir.path() / "b").string(), "--rw", "randwrite", "--file-size", "16MiB", "--duration", "1s", "--warmup", "0s"},
      dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(second.status, 3) << second.out << second.err;
  EXPECT_TRUE(contains(second.err, "in use by another drivelab run")) << second.err;
  EXPECT_TRUE(contains(second.err, alias->path())) << second.err;
  std::cout << "second run: " << second.err;
  EXPECT_EQ(first.wait(std::chrono::seconds(60)), 0) << first.err();
  EXPECT_EQ(json::parse(read_file(dir.path() / "a" / "latest.json"))["status"], "complete");
}

TEST_F(LoopDeviceRun, DirectoryTestsAndMisplacedConsentAreRefused) {
  ScratchDir dir("loop-device-refusals");
  const auto tpcc = drivelab({"oltp", "tpcc", "--target", loop_->path(), "--out", (dir.path() / "out").string()}, dir);
  EXPECT_EQ(tpcc.status, 3) << tpcc.out << tpcc.err;
  EXPECT_TRUE(contains(tpcc.err, "is a block device, but 'tpcc' (tpcc) needs a directory")) << tpcc.err;

  const auto target = dir.path() / "target";
  std::filesystem::create_directories(target);
  const auto misplaced = drivelab({"run", std::string(DRIVELAB_SOURCE_DIR) + "/config/video.yaml", "--target",
                                   target.string(), "--destroy-data-on", "X", "--out", (dir.path() / "out").string()},
                                  dir);
  EXPECT_EQ(misplaced.status, 3) << misplaced.out << misplaced.err;
  EXPECT_TRUE(contains(misplaced.err, "--destroy-data-on names a block device to destroy, but the target"))
      << misplaced.err;
}

// A device that fills: 1 GiB over a sparse file on a 192 MiB tmpfs, so writes past ~192 MiB fail
// on the device (the loop driver passes the tmpfs's ENOSPC up, or EIO). Each writing kind must
// end failed with the storage failure as its reason, exit status 1 (README), and keep the
// intervals it finished before the failure.
class FullDeviceRun : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kTmpfs = std::uint64_t{192} << 20;
  void SetUp() override {
    std::string why;
    auto d = LoopDevice::create(kGiB, why, false, kTmpfs);
    if (!d) GTEST_SKIP() << "no loop device on a tmpfs here: " << why;
    loop_.emplace(std::move(*d));
  }
  /// Runs a one-test protocol of `kind` with `section` (its `<kind>:` YAML, flow style) on the
  /// device, named; returns the failed test's record after checking the run's status.
  json run_kind(const std::string& kind, const std::string& section, const ScratchDir& dir) {
    const auto protocol = dir.path() / "full.yaml";
    std::ofstream(protocol) << "protocol: full-device\nseed: 1\ntests:\n  - name: " << kind
                            << "-full\n    kind: " << kind
                            << "\n    warmup: 0s\n    duration: 60s\n    interval: 100ms\n    " << kind << ": "
                            << section << "\n";
    return check_failed(
        drivelab::testing::run({DRIVELAB_EXE, "run", protocol.string(), "--target", loop_->path(), "--destroy-data-on",
                                loop_->backing_file(), "--out", (dir.path() / "out").string(), "--quiet"},
                               dir.path(), std::chrono::seconds(300)),
        dir);
  }
  json check_failed(const drivelab::testing::Result& r, const ScratchDir& dir) {
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    json rec = json::parse(read_file(dir.path() / "out" / "latest.json"));
    EXPECT_EQ(rec["status"], "failed") << rec["reason"];
    json t = rec["tests"][0];
    EXPECT_EQ(t["status"], "failed");
    const std::string reason = t["reason"].is_string() ? t["reason"].get<std::string>() : "";
    EXPECT_TRUE(contains(reason, "storage failure: write of ")) << reason;
    EXPECT_TRUE(contains(reason, " to " + loop_->path() + ": ")) << reason;
    EXPECT_TRUE(contains(reason, "(ENOSPC)") || contains(reason, "(EIO)")) << reason;
    EXPECT_TRUE(contains(reason, " s into the ")) << reason;
    std::cout << t["kind"].get<std::string>() << ": " << reason << " (" << t["intervals"].size() << " intervals)\n";
    return t;
  }
  std::optional<LoopDevice> loop_;
};

TEST_F(FullDeviceRun, AnIoTestThatFillsTheDeviceFailsWithTheCauseAndKeepsItsIntervals) {
  ScratchDir dir("full-device-io");
  // 4 KiB at QD1: ~49,000 writes until the tmpfs is full, several 100 ms intervals.
  const auto r = drivelab::testing::run({DRIVELAB_EXE,
                                         "io",
                                         "--target",
                                         loop_->path(),
                                         "--out",
                                         (dir.path() / "out").string(),
                                         "--quiet",
                                         "--rw",
                                         "write",
                                         "--xfersize",
                                         "4k",
                                         "--iodepth",
                                         "1",
                                         "--engine",
                                         "psync",
                                         "--file-size",
                                         "1GiB",
                                         "--duration",
                                         "60s",
                                         "--warmup",
                                         "0s",
                                         "--interval",
                                         "100ms",
                                         "--destroy-data-on",
                                         loop_->backing_file()},
                                        dir.path(), std::chrono::seconds(300));
  json t = check_failed(r, dir);
  EXPECT_TRUE(contains(t["reason"].get<std::string>(), "into the measured phase"));
  ASSERT_GE(t["intervals"].size(), 1u) << "the intervals before the failure are kept";
  double ios = 0;
  for (auto& i : t["intervals"]) ios += i["values"]["ios"].get<double>();
  EXPECT_GT(ios, 0);
  EXPECT_LE(ios * 4096, static_cast<double>(kTmpfs)) << "no more was written than the storage holds";
}

// A filesystem target whose storage fills: ext4 on the device believes it has 1 GiB, the tmpfs
// under it holds 192 MiB, so the failure comes from below: the filesystem passes the device's
// error up (measured: ENOSPC at the fill's fdatasync; EIO or EROFS on other stacks).
TEST_F(FullDeviceRun, AnIoTestOnAFilesystemWhoseStorageFillsFails) {
  if (!loop_->make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  if (!loop_->mount_ext4()) GTEST_SKIP() << "cannot mount here";
  ScratchDir dir("full-device-fs");
  const auto mnt = loop_->dir() / "mnt";
  const auto r = drivelab::testing::run(
      {DRIVELAB_EXE, "io",          "--target", mnt.string(), "--out", (dir.path() / "out").string(),
       "--quiet",    "--rw",        "write",    "--xfersize", "64k",   "--iodepth",
       "4",          "--file-size", "768MiB",   "--duration", "60s",   "--warmup",
       "0s",         "--interval",  "100ms"},
      dir.path(), std::chrono::seconds(300));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  json rec = json::parse(read_file(dir.path() / "out" / "latest.json"));
  EXPECT_EQ(rec["status"], "failed") << rec["reason"];
  const std::string reason = rec["tests"][0]["reason"].is_string() ? rec["tests"][0]["reason"].get<std::string>() : "";
  EXPECT_TRUE(contains(reason, "storage failure: ")) << reason;
  EXPECT_TRUE(contains(reason, (mnt / "drivelab-").string())) << reason;
  EXPECT_TRUE(contains(reason, "(EIO)") || contains(reason, "(ENOSPC)") || contains(reason, "(EROFS)")) << reason;
  std::cout << "filesystem: " << reason << " (" << rec["tests"][0]["intervals"].size() << " intervals)\n";
}

TEST_F(FullDeviceRun, AVdbenchTestThatFillsTheDeviceFails) {
  ScratchDir dir("full-device-vdbench");
  json t = run_kind("vdbench",
                    "{engine: psync, threads: 1, jobs: 1, workloads: [{name: fill, xfersize: 4k, rdpct: 0, "
                    "seekpct: 0}]}",
                    dir);
  EXPECT_GE(t["intervals"].size(), 1u) << "the intervals before the failure are kept";
}

TEST_F(FullDeviceRun, APreconditionFillOfTheDeviceFails) {
  ScratchDir dir("full-device-precondition");
  json t = run_kind("precondition", "{xfersize: 4k, iodepth: 1, engine: psync, random_passes: 0}", dir);
  EXPECT_TRUE(contains(t["reason"].get<std::string>(), "into the fill")) << t["reason"];
  EXPECT_GE(t["intervals"].size(), 1u) << "the intervals before the failure are kept";
}

TEST_F(FullDeviceRun, AVideoTestOnTheDeviceFails) {
  ScratchDir dir("full-device-video");
  json t = run_kind("video", "{format: 1080p, codec: prores422hq, iodepth: 1, engine: psync, file_size: 768MiB}", dir);
  EXPECT_TRUE(contains(t["reason"].get<std::string>(), "into the measured phase")) << t["reason"];
}

/// Lines of `file` that contain `part`.
std::size_t lines_with(const std::filesystem::path& file, const std::string& part) {
  std::ifstream in(file);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += contains(line, part) ? 1 : 0;
  return n;
}

/// A scratch directory with target/ and out/, out/ a tmpfs of `bytes` (tmpfs empty and `why` set
/// when it cannot be mounted). While it lives, the runs started are not among the records the suite
/// validates against the schema (DRIVELAB_KEEP_RECORDS_IN, results/validate.hpp): their journals
/// are torn on purpose (a write cut by ENOSPC, then the event written again after it: recovery
/// skips the torn line); the tests check their records themselves.
struct FullOut {
  static std::filesystem::path made(const std::filesystem::path& p) {
    std::filesystem::create_directories(p);
    return p;
  }
  ScratchDir dir;
  std::filesystem::path target = made(dir.path() / "target");
  std::filesystem::path out = made(dir.path() / "out");
  std::string why;
  std::optional<TmpfsMount> tmpfs;
  std::string kept_dir;
  FullOut(const char* name, std::uint64_t bytes) : dir(name), tmpfs(TmpfsMount::on(out, bytes, why)) {
    const char* kept = std::getenv("DRIVELAB_KEEP_RECORDS_IN");
    kept_dir = kept != nullptr ? kept : "";
    ::unsetenv("DRIVELAB_KEEP_RECORDS_IN");
  }
  ~FullOut() {
    if (!kept_dir.empty()) ::setenv("DRIVELAB_KEEP_RECORDS_IN", kept_dir.c_str(), 1);
  }
};

TEST(FullResultsDirectory, AJournalWriteThatFailsFailsTheTestAndTheRunAndRecoverSaysWhy) {
  FullOut f("full-results", 24 << 20);  // the 8 MiB reserve, the record and a filler
  if (!f.tmpfs) GTEST_SKIP() << f.why;
  const auto& dir = f.dir;
  const auto& target = f.target;
  const auto& out = f.out;
  Child child({DRIVELAB_EXE, "io", "--target", target.string(), "--out", out.string(), "--engine", "null", "--warmup",
               "0s", "--duration", "300s", "--interval", "100ms", "--quiet"},
              dir.path() / "stdout.txt", dir.path() / "stderr.txt");
  // Wait for the journal's first intervals, then fill the results filesystem.
  std::filesystem::path journal;
  for (int i = 0; i < 600 && journal.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (const auto& e : std::filesystem::directory_iterator(out))
      if (e.path().string().ends_with(".journal.jsonl") && lines_with(e.path(), "\"event\":\"interval\"") >= 3)
        journal = e.path();
  }
  ASSERT_FALSE(journal.empty()) << child.out() << child.err();
  EXPECT_TRUE(std::filesystem::exists(journal.string() + ".reserve")) << "the run holds its reserve";
  {
    // All the free space in one posix_fallocate (a write loop could go on into the reserve the
    // run releases when its journal write fails).
    const int fd = ::open((out / "filler.bin").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    off_t end = 0;
    for (int i = 0; i < 3; ++i) {
      struct statvfs v{};
      ASSERT_EQ(::statvfs(out.c_str(), &v), 0);
      const off_t free = static_cast<off_t>(v.f_bavail) * static_cast<off_t>(v.f_frsize);
      if (free < (64 << 10)) break;
      if (::posix_fallocate(fd, end, free) != 0) ::posix_fallocate(fd, end, free / 2);
      end = ::lseek(fd, 0, SEEK_END);
    }
    ::close(fd);
  }
  const int status = child.wait(std::chrono::seconds(120));
  const std::string err = child.err();
  EXPECT_EQ(status, 1) << child.out() << err;
  EXPECT_TRUE(contains(err, "the result journal could not be written: cannot append to journal '" + journal.string() +
                                "': No space left on device (ENOSPC)"))
      << err;
  EXPECT_FALSE(std::filesystem::exists(journal.string() + ".reserve")) << "the reserve is released";
  std::cout << err;

  json rec = json::parse(read_file(out / "latest.json"));
  EXPECT_EQ(rec["status"], "failed") << "not left in progress: " << rec["reason"];
  EXPECT_TRUE(contains(rec["reason"].get<std::string>(), "the result journal could not be written")) << rec["reason"];
  EXPECT_EQ(rec["tests"][0]["status"], "failed") << "not left running";
  EXPECT_TRUE(contains(rec["tests"][0]["reason"].get<std::string>(), "(ENOSPC)")) << rec["tests"][0]["reason"];
  EXPECT_GE(rec["tests"][0]["intervals"].size(), 3u) << "the intervals before the failure are kept";
  // And the headline of what was measured until then: the phase ended at the failed interval.
  EXPECT_GT(rec["tests"][0]["metrics"]["iops"]["value"].get<double>(), 0.0) << rec["tests"][0]["metrics"];
  EXPECT_FALSE(rec["tests"][0]["histograms"].empty());

  const auto recovered = dir.path() / "recovered.json";
  const auto r = drivelab::testing::run(
      {DRIVELAB_EXE, "results", "recover", journal.string(), "-o", recovered.string()}, dir.path());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  json again = json::parse(read_file(recovered));
  EXPECT_EQ(again["status"], "failed");
  EXPECT_TRUE(contains(again["reason"].get<std::string>(), "the result journal could not be written: "))
      << again["reason"];
  EXPECT_EQ(again["tests"][0]["status"], "failed");
  EXPECT_TRUE(contains(again["tests"][0]["reason"].get<std::string>(), "(ENOSPC)")) << again["tests"][0]["reason"];
}

// A results disk that fills when the run is long: the indented final record (45 KB per interval
// with its histogram) does not fit in the 8 MiB reserve; it is written on one line instead, with
// a warning, and the run still ends failed with every interval and its headline.
TEST(FullResultsDirectory, AFinalRecordLargerThanTheReserveIsWrittenOnOneLine) {
  FullOut f("full-results-large", 12 << 20);
  if (!f.tmpfs) GTEST_SKIP() << f.why;
  const auto& out = f.out;
  const auto r =
      drivelab::testing::run({DRIVELAB_EXE, "io", "--target", f.target.string(), "--out", out.string(), "--engine",
                              "null", "--warmup", "0s", "--duration", "20s", "--interval", "100ms", "--quiet"},
                             f.dir.path(), std::chrono::seconds(120));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  const std::string text = read_file(out / "latest.json");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << "one line";
  const json rec = json::parse(text);
  EXPECT_EQ(rec["status"], "failed");
  EXPECT_EQ(rec["tests"][0]["status"], "failed");
  // Every interval the journal holds is in the record. 20 s at 100 ms is 200 intervals when the
  // test runs alone; under the full suite's load the intervals' histograms are wider, the journal
  // fills the 12 MiB results filesystem sooner and the phase ends there (171 and 194 seen).
  std::size_t journaled = 0;
  for (const auto& e : std::filesystem::directory_iterator(out))
    if (e.path().string().ends_with(".journal.jsonl")) journaled += lines_with(e.path(), "\"event\":\"interval\"");
  const std::size_t kept = rec["tests"][0]["intervals"].size();
  EXPECT_LE(kept, journaled);
  EXPECT_GE(kept + 1, journaled) << "at most a last line torn by the full disk is missing";
  EXPECT_GE(kept, 100u) << "a record too large for the reserve when indented";
  EXPECT_GT(rec["tests"][0]["metrics"]["iops"]["value"].get<double>(), 0.0);
  bool said = false;
  for (const auto& w : rec["warnings"])
    said = said || contains(w.get<std::string>(), "the record is written on one line");
  EXPECT_TRUE(said) << rec["warnings"];
}

}  // namespace

// The short forms of config/precondition.yaml and config/video.yaml on a directory target (no
// root needed): the precondition step fills the video test's data file, which the video test
// then uses; files only inside the target, named drivelab-*.
TEST(TargetProfiles, ShortFormsRunOnADirectory) {
  ScratchDir dir("target-profiles");
  const auto target = dir.path() / "target";
  std::filesystem::create_directories(target);
  const auto run = [&](const std::string& profile, std::vector<std::string> sets) {
    std::vector<std::string> args{DRIVELAB_EXE,
                                  "run",
                                  std::string(DRIVELAB_SOURCE_DIR) + "/config/" + profile + ".yaml",
                                  "--target",
                                  target.string(),
                                  "--out",
                                  (dir.path() / "out").string(),
                                  "--quiet"};
    for (auto& s : sets) {
      args.push_back("--set");
      args.push_back(std::move(s));
    }
    const auto r = drivelab::testing::run(std::move(args), dir.path(), std::chrono::seconds(300));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    json rec = json::parse(read_file(dir.path() / "out" / "latest.json"));
    EXPECT_EQ(rec["status"], "complete") << rec["reason"];
    for (auto& t : rec["tests"]) {
      EXPECT_EQ(t["status"], "complete") << t["name"] << ": " << t["reason"];
      for (const auto& c : t["checks"]) EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();
    }
    return rec;
  };
  json pre =
      run("precondition", {"tests[*].duration=1s", "tests[*].interval=500ms", "tests[0].precondition.file_size=64MiB",
                           "tests[0].precondition.random_pass_size=8MiB", "tests[1].video.file_size=64MiB",
                           "tests[1].video.format=1080p", "tests[1].video.codec=prores422hq"});
  EXPECT_EQ(pre["tests"][0]["metrics"]["bytes_written"]["value"].get<double>(), 72.0 * (1 << 20));
  EXPECT_EQ(pre["tests"][1]["details"]["file"]["path"].get<std::string>(),
            (target / "drivelab-video-25pct.dat").string())
      << "the video test uses the preconditioned file";
  EXPECT_EQ(pre["tests"][1]["details"]["file"]["region_length_bytes"], 16 << 20);
  json video = run("video", {"tests[0].duration=1s", "tests[0].interval=500ms", "tests[0].video.file_size=64MiB",
                             "tests[0].video.format=1080p", "tests[0].video.codec=yuv422-8bit"});
  EXPECT_GT(video["tests"][0]["metrics"]["read_mb_s"]["value"].get<double>(), 0);
  EXPECT_EQ(video["tests"][0]["details"]["formats"].size(), 15u);
  for (const auto& e : std::filesystem::directory_iterator(target))
    EXPECT_EQ(e.path().filename().string().rfind("drivelab-", 0), 0u) << e.path();
}
