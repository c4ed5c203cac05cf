// Diagnostics formatting, Document loading (files, syntax errors) and Node navigation.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/core/errors.hpp"
#include "temp_dir.hpp"  // tests/support

namespace drivelab::config {
namespace {

namespace fs = std::filesystem;

using drivelab::test_support::TempDir;

TEST(Diagnostic, ToStringHasFileLineColumnPathMessage) {
  EXPECT_EQ((Diagnostic{{"a.yaml", 3, 5}, "tests[1].io.xfersize", "bad"}.to_string()),
            "a.yaml:3:5: tests[1].io.xfersize: bad");
}

TEST(Diagnostic, ToStringOmitsUnknownPositionAndEmptyPath) {
  EXPECT_EQ((Diagnostic{{"a.yaml", 0, 0}, "seed", "bad"}.to_string()), "a.yaml: seed: bad");
  EXPECT_EQ((Diagnostic{{"a.yaml", 2, 1}, "", "bad"}.to_string()), "a.yaml:2:1: bad");
  EXPECT_EQ((Diagnostic{{"<--set>", 0, 0}, "", "bad"}.to_string()), "<--set>: bad");
}

TEST(Diagnostics, CollectsInOrderAndThrowsAllLines) {
  Diagnostics diags;
  EXPECT_NO_THROW(diags.throw_if_any());
  diags.error({"a.yaml", 1, 1}, "x", "first");
  diags.error({"a.yaml", 4, 3}, "y.z", "second");
  ASSERT_EQ(diags.size(), 2u);
  EXPECT_EQ(diags.items()[1].key_path, "y.z");
  EXPECT_EQ(diags.to_string(), "a.yaml:1:1: x: first\na.yaml:4:3: y.z: second");
  try {
    diags.throw_if_any();
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "a.yaml:1:1: x: first\na.yaml:4:3: y.z: second");
  }
}

TEST(Document, SyntaxErrorIsADiagnosticAtItsPosition) {
  Diagnostics diags;
  const Document doc = Document::load_string("protocol: quick\nio:\n  rw: randread: x\n", "bad.yaml", diags);
  EXPECT_FALSE(doc.loaded());
  EXPECT_FALSE(doc.root(diags).defined());
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags.items()[0].where.file, "bad.yaml");
  // yaml-cpp's 0-based mark (2, 14) points at the second ':'; we report it 1-based.
  EXPECT_EQ(diags.items()[0].where.line, 3);
  EXPECT_EQ(diags.items()[0].where.column, 15);
  EXPECT_EQ(diags.items()[0].to_string(), "bad.yaml:3:15: YAML syntax error: illegal map value");
}

// An empty item (`-` alone) is reported at its dash, not at the next token yaml-cpp marks (the next
// item's line); an item with a value keeps the value's place.
TEST(Document, AnEmptySequenceItemIsReportedAtItsDash) {
  Diagnostics diags;
  const Document doc = Document::load_string("tests:\n  - name: a\n  -\n  - 5\n  -\n", "t.yaml", diags);
  ASSERT_TRUE(doc.loaded()) << diags.to_string();
  const std::vector<Node> items = doc.root(diags).child("tests").elements();
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[1].location().line, 3);
  EXPECT_EQ(items[1].location().column, 3);
  EXPECT_EQ(items[2].location().line, 4);
  EXPECT_EQ(items[2].location().column, 5);
  EXPECT_EQ(items[3].location().line, 5) << "the last item, at the end of the text";
  EXPECT_EQ(items[3].location().column, 3);
}

// A result journal given as a protocol (JSON lines: many YAML documents) says what it is.
TEST(Document, AResultJournalIsNamedAsOne) {
  Diagnostics diags;
  (void)Document::load_string("{\"event\":\"run_start\",\"run_id\":\"r\"}\n{\"event\":\"test_start\"}\n",
                              "r.journal.jsonl", diags);
  EXPECT_EQ(diags.to_string(),
            "r.journal.jsonl:1:1: this is a drivelab result journal (one JSON event a line), not a protocol: drivelab "
            "results recover r.journal.jsonl rebuilds its record");
}

