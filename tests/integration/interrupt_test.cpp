// SIGINT during the OLTP test leaves a record marked interrupted that holds the finished intervals;
// SIGKILL leaves a valid record and a journal that `drivelab results recover` turns into one.
// On the null I/O engine (fast): a killed test is recovered as interrupted, never running; skipped
// tests survive recovery; the reporter ranks an interrupted run apart from a complete one.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "drivelab/results/record.hpp"
#include "process.hpp"

namespace {

using drivelab::testing::Child;
using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;
using nlohmann::json;

/// Polls the live record until the running test has at least `n` intervals (or times out).
json wait_for_intervals(const std::filesystem::path& out, std::size_t n, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::error_code ec;
    if (!std::filesystem::exists(out / "latest.json", ec)) continue;
    const json rec = json::parse(read_file(out / "latest.json"), nullptr, /*allow_exceptions=*/false);
    if (rec.is_discarded() || rec["tests"].empty()) continue;
    if (rec["tests"][0]["intervals"].size() >= n) return rec;
  }
  return json();
}

std::vector<std::string> long_oltp(const std::filesystem::path& target, const std::filesystem::path& out) {
  return {DRIVELAB_EXE,   "oltp",       "tpcc",    "--target", target.string(), "--out", out.string(),
          "--warehouses", "1",          "--users", "2",        "--warmup",      "0s",    "--duration",
          "300s",         "--interval", "1s"};
}

/// A drivelab run of `command(target, out)` in a fresh scratch directory, started and waited for
/// until its live record has `n` intervals (live is null if that took longer than `timeout`).
struct LiveRun {
  ScratchDir dir;
  std::filesystem::path target = dir.path() / "target";
  std::filesystem::path out = dir.path() / "out";
  std::unique_ptr<Child> child;
  json live;
  LiveRun(const char* name,
          std::vector<std::string> (*command)(const std::filesystem::path&, const std::filesystem::path&),
          std::size_t n, std::chrono::seconds timeout)
      : dir(name) {
    std::filesystem::create_directories(target);
    child = std::make_unique<Child>(command(target, out), dir.path() / "stdout.txt", dir.path() / "stderr.txt");
    live = wait_for_intervals(out, n, timeout);
  }
};

std::vector<std::string> long_io(const std::filesystem::path& target, const std::filesystem::path& out) {
  return {DRIVELAB_EXE, "io",         "--target",    target.string(),
          "--out",      out.string(), "--engine",    "psync",
          "--rw",       "randread",   "--file-size", "8MiB",
          "--warmup",   "0s",         "--duration",  "3s",
          "--interval", "500ms",      "--quiet",     "--no-harness-ceiling"};
}

// The target directory removed while a test runs (rm -rf by a clean-up script): the test's file
// stays open and its reads still succeed, so the run ends, and the record says what happened.
TEST(Interrupt, ATargetDirectoryRemovedMidTestIsSaid) {
  LiveRun r("interrupt-target-removed", long_io, 1, std::chrono::seconds(60));
  Child& child = *r.child;
  ASSERT_FALSE(r.live.is_null()) << child.out() << child.err();
  std::filesystem::remove_all(r.target);
  child.wait(std::chrono::seconds(60));
  const json rec = json::parse(read_file(r.out / "latest.json"));
  ASSERT_EQ(rec["tests"].size(), 1u) << child.out() << child.err();
  const json& t = rec["tests"][0];
  EXPECT_NE(t["warnings"].dump().find("no longer exists at the end of this test"), std::string::npos)
      << t.dump(2) << child.err();
}

TEST(Interrupt, SigintKeepsFinishedIntervals) {
  LiveRun r("interrupt-sigint", long_oltp, 2, std::chrono::seconds(240));
  Child& child = *r.child;
  const json& live = r.live;
  const auto& out = r.out;
  ASSERT_FALSE(live.is_null()) << child.out() << child.err();
  // While running, the record on disk is already valid and says it is not complete.
  EXPECT_EQ(live["status"], "interrupted");
  child.signal(SIGINT);
  const int status = child.wait(std::chrono::seconds(120));
  EXPECT_EQ(status, 130) << child.out() << child.err();

  const json rec = json::parse(read_file(out / "latest.json"));
  EXPECT_EQ(rec["status"], "interrupted");
  ASSERT_EQ(rec["tests"].size(), 1u);
  EXPECT_EQ(rec["reason"], "stopped by SIGINT; finished intervals are kept");
  const json& t = rec["tests"][0];
  EXPECT_EQ(t["status"], "interrupted");
  EXPECT_EQ(t["reason"], "stopped by SIGINT during the measured phase; intervals so far are kept");
  EXPECT_GE(t["intervals"].size(), 2u);
  EXPECT_GT(t["metrics"]["tps"]["value"].get<double>(), 0.0);
  EXPECT_LT(t["measured_s"].get<double>(), 300.0);
  // Consistency is still verified after an interrupt.
  ASSERT_GE(t["checks"].size(), 4u);
  for (const auto& c : t["checks"]) EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();
}

