// Link speeds from recorded sysfs trees: an NVMe drive's PCIe link, a SATA disk's ATA link, and a
// virtio disk that has none; the payload ceiling of each PCIe generation and of SATA.
#include "drivelab/telemetry/link_speed.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <gtest/gtest.h>

#include "fake_sysfs.hpp"
#include "temp_dir.hpp"

namespace drivelab::telemetry {
namespace {

namespace fs = std::filesystem;
using test_support::FakeSysfs;
using test_support::TempDir;
using test_support::write_file;

TEST(LinkCeiling, PcieEncodingPerGenerationAndSata) {
  EXPECT_DOUBLE_EQ(pcie_lane_bytes_per_s(2.5), 250e6);                // gen 1: 8b/10b
  EXPECT_DOUBLE_EQ(pcie_lane_bytes_per_s(5.0), 500e6);                // gen 2: 8b/10b
  EXPECT_DOUBLE_EQ(pcie_lane_bytes_per_s(8.0), 8e9 * 128 / 130 / 8);  // gen 3: 128b/130b, 984.6 MB/s
  EXPECT_DOUBLE_EQ(pcie_lane_bytes_per_s(16.0), 16e9 * 128 / 130 / 8);
  EXPECT_DOUBLE_EQ(pcie_lane_bytes_per_s(32.0), 32e9 * 128 / 130 / 8);
  EXPECT_DOUBLE_EQ(sata_bytes_per_s(6.0), 600e6);
  EXPECT_DOUBLE_EQ(sata_bytes_per_s(3.0), 300e6);
}

TEST(LinkCeiling, ParsesTheKernelsTexts) {
  const auto gen3x4 = parse_pcie_link("8.0 GT/s PCIe", "4");
  ASSERT_TRUE(gen3x4);
  EXPECT_EQ(gen3x4->lanes, 4);
  EXPECT_DOUBLE_EQ(gen3x4->max_bytes_per_s, 4 * 8e9 * 128 / 130 / 8);
  EXPECT_EQ(gen3x4->text, "PCIe 8.0 GT/s x4 (3938 MB/s)");
  const auto old = parse_pcie_link("5 GT/s", "x1");  // kernels before 4.17 wrote neither ".0" nor "PCIe"
  ASSERT_TRUE(old);
  EXPECT_DOUBLE_EQ(old->max_bytes_per_s, 500e6);
  EXPECT_FALSE(parse_pcie_link("Unknown", "4"));
  EXPECT_FALSE(parse_pcie_link("16.0 GT/s PCIe", "0"));
  const auto sata = parse_sata_link("6.0 Gbps");
  ASSERT_TRUE(sata);
  EXPECT_EQ(sata->text, "SATA 6.0 Gb/s (600 MB/s)");
  EXPECT_FALSE(parse_sata_link("<unknown>"));
}

class LinkTree : public ::testing::Test {
 protected:
  TempDir dir_;
  FakeSysfs sys_{dir_.path() / "sys"};
};

TEST_F(LinkTree, NvmeOnAPcieGen4x4Link) {
  const fs::path pci = sys_.root() / "devices" / "pci0000:00" / "0000:00:01.1" / "0000:01:00.0";
  write_file(pci / "current_link_speed", "16.0 GT/s PCIe\n");
  write_file(pci / "current_link_width", "4\n");
  write_file(pci / "max_link_speed", "16.0 GT/s PCIe\n");
  const fs::path ns = sys_.device("nvme0n1", makedev(259, 0), {}, "pci0000:00/0000:00:01.1/0000:01:00.0/nvme/nvme0");
  sys_.device("nvme0n1p1", makedev(259, 1), ns);
  const LinkResult r = link_speed(sys_.block(makedev(259, 1)));  // a partition: its disk's link
  ASSERT_TRUE(r.link) << r.reason;
  EXPECT_EQ(r.link->kind, "PCIe");
  EXPECT_EQ(r.link->lanes, 4);
  EXPECT_DOUBLE_EQ(r.link->max_bytes_per_s, 4 * 16e9 * 128 / 130 / 8);
  EXPECT_EQ(r.link->source, fs::canonical(pci) / "current_link_speed");
}

TEST_F(LinkTree, SataOnTheAtaLinkNotTheAhciControllersPcieLink) {
  const fs::path ahci = sys_.root() / "devices" / "pci0000:00" / "0000:00:17.0";
  write_file(ahci / "current_link_speed", "8.0 GT/s PCIe\n");
  write_file(ahci / "current_link_width", "1\n");
  write_file(ahci / "ata3" / "link3" / "ata_link" / "link3" / "sata_spd", "3.0 Gbps\n");
  sys_.device("sda", makedev(8, 0), {}, "pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0/block");
  const LinkResult r = link_speed(sys_.block(makedev(8, 0)));
  ASSERT_TRUE(r.link) << r.reason;
  EXPECT_EQ(r.link->kind, "SATA");
  EXPECT_DOUBLE_EQ(r.link->max_bytes_per_s, 300e6);
  // The link down: said so.
  write_file(ahci / "ata3" / "link3" / "ata_link" / "link3" / "sata_spd", "<unknown>\n");
  const LinkResult down = link_speed(sys_.block(makedev(8, 0)));
  EXPECT_FALSE(down.link);
  EXPECT_NE(down.reason.find("no link speed"), std::string::npos) << down.reason;
}

TEST_F(LinkTree, SasOnItsPortsNegotiatedRate) {
  // An HBA's host0 with phy-0:0, a narrow port-0:0 linking to it, the disk behind its end device.
  const fs::path host = sys_.root() / "devices" / "pci0000:00" / "0000:00:03.0" / "0000:02:00.0" / "host0";
  write_file(host / "phy-0:0" / "sas_phy" / "phy-0:0" / "negotiated_linkrate", "12.0 Gbit\n");
  write_file(host / "phy-0:1" / "sas_phy" / "phy-0:1" / "negotiated_linkrate", "Unknown\n");
  fs::create_directories(host / "port-0:0");
  fs::create_symlink(host / "phy-0:0", host / "port-0:0" / "phy-0:0");
  sys_.device("sdb", makedev(8, 16), {},
              "pci0000:00/0000:00:03.0/0000:02:00.0/host0/port-0:0/end_device-0:0/target0:0:0/0:0:0:0/block");
  const LinkResult r = link_speed(sys_.block(makedev(8, 16)));
  ASSERT_TRUE(r.link) << r.reason;
  EXPECT_EQ(r.link->kind, "SAS");
  EXPECT_EQ(r.link->lanes, 1);
  EXPECT_DOUBLE_EQ(r.link->max_bytes_per_s, 1200e6);  // 12 Gbit, 8b/10b
  EXPECT_EQ(r.link->text, "SAS 12.0 Gbit x1 (1200 MB/s)");
  EXPECT_DOUBLE_EQ(sas_phy_bytes_per_s(22.5), 22.5e9 * 128 / 150 / 8);  // SAS-4: 2400 MB/s
}

TEST_F(LinkTree, AVirtioDiskHasNoLinkToSpeakOf) {
  const fs::path pci = sys_.root() / "devices" / "pci0000:00" / "0000:00:04.0";
  write_file(pci / "current_link_speed", "Unknown\n");
  sys_.device("vdz", makedev(252, 0), {}, "pci0000:00/0000:00:04.0/virtio1/block");
  const LinkResult r = link_speed(sys_.block(makedev(252, 0)));
  EXPECT_FALSE(r.link);
  EXPECT_EQ(r.reason, "vdz is a virtio disk: its link is virtual");
}

TEST(LinkOfThisMachine, NeverThrows) {
  struct stat st{};
  ASSERT_EQ(::stat("/", &st), 0);
  const auto b = sys_block(st.st_dev);
  if (!b) GTEST_SKIP() << "/ is on no block device here";
  const LinkResult r = link_speed(*b);
  EXPECT_TRUE(r.link || !r.reason.empty());
  if (r.link) {
    EXPECT_GT(r.link->max_bytes_per_s, 0);
  }
}

}  // namespace
}  // namespace drivelab::telemetry
