// Decoding of the `replay:` and `vdi:` sections on real files in temp dirs: `engine: null`, the
// trace path rule (relative to the protocol file's directory; --set values to the working
// directory) and the checks of the trace file that `drivelab validate` reports (docs/vdi.md
// "Trace paths").
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "drivelab/config/document.hpp"
#include "drivelab/vdi/register.hpp"
#include "drivelab/vdi/replay_config.hpp"
#include "emulator_harness.hpp"
#include "temp_dir.hpp"

namespace drivelab::vdi {
namespace {

namespace fs = std::filesystem;
using test_support::TempDir;

constexpr const char* kUmassTrace = "0 0 0 16 1\n1000 0 16 16 0\n";

/// A protocol file `file` holding `section_name: <section_yaml>` on its first line, decoded.
struct Decoded {
  config::Diagnostics diags;
  ReplayConfig replay;
  VdiConfig vdi;
};

void decode_file(Decoded& d, const fs::path& file, const std::string& section_name, const std::string& section_yaml,
                 const std::string& override = {}) {
  {
    std::ofstream(file) << section_name << ": " << section_yaml << "\n";
  }
  config::Document doc = config::Document::load_file(file, d.diags);
  if (!override.empty()) doc.apply_override(override, d.diags);
  const config::Node section = doc.root(d.diags).child(section_name);
  if (section_name == "replay")
    d.replay = decode_replay(section);
  else
    d.vdi = decode_vdi(section);
}

/// The one diagnostic of decoding `replay: {trace: '<trace>'...}` from `file`.
std::string replay_error(const fs::path& file, const std::string& section_yaml) {
  Decoded d;
  decode_file(d, file, "replay", section_yaml);
  EXPECT_EQ(d.diags.size(), 1u) << d.diags.to_string();
  return d.diags.to_string();
}

// YAML reads an unquoted `null` as the null value: kinds io and vdbench take it as the null
// engine, and so do replay and vdi (it had been "expected a string, found an empty value").
TEST(ReplayConfigDecode, YamlNullSelectsTheNullEngine) {
  TempDir dir;
  dir.write("t.trace", kUmassTrace);
  // `~` is refused (runner/engine_key.hpp): a null left out by mistake must not run the engine
  // that does no I/O.
  for (const std::string tilde_kind : {"vdi", "replay"}) {
    Decoded t;
    decode_file(t, dir / (tilde_kind + ".yaml"), tilde_kind,
                tilde_kind == "vdi" ? "{engine: ~}" : "{trace: t.trace, engine: ~}");
    EXPECT_NE(t.diags.to_string().find("engine has no value ('~' is YAML's null)"), std::string::npos)
        << t.diags.to_string();
  }
  for (const std::string engine : {"null", "'null'"}) {
    Decoded v;
    decode_file(v, dir / "vdi.yaml", "vdi", "{engine: " + engine + "}");
    EXPECT_TRUE(v.diags.empty()) << engine << ": " << v.diags.to_string();
    EXPECT_EQ(v.vdi.replay.engine, "null") << engine;
    Decoded r;
    decode_file(r, dir / "replay.yaml", "replay", "{trace: t.trace, engine: " + engine + "}");
    EXPECT_TRUE(r.diags.empty()) << engine << ": " << r.diags.to_string();
    EXPECT_EQ(r.replay.replay.engine, "null") << engine;
  }
  Decoded bad;
  decode_file(bad, dir / "vdi.yaml", "vdi", "{engine: nul}");
  EXPECT_EQ(bad.diags.to_string(),
            (dir / "vdi.yaml").string() +
                ":1:15: vdi.engine: engine must be one of: io_uring, libaio, psync, null; found 'nul'");
}

TEST(ReplayConfigDecode, RelativeTracePathResolvesAgainstTheProtocolFilesDirectory) {
  TempDir dir;
  fs::create_directories(dir / "proto/traces");
  dir.write("proto/traces/t.trace", kUmassTrace);
  Decoded d;
  decode_file(d, dir / "proto/p.yaml", "replay", "{trace: traces/t.trace}");
  EXPECT_TRUE(d.diags.empty()) << d.diags.to_string();
  EXPECT_EQ(d.replay.trace, "traces/t.trace");
  EXPECT_EQ(d.replay.trace_path, dir / "proto/traces/t.trace");
  EXPECT_EQ(d.replay.trace_format, trace::TraceFormat::automatic);
  EXPECT_EQ(to_json(d.replay).at("trace_resolved"), (dir / "proto/traces/t.trace").string());
  // `..` is allowed and normalised; an absolute path is used as written.
  Decoded up;
  decode_file(up, dir / "proto/traces/p.yaml", "replay", "{trace: ../traces/./t.trace, format: umass}");
  EXPECT_TRUE(up.diags.empty()) << up.diags.to_string();
  EXPECT_EQ(up.replay.trace_path, dir / "proto/traces/t.trace");
  Decoded abs;
  decode_file(abs, dir / "p.yaml", "replay", "{trace: '" + (dir / "proto/traces/t.trace").string() + "'}");
  EXPECT_TRUE(abs.diags.empty()) << abs.diags.to_string();
  EXPECT_EQ(abs.replay.trace_path, dir / "proto/traces/t.trace");
}

// A value typed on the command line is resolved against the working directory, as every other
// command-line path.
TEST(ReplayConfigDecode, SetOverrideResolvesAgainstTheWorkingDirectory) {
  TempDir dir;
  Decoded d;
  decode_file(d, dir / "p.yaml", "replay", "{format: umass}", "replay.trace=no-such-dir/t.trace");
  EXPECT_EQ(d.replay.trace_path, fs::current_path() / "no-such-dir/t.trace");
  EXPECT_EQ(d.diags.to_string(),
            "<--set>: replay.trace: trace file 'no-such-dir/t.trace' (resolved to " +
                (fs::current_path() / "no-such-dir/t.trace").string() +
                ") does not exist (a relative trace path is resolved against the working directory)");
}

TEST(ReplayConfigDecode, MissingTraceNamesFileLineKeyAndBothPaths) {
  TempDir dir;
  const fs::path p = dir / "p.yaml";
  EXPECT_EQ(replay_error(p, "{trace: traces/missing.trace}"),
            p.string() + ":1:17: replay.trace: trace file 'traces/missing.trace' (resolved to " +
                (dir / "traces/missing.trace").string() +
                ") does not exist (a relative trace path is resolved against the protocol file's directory)");
  EXPECT_EQ(replay_error(p, "{trace: '/nonexistent-drivelab/t.trace'}"),
            p.string() + ":1:17: replay.trace: trace file '/nonexistent-drivelab/t.trace' does not exist");
  EXPECT_EQ(replay_error(p, "{trace: ''}"),
            p.string() + ":1:17: replay.trace: expected the path of a trace file, found an empty string");
}

// The replay reads its trace twice (summary, then replay): a directory, a device and a pipe are
// refused at decode time, not when the run starts (/dev/zero had never ended).
TEST(ReplayConfigDecode, NonRegularTracesAreRefused) {
  TempDir dir;
  const fs::path p = dir / "p.yaml";
  fs::create_directories(dir / "traces");
  EXPECT_EQ(replay_error(p, "{trace: traces}"),
            p.string() + ":1:17: replay.trace: trace file 'traces' (resolved to " + (dir / "traces").string() +
                ") is a directory: a replay reads its trace twice (a summary pass, then the replay), so it must be a "
                "regular file");
  EXPECT_EQ(replay_error(p, "{trace: /dev/zero}"),
            p.string() +
                ":1:17: replay.trace: trace file '/dev/zero' is a character device: a replay reads its trace "
                "twice (a summary pass, then the replay), so it must be a regular file");
  ASSERT_EQ(::mkfifo((dir / "t.fifo").c_str(), 0600), 0) << std::strerror(errno);
  EXPECT_NE(replay_error(p, "{trace: t.fifo}").find(") is a pipe: a replay reads its trace twice"), std::string::npos);
}

TEST(ReplayConfigDecode, UnrecognisedOrMalformedTraceIsReportedAtTheKey) {
  TempDir dir;
  const fs::path p = dir / "p.yaml";
  dir.write("notes.txt", "these are notes, not a trace\n");
  EXPECT_EQ(replay_error(p, "{trace: notes.txt}"),
            p.string() + ":1:17: replay.trace: trace file 'notes.txt' (resolved to " + (dir / "notes.txt").string() +
                "): unrecognised trace format (give one with `format:`; the detection rules are in docs/vdi.md)");
  dir.write("t.trace", kUmassTrace);
  const std::string err = replay_error(p, "{trace: t.trace, format: native}");
  EXPECT_EQ(err.rfind(p.string() + ":1:17: replay.trace: trace file 't.trace' (resolved to " +
                          (dir / "t.trace").string() + ") is not a valid native trace: ",
                      0),
            0u)
      << err;
  // A bad `format:` is reported once, at `format`; the file is not checked against it.
  const std::string bad_format = replay_error(p, "{trace: t.trace, format: umas}");
  EXPECT_NE(bad_format.find("replay.format: "), std::string::npos) << bad_format;
}

TEST(ReplayConfigDecode, UnreadableTraceIsReported) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a file whatever its mode";
  TempDir dir;
  const fs::path t = dir.write("t.trace", kUmassTrace);
  fs::permissions(t, fs::perms::none);
  const std::string err = replay_error(dir / "p.yaml", "{trace: t.trace}");
  EXPECT_NE(err.find("replay.trace: trace file 't.trace' (resolved to " + t.string() + ") cannot be read: "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("Permission denied"), std::string::npos) << err;
}

}  // namespace
}  // namespace drivelab::vdi