TEST(Interrupt, SigkillLeavesAValidRecordAndARecoverableJournal) {
  ScratchDir dir("interrupt-sigkill");
  const auto target = dir.path() / "target";
  const auto out = dir.path() / "out";
  std::filesystem::create_directories(target);
  std::string run_id;
  {
    Child child(long_oltp(target, out), dir.path() / "stdout.txt", dir.path() / "stderr.txt");
    const json live = wait_for_intervals(out, 2, std::chrono::seconds(240));
    ASSERT_FALSE(live.is_null()) << child.out() << child.err();
    run_id = live["run_id"];
    child.signal(SIGKILL);
    EXPECT_EQ(child.wait(std::chrono::seconds(30)), 128 + SIGKILL);
  }
  const json rec = json::parse(read_file(out / "latest.json"));
  EXPECT_EQ(rec["status"], "interrupted");
  EXPECT_GE(rec["tests"][0]["intervals"].size(), 2u);

  const auto journal = out / (run_id + ".journal.jsonl");
  const auto recovered = dir.path() / "recovered.json";
  const auto r = drivelab::testing::run(
      {DRIVELAB_EXE, "results", "recover", journal.string(), "-o", recovered.string()}, dir.path());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json rj = json::parse(read_file(recovered));
  EXPECT_EQ(rj["schema"], "drivelab.run/1");
  EXPECT_EQ(rj["status"], "interrupted");
  ASSERT_EQ(rj["tests"].size(), 1u);
  EXPECT_EQ(rj["tests"][0]["status"], "interrupted");
  EXPECT_GE(rj["tests"][0]["intervals"].size(), 2u);
}

}  // namespace

namespace {

/// `drivelab io` on the null engine (no file, no disk: seconds to start even under ASan), measuring
/// for far longer than the test waits.
std::vector<std::string> long_null_io(const std::filesystem::path& target, const std::filesystem::path& out) {
  return {DRIVELAB_EXE, "io", "--target",   target.string(), "--out",      out.string(), "--engine", "null",
          "--warmup",   "0s", "--duration", "300s",          "--interval", "200ms",      "--quiet"};
}

/// A dropped ssh session (SIGHUP) ends the run as Ctrl-C does: exit 130, the record interrupted
/// with its intervals and headline, the journal's reserve given back.
TEST(Interrupt, SighupEndsTheRunAsSigintDoes) {
  LiveRun r("interrupt-sighup", long_null_io, 2, std::chrono::seconds(120));
  Child& child = *r.child;
  const auto& out = r.out;
  ASSERT_FALSE(r.live.is_null()) << child.out() << child.err();
  child.signal(SIGHUP);
  EXPECT_EQ(child.wait(std::chrono::seconds(60)), 130) << child.out() << child.err();
  const json rec = json::parse(read_file(out / "latest.json"));
  EXPECT_EQ(rec["status"], "interrupted");
  // The reasons name the signal that came, not a list of the ones that might have.
  EXPECT_EQ(rec["reason"], "stopped by SIGHUP; finished intervals are kept");
  ASSERT_EQ(rec["tests"].size(), 1u);
  EXPECT_EQ(rec["tests"][0]["status"], "interrupted");
  EXPECT_EQ(rec["tests"][0]["reason"], "stopped by SIGHUP during the measured phase; intervals so far are kept");
  EXPECT_GE(rec["tests"][0]["intervals"].size(), 2u);
  EXPECT_FALSE(rec["tests"][0]["metrics"].empty());
  for (const auto& e : std::filesystem::directory_iterator(out))
    EXPECT_FALSE(e.path().string().ends_with(".reserve")) << e.path();
}

/// The CSV row of `drive` in the table of test `test`, metric `metric` ("" when absent).
std::string csv_row(const std::string& csv, const std::string& test, const std::string& metric,
                    const std::string& drive) {
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(test + "," + metric + ",") && line.find("," + drive + ",") != std::string::npos) return line;
  return {};
}

