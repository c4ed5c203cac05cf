// Is the number physical? Each check of physics.hpp tripped and passed: a throughput above the
// drive's link (recorded sysfs trees: an NVMe drive on a PCIe gen 1 x1 link, a dm device over two
// SATA disks), O_DIRECT random reads the device did not see (recorded counters), a paced TPC-C
// result above 12.86 tpmC per warehouse, and a test at the harness's own ceiling; and the
// ceiling's measurement itself (the null engine through the pump).
#include "drivelab/telemetry/physics.hpp"

#include <sys/sysmacros.h>

#include <gtest/gtest.h>

#include "drivelab/telemetry/harness_ceiling.hpp"
#include "fake_sysfs.hpp"
#include "temp_dir.hpp"

namespace drivelab::telemetry {
namespace {

namespace fs = std::filesystem;
namespace cat = results::catalogue;
using test_support::FakeSysfs;
using test_support::TempDir;
using test_support::write_file;

results::TestRecord test_of(const std::string& kind, results::Json config,
                            std::initializer_list<std::pair<const results::MetricDef*, double>> metrics) {
  results::TestRecord t;
  t.name = "t";
  t.kind = kind;
  t.config = std::move(config);
  for (const auto& [def, v] : metrics) {
    results::Metric m;
    m.name = def->name;
    m.value = v;
    t.metrics.push_back(std::move(m));
  }
  return t;
}

bool says(const PhysicsFinding& f, const std::string& text) { return f.detail.find(text) != std::string::npos; }

class LinkStack : public ::testing::Test {
 protected:
  TempDir dir_;
  FakeSysfs sys_{dir_.path() / "sys"};

