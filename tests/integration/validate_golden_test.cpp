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

TEST(ValidateGolden, ThreeMistakesAllReportedWithLineAndColumn) {
  check_golden("validate_three_mistakes", 2);
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