TEST(Interrupt, SigkillMidTestIsRecoveredAsInterruptedNeverRunning) {
  ScratchDir dir("interrupt-sigkill-io");
  const auto target = dir.path() / "target";
  const auto out = dir.path() / "out";
  std::filesystem::create_directories(target);
  std::string run_id;
  {
    Child child(long_null_io(target, out), dir.path() / "stdout.txt", dir.path() / "stderr.txt");
    const json live = wait_for_intervals(out, 3, std::chrono::seconds(120));
    ASSERT_FALSE(live.is_null()) << child.out() << child.err();
    run_id = live["run_id"];
    child.signal(SIGKILL);
    ASSERT_EQ(child.wait(std::chrono::seconds(30)), 128 + SIGKILL);
  }
  // What a killed writer leaves: the provisional record still says the test is running, and its
  // 8 MiB reserve, which recover removes below.
  const auto provisional = out / (run_id + ".json");
  ASSERT_EQ(json::parse(read_file(provisional))["tests"][0]["status"], "running");
  EXPECT_TRUE(std::filesystem::exists(out / (run_id + ".journal.jsonl.reserve")));

  const auto journal = out / (run_id + ".journal.jsonl");
  const auto recovered = dir.path() / "recovered.json";
  const auto r = drivelab::testing::run(
      {DRIVELAB_EXE, "results", "recover", journal.string(), "-o", recovered.string()}, dir.path());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  // Valid drivelab.run/1 (the reader checks schema, required keys and types).
  const drivelab::results::RunRecord rec = drivelab::results::read_record(recovered);
  EXPECT_EQ(rec.status, drivelab::results::Status::interrupted);
  EXPECT_EQ(rec.reason, "journal ends before run_end");
  ASSERT_EQ(rec.tests.size(), 1u);
  const auto& t = rec.tests[0];
  EXPECT_EQ(t.kind, "io");
  EXPECT_EQ(t.status, drivelab::results::Status::interrupted);
  EXPECT_EQ(t.reason, "journal ends before test_end");
  ASSERT_GE(t.intervals.size(), 3u);
  EXPECT_EQ(t.measured_s, t.intervals.back().t_s);
  EXPECT_NE(r.out.find("run status: interrupted"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out / (run_id + ".journal.jsonl.reserve"))) << r.err;
  EXPECT_NE(r.err.find("the reserve of a run that was killed"), std::string::npos) << r.err;

  // The reporter reads the provisional record and the recovered one: interrupted, never running.
  for (const auto& input : {provisional, recovered}) {
    SCOPED_TRACE(input.string());
    const auto md = dir.path() / "report.md";
    const auto rep = drivelab::testing::run({DRIVELAB_EXE, "report", input.string(), "--md", md.string()}, dir.path());
    ASSERT_EQ(rep.status, 0) << rep.out << rep.err;
    const std::string text = read_file(md);
    EXPECT_NE(text.find(": test io on "), std::string::npos) << text;
    EXPECT_NE(text.find(" is interrupted: "), std::string::npos) << text;
    EXPECT_EQ(text.find("running"), std::string::npos) << text;
    // It has no headline metrics, so no table shows it, and the report says so (not "shown apart").
    EXPECT_NE(text.find("has no headline metrics"), std::string::npos) << text;
    EXPECT_EQ(text.find("shown apart"), std::string::npos) << text;
  }
}

