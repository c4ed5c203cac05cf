// The registration list of the trace formats (trace/src/formats.cpp): every row is complete, its
// detection sample is recognised by its own rule and by no other, its reader reads it, and every
// row defined in trace/src/ is registered. Adding a format is one row (docs/contributing.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "drivelab/trace/readers.hpp"
#include "formats.hpp"
#include "input.hpp"
#include "test_util.hpp"

namespace drivelab::trace {
namespace {

// A row without a clock does not compile: FormatClock has no default, so aggregate
// initialisation of TraceFormatInfo cannot leave it out (a format missing from the old clock
// table read its timestamps as ns, silently).
static_assert(!std::is_default_constructible_v<FormatClock>);
template <class Row>
concept RowWithoutClockCompiles = requires { Row{.name = "x", .summary = "y"}; };
static_assert(!RowWithoutClockCompiles<TraceFormatInfo>);
template <class Row>
concept RowWithClockCompiles = requires { Row{.name = "x", .summary = "y", .clock = FormatClock::bare(1, "ns", "z")}; };
static_assert(RowWithClockCompiles<TraceFormatInfo>);

TEST(TraceFormatRows, EveryRowIsComplete) {
  ASSERT_FALSE(trace_formats().empty());
  std::set<std::string_view> names{"auto", "automatic"};
  for (const TraceFormatInfo* row : trace_formats()) {
    SCOPED_TRACE(std::string(row->name));
    EXPECT_FALSE(row->name.empty());
    EXPECT_EQ(row->name.find_first_of("_ ABCDEFGHIJKLMNOPQRSTUVWXYZ"), std::string_view::npos) << "dashed, lower case";
    EXPECT_TRUE(names.insert(row->name).second) << "name used twice";
    if (!row->old_name.empty()) {
      EXPECT_TRUE(names.insert(row->old_name).second) << "old name used twice";
    }
    EXPECT_FALSE(row->summary.empty());
    // The clock: bare (a unit in ns, time_unit may replace it) or carried (a tick), never both.
    EXPECT_NE(row->clock.unit_ns > 0, row->clock.tick_ns > 0);
    EXPECT_FALSE(row->clock.unit.empty());
    EXPECT_FALSE(row->clock.origin.empty());
    EXPECT_EQ(takes_time_unit(TraceFormat(*row)), row->clock.unit_ns > 0);
    EXPECT_NE(row->detect, nullptr);
    EXPECT_NE(row->open, nullptr);
    EXPECT_FALSE(row->sample.empty()) << "a format needs a detection sample";
  }
}

// Each sample is this format's and no other's: the order of the list then cannot hide a rule that
// takes another format's files (the first that matches wins).
TEST(TraceFormatRows, EachSampleIsDetectedByItsOwnRuleOnly) {
  for (const TraceFormatInfo* row : trace_formats()) {
    SCOPED_TRACE(std::string(row->name));
    const detail::DetectHead head = detail::make_detect_head(row->sample, row->sample.size());
    EXPECT_TRUE(row->detect(head)) << "its own rule does not recognise its sample";
    for (const TraceFormatInfo* other : trace_formats()) {
      if (other != row) {
        EXPECT_FALSE(other->detect(head)) << other->name << " also takes it";
      }
    }
    EXPECT_EQ(detail::detect_format_from_head(row->sample, row->sample.size()), TraceFormat(*row));
  }
}

TEST(TraceFormatRows, EachReaderReadsItsSample) {
  for (const TraceFormatInfo* row : trace_formats()) {
    SCOPED_TRACE(std::string(row->name));
    auto source = detail::open_trace_memory(std::string(row->sample), "sample", TraceFormat(*row));
    const std::vector<TraceIo> ios = testing::read_all(*source);
    EXPECT_GE(ios.size(), 1u);
    EXPECT_EQ(source->clock().unit, row->clock.unit);
    EXPECT_GE(source->tick_ns(), 1);
    EXPECT_NE(source->describe().find(std::string(row->name)), std::string::npos) << source->describe();
    if (!row->seed_file.empty()) {
      EXPECT_TRUE(std::filesystem::exists(testing::sample(std::string(row->seed_file))));
    }
  }
}

// A row defined beside a reader but left out of the registration list would be dead code that
// --format, detection and the fuzz targets never see.
TEST(TraceFormatRows, EveryRowInTheSourcesIsRegistered) {
  const std::regex defined(R"re(extern const TraceFormatInfo (\w+)\{\s*\.name = "([^"]+)")re");
  std::set<std::string> in_sources;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(DRIVELAB_SOURCE_DIR) / "trace/src")) {
    if (entry.path().extension() != ".cpp") continue;
    std::ifstream in(entry.path());
    std::ostringstream text;
    text << in.rdbuf();
    const std::string body = text.str();
    for (std::sregex_iterator it(body.begin(), body.end(), defined), end; it != end; ++it) {
      in_sources.insert((*it)[2].str());
    }
  }
  std::set<std::string> registered;
  for (const TraceFormatInfo* row : trace_formats()) registered.insert(std::string(row->name));
  EXPECT_EQ(in_sources, registered);
}

// docs/vdi.md "Trace formats" has a row for every registered format (its layout and sources).
TEST(TraceFormatRows, EveryFormatHasItsRowInTheDocs) {
  std::ifstream in(std::filesystem::path(DRIVELAB_SOURCE_DIR) / "docs/vdi.md");
  std::ostringstream text;
  text << in.rdbuf();
  for (const TraceFormatInfo* row : trace_formats()) {
    EXPECT_NE(text.str().find(fmt::format("\n| `{}` ", row->name)), std::string::npos)
        << row->name << " has no row in docs/vdi.md \"Trace formats\"";
  }
}

}  // namespace
}  // namespace drivelab::trace
