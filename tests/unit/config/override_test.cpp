// Document::apply_override: paths with keys, [N] and [*], values parsed as YAML, creation of
// missing maps, and every error reported at "<--set>" without changing the document.
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "loaded.hpp"

#include "drivelab/config/map_reader.hpp"

namespace drivelab::config {
namespace {

using namespace std::chrono_literals;

const char* const kProtocol =
    "protocol: demo\n"
    "tests:\n"
    "  - name: a\n"
    "    duration: 30s\n"
    "    warmup: 5s\n"
    "  - name: b\n"
    "    duration: 60s\n"
    "    warmup: 10s\n";

struct Loaded : testing::LoadedDocument {
  explicit Loaded(const std::string& text = kProtocol) : LoadedDocument(text, "p.yaml") {}
  Node at(std::size_t i) { return root().child("tests").elements().at(i); }
};

using Lines = std::vector<std::string>;

TEST(Override, SetsOneElementAndKeepsOtherLocations) {
  Loaded t;
  t.doc.apply_override("tests[0].duration=10s", t.diags);
  ASSERT_TRUE(t.diags.empty()) << t.diags.to_string();
  EXPECT_EQ(t.at(0).child("duration").scalar(), "10s");
  EXPECT_EQ(t.at(1).child("duration").scalar(), "60s");
  // Untouched nodes keep their file positions; the overridden one reports at <--set>.
  EXPECT_EQ(t.at(1).child("duration").location().line, 7);
  EXPECT_EQ(t.at(1).child("duration").location().column, 15);
  EXPECT_EQ(t.at(0).child("name").location().line, 3);
  EXPECT_EQ(t.at(0).child("duration").location().file, "<--set>");
  EXPECT_EQ(t.at(0).child("duration").location().line, 0);
}

TEST(Override, StarSetsEveryElementIndependently) {
  Loaded t;
  t.doc.apply_override("tests[*].warmup=0s", t.diags);
  t.doc.apply_override("tests[*].io={depth: 1}", t.diags);
  t.doc.apply_override("tests[0].io.depth=5", t.diags);
  ASSERT_TRUE(t.diags.empty()) << t.diags.to_string();
  for (std::size_t i = 0; i < 2; ++i) {
    MapReader r(t.at(i));
    std::chrono::nanoseconds warmup = 99s;
    EXPECT_TRUE(r.duration("warmup", warmup));
    EXPECT_EQ(warmup, 0s);
    r.accept("name");
    r.accept("duration");
    r.accept("io");
  }
  // The value is copied into each element, not shared: changing one leaves the other alone.
  EXPECT_EQ(t.at(0).child("io").child("depth").scalar(), "5");
  EXPECT_EQ(t.at(1).child("io").child("depth").scalar(), "1");
  EXPECT_TRUE(t.diags.empty()) << t.diags.to_string();
}

TEST(Override, ValueIsParsedAsYaml) {
  Loaded t;
  t.doc.apply_override("devices=[sda, sdb]", t.diags);
  t.doc.apply_override("description=", t.diags);
  t.doc.apply_override("label='a=b'", t.diags);
  ASSERT_TRUE(t.diags.empty()) << t.diags.to_string();
  MapReader r(t.root());
  std::vector<std::string> devices;
  std::string label;
  EXPECT_TRUE(r.string_list("devices", devices));
  EXPECT_EQ(devices, (std::vector<std::string>{"sda", "sdb"}));
  EXPECT_TRUE(r.section("description").is_null());
  EXPECT_TRUE(r.string("label", label));
  EXPECT_EQ(label, "a=b");
  r.accept("protocol");
  r.accept("tests");
}

TEST(Override, CreatesMissingIntermediateMaps) {
  Loaded t;
  t.doc.apply_override("target.options.direct=yes", t.diags);
  t.doc.apply_override(" tests[1].io.iodepth = 8", t.diags);
  ASSERT_TRUE(t.diags.empty()) << t.diags.to_string();
  MapReader r(t.root().child("target").child("options"));
  bool direct = false;
  EXPECT_TRUE(r.boolean("direct", direct));
  EXPECT_TRUE(direct);
  MapReader io(t.at(1).child("io"));
  int iodepth = 0;
  EXPECT_TRUE(io.integer("iodepth", iodepth));
  EXPECT_EQ(iodepth, 8);
}

TEST(Override, NullSectionBecomesAMapping) {
  Loaded t("io:\n");
  t.doc.apply_override("io.iodepth=4", t.diags);
  ASSERT_TRUE(t.diags.empty()) << t.diags.to_string();
  EXPECT_EQ(t.root().child("io").child("iodepth").scalar(), "4");
}

TEST(Override, EmptyDocumentGetsARootMapping) {
  Loaded t("");
  t.doc.apply_override("seed=7", t.diags);
  ASSERT_TRUE(t.diags.empty()) << t.diags.to_string();
  MapReader r(t.root());
  std::int64_t seed = 0;
  EXPECT_TRUE(r.integer("seed", seed));
  EXPECT_EQ(seed, 7);
}

TEST(Override, RootSequenceIndex) {
  Loaded t("- a: 1\n- a: 2\n");
  t.doc.apply_override("[1].a=3", t.diags);
  ASSERT_TRUE(t.diags.empty()) << t.diags.to_string();
  EXPECT_EQ(t.root().elements().at(1).child("a").scalar(), "3");
  EXPECT_EQ(t.root().elements().at(0).child("a").scalar(), "1");
}

TEST(Override, ReplacesWholeElement) {
  Loaded t;
  t.doc.apply_override("tests[1]={name: c}", t.diags);
  ASSERT_TRUE(t.diags.empty()) << t.diags.to_string();
  EXPECT_EQ(t.at(1).child("name").scalar(), "c");
  EXPECT_FALSE(t.at(1).child("duration").defined());
}

TEST(Override, ErrorsAreReportedAtSetAndLeaveTheDocumentUnchanged) {
  Loaded t;
  t.doc.apply_override("novalue", t.diags);
  t.doc.apply_override("=5", t.diags);
  t.doc.apply_override("tests[5].duration=1s", t.diags);
  t.doc.apply_override("protocol.name=x", t.diags);
  t.doc.apply_override("tests.duration=1s", t.diags);
  t.doc.apply_override("protocol[0]=x", t.diags);
  t.doc.apply_override("tests[x].duration=1s", t.diags);
  t.doc.apply_override("tests[0.duration=1s", t.diags);
  t.doc.apply_override("tests..duration=1s", t.diags);
  t.doc.apply_override("tests[0]duration=1s", t.diags);
  t.doc.apply_override("extra.list[0]=1", t.diags);
  t.doc.apply_override("tests[*].name.first=x", t.diags);
  t.doc.apply_override("nothing[*].x=1", t.diags);
  EXPECT_EQ(
      t.lines(),
      (Lines{
          "<--set>: 'novalue' is not an override: expected key.path=value (e.g. tests[0].duration=10s)",
          "<--set>: '=5' has an empty key path before '=' (e.g. tests[0].duration=10s)",
          "<--set>: tests[5].duration: index 5 out of range: 'tests' has 2 elements",
          "<--set>: protocol.name: cannot set key 'name': 'protocol' is a scalar ('demo'), not a mapping",
          "<--set>: tests.duration: cannot set key 'duration': 'tests' is a sequence, not a mapping (use [N] or [*])",
          "<--set>: protocol[0]: cannot index 'protocol': it is 'demo', not a sequence",
          // NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one message, split at the line length
          "<--set>: tests[x].duration: bad index '[x]' in path 'tests[x].duration' (use [N] with N >= 0, or [*] for "
          "every element)",
          "<--set>: tests[0.duration: missing ']' in path 'tests[0.duration'",
          "<--set>: tests..duration: empty key in path 'tests..duration'",
          "<--set>: tests[0]duration: expected '.' or '[' after ']' in path 'tests[0]duration'",
          "<--set>: extra.list[0]: index 0 out of range: 'extra.list' does not exist",
          "<--set>: tests[*].name.first: cannot set key 'first': 'tests[0].name' is a scalar ('a'), not a mapping",
          "<--set>: nothing[*].x: cannot apply [*]: 'nothing' does not exist",
      }));
  // None of the failed overrides changed anything: no 'extra' map was created on the way.
  EXPECT_FALSE(t.root().child("extra").defined());
  EXPECT_FALSE(t.root().child("nothing").defined());
  EXPECT_EQ(t.at(0).child("name").scalar(), "a");
  EXPECT_EQ(t.at(0).child("duration").scalar(), "30s");
  EXPECT_EQ(t.root().child("protocol").scalar(), "demo");
}

TEST(Override, BadYamlValue) {
  Loaded t;
  t.doc.apply_override("tests[0].duration=[1,", t.diags);
  ASSERT_EQ(t.diags.size(), 1u);
  const std::string line = t.diags.items()[0].to_string();
  EXPECT_EQ(line.rfind("<--set>: tests[0].duration: value '[1,' is not valid YAML: ", 0), 0u) << line;
  EXPECT_EQ(t.at(0).child("duration").scalar(), "30s");
}

TEST(Override, DecodingAnOverriddenValuePointsAtSet) {
  Loaded t;
  t.doc.apply_override("tests[1].duration=10q", t.diags);
  t.doc.apply_override("tests[0].io={xfersiz: 4k}", t.diags);
  ASSERT_TRUE(t.diags.empty()) << t.diags.to_string();
  for (const Node& test : t.root().child("tests").elements()) {
    MapReader r(test);
    std::chrono::nanoseconds duration{};
    r.duration("duration", duration);
    r.accept("name");
    r.accept("warmup");
    MapReader io(r.section("io"));
    std::uint64_t xfersize = 0;
    io.size("xfersize", xfersize);
  }
  const auto lines = t.lines();
  ASSERT_EQ(lines.size(), 2u) << t.diags.to_string();
  EXPECT_EQ(lines[0], "<--set>: tests[0].io.xfersiz: unknown key 'xfersiz' (did you mean 'xfersize'?)");
  EXPECT_EQ(lines[1].rfind("<--set>: tests[1].duration: '10q' is not a duration: ", 0), 0u) << lines[1];
}

TEST(Override, NotAppliedToADocumentThatFailedToLoad) {
  Diagnostics diags;
  Document doc = Document::load_string("a: [\n", "bad.yaml", diags);
  ASSERT_EQ(diags.size(), 1u);
  doc.apply_override("seed=7", diags);
  doc.apply_override("oops", diags);
  EXPECT_FALSE(doc.root(diags).defined());
  ASSERT_EQ(diags.size(), 2u);
  EXPECT_EQ(diags.items()[1].where.file, "<--set>");
}

}  // namespace
}  // namespace drivelab::config