TEST(Interrupt, SigintSkippedTestsSurviveRecoveryAndPartialRunsAreRankedApart) {
  ScratchDir dir("interrupt-sigint-io");
  const auto target = dir.path() / "target";
  const auto out = dir.path() / "out";
  std::filesystem::create_directories(target);
  const auto protocol = dir.path() / "two.yaml";
  std::ofstream(protocol)
      << "protocol: two\n"
         "tests:\n"
         "  - {name: a, kind: io, warmup: 0s, duration: 300s, interval: 200ms, io: {engine: 'null'}}\n"
         "  - {name: b, kind: io, warmup: 0s, duration: 1s, io: {engine: 'null'}}\n";
  {
    Child child({DRIVELAB_EXE, "run", protocol.string(), "--target", target.string(), "--out", out.string(), "--quiet"},
                dir.path() / "stdout.txt", dir.path() / "stderr.txt");
    ASSERT_FALSE(wait_for_intervals(out, 3, std::chrono::seconds(120)).is_null()) << child.out() << child.err();
    child.signal(SIGINT);
    ASSERT_EQ(child.wait(std::chrono::seconds(60)), 130) << child.out() << child.err();
  }
  const json final_record = json::parse(read_file(out / "latest.json"));
  ASSERT_EQ(final_record["tests"].size(), 2u);
  ASSERT_EQ(final_record["tests"][1]["status"], "skipped");

  // `results recover` keeps the skipped test, with its status and reason: the journal names it.
  const auto journal = out / (final_record["run_id"].get<std::string>() + ".journal.jsonl");
  const auto recovered = dir.path() / "recovered.json";
  const auto r = drivelab::testing::run(
      {DRIVELAB_EXE, "results", "recover", journal.string(), "-o", recovered.string()}, dir.path());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const drivelab::results::RunRecord rec = drivelab::results::read_record(recovered);
  ASSERT_EQ(rec.tests.size(), 2u);
  EXPECT_EQ(rec.tests[0].status, drivelab::results::Status::interrupted);
  EXPECT_EQ(rec.tests[1].name, "b");
  EXPECT_EQ(rec.tests[1].kind, "io");
  EXPECT_EQ(rec.tests[1].status, drivelab::results::Status::skipped);
  EXPECT_EQ(rec.tests[1].reason, "run interrupted before this test");
  EXPECT_EQ(json::parse(read_file(recovered))["tests"], final_record["tests"]);

  // A complete run of the same workload on another "drive", then the report of both.
  const auto out2 = dir.path() / "out2";
  const auto done =
      drivelab::testing::run({DRIVELAB_EXE, "run", protocol.string(), "--only", "a", "--set", "tests[0].duration=1s",
                              "--target", target.string(), "--out", out2.string(), "--quiet"},
                             dir.path());
  ASSERT_EQ(done.status, 0) << done.out << done.err;
  const auto report = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{DRIVELAB_EXE,
                                  "report",
                                  (out2 / "latest.json").string(),
                                  (out / "latest.json").string(),
                                  "--label",
                                  "complete",
                                  "--label",
                                  "interrupted",
                                  "--csv",
                                  (dir.path() / "r.csv").string(),
                                  "--md",
                                  (dir.path() / "r.md").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto res = drivelab::testing::run(args, dir.path());
    EXPECT_EQ(res.status, 0) << res.out << res.err;
    return std::pair(read_file(dir.path() / "r.csv"), read_file(dir.path() / "r.md"));
  };
  // Default: the interrupted test is shown apart, unranked, and the note says why.
  const auto [csv, md] = report({});
  EXPECT_NE(csv_row(csv, "a", "iops", "complete").find(",1,1,1st of 1,"), std::string::npos) << csv;
  const std::string apart = csv_row(csv, "a", "iops", "interrupted");
  EXPECT_NE(apart.find(",partial_not_ranked,"), std::string::npos) << csv;
  EXPECT_NE(apart.find(",,,,"), std::string::npos) << apart;  // no rank, of, place
  EXPECT_NE(md.find("| interrupted (partial, not ranked) |"), std::string::npos) << md;
  EXPECT_NE(md.find("left out of the ranking, which compares complete tests only"), std::string::npos) << md;
  EXPECT_EQ(md.find("| a | iops | interrupted |"), std::string::npos) << md;  // not compared either
  // --include-partial: ranked with the complete run, marked partial.
  const auto [csv_all, md_all] = report({"--include-partial"});
  const std::string pooled = csv_row(csv_all, "a", "iops", "interrupted");
  EXPECT_NE(pooled.find(" of 2,"), std::string::npos) << csv_all;
  EXPECT_NE(pooled.find(",partial,"), std::string::npos) << csv_all;
  EXPECT_NE(md_all.find("| interrupted (partial) |"), std::string::npos) << md_all;
  EXPECT_EQ(md_all.find("not ranked"), std::string::npos) << md_all;
}

}  // namespace

namespace {

/// The journal's `groups` events so far that hold group `group` (the file may end mid-line).
bool journal_has_group(const std::filesystem::path& journal, const std::string& group) {
  std::error_code ec;
  if (!std::filesystem::exists(journal, ec)) return false;
  std::istringstream lines(read_file(journal));
  for (std::string line; std::getline(lines, line);) {
    const json e = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!e.is_discarded() && e.value("event", "") == "groups" && e["groups"].contains(group)) return true;
  }
  return false;
}