// YAML forbids tabs in indentation and yaml-cpp's message never says so: the error names the line
// with the tab; a tab inside a value is no syntax error and is not mentioned.
TEST(Document, ASyntaxErrorOnATabIndentedLineNamesTheTab) {
  Diagnostics diags;
  (void)Document::load_string("protocol: p\ntests:\n  - name: a\n    kind: io\n    io:\n\tengine: psync\n", "t.yaml",
                              diags);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags.to_string().find("YAML syntax error: "), std::string::npos) << diags.to_string();
  EXPECT_NE(diags.to_string().find("; line 6 is indented with a tab (YAML indents with spaces only)"),
            std::string::npos)
      << diags.to_string();
  Diagnostics fine;
  EXPECT_TRUE(Document::load_string("protocol: p\ndescription: \"a\tb\"\n", "t.yaml", fine).loaded());
  Diagnostics other;
  (void)Document::load_string("protocol: quick\nio:\n  rw: randread: x\n", "bad.yaml", other);
  EXPECT_EQ(other.to_string().find("tab"), std::string::npos) << other.to_string();
}

// A block line that lines up with no open mapping or sequence: yaml-cpp says "end of sequence not
// found"; the error adds which line is off and the indentations before it. A line deeper than its
// "key:" is no such mistake, and a syntax error elsewhere gets no hint.
TEST(Document, ASyntaxErrorOnAMisIndentedLineNamesTheIndentation) {
  Diagnostics diags;
  (void)Document::load_string("protocol: p\ntests:\n  - name: a\n    kind: io\n   duration: 5s\n", "i.yaml", diags);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags.to_string().find("i.yaml:5:4: YAML syntax error: "), std::string::npos) << diags.to_string();
  EXPECT_NE(diags.to_string().find("; line 5 is indented 3 spaces, unlike the lines before it (0, 2 or 4): YAML "
                                   "nests by indentation"),
            std::string::npos)
      << diags.to_string();
  Diagnostics key;  // a key one space left of its siblings, inside a nested mapping
  (void)Document::load_string("protocol: p\ntests:\n  - name: a\n    io:\n      engine: psync\n     rw: read\n",
                              "k.yaml", key);
  EXPECT_NE(key.to_string().find("; line 6 is indented 5 spaces, unlike the lines before it (0, 2, 4 or 6)"),
            std::string::npos)
      << key.to_string();
  Diagnostics fine;
  EXPECT_TRUE(
      Document::load_string("protocol: p\ntests:\n- name: a\n  io:\n        engine: psync\n", "t.yaml", fine).loaded())
      << fine.to_string();
  Diagnostics other;
  (void)Document::load_string("protocol: quick\nio:\n  rw: randread: x\n", "bad.yaml", other);
  EXPECT_EQ(other.to_string().find("indented"), std::string::npos) << other.to_string();
}

