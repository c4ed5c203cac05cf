// A drive's temperature during the measured phase (drive_temperature.hpp) on recorded sysfs
// trees: an NVMe controller whose hwmon has Composite and Sensor 1 with temp1_max/temp1_crit
// (Linux drivers/nvme/host/hwmon.c), one of a kernel that hung it on the PCI function, a SATA disk
// with drivetemp (drivers/hwmon/drivetemp.c), all under one dm device beside a virtio disk
// without a sensor; then one test sampled through TestTelemetry with the tree's files rewritten
// between samples, and the one warning-temperature decision of health_delta over the readings and
// the samples together.
#include "drivelab/telemetry/drive_temperature.hpp"

#include <sys/sysmacros.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "drivelab/telemetry/health_record.hpp"
#include "drivelab/telemetry/test_telemetry.hpp"
#include "fake_sysfs.hpp"
#include "health_data.hpp"
#include "temp_dir.hpp"

namespace drivelab::telemetry {
namespace {

namespace cat = results::catalogue;
namespace fs = std::filesystem;
using test_support::FakeSysfs;
using test_support::TempDir;
using test_support::write_file;

/// An NVMe controller `ctrl` on PCI function `pci` (relative to devices/) with namespace
/// `<ctrl>n1` of number `dev`; its hwmon under the controller (`on_pci`: under the PCI function,
/// as Linux 5.5 to 5.11 registered it). Returns the hwmon directory.
fs::path nvme_drive(FakeSysfs& sys, const std::string& pci, const std::string& ctrl, dev_t dev, bool on_pci,
                    fs::path* ns_dir = nullptr) {
  const fs::path pci_dir = sys.root() / "devices" / pci;
  const fs::path ctrl_dir = pci_dir / "nvme" / ctrl;
  const fs::path ns = sys.device(ctrl + "n1", dev, {}, pci + "/nvme/" + ctrl);
  fs::create_symlink(ctrl_dir, ns / "device");       // /sys/block/nvme0n1/device -> ../../nvme0
  fs::create_symlink(pci_dir, ctrl_dir / "device");  // the controller's PCI function
  write_file(ns / "stat", "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
  const fs::path hwmon = on_pci ? pci_dir / "hwmon" / "hwmon2" : ctrl_dir / "hwmon3";
  write_file(hwmon / "name", "nvme\n");
  write_file(hwmon / "temp1_label", "Composite\n");
  write_file(hwmon / "temp1_input", "41850\n");
  write_file(hwmon / "temp1_max", "83850\n");   // WCTEMP 357 K (the SN730's of tests/data/health)
  write_file(hwmon / "temp1_crit", "87850\n");  // CCTEMP 361 K
  write_file(hwmon / "temp2_label", "Sensor 1\n");
  write_file(hwmon / "temp2_input", "45850\n");
  write_file(hwmon / "temp2_max", "65261850\n");
  if (ns_dir != nullptr) *ns_dir = ns;
  return hwmon;
}

/// A SATA disk sda behind ATA port 3 with drivetemp's hwmon on its SCSI device.
fs::path sata_drive(FakeSysfs& sys, fs::path* disk_dir = nullptr) {
  const std::string scsi = "pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0";
  const fs::path disk = sys.device("sda", makedev(8, 0), {}, scsi + "/block");
  fs::create_symlink(sys.root() / "devices" / scsi, disk / "device");
  const fs::path hwmon = sys.root() / "devices" / scsi / "hwmon" / "hwmon4";
  write_file(hwmon / "name", "drivetemp\n");
  write_file(hwmon / "temp1_input", "38000\n");
  write_file(hwmon / "temp1_max", "60000\n");
  write_file(hwmon / "temp1_crit", "70000\n");
  if (disk_dir != nullptr) *disk_dir = disk;
  return hwmon;
}

TEST(DriveSensors, EachDriveUnderADmDeviceOnceAndNoneForVirtio) {
  TempDir dir;
  FakeSysfs sys(dir.path() / "sys");
  fs::path nvme0, nvme1, sda;
  const fs::path h0 = nvme_drive(sys, "pci0000:00/0000:00:01.1/0000:01:00.0", "nvme0", makedev(259, 0), false, &nvme0);
  const fs::path h1 = nvme_drive(sys, "pci0000:00/0000:00:01.2/0000:02:00.0", "nvme1", makedev(259, 1), true, &nvme1);
  const fs::path h2 = sata_drive(sys, &sda);
  const fs::path vda = sys.device("vda", makedev(252, 0), {}, "pci0000:00/0000:00:04.0/virtio1/block");
  fs::create_symlink(sys.root() / "devices" / "pci0000:00/0000:00:04.0/virtio1", vda / "device");
  const fs::path dm = sys.device("dm-0", makedev(253, 0));
  for (const fs::path& lower : {nvme0, nvme1, sda, vda}) FakeSysfs::stack(dm, lower);

  const DeviceStack stack = device_stack(sys.block(makedev(253, 0)), {}, sys.root());
  ASSERT_EQ(stack.devices.size(), 5u) << stack.describe();
  const std::vector<DriveSensor> s = drive_sensors(stack);
  ASSERT_EQ(s.size(), 3u) << "vda has no sensor: left out";
  const auto of = [&](const std::string& node) {
    return *std::find_if(s.begin(), s.end(), [&](const DriveSensor& d) { return d.device == node; });
  };
  const DriveSensor n0 = of("/dev/nvme0");
  EXPECT_EQ(n0.hwmon, fs::canonical(h0));
  EXPECT_EQ(n0.composite.filename(), "temp1_input");
  EXPECT_EQ(n0.warning_c, 83.85);
  EXPECT_EQ(n0.critical_c, 87.85);
  EXPECT_EQ(n0.warning_name, "WCTEMP");
  EXPECT_EQ(read_hwmon_celsius(n0.composite), 41.85);
  EXPECT_EQ(of("/dev/nvme1").hwmon, fs::canonical(h1)) << "a kernel that hung it on the PCI function";
  const DriveSensor a = of("/dev/sda");
  EXPECT_EQ(a.hwmon, fs::canonical(h2));
  EXPECT_EQ(a.warning_c, 60.0);
  EXPECT_EQ(a.critical_c, 70.0);
  EXPECT_EQ(read_hwmon_celsius(a.composite), 38.0);

  // The composite is the input labelled "Composite", whichever its number.
  write_file(h0 / "temp1_label", "Sensor 1\n");
  write_file(h0 / "temp2_label", "Composite\n");
  EXPECT_EQ(of("/dev/nvme0").composite.filename(), "temp1_input") << "the old list";
  const std::vector<DriveSensor> relabelled = drive_sensors(stack);
  EXPECT_EQ(
      std::find_if(relabelled.begin(), relabelled.end(), [](const DriveSensor& d) { return d.device == "/dev/nvme0"; })
          ->composite.filename(),
      "temp2_input");
  EXPECT_FALSE(read_hwmon_celsius(h0 / "missing"));
  write_file(h0 / "temp1_input", "n/a\n");
  EXPECT_FALSE(read_hwmon_celsius(h0 / "temp1_input"));
}

TEST(PhaseTemperature, TimeAtOrAboveIsLinearBetweenSamples) {
  const std::vector<PhaseSample> s{{0, 80, 1.0}, {10, 86, 2.0}, {20, 84, 3.0}, {30, 75, std::nullopt}};
  // 80 -> 86 crosses 83.85 at 6.42 s of 10; 86 -> 84 is above all 10 s; 84 -> 75 for 0.15/9 of 10.
  EXPECT_NEAR(seconds_at_or_above(s, 83.85), 10 * 2.15 / 6 + 10 + 10 * 0.15 / 9, 1e-9);
  EXPECT_EQ(seconds_at_or_above(s, 90), 0.0);
  EXPECT_EQ(seconds_at_or_above(s, 70), 30.0);
  EXPECT_EQ(seconds_at_or_above({{0, 99, 1.0}}, 70), 0.0) << "one sample is no time";
}

HealthSnapshot sn730(const std::string& log) {
  HealthSnapshot s = parse_nvme_smart_log(testing::health_data(log), log);
  apply_nvme_id_ctrl(s, testing::health_data("nvme-cli-id-ctrl-wdc-sn730.json"), "id-ctrl");
  s.device = "/dev/nvme0";
  return s;
}

TEST(PhaseTemperature, ADriveThatHeatedAndCooledBeforeTheReadingAfterWarnsOnceNamingTheInterval) {
  const HealthSnapshot before = sn730("nvme-cli-2-smart-log.json");  // 41.85 °C, WCTEMP 83.85 °C
  const HealthReading r{{DriveHealthRead{"/dev/nvme0", before, ""}}, ""};
  PhaseTemperature p{.device = "/dev/nvme0",
                     .source = "hwmon3",
                     .samples = {},
                     .warning_c = 83.85,
                     .warning_name = "WCTEMP",
                     .critical_c = 87.85};
  p.samples = {{0, 50, std::nullopt}, {30, 84.85, 30.0}, {60, 88.85, 60.0}, {90, 60, 90.0}, {91, 45, std::nullopt}};
  const TestHealth h = test_health(r, r, {p});  // the same readings before and after: cool both times
  ASSERT_EQ(h.warnings.size(), 1u);
  EXPECT_EQ(h.warnings[0],
            "drive /dev/nvme0: temperature 88.85 °C during the measured phase (at 60 s): at or above the warning "
            "threshold 83.85 °C (WCTEMP) for 36 s, first in the interval ending at 30 s");
  const auto& t = h.json.at("drives").at(0).at("temperature_c");
  EXPECT_EQ(t.at("max"), 88.85) << "the readings' and the samples' highest";
  EXPECT_EQ(t.at("during").at("samples"), 5);
  EXPECT_EQ(t.at("during").at("first_interval_at_warning_t_s"), 30.0);
  EXPECT_TRUE(h.json["drives"][0].at("throttled").get<bool>());
  ASSERT_TRUE(h.warning_s);
  EXPECT_NEAR(*h.warning_s, 30 * 1.0 / 34.85 + 30 + 30 * 5 / 28.85, 1e-9);

  // The reading after the test also at WCTEMP: still one warning, the samples' (one place decides).
  HealthSnapshot hot = before;
  hot.temperature_c = 85;
  const TestHealth both = test_health(r, {{DriveHealthRead{"/dev/nvme0", hot, ""}}, ""}, {p});
  EXPECT_EQ(both.warnings, h.warnings);
  // Without samples the readings decide as before.
  const TestHealth readings = test_health(r, {{DriveHealthRead{"/dev/nvme0", hot, ""}}, ""});
  ASSERT_EQ(readings.warnings.size(), 1u);
  EXPECT_EQ(readings.warnings[0],
            "drive /dev/nvme0: temperature 85 °C reached the warning threshold 83.85 °C (WCTEMP)");
  EXPECT_FALSE(readings.warning_s);
}

TEST(PhaseTemperature, ASataDriveWithoutHealthReadingsIsStillJudgedByItsSensor) {
  PhaseTemperature p{.device = "/dev/sda",
                     .source = "hwmon4",
                     .samples = {},
                     .warning_c = 60,
                     .warning_name = "the maximum operating temperature (SCT)",
                     .critical_c = 70};
  p.samples = {{0, 40, std::nullopt}, {10, 55, 10.0}, {20, 58, 20.0}, {21, 57, std::nullopt}};
  const TestHealth cool = test_health({}, {}, {p});
  EXPECT_TRUE(cool.warnings.empty());
  const auto& d = cool.json.at("drives").at(0);
  EXPECT_EQ(d.at("device"), "/dev/sda");
  EXPECT_EQ(d.at("source"), "hwmon");
  EXPECT_EQ(d.at("temperature_c").at("max"), 58.0);
  EXPECT_EQ(d.at("warning_temp_c"), 60.0);
  EXPECT_EQ(d.at("critical_temp_c"), 70.0);
  EXPECT_FALSE(d.at("throttled").get<bool>());
  EXPECT_EQ(cool.warning_s, 0.0);
  p.samples[3] = {21, 61, std::nullopt};  // hot as the phase ended
  const TestHealth hot = test_health({}, {}, {p});
  ASSERT_EQ(hot.warnings.size(), 1u);
  EXPECT_NE(hot.warnings[0].find("(the maximum operating temperature (SCT)) for 0 s, first as the phase ended"),
            std::string::npos)
      << hot.warnings[0];
}

TEST(TestTelemetry, SamplesTheDrivesTemperatureAtEveryIntervalBoundary) {
  // The build tree's block device, recorded as an NVMe namespace of a fake tree: the runner's
  // sampling reads the tree's files, rewritten between samples as a heating drive's would be.
  const fs::path dir = fs::path(DRIVELAB_BINARY_DIR) / "test-scratch" / "drive_temperature";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const TestTelemetry real(dir);
  if (!real.stack()) GTEST_SKIP() << real.reason();
  TempDir tmp;
  FakeSysfs sys(tmp.path() / "sys");
  const fs::path hwmon =
      nvme_drive(sys, "pci0000:00/0000:00:01.1/0000:01:00.0", "nvme0", real.stack()->headline().block.dev, false);

  results::TestRecord tr;
  tr.kind = "io";
  results::TestRecorder rec(tr, nullptr);
  TestTelemetry tel(dir, sys.root());
  ASSERT_TRUE(tel.stack()) << tel.reason();
  ASSERT_EQ(tel.stack()->headline().block.name, "nvme0n1");
  write_file(hwmon / "temp1_input", "70000\n");
  tel.begin();
  rec.set_interval_sampler([&](results::Interval& iv) { tel.close_interval(iv); });
  for (const auto& [t, milli] : {std::pair{1, "80000"}, std::pair{2, "86000"}, std::pair{3, "84000"}}) {
    write_file(hwmon / "temp1_input", std::string(milli) + "\n");
    rec.interval({.t_s = static_cast<double>(t), .duration_s = 1, .values = {results::interval_value(cat::iops, 1)}});
  }
  write_file(hwmon / "temp1_input", "75000\n");
  tel.end();
  tel.record(rec);

  ASSERT_EQ(tr.intervals.size(), 3u);
  const auto temp = [](const results::Interval& iv) -> std::optional<double> {
    for (const auto& [n, v] : iv.values)
      if (n == "drive_temp_c") return v;
    return std::nullopt;
  };
  EXPECT_EQ(temp(tr.intervals[0]), 80.0);
  EXPECT_EQ(temp(tr.intervals[1]), 86.0);
  EXPECT_EQ(temp(tr.intervals[2]), 84.0);
  ASSERT_NE(tr.find_metric("drive_temp_max_c"), nullptr);
  EXPECT_EQ(tr.find_metric("drive_temp_max_c")->value, 86.0);
  EXPECT_EQ(tr.find_metric("drive_temp_max_c")->unit, "°C");
  ASSERT_NE(tr.find_metric("drive_temp_warning_s"), nullptr);
  EXPECT_GT(tr.find_metric("drive_temp_warning_s")->value, 0);
  EXPECT_LE(tr.find_metric("drive_temp_warning_s")->value, tr.details.at("telemetry").at("window_s").get<double>());
  const auto& d = tr.details.at("health").at("drives").at(0);
  EXPECT_EQ(d.at("device"), "/dev/nvme0");
  EXPECT_EQ(d.at("temperature_c").at("during").at("samples"), 5);
  ASSERT_EQ(tr.warnings.size(), 1u);
  EXPECT_NE(tr.warnings[0].find("drive /dev/nvme0: temperature 86 °C during the measured phase"), std::string::npos)
      << tr.warnings[0];
  EXPECT_NE(tr.warnings[0].find("first in the interval ending at 2 s"), std::string::npos) << tr.warnings[0];
  fs::remove_all(dir);
}

}  // namespace
}  // namespace drivelab::telemetry
