// The trace files of kind `replay` and `drivelab trace stat` through the real binary (docs/vdi.md
// "Trace paths"): `validate` and `run` report a missing trace at file:line:column before any work,
// a relative trace path resolves against the protocol file's directory whatever the working
// directory, and `trace stat` refuses a device or a directory instead of reading forever.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "process.hpp"

namespace {

namespace fs = std::filesystem;
using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;

// 20 UMass requests (16 reads, 4 writes of 8 KiB) over 19 ms on 2 devices.
std::string umass_trace() {
  std::string t;
  for (int i = 0; i < 20; ++i)
    t += std::to_string(i * 1000) + " " + std::to_string(i % 2) + " " + std::to_string(i * 16) + " 16 " +
         (i % 5 == 4 ? "0" : "1") + "\n";
  return t;
}

/// Writes a protocol with one `replay` test naming `trace` (as written) on line 9.
fs::path write_protocol(const fs::path& file, const std::string& trace) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << "protocol: replay-paths\n"
                         "seed: 1\n"
                         "tests:\n"
                         "  - name: r\n"
                         "    kind: replay\n"
                         "    warmup: 0s\n"
                         "    duration: 30s\n"
                         "    replay:\n"
                         "      trace: '"
                      << trace << "'\n      engine: null\n";
  return file;
}

struct Layout {
  ScratchDir dir{"vdi-trace-paths"};
  fs::path proto_dir = dir.path() / "proto";
  fs::path elsewhere = dir.path() / "elsewhere";  // the working directory of every run
  fs::path target = dir.path() / "target";
  fs::path out = dir.path() / "out";
  fs::path logs = dir.path() / "logs";
  Layout() {
    fs::create_directories(proto_dir / "traces");
    fs::create_directories(elsewhere);
    fs::create_directories(target);
    fs::create_directories(logs);
    std::ofstream(proto_dir / "traces/t.trace") << umass_trace();
  }
  drivelab::testing::Result drivelab(std::vector<std::string> args) const {
    args.insert(args.begin(), DRIVELAB_EXE);
    return drivelab::testing::run(std::move(args), logs, std::chrono::seconds(120), elsewhere);
  }
  drivelab::testing::Result run(const fs::path& protocol) const {
    return drivelab({"run", protocol.string(), "--target", target.string(), "--out", out.string()});
  }
};

TEST(VdiTracePaths, ValidateAndRunReportAMissingTraceBeforeAnyWork) {
  Layout l;
  const fs::path p = write_protocol(l.proto_dir / "p.yaml", "traces/missing.trace");
  const std::string problem =
      "tests[0].replay.trace: trace file 'traces/missing.trace' (resolved to " +
      (l.proto_dir / "traces/missing.trace").string() +
      ") does not exist (a relative trace path is resolved against the protocol file's directory)\n";
  const auto v = l.drivelab({"validate", p.string()});
  EXPECT_EQ(v.status, 2) << v.out << v.err;
  // file:line:column (line 9, the column of the value), the key path, both paths; then the count.
  EXPECT_EQ(v.err.rfind(p.string() + ":9:", 0), 0u) << v.err;
  EXPECT_NE(v.err.find(": " + problem + p.string() + ": 1 problem found\n"), std::string::npos) << v.err;
  const auto r = l.run(p);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(r.err, v.err) << "run reports what validate reports";
  EXPECT_FALSE(fs::exists(l.out)) << "no record: the run did not start";
  EXPECT_TRUE(fs::is_empty(l.target));
}

