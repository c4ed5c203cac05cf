// `drivelab validate` reports every mistake of a protocol at once, each with file:line:column and
// the key path. The expected output is pinned in tests/golden/*.stderr; regenerate with
// DRIVELAB_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "process.hpp"

namespace {

using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;

void check_golden(const std::string& name, int expected_status) {
  ScratchDir dir("validate-" + name);
  const std::string input = "tests/golden/" + name + ".yaml";
  const auto golden = std::filesystem::path(DRIVELAB_SOURCE_DIR) / "tests/golden" / (name + ".stderr");
  // Run from the source root so the file name in messages is the relative path users type.
  const auto r = drivelab::testing::run({DRIVELAB_EXE, "validate", input}, dir.path(), std::chrono::seconds(60),
                                        DRIVELAB_SOURCE_DIR);
  if (std::getenv("DRIVELAB_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden) << r.err;
    GTEST_SKIP() << "golden file rewritten: " << golden;
  }
  EXPECT_EQ(r.status, expected_status) << r.out << r.err;
  EXPECT_EQ(r.err, read_file(golden));
}

TEST(ValidateGolden, ThreeMistakesAllReportedWithLineAndColumn) { check_golden("validate_three_mistakes", 2); }

// server.max_connections below what the run opens (workers + 1 drivelab session, the loaders,
// PostgreSQL's ANALYZE sessions) is refused by validate at the key, not by the run with exit 1.
TEST(ValidateGolden, MaxConnectionsBelowTheSessionsOfTheRunAtTheKey) { check_golden("validate_max_connections", 2); }

// An OLTP slo without rate: curve is ignored: a warning at its key (Emulator::config_warnings),
// and the protocol is valid.
TEST(ValidateGolden, SloWithoutACurveIsAWarningAtItsKey) { check_golden("validate_slo_without_curve", 0); }

// A preconditioning that names no test, an earlier one or one without a data file would fill a
// file no test reads: refused at its for_test.
TEST(ValidateGolden, PreconditionForTestNamesALaterTestWithADataFile) {
  check_golden("validate_precondition_for_test", 2);
}

TEST(ValidateGolden, ShippedProtocolsAreValid) {
  ScratchDir dir("validate-shipped");
  // storagereview-sqlserver.yaml reads the password from DRIVELAB_DB_PASSWORD; validate checks it is set.
  ::setenv("DRIVELAB_DB_PASSWORD", "placeholder", 1);
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(DRIVELAB_SOURCE_DIR) / "config")) {
    if (e.path().extension() != ".yaml") continue;
    const auto r = drivelab::testing::run({DRIVELAB_EXE, "validate", e.path().string()}, dir.path());
    EXPECT_EQ(r.status, 0) << e.path() << "\n" << r.err;
  }
}

}  // namespace

namespace {

// `drivelab io` / `drivelab oltp tpcc` build a one-test protocol from their options: a bad value
// is reported at the option as typed (both its names), never at a line of the generated YAML;
// --set keeps its own origin. Exit 2, nothing run, no file in the target.
TEST(ValidateOptions, ShorthandCommandsNameTheOptionNotTheGeneratedYaml) {
  ScratchDir dir("validate-options");
  const auto target = dir.path() / "target";
  std::filesystem::create_directories(target);
  const auto io =
      drivelab::testing::run({DRIVELAB_EXE, "io", "--target", target.string(), "--out", (dir.path() / "out").string(),
                              "--bs", "4q", "--iodepth", "x", "--name", "a b", "--set", "tests[0].warmup=soon"},
                             dir.path());
  EXPECT_EQ(io.status, 2) << io.out << io.err;
  EXPECT_EQ(
      io.err,
      "drivelab io: --name: test name 'a b' must be 1-64 characters of letters, digits, '-' or '_' (it names files)\n"
      "<--set>: tests[0].warmup: 'soon' is not a duration (e.g. 30s, 250ms, 1h30m)\n"
      "drivelab io: --xfersize/--bs: '4q' is not a size: unknown size unit 'q' (use b, k/KiB, m/MiB, g/GiB, "
      "t/TiB, p/PiB)\n"
      "drivelab io: --iodepth: expected an integer, found 'x'\n"
      "drivelab io: 4 problems found\n");
  const auto tpcc = drivelab::testing::run({DRIVELAB_EXE, "oltp", "tpcc", "--target", target.string(), "--out",
                                            (dir.path() / "out").string(), "-w", "0", "--users", "lots"},
                                           dir.path());
  EXPECT_EQ(tpcc.status, 2) << tpcc.out << tpcc.err;
  EXPECT_EQ(tpcc.err,
            "drivelab oltp tpcc: --warehouses/-w: warehouses must be between 1 and 100000, found 0\n"
            "drivelab oltp tpcc: --users/-u: expected an integer, found 'lots'\n"
            "drivelab oltp tpcc: 2 problems found\n");
  EXPECT_TRUE(std::filesystem::is_empty(target));
}

}  // namespace
