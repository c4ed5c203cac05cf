#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "drivelab/core/errors.hpp"
#include "drivelab/results/journal.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"
#include "test_emulator.hpp"

namespace drivelab::runner {
namespace {

namespace fs = std::filesystem;

struct RunFixture : ::testing::Test {
  fs::path dir =
      fs::path(DRIVELAB_BINARY_DIR) / "test-scratch" / ::testing::UnitTest::GetInstance()->current_test_info()->name();
  testing::PhaseLog log;
  std::ostringstream out;

  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir / "target");
  }
  void TearDown() override { fs::remove_all(dir); }

  RunOutcome run(const std::string& yaml, StopFlag& stop) {
    config::Diagnostics diags;
    const Registry reg = testing::make_test_registry(&log);
    config::Document doc = config::Document::load_string(yaml, "p.yaml", diags);
    Protocol p = decode_protocol(doc, reg, diags);
    EXPECT_TRUE(diags.empty()) << diags.to_string();
    RunOptions o;
    o.target = dir / "target";
    o.out_dir = dir / "out";
    o.out = &out;
    return run_protocol(p, o, stop);
  }
};

TEST_F(RunFixture, CompleteRunWritesRecordJournalAndPhasesInOrder) {
  StopFlag stop;
  auto r = run("protocol: p\ntests: [{name: a, kind: tick, duration: 1s, interval: 200ms}]\n", stop);
  EXPECT_EQ(r.record.status, results::Status::complete);
  ASSERT_EQ(r.record.tests.size(), 1u);
  const auto& t = r.record.tests[0];
  EXPECT_EQ(t.status, results::Status::complete);
  EXPECT_EQ(t.intervals.size(), 5u);
  EXPECT_EQ(log.phases, (std::vector<std::string>{"prepare", "warmup", "run", "verify", "cleanup"}));
  ASSERT_EQ(t.checks.size(), 1u);

  const auto on_disk = results::read_record(r.record_path);
  EXPECT_EQ(on_disk.status, results::Status::complete);
  EXPECT_EQ(on_disk.tests[0].intervals.size(), 5u);
  EXPECT_TRUE(fs::is_symlink(dir / "out" / "latest.json"));
  const auto recovered = results::recover_from_journal(r.journal_path);
  EXPECT_EQ(recovered.status, results::Status::complete);
  EXPECT_EQ(recovered.tests[0].intervals.size(), 5u);
  EXPECT_NE(out.str().find('a'), std::string::npos);
}

TEST_F(RunFixture, IntervalsRecordedFasterThanTheDiskKeepTheirOrderEverywhere) {
  // The emulator's thread only queues intervals; the runner's writer journals, prints and rewrites
  // the record behind it. 300 back to back: all of them reach the journal, the record and the
  // output, in order, before the test's end and before the next phase's line.
  StopFlag stop;
  auto r = run("protocol: p\ntests: [{name: a, kind: tick, duration: 1s, tick: {burst: 300}}]\n", stop);
  ASSERT_EQ(r.record.status, results::Status::complete);
  const auto check = [](const std::vector<results::Interval>& v, const char* where) {
    ASSERT_EQ(v.size(), 300u) << where;
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i].values.at(0).second, static_cast<double>(i + 1)) << where;
  };
  check(r.record.tests[0].intervals, "record in memory");
  check(results::read_record(r.record_path).tests[0].intervals, "record on disk");
  const auto recovered = results::recover_from_journal(r.journal_path);
  EXPECT_EQ(recovered.tests[0].status, results::Status::complete);
  check(recovered.tests[0].intervals, "journal");
  const std::string text = out.str();
  std::size_t at = 0, lines = 0;
  for (std::string line; at != std::string::npos;) {
    const std::size_t next = text.find('\n', at);
    line = text.substr(at, next == std::string::npos ? std::string::npos : next - at);
    at = next == std::string::npos ? next : next + 1;
    if (line.starts_with("[") && line.find("ios ") != std::string::npos) ++lines;  // interval lines only
    if (line.find(": verify") != std::string::npos) {
      EXPECT_EQ(lines, 300u) << "every interval line before verify";
    }
  }
  EXPECT_EQ(lines, 300u);
}

TEST_F(RunFixture, FailureInAPhaseIsRecordedAndCleanupStillRuns) {
  StopFlag stop;
  auto r =
      run("protocol: p\ntests:\n  - {name: a, kind: tick, duration: 1s, tick: {fail_in: warmup}}\n"
          "  - {name: b, kind: tick, duration: 1s, interval: 500ms}\n",
          stop);
  EXPECT_EQ(r.record.status, results::Status::failed);
  ASSERT_EQ(r.record.tests.size(), 2u);
  EXPECT_EQ(r.record.tests[0].status, results::Status::failed);
  EXPECT_NE(r.record.tests[0].reason.find("injected failure in warmup"), std::string::npos);
  EXPECT_EQ(r.record.tests[1].status, results::Status::complete);  // the next test still runs
  EXPECT_EQ(log.phases, (std::vector<std::string>{"prepare", "warmup", "cleanup", "prepare", "warmup", "run", "verify",
                                                  "cleanup"}));
}