// The same protocol runs from a working directory other than its own, with a relative and with
// an absolute trace path; the record keeps the path as written and as resolved.
TEST(VdiTracePaths, RelativeAndAbsoluteTracesRunFromAnotherDirectory) {
  Layout l;
  const fs::path trace = l.proto_dir / "traces/t.trace";
  for (const std::string& written : {trace.string(), std::string("traces/t.trace")}) {
    SCOPED_TRACE(written);
    const fs::path p = write_protocol(l.proto_dir / "p.yaml", written);
    const auto v = l.drivelab({"validate", p.string()});
    EXPECT_EQ(v.status, 0) << v.out << v.err;
    fs::remove_all(l.out);
    const auto r = l.run(p);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const nlohmann::json rec = nlohmann::json::parse(read_file(l.out / "latest.json"));
    const auto& t = rec["tests"][0];
    EXPECT_EQ(t["status"], "complete") << t["reason"];
    EXPECT_EQ(t["config"]["trace"], written);
    EXPECT_EQ(t["config"]["trace_resolved"], trace.string());
    EXPECT_EQ(t["details"]["trace"]["ios"], 20);
    EXPECT_EQ(t["details"]["trace"]["reads"], 16);
    for (const auto& c : t["checks"]) EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();
  }
  // The relative trace through a relative protocol path too: "../proto/p.yaml" from `elsewhere`.
  fs::remove_all(l.out);
  const auto r = l.drivelab({"run", "../proto/p.yaml", "--target", l.target.string(), "--out", l.out.string()});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST(VdiTracePaths, TraceStatRefusesDevicesAndDirectories) {
  Layout l;
  // /dev/zero had been detected as a binary trace and read without end.
  const auto zero = l.drivelab({"trace", "stat", "/dev/zero"});
  EXPECT_EQ(zero.status, 2) << zero.out << zero.err;
  EXPECT_EQ(zero.err,
            "drivelab: trace /dev/zero is a character device, not a trace file (give a regular file, or a pipe)\n");
  const auto dir = l.drivelab({"trace", "stat", l.proto_dir.string()});
  EXPECT_EQ(dir.status, 2) << dir.out << dir.err;
  EXPECT_NE(dir.err.find("directory"), std::string::npos) << dir.err;
  const auto convert =
      l.drivelab({"trace", "convert", "/dev/zero", (l.dir.path() / "z.bin").string(), "--to", "native"});
  EXPECT_EQ(convert.status, 2) << convert.out << convert.err;
  // A regular file still works (the count of the 20-request trace).
  const auto ok = l.drivelab({"trace", "stat", (l.proto_dir / "traces/t.trace").string(), "--json"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["ios"], 20);
}

/// `trace convert` over an existing OUT: a trace that turns out bad halfway (a garbage line after
/// good ones) fails with file:line and leaves OUT as the last good conversion wrote it, with no
/// partial file beside it.
TEST(TracePaths, AFailedConvertLeavesTheOutputAsItWas) {
  Layout l;
  const fs::path good = l.proto_dir / "traces/t.trace";
  const fs::path bad = l.dir.path() / "bad.trace";
  std::ofstream(bad) << umass_trace() << "20000 1 320 sixteen 1\n" << umass_trace();
  const fs::path out = l.dir.path() / "converted" / "t.iolog";
  fs::create_directories(out.parent_path());
  const auto first = l.drivelab({"trace", "convert", good.string(), out.string(), "--to", "fio-iolog-v3"});
  ASSERT_EQ(first.status, 0) << first.out << first.err;
  const std::string converted = read_file(out);
  ASSERT_FALSE(converted.empty());
  const auto second = l.drivelab({"trace", "convert", bad.string(), out.string(), "--to", "fio-iolog-v3"});
  EXPECT_EQ(second.status, 2) << second.out << second.err;
  EXPECT_NE(second.err.find("bad.trace:21"), std::string::npos) << second.err;
  EXPECT_EQ(read_file(out), converted);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(out.parent_path())) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"t.iolog"});
  // A symbolic link as OUT (as /dev/stdout is one) is written through, never replaced by a file.
  const fs::path link = out.parent_path() / "link.iolog";
  fs::create_symlink("t.iolog", link);
  const auto through = l.drivelab({"trace", "convert", good.string(), link.string(), "--to", "native"});
  ASSERT_EQ(through.status, 0) << through.out << through.err;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_NE(read_file(out), converted) << "the link's target holds the native trace now";
}

}  // namespace
