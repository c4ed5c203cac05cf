// Repetitions and one run's own confidence (issue 32 items 1 and 2; docs/results.md
// "Repetitions"), through the real binary on the null I/O engine and a vdbench rate on a small file:
// `repeat: 3` gives three test records of the same name with their own seeds and a summary whose
// mean is the mean of the records' values; discard-first runs one more and leaves it out;
// `--repeat` overrides the protocol; bad values are refused at file:line:key; a run interrupted in
// its third repetition keeps the first two (record and `results recover` alike); the records and
// journals validate against the schema; a short paced run warns that its interval is wider than
// ±2% and names the duration that would reach it. Under mpirun (2 ranks) the ranks repeat as one
// job and the online merge, per test and repetition, is byte for byte `results merge` of the
// ranks' records.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "mpirun.hpp"  // tests/support
#include "process.hpp"

namespace {

namespace fs = std::filesystem;
using drivelab::testing::Child;
using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;
using nlohmann::json;

/// A null-engine io test of `duration` measured in 200 ms intervals, with `extra` top-level keys.
std::string protocol_text(const std::string& extra, const std::string& duration = "1s") {
  return "protocol: rep\nseed: 40\n" + extra +
         "tests:\n"
         "  - {name: a, kind: io, warmup: 0s, duration: " +
         duration + ", interval: 200ms, io: {engine: 'null', iodepth: 4}}\n";
}

struct Finished {
  drivelab::testing::Result result;
  json record;
};

/// `drivelab run` of `text` in `dir` (plus `args`); the record is latest.json (null when none).
Finished run_protocol(const ScratchDir& dir, const std::string& text, std::vector<std::string> args = {}) {
  const fs::path protocol = dir.path() / "p.yaml";
  std::ofstream(protocol) << text;
  fs::create_directories(dir.path() / "target");
  std::vector<std::string> cmd{DRIVELAB_EXE,
                               "run",
                               protocol.string(),
                               "--target",
                               (dir.path() / "target").string(),
                               "--out",
                               (dir.path() / "out").string(),
                               "--quiet"};
  cmd.insert(cmd.end(), args.begin(), args.end());
  Finished r{drivelab::testing::run(cmd, dir.path(), std::chrono::seconds(300)), json()};
  if (fs::exists(dir.path() / "out" / "latest.json"))
    r.record = json::parse(read_file(dir.path() / "out" / "latest.json"));
  return r;
}

const json& summary_metric(const json& record, const std::string& test, const std::string& metric) {
  for (const json& t : record.at("repetitions"))
    if (t.at("test") == test)
      for (const json& m : t.at("metrics"))
        if (m.at("name") == metric) return m;
  static const json none;
  ADD_FAILURE() << "no summary of " << test << "." << metric << " in " << record["repetitions"].dump();
  return none;
}

/// The mean and sample standard deviation of `values`, recomputed here.
std::pair<double, double> mean_sd(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  const double mean = sum / static_cast<double>(values.size());
  double ss = 0;
  for (double v : values) ss += (v - mean) * (v - mean);
  return {mean, std::sqrt(ss / static_cast<double>(values.size() - 1))};
}

TEST(Repeat, ThreeRepetitionsAreThreeRecordsWithTheirSeedsAndASummary) {
  ScratchDir dir("repeat-3");
  const Finished r = run_protocol(dir, protocol_text("repeat: 3\n"));
  ASSERT_EQ(r.result.status, 0) << r.result.out << r.result.err;
  const json& rec = r.record;
  EXPECT_EQ(rec["status"], "complete");
  EXPECT_EQ(rec["repeat"], (json{{"count", 3}, {"between", "as-is"}}));
  ASSERT_EQ(rec["tests"].size(), 3u);
  std::vector<double> iops;
  std::set<std::uint64_t> seeds;
  for (int k = 0; k < 3; ++k) {
    const json& t = rec["tests"][k];
    EXPECT_EQ(t["name"], "a");
    EXPECT_EQ(t["status"], "complete") << t["reason"];
    EXPECT_EQ(t["repetition"], k + 1);
    EXPECT_FALSE(t.contains("discarded"));
    // Each repetition's seed is the run seed + (repetition - 1): repetition 1 is the unrepeated run.
    EXPECT_EQ(t["seed"], 40 + k);
    seeds.insert(t["seed"].get<std::uint64_t>());
    // Each repetition is a whole test with its own emulator: it measures and its checks pass.
    EXPECT_GT(t["metrics"]["iops"]["value"].get<double>(), 0.0) << "repetition " << k + 1;
    for (const json& c : t["checks"]) EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();
    iops.push_back(t["metrics"]["iops"]["value"].get<double>());
  }
  EXPECT_EQ(seeds.size(), 3u);
  ASSERT_EQ(rec["repetitions"].size(), 1u);
  EXPECT_EQ(rec["repetitions"][0]["test"], "a");
  EXPECT_EQ(rec["repetitions"][0]["n"], 3);
  const json& m = summary_metric(rec, "a", "iops");
  const auto [mean, sd] = mean_sd(iops);
  EXPECT_EQ(m["n"], 3);
  EXPECT_EQ(m["unit"], "1/s");
  EXPECT_NEAR(m["mean"].get<double>(), mean, 1e-9 * mean);
  EXPECT_NEAR(m["stddev"].get<double>(), sd, 1e-9 * mean);
  EXPECT_NEAR(m["cv"].get<double>(), sd / mean, 1e-9);
  EXPECT_LT(m["ci95_low"].get<double>(), mean);
  EXPECT_GT(m["ci95_high"].get<double>(), mean);
  EXPECT_FALSE(m.contains("median_ci95_low"));  // only from N = 10
  // The latency figures are summarized too (a direction: lower is better); settings are not.
  EXPECT_EQ(summary_metric(rec, "a", "latency_avg_us")["n"], 3);
  // The console names N, the mean, the CV and the interval of the headline metric.
  EXPECT_NE(r.result.out.find("repetitions (95% confidence interval of the mean):"), std::string::npos) << r.result.out;
  EXPECT_NE(r.result.out.find("a  iops  n=3  mean "), std::string::npos) << r.result.out;
}

TEST(Repeat, DiscardFirstRunsOneMoreAndLeavesItOutOfTheSummary) {
  ScratchDir dir("repeat-discard");
  const Finished r = run_protocol(dir, protocol_text("repeat: 2\nrepeat_between: discard-first\n"));
  ASSERT_EQ(r.result.status, 0) << r.result.out << r.result.err;
  const json& rec = r.record;
  EXPECT_EQ(rec["repeat"], (json{{"count", 2}, {"between", "discard-first"}}));
  ASSERT_EQ(rec["tests"].size(), 3u);
  EXPECT_EQ(rec["tests"][0]["discarded"], true);
  EXPECT_FALSE(rec["tests"][1].contains("discarded"));
  EXPECT_EQ(rec["tests"][2]["repetition"], 3);
  const std::vector<double> counted{rec["tests"][1]["metrics"]["iops"]["value"].get<double>(),
                                    rec["tests"][2]["metrics"]["iops"]["value"].get<double>()};
  EXPECT_EQ(rec["repetitions"][0]["n"], 2);
  const double mean = (counted[0] + counted[1]) / 2;
  EXPECT_NEAR(summary_metric(rec, "a", "iops")["mean"].get<double>(), mean, 1e-9 * mean);
}

TEST(Repeat, TheCommandLineOverridesTheProtocol) {
  ScratchDir dir("repeat-override");
  const Finished r = run_protocol(dir, protocol_text("repeat: 3\n"), {"--repeat", "2"});
  ASSERT_EQ(r.result.status, 0) << r.result.out << r.result.err;
  EXPECT_EQ(r.record["repeat"]["count"], 2);
  EXPECT_EQ(r.record["tests"].size(), 2u);
  // --repeat 1 on a repeating protocol: one run of each test, written as an unrepeated record.
  ScratchDir once("repeat-override-1");
  const Finished one = run_protocol(once, protocol_text("repeat: 3\n"), {"--repeat", "1"});
  ASSERT_EQ(one.result.status, 0) << one.result.out << one.result.err;
  EXPECT_EQ(one.record["tests"].size(), 1u);
  EXPECT_FALSE(one.record.contains("repeat"));
  EXPECT_FALSE(one.record.contains("repetitions"));
  EXPECT_FALSE(one.record["tests"][0].contains("repetition"));
}

TEST(Repeat, BadValuesAreRefusedAtFileLineAndKey) {
  for (const auto& [extra, expect] :
       std::vector<std::pair<std::string, std::string>>{{"repeat: 0\n", "p.yaml:3:"},
                                                        {"repeat: 1001\n", "p.yaml:3:"},
                                                        {"repeat: many\n", "p.yaml:3:"},
                                                        {"repeat: 2\nrepeat_between: fresh\n", "p.yaml:4:"}}) {
    SCOPED_TRACE(extra);
    ScratchDir dir("repeat-bad");
    const Finished r = run_protocol(dir, protocol_text(extra));
    EXPECT_EQ(r.result.status, 2) << r.result.out << r.result.err;
    EXPECT_NE(r.result.err.find(expect), std::string::npos) << r.result.err;
    EXPECT_NE(r.result.err.find("repeat"), std::string::npos) << r.result.err;
  }
  ScratchDir dir("repeat-bad-cli");
  const Finished r = run_protocol(dir, protocol_text(""), {"--repeat", "0"});
  EXPECT_EQ(r.result.status, 2) << r.result.out << r.result.err;
  EXPECT_NE(r.result.err.find("--repeat"), std::string::npos) << r.result.err;
}

/// Polls `out`'s live record until it holds `n` finished tests (null after `timeout`).
json wait_for_tests(const fs::path& out, std::size_t n, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::error_code ec;
    if (!fs::exists(out / "latest.json", ec)) continue;
    const json rec = json::parse(read_file(out / "latest.json"), nullptr, /*allow_exceptions=*/false);
    if (!rec.is_discarded() && rec["tests"].size() >= n) return rec;
  }
  return json();
}

