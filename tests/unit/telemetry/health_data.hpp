#pragma once
// Test helper: the text of a captured drive-health output in tests/data/health (its README names
// each file's source and licence), for drive_health_test.cpp and health_record_test.cpp.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace drivelab::testing {

inline std::string health_data(const std::string& name) {
  const std::filesystem::path p = std::filesystem::path(DRIVELAB_SOURCE_DIR) / "tests" / "data" / "health" / name;
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(in) << p;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace drivelab::testing