namespace drivelab::vdi {
namespace {

// `time_unit` is decoded, checked against the format (a blkparse trace carries its own unit) and
// kept in the record's config.
TEST(ReplayConfigDecode, TimeUnitIsDecodedAndCheckedAgainstTheFormat) {
  TempDir dir;
  dir.write("t.trace", kUmassTrace);
  Decoded d;
  decode_file(d, dir / "p.yaml", "replay", "{trace: t.trace, time_unit: us}");
  EXPECT_TRUE(d.diags.empty()) << d.diags.to_string();
  ASSERT_TRUE(d.replay.read_options.time_unit.has_value());
  EXPECT_EQ(*d.replay.read_options.time_unit, trace::TimeUnit::us);
  EXPECT_EQ(to_json(d.replay).at("time_unit"), "us");
  Decoded none;
  decode_file(none, dir / "p.yaml", "replay", "{trace: t.trace}");
  EXPECT_FALSE(none.replay.read_options.time_unit.has_value());
  EXPECT_FALSE(to_json(none.replay).contains("time_unit"));

  EXPECT_NE(replay_error(dir / "p.yaml", "{trace: t.trace, time_unit: fortnight}")
                .find("replay.time_unit: unknown time unit 'fortnight'"),
            std::string::npos);
  dir.write("b.txt", "  8,0 0 1 0.000000000 1 Q R 0 + 8 [a]\n");
  EXPECT_NE(replay_error(dir / "p.yaml", "{trace: b.txt, time_unit: us}").find("does not apply to blkparse traces"),
            std::string::npos);
}

/// The replay of an MQSim trace of three requests 150,000 units apart; returns the trace span the
/// replay scheduled (details.trace.duration_s) and the replay's own rate.
std::pair<double, double> replay_span_and_iops(const fs::path& dir, const std::string& extra) {
  test_support::EmulatorHarness h(
      &register_emulators, "replay", dir,
      "{trace: '" + (dir / "m.trace").string() + "', engine: null, file_size: 1MiB, keep_file: false" + extra + "}",
      std::chrono::nanoseconds(0), std::chrono::seconds(20));
  h.run_all();
  return {h.record.details.at("trace").at("duration_s").get<double>(), h.metric("iops")};
}

// Issue 15 part 3: the replay schedule follows the trace's clock: MQSim arrivals are ns by
// default (the three requests span 0.3 ms) and µs with `time_unit: us` (0.3 s, and the replay takes
// that long: under 10 IOPS).
TEST(ReplayKindClock, TheScheduleFollowsTheTimeUnit) {
  TempDir dir;
  dir.write("m.trace", "0 0 0 16 1\n150000 0 16 16 0\n300000 0 32 16 1\n");
  const auto [ns_span, ns_iops] = replay_span_and_iops(dir.path(), "");
  EXPECT_NEAR(ns_span, 0.0003, 1e-9);
  // Three requests in well under the 0.3 s the µs reading takes (0.2 s allows a loaded machine's
  // scheduling delays: it failed once at 0.1 s with 16 compilers on 2 cores).
  EXPECT_GT(ns_iops, 3 / 0.2);
  const auto [us_span, us_iops] = replay_span_and_iops(dir.path(), ", time_unit: us");
  EXPECT_NEAR(us_span, 0.3, 1e-9);
  EXPECT_LT(us_iops, 3 / 0.29);
}

}  // namespace
}  // namespace drivelab::vdi