/// A run of three 4 s repetitions, signalled with `sig` once the second has ended (the third then
/// has seconds to go); returns the run's output directory's record path and run id.
std::pair<fs::path, std::string> interrupt_in_third(const ScratchDir& dir, int sig, int expected_status) {
  const fs::path protocol = dir.path() / "p.yaml";
  std::ofstream(protocol) << protocol_text("repeat: 3\n", "4s");
  fs::create_directories(dir.path() / "target");
  const fs::path out = dir.path() / "out";
  Child child({DRIVELAB_EXE, "run", protocol.string(), "--target", (dir.path() / "target").string(), "--out",
               out.string(), "--quiet"},
              dir.path() / "stdout.txt", dir.path() / "stderr.txt");
  const json live = wait_for_tests(out, 2, std::chrono::seconds(120));
  EXPECT_FALSE(live.is_null()) << child.out() << child.err();
  // The third repetition has begun: its test_start is in the journal.
  const fs::path journal = out / (live.value("run_id", std::string()) + ".journal.jsonl");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (read_file(journal).find("\"repetition\":3") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  child.signal(sig);
  EXPECT_EQ(child.wait(std::chrono::seconds(60)), expected_status) << child.out() << child.err();
  return {out, live.is_null() ? std::string() : live["run_id"].get<std::string>()};
}

void expect_first_two_kept(const json& rec) {
  ASSERT_EQ(rec["tests"].size(), 3u) << rec.dump(1).substr(0, 3000);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(rec["tests"][k]["status"], "complete");
    EXPECT_EQ(rec["tests"][k]["repetition"], k + 1);
  }
  EXPECT_EQ(rec["tests"][2]["repetition"], 3);
  EXPECT_EQ(rec["tests"][2]["status"], "interrupted");
  EXPECT_EQ(rec["status"], "interrupted");
  ASSERT_EQ(rec["repetitions"].size(), 1u);
  EXPECT_EQ(rec["repetitions"][0]["n"], 2);
  const double mean = (rec["tests"][0]["metrics"]["iops"]["value"].get<double>() +
                       rec["tests"][1]["metrics"]["iops"]["value"].get<double>()) /
                      2;
  EXPECT_NEAR(summary_metric(rec, "a", "iops")["mean"].get<double>(), mean, 1e-9 * mean);
}

