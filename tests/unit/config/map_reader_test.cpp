// MapReader: every accessor's conversion, every error message with its exact position, unknown
// and duplicate keys, and that a whole document's errors are collected in order.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "loaded.hpp"

#include "drivelab/config/map_reader.hpp"

namespace drivelab::config {
namespace {

using namespace std::chrono_literals;

// Parses `text` as "t.yaml" and keeps the document and its diagnostics together.
struct Loaded : testing::LoadedDocument {
  explicit Loaded(const std::string& text) : LoadedDocument(text, "t.yaml") {}
};

using Lines = std::vector<std::string>;

enum class Rw { randread, randwrite };

TEST(MapReader, ReadsEveryKindOfValue) {
  Loaded t(
      "name: oltp\n"
      "verify: yes\n"
      "direct: Off\n"
      "iodepth: 32\n"
      "offset: -5\n"
      "mask: 0x10\n"
      "count: 4000000000\n"
      "skew: 1.25\n"
      "xfersize: 4k\n"
      "capacity: 2GiB\n"
      "block: 512\n"
      "warmup: 250ms\n"
      "duration: 1h30m\n"
      "interval: 10\n"
      "rdpct: 45\n"
      "wrpct: 45.5\n"
      "hotpct: \"45%\"\n"
      "rw: randwrite\n"
      "devices: [sda, sdb]\n"
      "single: sdc\n");
  MapReader r(t.root());
  std::string name;
  bool verify = false, direct = true;
  int iodepth = 0;
  std::int64_t offset = 0, mask = 0;
  std::uint32_t count = 0;
  double skew = 0, rdpct = 0, wrpct = 0, hotpct = 0;
  std::uint64_t xfersize = 0, capacity = 0, block = 0;
  std::chrono::nanoseconds warmup{}, duration{}, interval{};
  Rw rw = Rw::randread;
  std::vector<std::string> devices, single;
  EXPECT_TRUE(r.string("name", name));
  EXPECT_TRUE(r.boolean("verify", verify));
  EXPECT_TRUE(r.boolean("direct", direct));
  EXPECT_TRUE(r.integer("iodepth", iodepth, {.min = 1, .max = 65536}));
  EXPECT_TRUE(r.integer("offset", offset));
  EXPECT_TRUE(r.integer("mask", mask));
  EXPECT_TRUE(r.integer("count", count));
  EXPECT_TRUE(r.number("skew", skew, {.min = 0.0}));
  EXPECT_TRUE(r.size("xfersize", xfersize, {.min = 512}));
  EXPECT_TRUE(r.size("capacity", capacity));
  EXPECT_TRUE(r.size("block", block));
  EXPECT_TRUE(r.duration("warmup", warmup));
  EXPECT_TRUE(r.duration("duration", duration));
  EXPECT_TRUE(r.duration("interval", interval));
  EXPECT_TRUE(r.percent("rdpct", rdpct));
  EXPECT_TRUE(r.percent("wrpct", wrpct));
  EXPECT_TRUE(r.percent("hotpct", hotpct));
  EXPECT_TRUE(r.choice("rw", rw, {{"randread", Rw::randread}, {"randwrite", Rw::randwrite}}));
  EXPECT_TRUE(r.string_list("devices", devices));
  EXPECT_TRUE(r.string_list("single", single));
  r.finish();
  EXPECT_TRUE(t.diags.empty()) << t.diags.to_string();
  EXPECT_EQ(name, "oltp");
  EXPECT_TRUE(verify);
  EXPECT_FALSE(direct);
  EXPECT_EQ(iodepth, 32);
  EXPECT_EQ(offset, -5);
  EXPECT_EQ(mask, 16);
  EXPECT_EQ(count, 4000000000u);
  EXPECT_DOUBLE_EQ(skew, 1.25);
  EXPECT_EQ(xfersize, 4096u);
  EXPECT_EQ(capacity, 2ull << 30);
  EXPECT_EQ(block, 512u);
  EXPECT_EQ(warmup, 250ms);
  EXPECT_EQ(duration, 90min);
  EXPECT_EQ(interval, 10s);
  EXPECT_DOUBLE_EQ(rdpct, 45.0);
  EXPECT_DOUBLE_EQ(wrpct, 45.5);
  EXPECT_DOUBLE_EQ(hotpct, 45.0);
  EXPECT_EQ(rw, Rw::randwrite);
  EXPECT_EQ(devices, (std::vector<std::string>{"sda", "sdb"}));
  EXPECT_EQ(single, (std::vector<std::string>{"sdc"}));
}

TEST(MapReader, AbsentKeysKeepTheirDefaults) {
  Loaded t("other: 1\n");
  MapReader r(t.root());
  r.accept("other");
  int iodepth = 7;
  std::uint64_t xfersize = 4096;
  std::chrono::nanoseconds warmup = 5s;
  EXPECT_FALSE(r.integer("iodepth", iodepth));
  EXPECT_FALSE(r.size("xfersize", xfersize));
  EXPECT_FALSE(r.duration("warmup", warmup));
  r.finish();
  EXPECT_TRUE(t.diags.empty()) << t.diags.to_string();
  EXPECT_EQ(iodepth, 7);
  EXPECT_EQ(xfersize, 4096u);
  EXPECT_EQ(warmup, 5s);
}

TEST(MapReader, BooleanWords) {
  Loaded t("a: true\nb: FALSE\nc: yes\nd: no\ne: on\nf: off\ng: maybe\n");
  MapReader r(t.root());
  bool v[7] = {false, true, false, true, false, true, true};
  const char* keys[] = {"a", "b", "c", "d", "e", "f", "g"};
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(r.boolean(keys[i], v[i])) << keys[i];
  EXPECT_FALSE(r.boolean("g", v[6]));
  EXPECT_TRUE(v[0] && !v[1] && v[2] && !v[3] && v[4] && !v[5]);
  EXPECT_TRUE(v[6]);  // default kept
  EXPECT_EQ(t.lines(), (Lines{"t.yaml:7:4: g: expected a boolean (true/false, yes/no, on/off), found 'maybe'"}));
}

TEST(MapReader, IntegerTypeAndRangeErrors) {
  Loaded t(
      "a: abc\n"
      "b: 1.5\n"
      "iodepth: 0\n"
      "threads: 3000000000\n"
      "count: -1\n"
      "huge: 99999999999999999999\n"
      "low: 5\n"
      "high: 101\n"
      "nested: {x: 1}\n");
  MapReader r(t.root());
  std::int64_t a = 0, b = 0, huge = 0, low = 0, high = 0, nested = 0;
  int iodepth = 1, threads = 1;
  std::uint32_t count = 0;
  EXPECT_FALSE(r.integer("a", a));
  EXPECT_FALSE(r.integer("b", b));
  EXPECT_FALSE(r.integer("iodepth", iodepth, {.min = 1, .max = 65536}));
  EXPECT_FALSE(r.integer("threads", threads, {.min = 1}));
  EXPECT_FALSE(r.integer("count", count));
  EXPECT_FALSE(r.integer("huge", huge));
  EXPECT_FALSE(r.integer("low", low, {.min = 10}));
  EXPECT_FALSE(r.integer("high", high, {.max = 100}));
  EXPECT_FALSE(r.integer("nested", nested));
  EXPECT_EQ(iodepth, 1);
  EXPECT_EQ(t.lines(), (Lines{
                           "t.yaml:1:4: a: expected an integer, found 'abc'",
                           "t.yaml:2:4: b: expected an integer, found '1.5'",
                           "t.yaml:3:10: iodepth: iodepth must be between 1 and 65536, found 0",
                           "t.yaml:4:10: threads: threads must be between 1 and 2147483647, found 3000000000",
                           "t.yaml:5:8: count: count must be at least 0, found -1",
                           "t.yaml:6:7: huge: huge must be at most 9223372036854775807, found 99999999999999999999",
                           "t.yaml:7:6: low: low must be at least 10, found 5",
                           "t.yaml:8:7: high: high must be at most 100, found 101",
                           "t.yaml:9:9: nested: expected an integer, found a mapping",
                       }));
}

TEST(MapReader, NumberErrors) {
  Loaded t("skew: abc\nratio: 1.5\nnan: .nan\n");
  MapReader r(t.root());
  double skew = 0, ratio = 0, nan = 0;
  EXPECT_FALSE(r.number("skew", skew));
  EXPECT_FALSE(r.number("ratio", ratio, {.min = 0.0, .max = 1.0}));
  EXPECT_FALSE(r.number("nan", nan));
  EXPECT_EQ(t.lines(), (Lines{
                           "t.yaml:1:7: skew: expected a number, found 'abc'",
                           "t.yaml:2:8: ratio: ratio must be between 0 and 1, found 1.5",
                           "t.yaml:3:6: nan: expected a number, found '.nan'",
                       }));
}

TEST(MapReader, SizeAndDurationErrorsCarryTheUnitParsersReason) {
  Loaded t(
      "tests:\n"
      "  - io: {xfersize: 4k}\n"
      "  - io:\n"
      "      xfersize: 4q\n"
      "      warmup: 10q\n"
      "      block: 256\n"
      "      duration: 2h\n"
      "      empty: ''\n");
  const auto tests = t.root().child("tests").elements();
  ASSERT_EQ(tests.size(), 2u);
  {
    MapReader r(tests[0].child("io"));
    std::uint64_t xfersize = 0;
    EXPECT_TRUE(r.size("xfersize", xfersize));
    EXPECT_EQ(xfersize, 4096u);
  }
  MapReader r(tests[1].child("io"));
  std::uint64_t xfersize = 4096, block = 4096, empty = 1;
  std::chrono::nanoseconds warmup = 1s, duration = 1s;
  EXPECT_FALSE(r.size("xfersize", xfersize));
  EXPECT_FALSE(r.duration("warmup", warmup));
  EXPECT_FALSE(r.size("block", block, {.min = 512}));
  EXPECT_FALSE(r.duration("duration", duration, {.min = 1s, .max = 1h}));
  EXPECT_FALSE(r.size("empty", empty));
  r.finish();
  EXPECT_EQ(xfersize, 4096u);
  EXPECT_EQ(warmup, 1s);
  const auto lines = t.lines();
  ASSERT_EQ(lines.size(), 5u) << t.diags.to_string();
  // The reason after the colon comes from core/units.hpp; pin what this component adds.
  EXPECT_EQ(lines[0].rfind("t.yaml:4:17: tests[1].io.xfersize: '4q' is not a size: unknown size unit 'q'", 0), 0u)
      << lines[0];
  EXPECT_EQ(lines[1].rfind("t.yaml:5:15: tests[1].io.warmup: '10q' is not a duration: unknown duration unit 'q'", 0),
            0u)
      << lines[1];
  EXPECT_EQ(lines[2], "t.yaml:6:14: tests[1].io.block: block must be at least 512 B, found 256 B");
  EXPECT_EQ(lines[3], "t.yaml:7:17: tests[1].io.duration: duration must be between 1s and 1h, found 2h");
  EXPECT_EQ(lines[4], "t.yaml:8:14: tests[1].io.empty: expected a size (e.g. 4k, 2GiB), found an empty value");
}

TEST(MapReader, PercentForms) {
  Loaded t("a: 120\nb: '101%'\nc: lots\nd: 0\ne: 100%\n");
  MapReader r(t.root());
  double a = 1, b = 1, c = 1, d = 1, e = 1;
  EXPECT_FALSE(r.percent("a", a));
  EXPECT_FALSE(r.percent("b", b));
  EXPECT_FALSE(r.percent("c", c));
  EXPECT_TRUE(r.percent("d", d));
  EXPECT_TRUE(r.percent("e", e));
  EXPECT_DOUBLE_EQ(d, 0.0);
  EXPECT_DOUBLE_EQ(e, 100.0);
  EXPECT_EQ(t.lines(), (Lines{
                           "t.yaml:1:4: a: a must be between 0 and 100, found 120",
                           "t.yaml:2:4: b: b must be between 0 and 100, found 101%",
                           "t.yaml:3:4: c: expected a percentage (0-100, e.g. 45 or 45%), found 'lots'",
                       }));
}

TEST(MapReader, ChoiceListsTheValidWords) {
  Loaded t("rw: randrw\nmode: {a: 1}\n");
  MapReader r(t.root());
  Rw rw = Rw::randread, mode = Rw::randread;
  EXPECT_FALSE(r.choice("rw", rw, {{"randread", Rw::randread}, {"randwrite", Rw::randwrite}}));
  EXPECT_FALSE(r.choice("mode", mode, {{"randread", Rw::randread}, {"randwrite", Rw::randwrite}}));
  EXPECT_EQ(rw, Rw::randread);
  EXPECT_EQ(t.lines(), (Lines{
                           "t.yaml:1:5: rw: rw must be one of: randread, randwrite; found 'randrw'",
                           "t.yaml:2:7: mode: expected a word (one of: randread, randwrite), found a mapping",
                       }));
}

TEST(MapReader, StringAndStringListTypeErrors) {
  Loaded t("name: [a, b]\ndevices: [sda, {x: 1}, sdb]\nnone:\nother: {a: b}\n");
  MapReader r(t.root());
  std::string name = "default";
  std::vector<std::string> devices{"keep"}, none{"x"}, other{"keep"};
  EXPECT_FALSE(r.string("name", name));
  EXPECT_FALSE(r.string_list("devices", devices));
  EXPECT_TRUE(r.string_list("none", none));
  EXPECT_FALSE(r.string_list("other", other));
  EXPECT_EQ(name, "default");
  EXPECT_EQ(devices, (std::vector<std::string>{"keep"}));
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(t.lines(), (Lines{
                           "t.yaml:1:7: name: expected a string, found a sequence",
                           "t.yaml:2:16: devices[1]: expected a string, found a mapping",
                           "t.yaml:4:8: other: expected a list of strings, found a mapping",
                       }));
}

TEST(MapReader, EmptyValueOfAScalarKeyIsReported) {
  Loaded t("xfersize:\nname: ~\n");
  MapReader r(t.root());
  std::uint64_t xfersize = 4096;
  std::string name = "n";
  EXPECT_FALSE(r.size("xfersize", xfersize));
  EXPECT_FALSE(r.string("name", name));
  EXPECT_EQ(xfersize, 4096u);
  // Reported at the key: yaml-cpp would place an empty value at the next line's first token.
  EXPECT_EQ(t.lines(), (Lines{
                           "t.yaml:1:1: xfersize: expected a size, found an empty value",
                           "t.yaml:2:1: name: expected a string, found an empty value",
                       }));
}

TEST(MapReader, MissingRequiredKeyIsReportedAtTheMapping) {
  Loaded t("protocol: p\ntests:\n  - name: a\n    io: {}\n");
  const Node root = t.root();
  {
    MapReader r(root);
    std::string kind;
    r.accept("protocol");
    r.accept("tests");
    EXPECT_FALSE(r.string("kind", kind, /*required=*/true));
  }
  const Node test = root.child("tests").elements().at(0);
  {
    MapReader r(test);
    std::string kind;
    r.accept("name");
    EXPECT_FALSE(r.string("kind", kind, true));
    // A required section that is absent, and a required key inside it.
    const Node missing = r.section("target", true);
    EXPECT_FALSE(missing.defined());
    MapReader inner(missing);
    std::uint64_t size = 0;
    EXPECT_FALSE(inner.size("size", size, {}, true));
    inner.finish();
    r.accept("io");
  }
  EXPECT_EQ(t.lines(), (Lines{
                           "t.yaml:1:1: missing required key 'kind'",
                           "t.yaml:3:5: tests[0]: missing required key 'kind'",
                           "t.yaml:3:5: tests[0]: missing required key 'target'",
                           "t.yaml:3:5: tests[0].target: missing required key 'size'",
                       }));
}

TEST(MapReader, NullOrUndefinedSectionIsAnEmptyMapping) {
  Loaded t("io:\nfs: ~\n");
  const Node root = t.root();
  for (const char* key : {"io", "fs", "absent"}) {
    MapReader r(root.child(key));
    int iodepth = 4;
    EXPECT_FALSE(r.integer("iodepth", iodepth));
    EXPECT_EQ(iodepth, 4);
    r.finish();
  }
  {
    MapReader r(Node(YAML::Node(YAML::NodeType::Undefined), "x", "t.yaml", &t.diags));
    std::string s;
    EXPECT_FALSE(r.string("s", s));
  }
  EXPECT_TRUE(t.diags.empty()) << t.diags.to_string();
}

TEST(MapReader, NotAMappingIsReportedOnce) {
  Loaded t("io: [1, 2]\nfs: ext4\n");
  const Node root = t.root();
  {
    MapReader r(root.child("io"));
    int iodepth = 4;
    std::string kind;
    EXPECT_FALSE(r.integer("iodepth", iodepth));
    EXPECT_FALSE(r.string("kind", kind, /*required=*/true));
    EXPECT_FALSE(r.section("inner").defined());
    r.finish();
  }
  {
    MapReader r(root.child("fs"));
  }
  EXPECT_EQ(t.lines(), (Lines{
                           "t.yaml:1:5: io: expected a mapping, found a sequence",
                           "t.yaml:2:5: fs: expected a mapping, found 'ext4'",
                       }));
}

TEST(MapReader, ValuesInMessagesAreEscapedUnlessPrintableOrUtf8) {
  // A file of random bytes must not put raw binary on the terminal; names in any script stay.
  Loaded t(
      "a: \"x\\x01\\tz\"\n"
      "b: ab\xff\xfe"
      "cd\n"
      "c: caf\xc3\xa9\n"
      "d: \"\\u202ekey\\u009b31m\"\n");
  const Node root = t.root();
  {
    MapReader r(root.child("a"));
  }
  {
    MapReader r(root.child("b"));
  }
  {
    MapReader r(root.child("c"));
  }
  {
    MapReader r(root.child("d"));
  }
  EXPECT_EQ(t.lines(), (Lines{
                           "t.yaml:1:4: a: expected a mapping, found 'x\\x01\\x09z'",
                           "t.yaml:2:4: b: expected a mapping, found 'ab\\xff\\xfecd'",
                           "t.yaml:3:4: c: expected a mapping, found 'caf\xc3\xa9'",
                           "t.yaml:4:4: d: expected a mapping, found '\\u202ekey\\u009b31m'",
                       }));
}

TEST(MapReader, SequenceSection) {
  Loaded t("tests:\n  - a: 1\n  - a: 2\nnone:\nbad: {a: 1}\n");
  MapReader r(t.root());
  const auto tests = r.sequence("tests", true);
  ASSERT_EQ(tests.size(), 2u);
  EXPECT_EQ(tests[1].path(), "tests[1]");
  EXPECT_TRUE(r.sequence("none").empty());
  EXPECT_TRUE(r.sequence("bad").empty());
  EXPECT_TRUE(r.sequence("absent").empty());
  EXPECT_TRUE(r.sequence("needed", true).empty());
  r.finish();
  EXPECT_EQ(t.lines(), (Lines{
                           "t.yaml:5:6: bad: expected a sequence, found a mapping",
                           "t.yaml:1:1: missing required key 'needed'",
                       }));
}

TEST(MapReader, UnknownKeySuggestsTheClosestKnownKey) {
  Loaded t(
      "io:\n"
      "  xfersiz: 4k\n"   // deletion
      "  iodetph: 2\n"    // transposition
      "  RW: randread\n"  // case
      "  xfer: 8k\n"      // prefix
      "  colour: blue\n"  // nothing close: list the keys
      "  bs: 4k\n"        // 2 edits from 'rw' but only 2 letters long: no suggestion
      "  rw: randread\n");
  {
    MapReader r(t.root().child("io"));
    std::uint64_t xfersize = 0;
    int iodepth = 0;
    std::string rw;
    r.size("xfersize", xfersize);
    r.integer("iodepth", iodepth);
    r.string("rw", rw);
    r.finish();
  }
  EXPECT_EQ(t.lines(), (Lines{
                           "t.yaml:2:3: io.xfersiz: unknown key 'xfersiz' (did you mean 'xfersize'?)",
                           "t.yaml:3:3: io.iodetph: unknown key 'iodetph' (did you mean 'iodepth'?)",
                           "t.yaml:4:3: io.RW: unknown key 'RW' (did you mean 'rw'?)",
                           "t.yaml:5:3: io.xfer: unknown key 'xfer' (did you mean 'xfersize'?)",
                           "t.yaml:6:3: io.colour: unknown key 'colour' (known keys: xfersize, iodepth, rw)",
                           "t.yaml:7:3: io.bs: unknown key 'bs' (known keys: xfersize, iodepth, rw)",
                       }));
}

TEST(MapReader, DestructorFinishesAndFinishIsIdempotent) {
  Loaded t("a: 1\nzz: 2\n");
  {
    MapReader r(t.root());
    std::int64_t a = 0;
    r.integer("a", a);
  }
  {
    MapReader r(t.root());
    r.accept("a");
    r.finish();
    r.finish();
  }
  EXPECT_EQ(t.lines(), (Lines{
                           "t.yaml:2:1: zz: unknown key 'zz' (known keys: a)",
                           "t.yaml:2:1: zz: unknown key 'zz' (known keys: a)",
                       }));
}

TEST(MapReader, KeyGivenTwiceIsAnError) {
  Loaded t("io:\n  rw: randread\n  iodepth: 4\n  rw: randwrite\n");
  MapReader r(t.root().child("io"));
  std::string rw;
  int iodepth = 0;
  r.string("rw", rw);
  r.integer("iodepth", iodepth);
  r.finish();
  EXPECT_EQ(t.lines(), (Lines{"t.yaml:4:3: io.rw: duplicate key 'rw' (first given at 2:3)"}));
}

TEST(MapReader, KeysMustBeScalars) {
  Loaded t("? [a, b]\n: 1\nx: 2\n");
  {
    MapReader r(t.root());
    std::int64_t x = 0;
    EXPECT_TRUE(r.integer("x", x));
    EXPECT_EQ(x, 2);
  }
  EXPECT_EQ(t.lines(), (Lines{"t.yaml:1:3: mapping keys must be plain words, found a sequence"}));
}

TEST(MapReader, EmptySectionReportsRequiredKeysAtItsKey) {
  Loaded t("name: x\nio:\n");
  {
    MapReader r(t.root().child("io"));
    int iodepth = 0;
    EXPECT_FALSE(r.integer("iodepth", iodepth, {}, /*required=*/true));
  }
  EXPECT_EQ(t.lines(), (Lines{"t.yaml:2:1: io: missing required key 'iodepth'"}));
}

// What a real decoder sees: nested sections, several mistakes, all reported in document order.
TEST(MapReader, SeveralErrorsInOneDocumentAreAllCollectedInOrder) {
  Loaded t(
      "protocol: quick\n"
      "tests:\n"
      "  - name: seq\n"
      "    io:\n"
      "      xfersize: 128k\n"
      "      iodepth: 32\n"
      "  - name: rand\n"
      "    io:\n"
      "      xfersize: 4q\n"
      "      iodepth: 0\n"
      "      rw: randrw\n"
      "      xfersiz: 8k\n"
      "  - io: oops\n");
  struct Job {
    std::uint64_t xfersize_bytes = 4096;
    int iodepth = 1;
    Rw rw = Rw::randread;
  };
  std::vector<Job> jobs;
  {
    MapReader r(t.root());
    std::string protocol;
    r.string("protocol", protocol, true);
    for (const Node& test : r.sequence("tests", true)) {
      MapReader tr(test);
      std::string name;
      tr.string("name", name, true);
      Job job;
      MapReader io(tr.section("io"));
      io.size("xfersize", job.xfersize_bytes, {.min = 512});
      io.integer("iodepth", job.iodepth, {.min = 1, .max = 65536});
      io.choice("rw", job.rw, {{"randread", Rw::randread}, {"randwrite", Rw::randwrite}});
      io.finish();
      tr.finish();
      jobs.push_back(job);
    }
    r.finish();
  }
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].xfersize_bytes, 128u * 1024);
  EXPECT_EQ(jobs[0].iodepth, 32);
  EXPECT_EQ(jobs[1].xfersize_bytes, 4096u);  // defaults kept for the bad values
  EXPECT_EQ(jobs[1].iodepth, 1);
  const auto lines = t.lines();
  ASSERT_EQ(lines.size(), 6u) << t.diags.to_string();
  EXPECT_EQ(lines[0].rfind("t.yaml:9:17: tests[1].io.xfersize: '4q' is not a size: unknown size unit 'q'", 0), 0u)
      << lines[0];
  EXPECT_EQ(lines[1], "t.yaml:10:16: tests[1].io.iodepth: iodepth must be between 1 and 65536, found 0");
  EXPECT_EQ(lines[2], "t.yaml:11:11: tests[1].io.rw: rw must be one of: randread, randwrite; found 'randrw'");
  EXPECT_EQ(lines[3], "t.yaml:12:7: tests[1].io.xfersiz: unknown key 'xfersiz' (did you mean 'xfersize'?)");
  EXPECT_EQ(lines[4], "t.yaml:13:5: tests[2]: missing required key 'name'");
  EXPECT_EQ(lines[5], "t.yaml:13:9: tests[2].io: expected a mapping, found 'oops'");
}

}  // namespace
}  // namespace drivelab::config
