// Drive health from captured real outputs of nvme-cli and smartctl (tests/data/health/README.md
// names each file's source and licence), the delta over a test with a throttling event, and the
// runner on this machine and without tools.
#include "drivelab/telemetry/drive_health.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "drivelab/core/errors.hpp"
#include "health_data.hpp"
#include "temp_dir.hpp"

namespace drivelab::telemetry {
namespace {

namespace fs = std::filesystem;

std::string data(const std::string& name) { return testing::health_data(name); }

HealthSnapshot nvme(const std::string& name) { return parse_nvme_smart_log(data(name), name); }

TEST(NvmeCli, SmartLogOfNvmeCli2) {
  const HealthSnapshot s = nvme("nvme-cli-2-smart-log.json");
  EXPECT_EQ(s.tool, "nvme-cli");
  EXPECT_EQ(s.protocol, "NVMe");
  EXPECT_EQ(s.critical_warning, 0u);
  ASSERT_TRUE(s.temperature_c);
  EXPECT_DOUBLE_EQ(*s.temperature_c, 36.85);  // 310 K
  EXPECT_TRUE(s.sensors_c.empty()) << "this drive reports no extra sensors";
  EXPECT_EQ(s.percentage_used, 2u);
  EXPECT_EQ(s.data_units_read, 9898518u);
  EXPECT_EQ(s.data_units_written, 136157684u);
  EXPECT_EQ(s.bytes_written, 136157684ULL * 512000);  // NVMe data unit: 1000 x 512 bytes
  EXPECT_EQ(s.host_read_commands, 313528805u);
  EXPECT_EQ(s.host_write_commands, 1928062610u);
  EXPECT_EQ(s.media_errors, 0u);
  EXPECT_EQ(s.warning_temp_minutes, 0u);
  EXPECT_EQ(s.critical_temp_minutes, 0u);
  EXPECT_EQ(s.tmt_transitions[0], 0u);
  EXPECT_EQ(s.tmt_transitions[1], 0u);
  EXPECT_EQ(s.tmt_seconds[0], 0u);
  EXPECT_EQ(s.power_on_hours, 4974u);
  EXPECT_FALSE(s.model) << "smart-log has no model: id-ctrl does";
}

TEST(NvmeCli, EveryShapeOfTheSameLogReadsTheSame) {
  const HealthSnapshot v2 = nvme("nvme-cli-2-smart-log.json");
  const HealthSnapshot v1 = nvme("nvme-cli-1-smart-log-float.json");         // floats
  const HealthSnapshot v213 = nvme("nvme-cli-2.13-smart-log-verbose.json");  // critical_warning object
  // Strings, as some wrappers print the 128-bit counters.
  nlohmann::json quoted = nlohmann::json::parse(data("nvme-cli-2-smart-log.json"));
  for (auto& [k, v] : quoted.items()) v = v.dump();
  const HealthSnapshot str = parse_nvme_smart_log(quoted.dump(), "quoted");
  for (const HealthSnapshot* s : {&v1, &v213, &str}) {
    EXPECT_EQ(s->critical_warning, v2.critical_warning);
    EXPECT_EQ(s->temperature_c, v2.temperature_c);
    EXPECT_EQ(s->percentage_used, v2.percentage_used);
    EXPECT_EQ(s->bytes_read, v2.bytes_read);
    EXPECT_EQ(s->bytes_written, v2.bytes_written);
    EXPECT_EQ(s->host_write_commands, v2.host_write_commands);
    EXPECT_EQ(s->tmt_transitions, v2.tmt_transitions);
    EXPECT_EQ(s->warning_temp_minutes, v2.warning_temp_minutes);
  }
}

TEST(NvmeCli, IdentifyControllerGivesModelFirmwareAndThresholds) {
  HealthSnapshot s = nvme("nvme-cli-2-smart-log.json");
  apply_nvme_id_ctrl(s, data("nvme-cli-id-ctrl-wdc-sn730.json"), "id-ctrl");
  EXPECT_EQ(s.model, "WDC PC SN730 SDBQNTY-256G-1001");
  EXPECT_EQ(s.firmware, "11170101");
  ASSERT_TRUE(s.warning_temp_c && s.critical_temp_c);
  EXPECT_DOUBLE_EQ(*s.warning_temp_c, 83.85);   // WCTEMP 357 K
  EXPECT_DOUBLE_EQ(*s.critical_temp_c, 87.85);  // CCTEMP 361 K
  EXPECT_THROW(apply_nvme_id_ctrl(s, "{\"x\": 1}", "id-ctrl"), EnvironmentError);
}

TEST(NvmeCli, ADeltaWithAThrottlingEvent) {
  HealthSnapshot before = nvme("nvme-cli-2-smart-log.json");
  HealthSnapshot after = nvme("nvme-cli-2-smart-log-after-throttle.json");
  const HealthDelta d = health_delta(before, after);
  EXPECT_TRUE(d.throttled);
  EXPECT_EQ(d.tmt_transitions[0], 4u);
  EXPECT_EQ(d.tmt_transitions[1], 0u);
  EXPECT_EQ(d.tmt_seconds[0], 137u);
  EXPECT_EQ(d.warning_temp_minutes, 3u);
  EXPECT_EQ(d.bytes_written, (136402184ULL - 136157684ULL) * 512000);  // 125.2 GB
  EXPECT_EQ(d.bytes_read, (9911218ULL - 9898518ULL) * 512000);
  EXPECT_EQ(d.host_write_commands, 1928926610ULL - 1928062610ULL);
  EXPECT_EQ(d.media_errors, 0u);
  EXPECT_EQ(d.percentage_used, 0);
  ASSERT_EQ(d.warnings.size(), 2u);
  EXPECT_EQ(d.warnings[0], "thermal management transitions +4 (TMT1, light): the drive throttled during the test");
  EXPECT_EQ(d.warnings[1], "3 min more at or above the warning composite temperature (WCTEMP) during the test");
  // The same reading twice: nothing happened.
  const HealthDelta none = health_delta(before, before);
  EXPECT_FALSE(none.throttled);
  EXPECT_TRUE(none.warnings.empty());
  EXPECT_EQ(none.bytes_written, 0u);
}

TEST(NvmeCli, CrossingWctempAndNewCriticalWarningsAreSaid) {
  HealthSnapshot before = nvme("nvme-cli-2-smart-log.json");
  apply_nvme_id_ctrl(before, data("nvme-cli-id-ctrl-wdc-sn730.json"), "id-ctrl");
  HealthSnapshot after = before;
  after.temperature_c = 84.0;  // above WCTEMP 83.85 °C
  after.critical_warning = 0x02;
  after.media_errors = 2;
  const HealthDelta d = health_delta(before, after);
  EXPECT_TRUE(d.throttled);
  EXPECT_EQ(d.max_temperature_c, 84.0);
  EXPECT_EQ(d.new_critical_warning, 2u);
  ASSERT_EQ(d.warnings.size(), 3u);
  EXPECT_EQ(d.warnings[0], "temperature 84 °C reached the warning threshold 83.85 °C (WCTEMP)");
  EXPECT_EQ(d.warnings[1], "critical warning raised during the test: temperature beyond a threshold");
  EXPECT_EQ(d.warnings[2], "media errors +2 during the test");
  // A counter that went down (another drive, a reset) gives no delta.
  after.data_units_written = 1;
  after.bytes_written = 512000;
  EXPECT_FALSE(health_delta(before, after).bytes_written);
}

TEST(NvmeCli, CriticalWarningBits) {
  EXPECT_EQ(critical_warning_bits(0x0a), (std::vector<std::string>{"temperature beyond a threshold", "read-only"}));
  EXPECT_EQ(critical_warning_bits(0x01), (std::vector<std::string>{"available spare below threshold"}));
  EXPECT_TRUE(critical_warning_bits(0).empty());
}

TEST(NvmeCli, OtherTextIsRefusedWithTheCommandsName) {
  try {
    parse_nvme_smart_log("Smart Log for NVME device:nvme0n1 namespace-id:ffffffff\n",
                         "nvme smart-log /dev/nvme0 -o json");
    FAIL() << "no error";
  } catch (const EnvironmentError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("nvme smart-log /dev/nvme0 -o json: not JSON: ", 0), 0u) << e.what();
  }
  EXPECT_THROW(parse_nvme_smart_log("{\"a\": 1}", "x"), EnvironmentError);
}

TEST(Smartctl, NvmeOfSmartctl71) {
  const HealthSnapshot s = parse_smartctl(data("smartctl-7.1-nvme-intel-ssdpeknw010t8.json"), "smartctl");
  EXPECT_EQ(s.tool, "smartctl 7.1");
  EXPECT_EQ(s.protocol, "NVMe");
  EXPECT_EQ(s.device, "/dev/testfoobarpass");
  EXPECT_EQ(s.model, "INTEL SSDPEKNW010T8");
  EXPECT_EQ(s.firmware, "002C");
  EXPECT_EQ(s.temperature_c, 36.0);
  EXPECT_EQ(s.percentage_used, 0u);
  EXPECT_EQ(s.bytes_read, 9511859ULL * 512000);
  EXPECT_EQ(s.bytes_written, 7773431ULL * 512000);
  EXPECT_EQ(s.host_read_commands, 111303174u);
  EXPECT_EQ(s.host_write_commands, 83170961u);
  EXPECT_EQ(s.critical_warning, 0u);
  EXPECT_EQ(s.warning_temp_minutes, 0u);
  EXPECT_EQ(s.power_on_hours, 2401u);
  EXPECT_EQ(s.smart_passed, true);
  EXPECT_FALSE(s.tmt_transitions[0]) << "smartctl's JSON has no thermal-management counts (smartmontools#583)";
}

TEST(Smartctl, NvmeSensorsAndThresholdsOfSmartctl73) {
  // smartctl 7.3 and later add these two keys; built here from the 7.1 capture (the README says so).
  nlohmann::json j = nlohmann::json::parse(data("smartctl-7.1-nvme-intel-ssdpeknw010t8.json"));
  j["nvme_composite_temperature_threshold"] = {{"warning", 77}, {"critical", 80}};
  j["nvme_smart_health_information_log"]["temperature_sensors"] = {36, 45};
  const HealthSnapshot s = parse_smartctl(j.dump(), "smartctl");
  EXPECT_EQ(s.sensors_c, (std::vector<double>{36, 45}));
  EXPECT_EQ(s.warning_temp_c, 77.0);
  EXPECT_EQ(s.critical_temp_c, 80.0);
}

TEST(Smartctl, SataOfSmartctl73) {
  const HealthSnapshot s = parse_smartctl(data("smartctl-7.3-sat-wdc-wds400t1r0a.json"), "smartctl");
  EXPECT_EQ(s.tool, "smartctl 7.3");
  EXPECT_EQ(s.protocol, "ATA");
  EXPECT_EQ(s.model, "WDC  WDS400T1R0A-68A4W0");
  EXPECT_EQ(s.temperature_c, 27.0);
  EXPECT_EQ(s.ata_lbas_written, 173833u);
  EXPECT_EQ(s.ata_lbas_read, 76778u);
  EXPECT_EQ(s.media_errors, 0u);  // 187 Reported_Uncorrect
  EXPECT_EQ(s.power_on_hours, 8244u);
  EXPECT_EQ(s.smart_passed, true);
  EXPECT_FALSE(s.bytes_written) << "ATA's LBA counts are in the vendor's unit";
  EXPECT_FALSE(s.critical_warning);
}

TEST(Smartctl, SasOfSmartctl73) {
  const HealthSnapshot s = parse_smartctl(data("smartctl-7.3-scsi-sas-hgst.json"), "smartctl");
  EXPECT_EQ(s.protocol, "SCSI");
  EXPECT_EQ(s.model, "REDACTED");  // scsi_model_name, redacted by the source
  EXPECT_EQ(s.temperature_c, 34.0);
  EXPECT_EQ(s.critical_temp_c, 85.0);  // drive trip
  EXPECT_EQ(s.bytes_read, 36537378000000ULL);
  EXPECT_EQ(s.bytes_written, 2811293000000ULL);
  EXPECT_EQ(s.media_errors, 0u);
  EXPECT_EQ(s.power_on_hours, 1641u);
}

TEST(Smartctl, AFailedOpenCarriesSmartctlsMessages) {
  const std::string failed = R"({"json_format_version": [1, 0], "smartctl": {"version": [7, 3], "exit_status": 2,
    "messages": [{"string": "Smartctl open device: /dev/sda failed: Permission denied", "severity": "error"}]}})";
  try {
    parse_smartctl(failed, "smartctl --json -a /dev/sda");
    FAIL() << "no error";
  } catch (const EnvironmentError& e) {
    EXPECT_STREQ(e.what(),
                 "smartctl --json -a /dev/sda: smartctl exit status 2: Smartctl open device: /dev/sda failed: "
                 "Permission denied");
  }
  EXPECT_THROW(parse_smartctl("{}", "x"), EnvironmentError);
}

