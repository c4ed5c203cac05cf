// Issue 16: a protocol's hosts: section and --start-at, through the real binary. A process takes
// the entry of its rank (outside mpirun: rank 0) or its host name: the entry's target stands in
// for --target and its set: overrides apply before the command line's; two ranks under mpirun
// each run on their own entry's target. --start-at waits for a UTC time or a delay and refuses a
// time already past or a malformed one (exit 2); validate checks every entry's overrides.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "mpirun.hpp"
#include "process.hpp"

namespace {

namespace fs = std::filesystem;
using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;
using nlohmann::json;

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

json latest_record(const fs::path& out) { return json::parse(read_file(out / "latest.json")); }

std::string io_protocol(const std::string& hosts) {
  return "protocol: hosts-test\n" + hosts +
         "tests:\n"
         "  - {name: a, kind: io, warmup: 0s, duration: 30s, interval: 1s, io: {engine: 'null'}}\n";
}

TEST(HostsSection, TheEntryOfThisRankGivesTheTargetAndItsOverrides) {
  ScratchDir dir("hosts-entry");
  fs::create_directories(dir.path() / "t0");
  const fs::path protocol = dir.path() / "p.yaml";
  write_text(protocol, io_protocol("hosts:\n"
                                   "  - rank: 0\n    target: " +
                                   (dir.path() / "t0").string() +
                                   "\n    set:\n      tests[0].duration: 1s\n"
                                   "  - host: no-such-host\n    target: /nonexistent\n"));
  const fs::path out = dir.path() / "out";
  const auto r = drivelab::testing::run({DRIVELAB_EXE, "run", protocol.string(), "--out", out.string(), "--quiet"},
                                        dir.path(), std::chrono::seconds(120));
  ASSERT_EQ(r.status, 0) << r.err;
  const json rec = latest_record(out);
  EXPECT_EQ(rec["target"]["path"], (dir.path() / "t0").string());
  EXPECT_NEAR(rec["tests"][0]["measured_s"].get<double>(), 1.0, 0.5) << "the entry's set: made the 30 s test 1 s";
  EXPECT_EQ(rec["config"]["hosts"][0]["rank"], 0);

  // The command line's --set wins over the entry's, and --target over its target.
  fs::create_directories(dir.path() / "cli");
  const auto c = drivelab::testing::run({DRIVELAB_EXE, "run", protocol.string(), "--out", out.string(), "--quiet",
                                         "--target", (dir.path() / "cli").string(), "--set", "tests[0].duration=2s"},
                                        dir.path(), std::chrono::seconds(120));
  ASSERT_EQ(c.status, 0) << c.err;
  const json rec2 = latest_record(out);
  EXPECT_EQ(rec2["target"]["path"], (dir.path() / "cli").string());
  EXPECT_NEAR(rec2["tests"][0]["measured_s"].get<double>(), 2.0, 0.5);
}

TEST(HostsSection, NoTargetAndNoEntryIsABadOptionAndABadEntryTargetIsNamed) {
  ScratchDir dir("hosts-none");
  const fs::path protocol = dir.path() / "p.yaml";
  write_text(protocol, io_protocol("hosts:\n  - {rank: 3, target: /x}\n"));
  const auto r =
      drivelab::testing::run({DRIVELAB_EXE, "run", protocol.string(), "--quiet"}, dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("no target: give --target DIR|DEVICE, or a hosts: entry with target:"), std::string::npos)
      << r.err;

  write_text(protocol, io_protocol("hosts:\n  - {rank: 0, target: " + (dir.path() / "missing").string() + "}\n"));
  const auto m =
      drivelab::testing::run({DRIVELAB_EXE, "run", protocol.string(), "--quiet"}, dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(m.status, 2) << m.err;
  EXPECT_NE(m.err.find("hosts[0].target (rank 0): target '" + (dir.path() / "missing").string() + "' does not exist"),
            std::string::npos)
      << m.err;
  EXPECT_FALSE(fs::exists(dir.path() / "drivelab-results")) << "nothing ran";
}

TEST(HostsSection, ValidateChecksEveryEntrysOverrides) {
  ScratchDir dir("hosts-validate");
  const fs::path protocol = dir.path() / "p.yaml";
  write_text(protocol, io_protocol("hosts:\n"
                                   "  - {rank: 0, target: /a}\n"
                                   "  - rank: 1\n    target: /b\n    set:\n      tests[0].io.iodepth: 0\n"));
  const auto r =
      drivelab::testing::run({DRIVELAB_EXE, "validate", protocol.string()}, dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  // At the entry's line in the file (hosts[1] is on line 4), not at "<--set>".
  EXPECT_NE(r.err.find(protocol.string() + ":4:5: hosts[1].set (rank 1): tests[0].io.iodepth: "), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("<--set>"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 problem found in the hosts: entries' overrides"), std::string::npos) << r.err;
  // With a structural problem too, both are reported at once.
  write_text(protocol, io_protocol("hosts:\n"
                                   "  - {rank: 0, host: both, target: /a}\n"
                                   "  - rank: 1\n    target: /b\n    set:\n      tests[0].io.iodepth: 0\n"));
  const auto both =
      drivelab::testing::run({DRIVELAB_EXE, "validate", protocol.string()}, dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("an entry names a rank or a host, not both"), std::string::npos) << both.err;
  EXPECT_NE(both.err.find("hosts[1].set (rank 1): tests[0].io.iodepth"), std::string::npos) << both.err;

  write_text(protocol, io_protocol("hosts:\n  - {rank: 0, target: /a}\n  - {host: vm2, target: /b, set: {seed: 9}}\n"));
  const auto ok =
      drivelab::testing::run({DRIVELAB_EXE, "validate", protocol.string()}, dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("hosts[1] (host vm2): target /b, 1 override"), std::string::npos) << ok.out;
}

TEST(StartAt, WaitsForTheTimeAndRefusesAPastOrMalformedOne) {
  ScratchDir dir("start-at");
  const fs::path out = dir.path() / "out";
  const auto t0 = std::chrono::system_clock::now();
  const auto r =
      drivelab::testing::run({DRIVELAB_EXE, "io", "--target", dir.path().string(), "--engine", "null", "--warmup", "0s",
                              "--duration", "1s", "--out", out.string(), "--quiet", "--start-at", "+3s"},
                             dir.path(), std::chrono::seconds(60));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("waiting"), std::string::npos) << r.out;
  const double waited = std::chrono::duration<double>(std::chrono::system_clock::now() - t0).count();
  EXPECT_GE(waited, 3.0);
  const json rec = latest_record(out);
  // started_at is written as the run starts: after the wait.
  std::tm tm{};
  std::istringstream in(rec["started_at"].get<std::string>());
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  ASSERT_FALSE(in.fail()) << rec["started_at"];
  EXPECT_GE(std::chrono::system_clock::from_time_t(timegm(&tm)) + std::chrono::seconds(1),
            std::chrono::time_point_cast<std::chrono::seconds>(t0) + std::chrono::seconds(3));

  for (const char* bad : {"2001-01-01T00:00:00Z", "tomorrow", "2030-01-01 10:00", "+3 parsecs"}) {
    const auto b = drivelab::testing::run({DRIVELAB_EXE, "io", "--target", dir.path().string(), "--engine", "null",
                                           "--duration", "1s", "--start-at", bad},
                                          dir.path(), std::chrono::seconds(60));
    EXPECT_EQ(b.status, 2) << bad << ": " << b.err;
    EXPECT_NE(b.err.find("--start-at"), std::string::npos) << b.err;
  }
}

TEST(StartAt, TheTargetIsCheckedAndLockedBeforeTheWait) {
  ScratchDir dir("start-at-lock");
  // A refusal comes at once, not at the start time.
  const auto t0 = std::chrono::steady_clock::now();
  const auto bad =
      drivelab::testing::run({DRIVELAB_EXE, "io", "--target", dir.path().string(), "--engine", "null", "--duration",
                              "1s", "--out", "/proc/drivelab-no-such-dir", "--start-at", "+60s"},
                             dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(bad.status, 3) << bad.err;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30.0);
  // The waiting run holds the target: a second run on it is refused while the first waits.
  drivelab::testing::Child waiting(
      {DRIVELAB_EXE, "io", "--target", dir.path().string(), "--engine", "null", "--warmup", "0s", "--duration", "1s",
       "--out", (dir.path() / "a").string(), "--quiet", "--start-at", "+6s"},
      dir.path() / "a.out", dir.path() / "a.err");
  for (int i = 0; i < 100 && read_file(dir.path() / "a.out").find("waiting") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto second = drivelab::testing::run({DRIVELAB_EXE, "io", "--target", dir.path().string(), "--engine", "null",
                                              "--duration", "1s", "--out", (dir.path() / "b").string()},
                                             dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(second.status, 3) << second.out << second.err;
  EXPECT_NE(second.err.find("in use by another drivelab run"), std::string::npos) << second.err;
  EXPECT_EQ(waiting.wait(std::chrono::seconds(60)), 0) << waiting.err();
}

TEST(HostsSection, TwoRanksUnderMpirunEachRunOnTheirEntrysTarget) {
  if (::access("/usr/bin/mpirun", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/mpirun (apt-get install openmpi-bin)";
  ScratchDir dir("hosts-mpirun");
  for (const char* t : {"r0", "r1"}) fs::create_directories(dir.path() / t);
  const fs::path protocol = dir.path() / "p.yaml";
  write_text(protocol, io_protocol("hosts:\n"
                                   "  - {rank: 0, target: " +
                                   (dir.path() / "r0").string() +
                                   "}\n"
                                   "  - rank: 1\n    target: " +
                                   (dir.path() / "r1").string() + "\n    set:\n      tests[0].io.xfersize: 8k\n"));
  std::vector<std::string> args = drivelab::testing::mpirun_local(2, {});
  for (const std::string& a : {std::string(DRIVELAB_EXE), std::string("run"), protocol.string(), std::string("--out"),
                               (dir.path() / "out").string(), std::string("--quiet"), std::string("--set"),
                               std::string("tests[0].duration=1s")})
    args.push_back(a);
  const auto r = drivelab::testing::run(args, dir.path(), std::chrono::seconds(180));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  int seen = 0;
  for (const auto& e : fs::directory_iterator(dir.path() / "out")) {
    const std::string name = e.path().filename().string();
    if (e.is_symlink() || !name.ends_with(".json")) continue;
    const json rec = json::parse(read_file(e.path()));
    if (!rec.contains("cohort") || !rec["cohort"].contains("rank")) {  // the merged record
      // Rank 1 ran 8 KiB transfers, rank 0 4 KiB: said, not hidden behind rank 0's config.
      ASSERT_EQ(rec["tests"][0]["warnings"].size(), 1u) << rec["tests"][0]["warnings"].dump();
      const std::string w = rec["tests"][0]["warnings"][0];
      EXPECT_NE(w.find("different settings (xfersize: rank 0 (host "), std::string::npos) << w;
      EXPECT_NE(w.find("\"4 KiB\" vs rank 1 (host "), std::string::npos) << w;
      continue;
    }
    const int rank = rec["cohort"]["rank"];
    EXPECT_EQ(rec["target"]["path"], (dir.path() / ("r" + std::to_string(rank))).string()) << name;
    EXPECT_EQ(rec["tests"][0]["config"]["xfersize"], rank == 1 ? "8 KiB" : "4 KiB") << name;
    ++seen;
  }
  EXPECT_EQ(seen, 2);
}

}  // namespace
