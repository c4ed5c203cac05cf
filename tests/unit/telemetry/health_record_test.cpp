// Drive health in a run's record (health_record.hpp): a test's before/after/delta from captured
// real nvme-cli outputs (tests/data/health/README.md), the throttling one among them, the
// warnings a test carries, and the run's one statement when there is nothing to read.
#include "drivelab/telemetry/health_record.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "health_data.hpp"

namespace drivelab::telemetry {
namespace {

namespace fs = std::filesystem;

std::string data(const std::string& name) { return testing::health_data(name); }

/// A WDC SN730's reading: `log`'s SMART log with the captured id-ctrl (WCTEMP 84 °C, CCTEMP 88 °C).
HealthSnapshot sn730(const std::string& log) {
  HealthSnapshot s = parse_nvme_smart_log(data(log), log);
  apply_nvme_id_ctrl(s, data("nvme-cli-id-ctrl-wdc-sn730.json"), "id-ctrl");
  s.device = "/dev/nvme0";
  return s;
}

HealthReading reading(const HealthSnapshot& s) { return {{DriveHealthRead{s.device, s, ""}}, ""}; }

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += s + "\n";
  return out;
}

TEST(TestHealth, ADriveThatThrottledDuringTheTestCarriesAWarningAndItsDeltas) {
  const HealthSnapshot before = sn730("nvme-cli-2-smart-log.json");
  const HealthSnapshot after = sn730("nvme-cli-2-smart-log-after-throttle.json");
  const TestHealth h = test_health(reading(before), reading(after));
  std::cout << h.json.dump(2) << "\n" << joined(h.warnings);
  const nlohmann::ordered_json& d = h.json.at("drives").at(0);
  EXPECT_EQ(d.at("device"), "/dev/nvme0");
  EXPECT_EQ(d.at("model"), *before.model);
  EXPECT_EQ(d.at("firmware"), *before.firmware);
  EXPECT_DOUBLE_EQ(d.at("warning_temp_c").get<double>(), 83.85);   // WCTEMP 357 K
  EXPECT_DOUBLE_EQ(d.at("critical_temp_c").get<double>(), 87.85);  // CCTEMP 361 K
  EXPECT_DOUBLE_EQ(d.at("temperature_c").at("before").get<double>(), *before.temperature_c);
  EXPECT_DOUBLE_EQ(d.at("temperature_c").at("after").get<double>(), *after.temperature_c);
  EXPECT_DOUBLE_EQ(d.at("temperature_c").at("max").get<double>(),
                   std::max(*before.temperature_c, *after.temperature_c));
  EXPECT_EQ(d.at("percentage_used").at("before"), 2);
  const auto& delta = d.at("delta");
  EXPECT_EQ(delta.at("tmt1_transitions"), 4);
  EXPECT_EQ(delta.at("tmt1_seconds"), 137);
  EXPECT_EQ(delta.at("tmt2_transitions"), 0);
  EXPECT_EQ(delta.at("warning_temp_minutes"), 3);
  EXPECT_EQ(delta.at("media_errors"), 0);
  EXPECT_EQ(delta.at("bytes_written").get<std::uint64_t>(), *after.bytes_written - *before.bytes_written);
  EXPECT_EQ(delta.at("host_write_commands").get<std::uint64_t>(),
            *after.host_write_commands - *before.host_write_commands);
  EXPECT_EQ(d.at("critical_warning").at("value"), 0);
  EXPECT_TRUE(d.at("throttled").get<bool>());
  ASSERT_EQ(h.warnings.size(), 2u) << joined(h.warnings);
  EXPECT_EQ(h.warnings[0],
            "drive /dev/nvme0: thermal management transitions +4 (TMT1, light): the drive throttled during the test");
  EXPECT_NE(h.warnings[1].find("3 min more at or above the warning composite temperature (WCTEMP)"), std::string::npos);
}

TEST(TestHealth, AQuietTestHasNoWarning) {
  const HealthSnapshot s = sn730("nvme-cli-2-smart-log.json");
  const TestHealth h = test_health(reading(s), reading(s));
  EXPECT_TRUE(h.warnings.empty()) << joined(h.warnings);
  const auto& d = h.json.at("drives").at(0);
  EXPECT_FALSE(d.at("throttled").get<bool>());
  EXPECT_EQ(d.at("delta").at("bytes_written"), 0);
}

TEST(TestHealth, ReachingWctempANewCriticalWarningAndNewMediaErrorsAreSaid) {
  const HealthSnapshot before = sn730("nvme-cli-2-smart-log.json");
  HealthSnapshot after = before;  // the same drive after a test that heated it and hit bad media
  after.temperature_c = *before.warning_temp_c + 1;
  after.critical_warning = 2;  // bit 1: temperature beyond a threshold
  after.media_errors = *before.media_errors + 3;
  const TestHealth h = test_health(reading(before), reading(after));
  const std::string all = joined(h.warnings);
  EXPECT_NE(all.find("reached the warning threshold 83.85 °C (WCTEMP)"), std::string::npos) << all;
  EXPECT_NE(all.find("critical warning raised during the test: temperature beyond a threshold"), std::string::npos)
      << all;
  EXPECT_NE(all.find("media errors +3 during the test"), std::string::npos) << all;
  const auto& d = h.json.at("drives").at(0);
  EXPECT_TRUE(d.at("throttled").get<bool>());
  EXPECT_EQ(d.at("critical_warning").at("bits").at(0), "temperature beyond a threshold");
  EXPECT_EQ(d.at("delta").at("media_errors"), 3);
}

TEST(TestHealth, AMissingReadingSaysWhichAndWhy) {
  const HealthSnapshot s = sn730("nvme-cli-2-smart-log.json");
  const HealthReading gone{{DriveHealthRead{"/dev/nvme0", std::nullopt, "nvme did not answer within 15000 ms"}}, ""};
  const TestHealth h = test_health(reading(s), gone);
  EXPECT_TRUE(h.warnings.empty());
  EXPECT_EQ(h.json.at("drives").at(0).at("reason"), "after the test: nvme did not answer within 15000 ms");
}

TEST(RunHealth, NothingToReadIsSaidOnceWithTheReason) {
  const RunHealth none = run_health({{}, "no NVMe or SATA/SAS device under the target (virtio: vda)"});
  EXPECT_FALSE(none.available);
  EXPECT_EQ(none.json(),
            (nlohmann::ordered_json{{"available", false},
                                    {"reason", "no NVMe or SATA/SAS device under the target (virtio: vda)"}}));
  // Drives there, none readable: each one's reason.
  const RunHealth denied =
      run_health({{DriveHealthRead{"/dev/sda", std::nullopt, "permission denied reading /dev/sda's health"}}, ""});
  EXPECT_FALSE(denied.available);
  EXPECT_EQ(denied.reason, "/dev/sda: permission denied reading /dev/sda's health");
  // One readable drive is enough; the run lists what it reads.
  const RunHealth some = run_health(reading(sn730("nvme-cli-2-smart-log.json")));
  EXPECT_TRUE(some.available);
  EXPECT_EQ(some.json().at("drives").at(0).at("model"), "WDC PC SN730 SDBQNTY-256G-1001");
}

TEST(RunHealth, ThisMachinesTargetSaysWhetherAndWhy) {
  // On a VM (virtio, loop devices) there is no health log; the reason says which device it is.
  const RunHealth h = run_health(read_drive_health_of(fs::path(DRIVELAB_BINARY_DIR)));
  std::cout << h.json().dump() << "\n";
  if (!h.available) {
    EXPECT_FALSE(h.reason.empty());
  }
}

}  // namespace
}  // namespace drivelab::telemetry