TEST(Repeat, AnInterruptInTheThirdRepetitionKeepsTheFirstTwo) {
  ScratchDir dir("repeat-sigint");
  const auto [out, run_id] = interrupt_in_third(dir, SIGINT, 130);
  ASSERT_FALSE(run_id.empty());
  expect_first_two_kept(json::parse(read_file(out / "latest.json")));
}

TEST(Repeat, AKilledRunIsRecoveredWithItsFinishedRepetitions) {
  ScratchDir dir("repeat-sigkill");
  const auto [out, run_id] = interrupt_in_third(dir, SIGKILL, 128 + SIGKILL);
  ASSERT_FALSE(run_id.empty());
  const fs::path recovered = dir.path() / "recovered.json";
  const auto r = drivelab::testing::run(
      {DRIVELAB_EXE, "results", "recover", (out / (run_id + ".journal.jsonl")).string(), "-o", recovered.string()},
      dir.path());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json rec = json::parse(read_file(recovered));
  EXPECT_EQ(rec["repeat"]["count"], 3);
  expect_first_two_kept(rec);
  const auto v = drivelab::testing::run({DRIVELAB_EXE, "results", "validate", recovered.string()}, dir.path());
  EXPECT_EQ(v.status, 0) << v.out << v.err;
}

TEST(Repeat, RecordsAndJournalsOfARepeatedRunValidate) {
  ScratchDir dir("repeat-schema");
  const Finished r = run_protocol(dir, protocol_text("repeat: 2\nrepeat_between: discard-first\n"));
  ASSERT_EQ(r.result.status, 0) << r.result.out << r.result.err;
  std::vector<std::string> args{DRIVELAB_EXE, "results", "validate"};
  for (const auto& e : fs::directory_iterator(dir.path() / "out"))
    if (!e.is_symlink() && !e.path().string().ends_with(".reserve")) args.push_back(e.path().string());
  ASSERT_EQ(args.size(), 5u);  // the record and its journal
  const auto v = drivelab::testing::run(args, dir.path());
  if (v.status == 3) GTEST_SKIP() << "no python3-jsonschema: " << v.err;
  EXPECT_EQ(v.status, 0) << v.out << v.err;
}

