#pragma once
// Test helper: a fixture that runs protocol text through run_protocol (every kind of
// emulators/ and oltp/ registered) on a target, its scratch directory in the build tree named
// after the test (run_telemetry_test.cpp, surface_test.cpp). The directory and its `target`
// folder are made before the test and removed after it.
#include <filesystem>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "drivelab/emulators/register.hpp"
#include "drivelab/oltp/register.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"

namespace drivelab::testing {

struct ProtocolRunTest : ::testing::Test {
  std::filesystem::path dir = std::filesystem::path(DRIVELAB_BINARY_DIR) / "test-scratch" /
                              (std::string(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name()) +
                               "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::ostringstream out;  ///< the run's console output

  void SetUp() override {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "target");
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  /// Decodes `yaml` (named "p.yaml"; a decode error fails the test) and runs it on `target`,
  /// results in <dir>/out.
  runner::RunOutcome run(const std::string& yaml, const std::filesystem::path& target) {
    runner::Registry reg;
    emulators::register_emulators(reg);
    oltp::register_emulators(reg);
    config::Diagnostics diags;
    config::Document doc = config::Document::load_string(yaml, "p.yaml", diags);
    runner::Protocol p = runner::decode_protocol(doc, reg, diags);
    EXPECT_TRUE(diags.empty()) << diags.to_string();
    runner::RunOptions o;
    o.target = target;
    o.out_dir = dir / "out";
    o.out = &out;
    runner::StopFlag stop;
    return runner::run_protocol(p, o, stop);
  }
};

}  // namespace drivelab::testing