SysBlock fake_disk(const std::string& name) {
  SysBlock b;
  b.name = b.disk = name;
  b.dir = b.disk_dir = "/nonexistent/sys/block/" + name;
  return b;
}

TEST(HealthRunner, WithoutToolsEachDriveSaysWhy) {
  DeviceStack stack;
  stack.devices.push_back({fake_disk("dm-0"), StackRole::headline, 0, {}});
  stack.devices.push_back({fake_disk("sdq"), StackRole::slave, 0, {}});
  stack.devices.push_back({fake_disk("nvme7n1"), StackRole::slave, 0, {}});
  const HealthReading r = read_drive_health(stack, HealthTools{});
  ASSERT_EQ(r.drives.size(), 2u);
  EXPECT_EQ(r.drives[0].device, "/dev/sdq");
  EXPECT_FALSE(r.drives[0].snapshot);
  EXPECT_EQ(r.drives[0].reason, "smartctl not installed (Debian: smartmontools): no health data for /dev/sdq");
  EXPECT_EQ(r.drives[1].device, "/dev/nvme7");
  EXPECT_NE(r.drives[1].reason.find("neither nvme-cli (nvme) nor smartmontools (smartctl) is installed"),
            std::string::npos);
  EXPECT_TRUE(r.reason.empty());
}