/// A paced vdbench run of 50 IOPS (Poisson arrivals: about 10 I/Os per 200 ms interval, so the
/// intervals' rates spread by about 30%) measured for 2 s: the within-run interval of its mean
/// rate is far wider than ±2%, and the test says so, naming the duration that would reach it.
TEST(Repeat, AShortRunWarnsThatItsWithinRunIntervalIsWide) {
  ScratchDir dir("within-run");
  const Finished r = run_protocol(dir, R"(protocol: within
tests:
  - name: paced
    kind: vdbench
    warmup: 0s
    duration: 2s
    interval: 200ms
    vdbench:
      engine: psync
      threads: 1
      file_size: 1MiB
      direct: false
      iorate: 50
      workloads:
        - {name: rr, xfersize: 4k, rdpct: 100, seekpct: 100}
)");
  ASSERT_EQ(r.result.status, 0) << r.result.out << r.result.err;
  const json& t = r.record["tests"][0];
  ASSERT_TRUE(t["metrics"].contains("iops_ci95_low")) << t["metrics"].dump();
  const double low = t["metrics"]["iops_ci95_low"]["value"], high = t["metrics"]["iops_ci95_high"]["value"];
  EXPECT_LT(low, high);
  EXPECT_GT(t["metrics"]["rate_ci95_half_width_pct"]["value"].get<double>(), 2.0);
  EXPECT_TRUE(t["metrics"].contains("batch_means_lag1"));
  bool warned = false;
  for (const json& w : t["warnings"]) {
    const std::string s = w;
    if (s.starts_with("iops: ") && s.find(" intervals of ") != std::string::npos &&
        s.find("(within-run noise only)") != std::string::npos && s.find(" would give ±2%") != std::string::npos)
      warned = true;
  }
  EXPECT_TRUE(warned) << t["warnings"].dump();
  // The repetition fields stay out of an unrepeated record.
  EXPECT_FALSE(r.record.contains("repeat"));
  EXPECT_FALSE(t.contains("repetition"));
  EXPECT_FALSE(t.contains("seed"));
}

TEST(Repeat, TwoRanksRepeatAsOneJobAndMergePerRepetition) {
  if (!fs::exists(drivelab::testing::kMpirun)) GTEST_SKIP() << "no mpirun (apt-get install openmpi-bin)";
  ScratchDir dir("repeat-mpi");
  const fs::path protocol = dir.path() / "p.yaml";
  std::ofstream(protocol) << protocol_text("repeat: 2\n");
  const fs::path out = dir.path() / "out";
  const auto r = drivelab::testing::run(
      drivelab::testing::mpirun_local(2, {DRIVELAB_EXE, "run", protocol.string(), "--target",
                                          (dir.path() / "t{rank}").string(), "--out", out.string(), "--quiet"}),
      dir.path(), std::chrono::seconds(300));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::vector<std::string> merge_args{DRIVELAB_EXE, "results", "merge"};
  fs::path merged;
  for (const auto& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    if (e.is_symlink() || !name.ends_with(".json")) continue;
    if (name.find("-r") != std::string::npos)
      merge_args.push_back(e.path().string());
    else
      merged = e.path();
  }
  ASSERT_EQ(merge_args.size(), 5u) << r.out;
  ASSERT_FALSE(merged.empty()) << r.out;
  const json rec = json::parse(read_file(merged));
  EXPECT_EQ(rec["status"], "complete");
  ASSERT_EQ(rec["tests"].size(), 2u);
  for (int k = 0; k < 2; ++k) EXPECT_EQ(rec["tests"][k]["repetition"], k + 1);
  EXPECT_EQ(rec["repeat"]["count"], 2);
  EXPECT_EQ(rec["repetitions"][0]["n"], 2);
  // The merged IOPS of a repetition is the sum of the ranks' (null engine: no shared device).
  double sum = 0;
  for (std::size_t i = 3; i < 5; ++i)
    sum += json::parse(read_file(merge_args[i]))["tests"][1]["metrics"]["iops"]["value"].get<double>();
  EXPECT_NEAR(rec["tests"][1]["metrics"]["iops"]["value"].get<double>(), sum, 1e-9 * sum);
  merge_args.push_back("-o");
  merge_args.push_back((dir.path() / "offline.json").string());
  const auto m = drivelab::testing::run(merge_args, dir.path(), std::chrono::seconds(120));
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  EXPECT_EQ(read_file(dir.path() / "offline.json"), read_file(merged));
}

}  // namespace
