// The registration list of the I/O engines (io/src/engine.cpp): every row is complete, an
// instance reports its row's name and capabilities (the one copy), the probe reports the same,
// and every engine file in io/src/ has a registered row. Adding an engine is one file and one row
// (docs/contributing.md "Add an I/O engine").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/io/engine.hpp"

namespace drivelab::io {
namespace {

TEST(EngineRows, EveryRowIsCompleteAndNamedOnce) {
  ASSERT_FALSE(engines().empty());
  std::set<std::string_view> names;
  for (const EngineInfo* e : engines()) {
    SCOPED_TRACE(std::string(e->name));
    EXPECT_FALSE(e->name.empty());
    EXPECT_TRUE(names.insert(e->name).second) << "name used twice";
    EXPECT_FALSE(e->summary.empty());
    EXPECT_TRUE(e->capabilities.has(Capability::supports_direct)) << "every engine takes O_DIRECT descriptors";
    // Not compiled in: the row must say how to get it (NotCompiledIn's message).
    if (e->make == nullptr) {
      EXPECT_FALSE(e->build_option.empty());
      EXPECT_FALSE(e->library.empty());
      EXPECT_FALSE(e->instead.empty());
    }
  }
  std::vector<std::string_view> from_rows;
  for (const EngineInfo* e : engines()) from_rows.push_back(e->name);
  EXPECT_EQ(engine_names(), from_rows);
}

// The capabilities are declared once, in the row: the instance and the probe both report it.
TEST(EngineRows, InstancesAndTheProbeReportTheRow) {
  for (const EngineInfo* e : engines()) {
    SCOPED_TRACE(std::string(e->name));
    const EngineAvailability a = probe_engine(e->name);
    EXPECT_EQ(a.capabilities, e->capabilities);
    EXPECT_EQ(a.note, e->note);
    EXPECT_EQ(a.summary, e->summary);
    EXPECT_EQ(a.compiled_in, e->make != nullptr);
    if (!a.usable) continue;
    auto engine = make_engine(e->name, {.queue_depth = 2});
    EXPECT_EQ(&engine->info(), e);
    EXPECT_EQ(engine->name(), e->name);
    EXPECT_EQ(engine->capabilities(), e->capabilities);
  }
}

// An engine file without a row, or a row left out of the registration list, fails here: every
// io/src/*_engine.cpp defines exactly one EngineInfo and its name is registered.
TEST(EngineRows, EveryEngineFileHasARegisteredRow) {
  const std::regex defined(R"re(extern const EngineInfo (\w+)\{\s*\.name = "([^"]+)")re");
  const std::set<std::string> registered = [] {
    std::set<std::string> out;
    for (std::string_view n : engine_names()) out.emplace(n);
    return out;
  }();
  std::set<std::string> in_sources;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(DRIVELAB_SOURCE_DIR) / "io/src")) {
    const std::string file = entry.path().filename().string();
    if (!file.ends_with("_engine.cpp")) continue;
    SCOPED_TRACE(file);
    std::ifstream in(entry.path());
    std::ostringstream text;
    text << in.rdbuf();
    const std::string body = text.str();
    std::size_t rows = 0;
    for (std::sregex_iterator it(body.begin(), body.end(), defined), end; it != end; ++it, ++rows) {
      in_sources.insert((*it)[2].str());
    }
    EXPECT_EQ(rows, 1u) << "an engine file declares its engine in one row";
  }
  EXPECT_EQ(in_sources, registered);
}

// docs/io.md has a row for every registered engine in its engine table.
TEST(EngineRows, EveryEngineHasItsRowInTheDocs) {
  std::ifstream in(std::filesystem::path(DRIVELAB_SOURCE_DIR) / "docs/io.md");
  std::ostringstream text;
  text << in.rdbuf();
  for (std::string_view name : engine_names()) {
    EXPECT_NE(text.str().find(fmt::format("\n| `{}` |", name)), std::string::npos)
        << name << " has no row in the engine table of docs/io.md";
  }
}

}  // namespace
}  // namespace drivelab::io