/// A list longer than any protocol key takes is refused before yaml-cpp builds its tree (which
/// takes some 300 bytes a node: 8 million curve points were gigabytes), at the list's place and key.
TEST(Document, AnAbsurdlyLongListIsRefusedAtItsKeyBeforeTheTreeIsBuilt) {
  std::string text = "protocol: big\ntests:\n  - name: a\n    kind: vdbench\n    vdbench:\n      curve: [";
  for (int i = 0; i < 100'001; ++i) text += i == 0 ? "1" : ",1";
  text += "]\n";
  Diagnostics diags;
  const Document doc = Document::load_string(text, "big.yaml", diags);
  EXPECT_FALSE(doc.loaded());
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(
      diags.items()[0].to_string(),
      "big.yaml:6:14: tests[0].vdbench.curve: a list of more than 100000 elements; no protocol key takes that many");

  // 100,000 elements are still read (the bound is on absurd sizes; the key's own range says more).
  std::string fits = "curve: [";
  for (int i = 0; i < 100'000; ++i) fits += i == 0 ? "1" : ",1";
  fits += "]\n";
  Diagnostics ok;
  EXPECT_TRUE(Document::load_string(fits, "fits.yaml", ok).loaded());
  EXPECT_TRUE(ok.empty()) << ok.to_string();
}

/// So is a document of more nodes than a protocol holds, wherever they are.
TEST(Document, AnAbsurdNumberOfNodesIsRefusedBeforeTheTreeIsBuilt) {
  std::string text = "settings:\n";
  for (int i = 0; i < 510'000; ++i) text += "  k" + std::to_string(i) + ": 1\n";  // 1,020,001 nodes
  Diagnostics diags;
  const Document doc = Document::load_string(text, "many.yaml", diags);
  EXPECT_FALSE(doc.loaded());
  ASSERT_EQ(diags.size(), 1u);
  // The 1,000,001st node is the value of k499998 on line 500,000 (the root, the key settings and
  // its map are 3 nodes, then 2 per entry).
  EXPECT_EQ(diags.items()[0].to_string(),
            "many.yaml:500000:12: settings.k499998: more than 1000000 YAML nodes in one protocol; a protocol holds a "
            "few hundred");
}

TEST(Document, BadIndentationIsReportedWithItsLine) {
  Diagnostics diags;
  const Document doc = Document::load_string("io:\n  xfersize: 4k\n iodepth: 2\n", "indent.yaml", diags);
  EXPECT_FALSE(doc.loaded());
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags.items()[0].where.line, 3);
  EXPECT_EQ(diags.items()[0].message.rfind("YAML syntax error: ", 0), 0u) << diags.to_string();
}

TEST(Document, SeveralDocumentsInOneStreamAreAnError) {
  Diagnostics diags;
  const Document doc = Document::load_string("a: 1\n---\nb: 2\n", "two.yaml", diags);
  EXPECT_FALSE(doc.loaded());
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags.items()[0].to_string(),
            "two.yaml:3:1: expected one YAML document, found 2 (remove the '---' separators)");
}

TEST(Document, ATokenNoRuleConsumesIsASyntaxError) {
  // yaml-cpp 0.7's LoadAll never returns on these (jbeder/yaml-cpp#1040), and its Load reads
  // past the ',' as if it were not there; 0.8 rejects them. A file of random bytes starting
  // with ',' is one of them.
  for (const std::string& text : {std::string(","), std::string(",protocol: x\ntests: []\nfoo: 1\n"),
                                  std::string(",\xdd\xe9N\xad\x96\x82p\x82\xf0"
                                              "b\xc8\x1eUx{\n\x92\xd4")}) {
    Diagnostics diags;
    const Document doc = Document::load_string(text, "comma.yaml", diags);
    EXPECT_FALSE(doc.loaded());
    EXPECT_EQ(diags.to_string(), "comma.yaml:1:1: YAML syntax error: unexpected ','");
  }
  Diagnostics diags;
  const Document doc = Document::load_string("a: 1\n---\n---\nb: 2\n", "gap.yaml", diags);
  EXPECT_FALSE(doc.loaded());  // an empty document between others is still counted
  EXPECT_EQ(diags.to_string(), "gap.yaml:2:1: expected one YAML document, found 3 (remove the '---' separators)");
}

TEST(Document, DevicesAndHugeFilesAreRefusedWithoutReadingThemWhole) {
  Diagnostics diags;
  const Document zero = Document::load_file("/dev/zero", diags);  // it never ends
  EXPECT_FALSE(zero.loaded());
  EXPECT_EQ(diags.to_string(), "/dev/zero: cannot read file: it is a device or socket, not a protocol file");
  TempDir dir;
  const fs::path big = dir.path() / "big.yaml";
  {
    std::ofstream out(big, std::ios::binary);
    const std::string line(1023, '#');
    for (int i = 0; i < 17 * 1024; ++i) out << line << '\n';  // 17 MiB of comments
  }
  Diagnostics big_diags;
  EXPECT_FALSE(Document::load_file(big, big_diags).loaded());
  EXPECT_EQ(big_diags.to_string(),
            big.string() + ": cannot read file: larger than 16 MiB; a protocol file is a few KiB");
}

TEST(Document, EmptyTextIsAnEmptyDocument) {
  Diagnostics diags;
  const Document doc = Document::load_string("", "empty.yaml", diags);
  EXPECT_TRUE(doc.loaded());
  EXPECT_TRUE(diags.empty());
  const Node root = doc.root(diags);
  EXPECT_TRUE(root.is_null());
  {
    MapReader r(root);
    std::string kind;
    EXPECT_FALSE(r.string("kind", kind, /*required=*/true));
  }
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags.items()[0].to_string(), "empty.yaml: missing required key 'kind'");
}

TEST(Document, MissingFileIsADiagnosticNotAnException) {
  TempDir dir;
  const fs::path missing = dir.path() / "nope.yaml";
  Diagnostics diags;
  Document doc;
  EXPECT_NO_THROW(doc = Document::load_file(missing, diags));
  EXPECT_FALSE(doc.loaded());
  EXPECT_EQ(doc.name(), missing.string());
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags.items()[0].to_string(), missing.string() + ": cannot read file: No such file or directory");
}

TEST(Document, DirectoryIsNotAFile) {
  TempDir dir;
  Diagnostics diags;
  const Document doc = Document::load_file(dir.path(), diags);
  EXPECT_FALSE(doc.loaded());
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags.items()[0].to_string(), dir.path().string() + ": cannot read file: it is a directory");
}