// A `rate: curve` killed after its max run and its first point (issue 32): each finished run's
// metric group reached the journal when it finished, so `results recover` gives them, in a test
// marked interrupted that says where they come from. And recover given the record instead of the
// journal says what the file is.
TEST(Interrupt, SigkillMidCurveRecoversTheFinishedRunsGroups) {
  ScratchDir dir("interrupt-sigkill-curve");
  const auto target = dir.path() / "target";
  const auto out = dir.path() / "out";
  std::filesystem::create_directories(target);
  std::filesystem::create_directories(out);
  const auto protocol = dir.path() / "curve.yaml";
  std::ofstream(protocol)
      << "protocol: curve\nseed: 3\ntests:\n"
         "  - name: sizing\n    kind: tpcc\n    warmup: 1s\n    duration: 2s\n"
         "    interval: 1s\n    tpcc: {backend: sqlite, warehouses: 1, users: 2, synchronous: 'OFF',\n"
         "           rate: curve, curve: [20, 30, 40, 50, 60, 70, 80, 90]}\n";
  std::filesystem::path journal;
  {
    Child child({DRIVELAB_EXE, "run", protocol.string(), "--target", target.string(), "--out", out.string()},
                dir.path() / "stdout.txt", dir.path() / "stderr.txt");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
    bool seen = false;
    while (!seen && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      for (const auto& f : std::filesystem::directory_iterator(out))
        if (f.path().string().ends_with(".journal.jsonl")) journal = f.path();
      seen = !journal.empty() && journal_has_group(journal, "point_020");
    }
    ASSERT_TRUE(seen) << child.out() << child.err();
    child.signal(SIGKILL);
    ASSERT_EQ(child.wait(std::chrono::seconds(30)), 128 + SIGKILL);
  }
  const auto recovered = dir.path() / "recovered.json";
  const auto r = drivelab::testing::run(
      {DRIVELAB_EXE, "results", "recover", journal.string(), "-o", recovered.string()}, dir.path());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const drivelab::results::RunRecord rec = drivelab::results::read_record(recovered);
  ASSERT_EQ(rec.tests.size(), 1u);
  const auto& t = rec.tests[0];
  EXPECT_EQ(t.status, drivelab::results::Status::interrupted);
  // The max run and the first point, each with its achieved TPS; the points after it did not end.
  std::vector<std::string> curve_runs;
  for (const auto& g : t.groups) {
    if (g.name != "max" && !g.name.starts_with("point_")) continue;
    if (g.name.find('.') != std::string::npos) continue;  // per transaction type
    curve_runs.push_back(g.name);
    const auto tps = std::find_if(g.metrics.begin(), g.metrics.end(), [](const auto& m) { return m.name == "tps"; });
    ASSERT_NE(tps, g.metrics.end()) << g.name;
    EXPECT_GT(tps->value, 0.0) << g.name;
  }
  ASSERT_GE(curve_runs.size(), 2u);
  EXPECT_EQ(curve_runs[0], "max");
  EXPECT_EQ(curve_runs[1], "point_020");
  EXPECT_LT(curve_runs.size(), 10u);  // max + 8 points would be a finished curve
  ASSERT_FALSE(t.warnings.empty());
  const auto marked = std::find_if(t.warnings.begin(), t.warnings.end(), [](const std::string& w) {
    return w.starts_with("metric groups recovered from the journal of an interrupted test: ");
  });
  EXPECT_NE(marked, t.warnings.end());

  // The record (not the journal) given to recover: the killed run's record still says running, so
  // it is named as such, with the journal to give instead.
  std::string record;
  for (const auto& f : std::filesystem::directory_iterator(out))
    if (f.path().extension() == ".json" && f.path().filename() != "latest.json" &&
        !f.path().filename().string().ends_with(".recovered.json"))
      record = f.path().string();
  ASSERT_FALSE(record.empty());
  const auto wrong = drivelab::testing::run({DRIVELAB_EXE, "results", "recover", record}, dir.path());
  EXPECT_EQ(wrong.status, 2) << wrong.out << wrong.err;
  EXPECT_NE(wrong.err.find("'" + record + "' is the record of a run that never ended (a test still running"),
            std::string::npos)
      << wrong.err;
  EXPECT_NE(wrong.err.find("drivelab results recover " + record.substr(0, record.size() - 5) + ".journal.jsonl"),
            std::string::npos)
      << wrong.err;
  EXPECT_EQ(wrong.err.find("not valid JSON"), std::string::npos) << wrong.err;
}

}  // namespace