TEST(HealthRunner, NoDriveUnderALoopOrVirtioStack) {
  DeviceStack stack;
  stack.devices.push_back({fake_disk("loop3"), StackRole::headline, 0, {}});
  stack.devices.push_back({fake_disk("vda"), StackRole::backing_file_device, 0, {}});
  const HealthReading r = read_drive_health(stack, HealthTools::found());
  EXPECT_TRUE(r.drives.empty());
  EXPECT_EQ(r.reason, "no NVMe or SATA/SAS device under the target (loop: loop3; virtio: vda)");
}

TEST(HealthRunner, ATargetWithoutABlockDeviceSaysWhichFilesystem) {
  const HealthReading r = read_drive_health_of("/proc/self", HealthTools{});
  EXPECT_TRUE(r.drives.empty());
  EXPECT_EQ(r.reason, "proc at /proc has no block device");
  std::error_code ec;
  if (fs::is_directory("/dev/shm", ec)) {
    const HealthReading shm = read_drive_health_of("/dev/shm", HealthTools{});
    EXPECT_TRUE(shm.drives.empty());
    EXPECT_NE(shm.reason.find("has no block device"), std::string::npos) << shm.reason;
  }
}

TEST(HealthRunner, ThisMachineNeverThrowsAndSaysWhy) {
  test_support::TempDir dir;
  const TargetStack t = device_stack_of(dir.path());
  if (!t.stack) GTEST_SKIP() << t.reason;
  HealthReading r;
  ASSERT_NO_THROW(r = read_drive_health(*t.stack));
  if (r.drives.empty()) {
    EXPECT_EQ(r.reason.rfind("no NVMe or SATA/SAS device under the target (", 0), 0u) << r.reason;
    EXPECT_NE(r.reason.find(t.stack->headline().block.disk), std::string::npos) << r.reason;
  }
  for (const DriveHealthRead& d : r.drives) EXPECT_TRUE(d.snapshot || !d.reason.empty()) << d.device;
  std::cout << "this machine: " << t.stack->describe() << " -> "
            << (r.drives.empty() ? r.reason
                                 : r.drives[0].device + ": " + (r.drives[0].snapshot ? "read" : r.drives[0].reason))
            << "\n";
}

}  // namespace
}  // namespace drivelab::telemetry