TEST(Document, LoadFileReportsPositionsAgainstThePath) {
  TempDir dir;
  const fs::path file = dir.write("quick.yaml", "protocol: quick\ntests:\n  - io:\n      iodepth: deep\n");
  Diagnostics diags;
  const Document doc = Document::load_file(file, diags);
  ASSERT_TRUE(doc.loaded()) << diags.to_string();
  const Node io = doc.root(diags).child("tests").elements().at(0).child("io");
  MapReader r(io);
  int iodepth = 1;
  EXPECT_FALSE(r.integer("iodepth", iodepth));
  EXPECT_EQ(iodepth, 1);  // the default survives a bad value
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags.items()[0].to_string(),
            file.string() + ":4:16: tests[0].io.iodepth: expected an integer, found 'deep'");
}

TEST(Document, SyntaxErrorInAFileNamesTheFile) {
  TempDir dir;
  const fs::path file = dir.write("broken.yaml", "tests:\n  - name: x\n    io: {xfersize: 4k\n");
  Diagnostics diags;
  const Document doc = Document::load_file(file, diags);
  EXPECT_FALSE(doc.loaded());
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags.items()[0].to_string(), file.string() + ":4:1: YAML syntax error: end of map flow not found");
}

TEST(Node, PathsAndOneBasedLocations) {
  Diagnostics diags;
  const Document doc =
      Document::load_string("tests:\n  - name: a\n  - name: b\n    io:\n      rw: read\n", "t.yaml", diags);
  const Node root = doc.root(diags);
  EXPECT_TRUE(root.is_map());
  const Node tests = root.child("tests");
  EXPECT_EQ(tests.path(), "tests");
  EXPECT_TRUE(tests.is_sequence());
  const auto elements = tests.elements();
  ASSERT_EQ(elements.size(), 2u);
  EXPECT_EQ(elements[1].path(), "tests[1]");
  EXPECT_EQ(elements[1].location().line, 3);
  EXPECT_EQ(elements[1].location().column, 5);
  const Node rw = elements[1].child("io").child("rw");
  EXPECT_EQ(rw.path(), "tests[1].io.rw");
  EXPECT_EQ(rw.scalar(), "read");
  EXPECT_EQ(rw.location().line, 5);
  EXPECT_EQ(rw.location().column, 11);
  EXPECT_EQ(rw.location().file, "t.yaml");
}

TEST(Node, MissingChildIsUndefinedAndReportsAtItsParent) {
  Diagnostics diags;
  const Document doc = Document::load_string("top:\n  inner:\n    a: 1\n", "t.yaml", diags);
  const Node inner = doc.root(diags).child("top").child("inner");
  const Node missing = inner.child("b");
  EXPECT_FALSE(missing.defined());
  EXPECT_FALSE(missing.is_map());
  EXPECT_FALSE(missing.is_null());
  EXPECT_EQ(missing.scalar(), "");
  EXPECT_EQ(missing.path(), "top.inner.b");
  EXPECT_TRUE(missing.elements().empty());
  EXPECT_TRUE(missing.entries().empty());
  missing.error("needed here");
  // Grandchildren of a missing node still point at the nearest mapping that exists.
  missing.child("c").error("deeper");
  inner.child("a").child("x").error("through a scalar");
  ASSERT_EQ(diags.size(), 3u);
  EXPECT_EQ(diags.items()[0].to_string(), "t.yaml:3:5: top.inner.b: needed here");
  EXPECT_EQ(diags.items()[1].to_string(), "t.yaml:3:5: top.inner.b.c: deeper");
  EXPECT_EQ(diags.items()[2].to_string(), "t.yaml:3:8: top.inner.a.x: through a scalar");
}

TEST(Node, EntriesKeepDocumentOrder) {
  Diagnostics diags;
  const Document doc = Document::load_string("z: 1\na: 2\nm: {k: v}\n", "t.yaml", diags);
  const auto entries = doc.root(diags).entries();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].first, "z");
  EXPECT_EQ(entries[1].first, "a");
  EXPECT_EQ(entries[2].first, "m");
  EXPECT_EQ(entries[2].second.path(), "m");
  EXPECT_TRUE(entries[2].second.is_map());
  EXPECT_EQ(entries[1].second.scalar(), "2");
}

}  // namespace
}  // namespace drivelab::config
