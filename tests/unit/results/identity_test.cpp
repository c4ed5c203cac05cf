// Tool, host and target identity on the real machine: what must be known is non-null, what
// cannot be known is null. On real loop and dm devices, target.serial is the identity that
// --destroy-data-on accepts (tests/unit/io/target_safety_test.cpp checks the same values there;
// tests/integration/loop_device_test.cpp both through one run).
#include "drivelab/results/identity.hpp"

#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>

#include <fstream>

#include "drivelab/core/errors.hpp"
#include "../io/target_dm_device.hpp"
#include "../io/target_loop_device.hpp"
#include "test_util.hpp"

namespace drivelab::results {
namespace {

using testing::TempDir;

std::vector<std::string> keys(const Json& j) {
  std::vector<std::string> out;
  for (const auto& [k, v] : j.items()) out.push_back(k);
  return out;
}

const std::vector<std::string> kTargetKeys{"path",
                                           "kind",
                                           "filesystem",
                                           "mount_point",
                                           "mount_source",
                                           "block_device",
                                           "partition",
                                           "model",
                                           "serial",
                                           "firmware",
                                           "vendor",
                                           "rotational",
                                           "logical_block_bytes",
                                           "physical_block_bytes",
                                           "capacity_bytes",
                                           "filesystem_size_bytes",
                                           "filesystem_free_bytes",
                                           "scheduler"};

const std::vector<std::string> kBlockKeys{"block_device",
                                          "partition",
                                          "model",
                                          "serial",
                                          "firmware",
                                          "vendor",
                                          "rotational",
                                          "logical_block_bytes",
                                          "physical_block_bytes",
                                          "capacity_bytes",
                                          "scheduler"};

TEST(Identity, Tool) {
  const Json t = probe_tool();
  EXPECT_EQ(keys(t),
            (std::vector<std::string>{"name", "version", "git_describe", "build_type", "compiler", "sanitizers"}));
  EXPECT_EQ(t["name"], "drivelab");
  EXPECT_FALSE(t["version"].get<std::string>().empty());
  EXPECT_FALSE(t["git_describe"].get<std::string>().empty());
  EXPECT_FALSE(t["compiler"].get<std::string>().empty());
  EXPECT_TRUE(t["sanitizers"].is_boolean());
}

TEST(Identity, Host) {
  const Json h = probe_host();
  EXPECT_EQ(keys(h), (std::vector<std::string>{"hostname", "os", "kernel", "arch", "cpu_model", "cpu_cores",
                                               "memory_bytes", "virtualization"}));
  utsname u{};
  ASSERT_EQ(::uname(&u), 0);
  EXPECT_EQ(h["kernel"], u.release);
  EXPECT_EQ(h["arch"], u.machine);
  EXPECT_GE(h["cpu_cores"].get<long>(), 1);
  EXPECT_GT(h["memory_bytes"].get<std::uint64_t>(), std::uint64_t{64} << 20);
  EXPECT_TRUE(h["virtualization"].is_null() || h["virtualization"] == "vm" || h["virtualization"] == "bare-metal");
}

TEST(Identity, DirectoryTarget) {
  TempDir dir;
  const auto sub = dir / "with space";
  std::filesystem::create_directory(sub);
  const Json t = probe_target(sub);
  EXPECT_EQ(keys(t), kTargetKeys);
  EXPECT_EQ(t["path"], std::filesystem::canonical(sub).string());
  EXPECT_EQ(t["kind"], "directory");
  ASSERT_TRUE(t["filesystem"].is_string());
  ASSERT_TRUE(t["mount_point"].is_string());
  const std::string mp = t["mount_point"], path = t["path"];
  EXPECT_TRUE(mp == "/" || path.rfind(mp + "/", 0) == 0) << mp << " vs " << path;
  EXPECT_GT(t["filesystem_size_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_LE(t["filesystem_free_bytes"].get<std::uint64_t>(), t["filesystem_size_bytes"].get<std::uint64_t>());
  if (t["block_device"].is_string()) {
    // On a real device: the fields sysfs always has must be there and sane.
    EXPECT_GT(t["capacity_bytes"].get<std::uint64_t>(), 0u);
    const auto lbs = t["logical_block_bytes"].get<std::uint64_t>();
    EXPECT_GE(lbs, 512u);
    EXPECT_EQ(lbs & (lbs - 1), 0u);
    EXPECT_GE(t["physical_block_bytes"].get<std::uint64_t>(), lbs);
    EXPECT_TRUE(t["rotational"].is_boolean());
    EXPECT_EQ(t["block_device"].get<std::string>().find('/'), std::string::npos);
  }
}

TEST(Identity, RelativePathBecomesAbsolute) {
  TempDir dir;
  const auto rel = std::filesystem::relative(dir.path());
  const Json t = probe_target(rel);
  EXPECT_EQ(t["path"], std::filesystem::canonical(dir.path()).string());
}

TEST(Identity, TmpfsHasNoBlockDevice) {
  struct statfs sfs{};
  if (::statfs("/dev/shm", &sfs) != 0 || sfs.f_type != TMPFS_MAGIC) {
    GTEST_SKIP() << "/dev/shm is not a tmpfs here";
  }
  const Json t = probe_target("/dev/shm");
  EXPECT_EQ(t["filesystem"], "tmpfs");
  EXPECT_EQ(t["mount_point"], "/dev/shm");
  for (const std::string& k : kBlockKeys) EXPECT_TRUE(t[k].is_null()) << k;
  EXPECT_GT(t["filesystem_size_bytes"].get<std::uint64_t>(), 0u);
}

TEST(Identity, RegularFileAndMissingTarget) {
  TempDir dir;
  std::ofstream(dir / "f") << "x";
  EXPECT_EQ(probe_target(dir / "f")["kind"], "file");
  try {
    probe_target(dir / "absent");
    FAIL();
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("absent"), std::string::npos) << e.what();
  }
}

TEST(Identity, BlockDeviceTarget) {
  struct stat st{};
  if (::stat("/dev/loop0", &st) != 0 || !S_ISBLK(st.st_mode)) GTEST_SKIP() << "no /dev/loop0";
  const Json t = probe_target("/dev/loop0");
  EXPECT_EQ(t["kind"], "block_device");
  EXPECT_EQ(t["block_device"], "loop0");
  EXPECT_TRUE(t["partition"].is_null());
  EXPECT_TRUE(t["filesystem"].is_null());
  EXPECT_TRUE(t["mount_point"].is_null());
  EXPECT_TRUE(t["capacity_bytes"].is_number_unsigned());  // 0 for a detached loop device
  EXPECT_TRUE(t["model"].is_null());                      // a loop device has no model
}

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

std::optional<::drivelab::testing::LoopDevice> make_loop(std::string& why) {
  return ::drivelab::testing::LoopDevice::create(64 * kMiB, why);
}

TEST(Identity, LoopDeviceSerialIsItsBackingFile) {
  std::string why;
  auto loop = make_loop(why);
  if (!loop) GTEST_SKIP() << "no loop device here: " << why;
  const Json t = probe_target(loop->path());
  EXPECT_EQ(t["kind"], "block_device");
  EXPECT_EQ("/dev/" + t["block_device"].get<std::string>(), loop->path());
  EXPECT_EQ(t["serial"], loop->backing_file()) << "what --destroy-data-on names a loop device by";
  EXPECT_EQ(t["capacity_bytes"], 64 * kMiB);
}

TEST(Identity, DirectoryOnALoopDeviceHasTheLoopsSerial) {
  std::string why;
  auto loop = make_loop(why);
  if (!loop) GTEST_SKIP() << "no loop device here: " << why;
  if (!loop->make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  if (!loop->mount_ext4()) GTEST_SKIP() << "cannot mount here";
  const auto dir = loop->dir() / "mnt" / "my dir";
  std::filesystem::create_directory(dir);
  const Json t = probe_target(dir);
  EXPECT_EQ(t["filesystem"], "ext4");
  EXPECT_EQ(t["mount_point"], (loop->dir() / "mnt").string());
  EXPECT_EQ(t["mount_source"], loop->path());
  EXPECT_EQ("/dev/" + t["block_device"].get<std::string>(), loop->path());
  EXPECT_EQ(t["serial"], loop->backing_file());
}

TEST(Identity, DmDeviceSerialIsItsUuid) {
  std::string why;
  auto loop = make_loop(why);
  if (!loop) GTEST_SKIP() << "no loop device here: " << why;
  auto dm = ::drivelab::testing::DmLinearDevice::create(loop->path(), 16 * kMiB, why);
  if (!dm) GTEST_SKIP() << "no device-mapper device here: " << why;
  const Json t = probe_target(dm->path());
  EXPECT_EQ(t["block_device"].get<std::string>().rfind("dm-", 0), 0u) << t.dump();
  EXPECT_EQ(t["serial"], dm->uuid());
  EXPECT_EQ(t["capacity_bytes"], 16 * kMiB);
}

}  // namespace
}  // namespace drivelab::results