  DeviceStack stack_of(dev_t dev) const { return device_stack(sys_.block(dev), {}, sys_.root()); }
};

TEST_F(LinkStack, AThroughputAboveAPcieGen1x1LinkIsNotTheDrives) {
  const fs::path pci = sys_.root() / "devices" / "pci0000:00" / "0000:00:01.1" / "0000:01:00.0";
  write_file(pci / "current_link_speed", "2.5 GT/s PCIe\n");  // a gen-4 drive in a gen-1 x1 slot: 250 MB/s
  write_file(pci / "current_link_width", "1\n");
  const fs::path ns = sys_.device("nvme0n1", makedev(259, 0), {}, "pci0000:00/0000:00:01.1/0000:01:00.0/nvme/nvme0");
  sys_.device("nvme0n1p1", makedev(259, 1), ns);
  PhysicsInputs in;
  in.window_s = 2;
  in.link = link_ceiling(stack_of(makedev(259, 1)));  // the partition: its disk's link, counted once
  ASSERT_TRUE(in.link.bytes_per_s) << in.link.reason;
  EXPECT_DOUBLE_EQ(*in.link.bytes_per_s, 250e6);
  EXPECT_EQ(in.link.text, "nvme0n1: PCIe 2.5 GT/s x1 (250 MB/s)");
  // 1 GB in 2 s: 500 MB/s through a 250 MB/s link.
  const PhysicsFinding over = link_check(test_of("io", {}, {{&cat::bytes, 1e9}}), in);
  EXPECT_EQ(over.outcome, CheckOutcome::warning);
  EXPECT_TRUE(says(over, "throughput 500.0 MB/s is above what the drive's link carries")) << over.detail;
  // 400 MB in 2 s (as a rate: mb_s): within it.
  EXPECT_EQ(link_check(test_of("vdbench", {}, {{&cat::mb_s, 200}}), in).outcome, CheckOutcome::passed);
}

TEST_F(LinkStack, ADmDeviceOverTwoSataDisksCarriesBothLinks) {
  const fs::path ahci = sys_.root() / "devices" / "pci0000:00" / "0000:00:17.0";
  write_file(ahci / "ata1" / "link1" / "ata_link" / "link1" / "sata_spd", "6.0 Gbps\n");
  write_file(ahci / "ata2" / "link2" / "ata_link" / "link2" / "sata_spd", "3.0 Gbps\n");
  const fs::path sda =
      sys_.device("sda", makedev(8, 0), {}, "pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block");
  const fs::path sdb =
      sys_.device("sdb", makedev(8, 16), {}, "pci0000:00/0000:00:17.0/ata2/host1/target1:0:0/1:0:0:0/block");
  const fs::path dm = sys_.device("dm-0", makedev(253, 0));
  FakeSysfs::stack(dm, sda);
  FakeSysfs::stack(dm, sdb);
  PhysicsInputs in;
  in.window_s = 1;
  in.link = link_ceiling(stack_of(makedev(253, 0)));
  ASSERT_TRUE(in.link.bytes_per_s) << in.link.reason;
  EXPECT_DOUBLE_EQ(*in.link.bytes_per_s, 900e6);  // 600 + 300 MB/s
  EXPECT_EQ(link_check(test_of("io", {}, {{&cat::throughput_mb_s, 850}}), in).outcome, CheckOutcome::passed);
  EXPECT_EQ(link_check(test_of("io", {}, {{&cat::throughput_mb_s, 950}}), in).outcome, CheckOutcome::warning);
}

TEST_F(LinkStack, AVirtioDiskHasNoLinkToCheckAgainst) {
  write_file(sys_.root() / "devices" / "pci0000:00" / "0000:00:04.0" / "current_link_speed", "Unknown\n");
  sys_.device("vdz", makedev(252, 0), {}, "pci0000:00/0000:00:04.0/virtio1/block");
  PhysicsInputs in;
  in.window_s = 1;
  in.link = link_ceiling(stack_of(makedev(252, 0)));
  const PhysicsFinding f = link_check(test_of("io", {}, {{&cat::bytes, 1e12}}), in);
  EXPECT_EQ(f.outcome, CheckOutcome::not_applicable);
  EXPECT_EQ(f.detail, "vdz is a virtio disk: its link is virtual");
}

/// The headline's counts over a 2-second window.
PhysicsInputs device_counts(double reads, double read_bytes, double write_bytes) {
  PhysicsInputs in;
  in.window_s = 2;
  in.device_read_ios = reads;
  in.device_read_bytes = read_bytes;
  in.device_write_bytes = write_bytes;
  return in;
}

TEST(DirectIo, RandomReadsTheDeviceDidNotSeeWereAnsweredByAnotherLayer) {
  const results::Json direct_rr = {{"rw", "randread"}, {"direct", true}};
  // The device counted 2,000 reads in 2 s (1,000 r/s) while the application reports 10,000 IOPS.
  const PhysicsFinding f =
      direct_io_check(test_of("io", direct_rr, {{&cat::iops, 10000}}), device_counts(2000, 2000 * 4096.0, 0));
  EXPECT_EQ(f.outcome, CheckOutcome::warning);
  EXPECT_TRUE(says(f, "the application's 10000 IOPS are more than 1.5 x the device's 1000 r/s")) << f.detail;
  // 1,400 IOPS against 1,000 r/s: within 1.5x.
  EXPECT_EQ(direct_io_check(test_of("io", direct_rr, {{&cat::iops, 1400}}), device_counts(2000, 0, 0)).outcome,
            CheckOutcome::passed);
  // Buffered work: not checked.
  const PhysicsFinding buffered = direct_io_check(
      test_of("io", {{"rw", "randread"}, {"direct", false}}, {{&cat::iops, 1e6}}), device_counts(0, 0, 0));
  EXPECT_EQ(buffered.outcome, CheckOutcome::not_applicable);
  // No device (tmpfs): said.
  PhysicsInputs none;
  none.window_s = 2;
  none.no_device = "tmpfs at /dev/shm has no block device";
  EXPECT_EQ(direct_io_check(test_of("io", direct_rr, {{&cat::iops, 1e6}}), none).detail,
            "no device: tmpfs at /dev/shm has no block device");
}

TEST(DirectIo, SequentialDirectBytesAgainstTheDevicesBytes) {
  const results::Json direct_seq = {{"rw", "write"}, {"direct", true}};
  const PhysicsFinding f = direct_io_check(test_of("io", direct_seq, {{&cat::bytes, 4e9}}), device_counts(0, 0, 1e9));
  EXPECT_EQ(f.outcome, CheckOutcome::warning);
  EXPECT_TRUE(says(f, "the application moved 4000.0 MB, more than 1.5 x the 1000.0 MB the device read and wrote"))
      << f.detail;
  EXPECT_EQ(direct_io_check(test_of("io", direct_seq, {{&cat::bytes, 1e9}}), device_counts(0, 0, 1e9)).outcome,
            CheckOutcome::passed);
}

// A loop device that goes through its backing file's page cache counts every request the cache then
// answers: O_DIRECT work on it is warned even when its counts agree; a warning of the counts stands.
TEST(DirectIo, ALoopDeviceWithoutDirectIoBelowIsWarnedWhenTheCountsPass) {
  const results::Json direct_rr = {{"rw", "randread"}, {"direct", true}};
  PhysicsInputs in = device_counts(2000, 2000 * 4096.0, 0);
  in.page_cache_loops = "loop7 (backing file /srv/disk.img, loop/dio 0)";
  const PhysicsFinding f = direct_io_check(test_of("io", direct_rr, {{&cat::iops, 1000}}), in);
  EXPECT_EQ(f.outcome, CheckOutcome::warning);
  EXPECT_TRUE(says(f, "through the page cache: loop7 (backing file /srv/disk.img, loop/dio 0)")) << f.detail;
  EXPECT_TRUE(says(f, "losetup --direct-io=on")) << f.detail;
  const PhysicsFinding counts = direct_io_check(test_of("io", direct_rr, {{&cat::iops, 10000}}), in);
  EXPECT_TRUE(says(counts, "the application's 10000 IOPS are more than 1.5 x")) << counts.detail;
  EXPECT_EQ(direct_io_check(test_of("io", {{"rw", "randread"}, {"direct", false}}, {{&cat::iops, 1000}}), in).outcome,
            CheckOutcome::not_applicable);
}

TEST(NullEngine, ItsFiguresAreTheHarnesssByDesignAndNotChecked) {
  const results::Json null_rr = {{"engine", "null"}, {"rw", "randread"}, {"direct", true}};
  PhysicsInputs in = device_counts(0, 0, 0);
  in.process_cpu_s = 1;
  in.harness_iops_per_cpu_s = 1e6;
  const results::TestRecord t = test_of("io", null_rr, {{&cat::iops, 2e6}, {&cat::ios, 4e6}});
  EXPECT_EQ(direct_io_check(t, in).outcome, CheckOutcome::not_applicable);
  const PhysicsFinding h = harness_check(t, in);
  EXPECT_EQ(h.outcome, CheckOutcome::not_applicable);
  EXPECT_TRUE(says(h, "the null engine does no I/O")) << h.detail;
}

TEST(TpmC, APacedRunAbove1286PerWarehouseFailsTheTest) {
  const results::Json two_w = {{"warehouses", 2}, {"think", "tpcc"}};
  // efficiency_pct is there: think: tpcc at think_scale 1.
  const PhysicsFinding f = tpmc_check(test_of("tpcc", two_w, {{&cat::tpm_c, 30}, {&cat::efficiency_pct, 116.6}}));
  EXPECT_EQ(f.outcome, CheckOutcome::failed);
  EXPECT_TRUE(says(f, "tpm_c 30.00 is above 12.86 per warehouse x 2 = 25.72")) << f.detail;
  EXPECT_TRUE(says(f, "clause 4.2")) << f.detail;
  EXPECT_EQ(tpmc_check(test_of("tpcc", two_w, {{&cat::tpm_c, 25}, {&cat::efficiency_pct, 97.2}})).outcome,
            CheckOutcome::passed);
  // think: none (no efficiency_pct): thousands per warehouse are what it is for.
  EXPECT_EQ(tpmc_check(test_of("tpcc", {{"warehouses", 1}, {"think", "none"}}, {{&cat::tpm_c, 40000}})).outcome,
            CheckOutcome::not_applicable);
}

TEST(HarnessCeiling, ATestWithinHalfOfTheNullEnginesCeilingMayBeTheHarnesss) {
  PhysicsInputs in;
  in.window_s = 2;
  in.process_cpu_s = 1.0;
  in.harness_iops_per_cpu_s = 1.5e6;
  // 1,000,000 I/Os for 1 CPU-second: 67% of the ceiling.
  const PhysicsFinding f = harness_check(test_of("io", {}, {{&cat::ios, 1e6}}), in);
  EXPECT_EQ(f.outcome, CheckOutcome::warning);
  EXPECT_TRUE(says(f, "1000000 I/Os per CPU-second of drivelab is 67% of the harness's own ceiling")) << f.detail;
  // The same from IOPS x the window.
  EXPECT_EQ(harness_check(test_of("io", {}, {{&cat::iops, 5e5}}), in).outcome, CheckOutcome::warning);
  in.harness_iops_per_cpu_s = 4e6;
  EXPECT_EQ(harness_check(test_of("io", {}, {{&cat::ios, 1e6}}), in).outcome, CheckOutcome::passed);
  // Turned off: said why.
  in.harness_iops_per_cpu_s.reset();
  in.ceiling_reason = "no harness ceiling: turned off";
  EXPECT_EQ(harness_check(test_of("io", {}, {{&cat::ios, 1e6}}), in).detail, "no harness ceiling: turned off");
}

// A curve (details `points` of several runs): its headline is the max run's while the device
// counters and the CPU cover every point and its warm-up, so the ratios are not checked (a fresh
// review saw the max run's 143 MB/s x the whole curve's window read as 1.5 x what the device saw).
TEST(Curve, ItsWindowChecksAreNotApplicable) {
  results::TestRecord t =
      test_of("vdbench", {{"rw", "randread"}, {"direct", true}}, {{&cat::iops, 36000}, {&cat::ios, 1e6}});
  t.details["points"] = results::Json::array({{{"group", "max"}}, {{"group", "point_010"}}});
  PhysicsInputs in = device_counts(2000, 2000 * 4096.0, 0);
  in.process_cpu_s = 1;
  in.harness_iops_per_cpu_s = 1.5e6;
  for (const PhysicsFinding& f : {direct_io_check(t, in), harness_check(t, in)}) {
    EXPECT_EQ(f.outcome, CheckOutcome::not_applicable) << f.check << ": " << f.detail;
    EXPECT_TRUE(says(f, "a curve: the device counters and the process's CPU cover every point")) << f.detail;
  }
}

// Video's frame writes and reads each have their own rate (per pass time): the faster one is
// checked against the link, rather than nothing.
TEST_F(LinkStack, AVideoPassFasterThanTheLinkIsNotTheDrives) {
  const fs::path pci = sys_.root() / "devices" / "pci0000:00" / "0000:00:01.1" / "0000:01:00.0";
  write_file(pci / "current_link_speed", "2.5 GT/s PCIe\n");
  write_file(pci / "current_link_width", "1\n");
  sys_.device("nvme0n1", makedev(259, 0), {}, "pci0000:00/0000:00:01.1/0000:01:00.0/nvme/nvme0");
  PhysicsInputs in;
  in.window_s = 2;
  in.link = link_ceiling(stack_of(makedev(259, 0)));
  ASSERT_TRUE(in.link.bytes_per_s) << in.link.reason;
  const PhysicsFinding f =
      link_check(test_of("video", {{"direct", true}}, {{&cat::write_mb_s, 2056}, {&cat::read_mb_s, 120}}), in);
  EXPECT_EQ(f.outcome, CheckOutcome::warning) << f.detail;
  EXPECT_TRUE(says(f, "throughput 2056.0 MB/s is above what the drive's link carries")) << f.detail;
  EXPECT_EQ(link_check(test_of("video", {}, {{&cat::write_mb_s, 200}, {&cat::read_mb_s, 120}}), in).outcome,
            CheckOutcome::passed);
}

TEST(HarnessCeiling, TheNullEngineThroughThePumpGivesACeiling) {
  const HarnessCeiling c = measure_harness_ceiling(std::chrono::milliseconds(20), std::chrono::milliseconds(500));
  EXPECT_GT(c.ios, 0u);
  EXPECT_GT(c.cpu_s, 0);
  EXPECT_GT(c.iops_per_cpu_s, 0);
  EXPECT_EQ(c.json().at("engine"), "null");
  EXPECT_EQ(c.json().at("queue_depth"), 32);
}

}  // namespace
}  // namespace drivelab::telemetry