TEST_F(RunFixture, StopDuringRunKeepsIntervalsAndSkipsTheRest) {
  StopFlag stop;
  auto r =
      run("protocol: p\ntests:\n  - {name: a, kind: tick, duration: 60s, interval: 100ms, tick: {stop_after: 3}}\n"
          "  - {name: b, kind: tick}\n",
          stop);
  EXPECT_EQ(r.record.status, results::Status::interrupted);
  ASSERT_EQ(r.record.tests.size(), 2u);
  EXPECT_EQ(r.record.tests[0].status, results::Status::interrupted);
  EXPECT_EQ(r.record.tests[0].intervals.size(), 3u);
  EXPECT_LT(r.record.tests[0].measured_s, 5.0);
  EXPECT_EQ(r.record.tests[1].status, results::Status::skipped);
  // verify still ran after the interrupt, then cleanup
  EXPECT_EQ(log.phases, (std::vector<std::string>{"prepare", "warmup", "run", "verify", "cleanup"}));
  EXPECT_EQ(results::read_record(r.record_path).status, results::Status::interrupted);
  // The journal names the skipped test too: recovery gives back every test, skipped one included.
  const auto recovered = results::recover_from_journal(r.journal_path);
  ASSERT_EQ(recovered.tests.size(), 2u);
  EXPECT_EQ(recovered.tests[1].name, "b");
  EXPECT_EQ(recovered.tests[1].status, results::Status::skipped);
  EXPECT_EQ(recovered.tests[1].reason, "run interrupted before this test");
  EXPECT_EQ(results::to_json(recovered), results::to_json(r.record));
}

TEST_F(RunFixture, ASecondRunOnTheSameTargetIsRefused) {
  StopFlag stop_first;
  std::thread first([&] {
    std::ostringstream quiet;
    config::Diagnostics diags;
    const Registry reg = testing::make_test_registry(&log);
    config::Document doc = config::Document::load_string(
        "protocol: p\ntests: [{name: a, kind: tick, duration: 60s, interval: 100ms}]\n", "p", diags);
    Protocol p = decode_protocol(doc, reg, diags);
    RunOptions o;
    o.target = dir / "target";
    o.out_dir = dir / "out-first";
    o.out = &quiet;
    run_protocol(p, o, stop_first);
  });
  // Wait until the first run holds the target (its lock file exists).
  for (int i = 0; i < 200 && !fs::exists(dir / "target" / "drivelab-run.lock"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  StopFlag stop;
  try {
    run("protocol: p\ntests: [{name: b, kind: tick, duration: 1s}]\n", stop);
    ADD_FAILURE() << "the second run was not refused";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("in use by another drivelab run (pid"), std::string::npos) << e.what();
  }
  stop_first.request();
  first.join();
  EXPECT_FALSE(fs::exists(dir / "target" / "drivelab-run.lock"));  // released and removed
}

// A symbolic link in the run lock's place is refused and left as it is: the lock used to be
// opened through it, writing "pid N, run R" into (or creating) the file it named outside the target.
TEST_F(RunFixture, ASymbolicLinkInTheRunLocksPlaceIsRefusedAndItsTargetUntouched) {
  const fs::path victim = dir / "victim.txt";
  {
    std::ofstream(victim) << "precious\n";
  }
  fs::create_symlink(victim, dir / "target" / "drivelab-run.lock");
  fs::create_directories(dir / "target2");
  fs::create_symlink(dir / "created-outside.txt", dir / "target2" / "drivelab-run.lock");  // a dangling link
  for (const fs::path& target : {dir / "target", dir / "target2"}) {
    config::Diagnostics diags;
    const Registry reg = testing::make_test_registry(&log);
    config::Document doc = config::Document::load_string("protocol: p\ntests: [{name: a, kind: tick}]\n", "p", diags);
    Protocol p = decode_protocol(doc, reg, diags);
    RunOptions o;
    o.target = target;
    o.out_dir = dir / "out";
    o.out = &out;
    StopFlag stop;
    try {
      (void)run_protocol(p, o, stop);
      ADD_FAILURE() << target << ": the run went ahead";
    } catch (const EnvironmentError& e) {
      EXPECT_NE(std::string(e.what()).find("drivelab-run.lock is a symbolic link (to "), std::string::npos) << e.what();
    }
    EXPECT_TRUE(fs::is_symlink(target / "drivelab-run.lock")) << "the user's link is left alone";
  }
  std::ifstream in(victim);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "precious");
  EXPECT_FALSE(fs::exists(dir / "created-outside.txt"));
}

TEST_F(RunFixture, MissingTargetIsAnEnvironmentError) {
  StopFlag stop;
  config::Diagnostics diags;
  const Registry reg = testing::make_test_registry(&log);
  config::Document doc = config::Document::load_string("protocol: p\ntests: [{name: a, kind: tick}]\n", "p", diags);
  Protocol p = decode_protocol(doc, reg, diags);
  RunOptions o;
  o.target = dir / "does-not-exist";
  o.out_dir = dir / "out";
  o.out = &out;
  EXPECT_THROW(run_protocol(p, o, stop), EnvironmentError);
}

}  // namespace
}  // namespace drivelab::runner
