// `drivelab compare` through the real binary: exit statuses 0, 1 and 2 as documented (diff(1)'s
// convention), --fail-if-worse, --json, inputs from a results store (db:), and the bad inputs named.
// Records are written with results::write_record, five runs a side.
#include <gtest/gtest.h>

#include <fstream>

#include "drivelab/results/record.hpp"
#include "report_test_util.hpp"

namespace drivelab::report {
namespace {

using testing::read_text;
using testing::run_command;
using testing::TempDir;

std::string write_run(const std::filesystem::path& dir, const std::string& run_id, double iops, double latency_us,
                      const std::string& test = "4k-random-read") {
  results::RunRecord rec;
  rec.run_id = run_id;
  rec.status = results::Status::complete;
  rec.started_at = "2026-12-07T02:00:00Z";
  rec.target = results::Json{{"kind", "directory"}, {"model", "Test drive"}};
  results::TestRecord t;
  t.name = test;
  t.kind = "io";
  t.status = results::Status::complete;
  t.config = results::Json{{"rw", "randread"}};
  t.metrics = {{"iops", iops, "1/s", "I/Os per second"}, {"latency_avg_us", latency_us, "us", "average latency"}};
  rec.tests.push_back(std::move(t));
  const auto path = dir / (run_id + ".json");
  results::write_record(path, rec);
  return path.string();
}

struct Sides {
  std::vector<std::string> base, aa, slow;
};

Sides write_sides(const std::filesystem::path& dir) {
  const std::vector<double> iops{10000, 10100, 9900, 10050, 9950};
  const std::vector<double> aa{10020, 9980, 10060, 9940, 10010};
  const std::vector<double> lat{100, 99, 101, 99.5, 100.5};
  Sides s;
  for (std::size_t i = 0; i < iops.size(); ++i) {
    s.base.push_back(write_run(dir, "base-" + std::to_string(i), iops[i], lat[i]));
    s.aa.push_back(write_run(dir, "aa-" + std::to_string(i), aa[i], lat[i] + 0.1));
    s.slow.push_back(write_run(dir, "slow-" + std::to_string(i), iops[i] * 0.9, lat[i] / 0.9));
  }
  return s;
}

int compare(const TempDir& dir, std::vector<std::string> options, const std::vector<std::string>& base,
            const std::vector<std::string>& cand) {
  std::vector<std::string> args{DRIVELAB_EXE, "compare"};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), base.begin(), base.end());
  args.push_back("--");
  args.insert(args.end(), cand.begin(), cand.end());
  return run_command(args, dir / "out", dir / "err");
}

TEST(CompareCli, ExitZeroOnAaOneOnASlowerCandidateBeyondTheMargin) {
  TempDir dir;
  const Sides s = write_sides(dir.path());
  EXPECT_EQ(compare(dir, {"--fail-if-worse", "3%"}, s.base, s.aa), 0) << read_text(dir / "err");
  const std::string aa = read_text(dir / "out");
  EXPECT_NE(aa.find("no difference detected"), std::string::npos) << aa;
  EXPECT_NE(aa.find("(exit 0)"), std::string::npos) << aa;

  EXPECT_EQ(compare(dir, {"--fail-if-worse", "3%", "--json", (dir / "c.json").string()}, s.base, s.slow), 1)
      << read_text(dir / "err");
  const std::string out = read_text(dir / "out");
  EXPECT_NE(out.find("slower (beyond 3%)"), std::string::npos) << out;
  EXPECT_NE(out.find("-10.0%"), std::string::npos) << out;
  const auto j = results::Json::parse(read_text(dir / "c.json"));
  EXPECT_EQ(j["schema"], "drivelab.compare/1");
  EXPECT_EQ(j["exit_status"], 1);
  EXPECT_EQ(j["fail_if_worse_pct"], 3.0);
  ASSERT_EQ(j["tests"].size(), 1u);
  EXPECT_EQ(j["tests"][0]["test"], "4k_random_read");
  const auto& m = j["tests"][0]["metrics"][0];
  EXPECT_EQ(m["metric"], "iops");
  EXPECT_EQ(m["verdict_word"], "slower");
  EXPECT_LE(m["change_ci_pct"][0].get<double>(), -10.0);
  EXPECT_GE(m["change_ci_pct"][1].get<double>(), -10.0);
  EXPECT_FALSE(m["mann_whitney_p"].is_null());  // N = 5 on both sides

  // A margin beyond the change: still slower, exit 0.
  EXPECT_EQ(compare(dir, {"--fail-if-worse", "20"}, s.base, s.slow), 0) << read_text(dir / "err");
  // Without a margin: any metric judged worse.
  EXPECT_EQ(compare(dir, {}, s.base, s.slow), 1) << read_text(dir / "err");
  // The candidate faster: exit 0.
  EXPECT_EQ(compare(dir, {}, s.slow, s.base), 0) << read_text(dir / "err");
  EXPECT_NE(read_text(dir / "out").find("faster"), std::string::npos);
}

TEST(CompareCli, BadInputIsExitTwoAndNamed) {
  TempDir dir;
  const Sides s = write_sides(dir.path());
  const auto err_has = [&dir](const std::string& what) {
    const std::string err = read_text(dir / "err");
    EXPECT_NE(err.find(what), std::string::npos) << "no '" << what << "' in: " << err;
  };
  EXPECT_EQ(compare(dir, {}, s.base, {(dir / "missing.json").string()}), 2);
  err_has("missing.json: candidate input: no such file");
  EXPECT_EQ(compare(dir, {}, s.base, {s.slow[0]}), 2);
  err_has("N < 2 on the candidate");
  EXPECT_EQ(
      compare(dir, {}, s.base,
              {write_run(dir.path(), "other-1", 1, 1, "seq-read"), write_run(dir.path(), "other-2", 1, 1, "seq-read")}),
      2);
  err_has("no common tests");
  EXPECT_EQ(compare(dir, {}, s.base, {s.base[0], s.slow[1]}), 2);
  err_has("run base-0 is on both sides");
  EXPECT_EQ(compare(dir, {}, s.base, {"db:serial=X"}), 2);
  err_has("needs --db FILE");
  // No "--": the candidates cannot be told from the baseline.
  EXPECT_EQ(run_command({DRIVELAB_EXE, "compare", s.base[0], s.slow[0]}, dir / "out", dir / "err"), 2);
  err_has("BASELINE... -- CANDIDATE...");
  EXPECT_EQ(compare(dir, {"--fail-if-worse", "lots"}, s.base, s.slow), 2);
  err_has("--fail-if-worse");
}

TEST(CompareCli, SidesFromAResultsStore) {
  TempDir dir;
  const Sides s = write_sides(dir.path());
  std::vector<std::string> import{DRIVELAB_EXE, "results", "import", "--db", (dir / "runs.sqlite").string()};
  import.insert(import.end(), s.base.begin(), s.base.end());
  ASSERT_EQ(run_command(import, dir / "out", dir / "err"), 0) << read_text(dir / "err");
  // The baseline from the store (five runs selected by id), the candidate from files.
  std::string ids = "db:";
  for (int i = 0; i < 5; ++i) ids += (i ? ",run=base-" : "run=base-") + std::to_string(i);
  EXPECT_EQ(compare(dir, {"--db", (dir / "runs.sqlite").string(), "--fail-if-worse", "3%"}, {ids}, s.slow), 1)
      << read_text(dir / "err");
  const std::string out = read_text(dir / "out");
  EXPECT_NE(out.find("5/5"), std::string::npos) << out;
  EXPECT_NE(out.find("slower"), std::string::npos) << out;
  // A query that selects nothing is bad input.
  EXPECT_EQ(compare(dir, {"--db", (dir / "runs.sqlite").string()}, {"db:run=nope"}, s.slow), 2);
  EXPECT_NE(read_text(dir / "err").find("db:run=nope: no stored run"), std::string::npos) << read_text(dir / "err");
}

TEST(NoiseCli, RunsTheProtocolNTimesAndPrintsTheCvAndTheDetectableChange) {
  TempDir dir;
  // The null engine for one second: a real run of drivelab's own I/O loop, no file.
  const auto protocol = dir / "null.yaml";
  std::ofstream(protocol) << "protocol: noise-test\nseed: 1\ntests:\n  - name: null-read\n    kind: io\n"
                             "    warmup: 0s\n    duration: 1s\n    interval: 1s\n    io:\n      engine: null\n"
                             "      rw: randread\n      iodepth: 4\n";
  std::filesystem::create_directories(dir / "target");
  const int rc = run_command({DRIVELAB_EXE, "noise", protocol.string(), "--target", (dir / "target").string(), "--out",
                              (dir / "out").string(), "--repeat", "3", "--quiet"},
                             dir / "stdout", dir / "err");
  ASSERT_EQ(rc, 0) << read_text(dir / "err");
  const std::string out = read_text(dir / "stdout");
  EXPECT_NE(out.find("noise: 1 run of"), std::string::npos) << out;
  EXPECT_NE(out.find("every test 3 times"), std::string::npos) << out;
  EXPECT_NE(out.find("run-to-run CV"), std::string::npos) << out;
  // A row for the test's IOPS over the three runs, with its CV and the detectable change.
  const auto row = out.find("null_read  iops");
  ASSERT_NE(row, std::string::npos) << out;
  const std::string line = out.substr(row, out.find('\n', row) - row);
  EXPECT_NE(line.find("  3  "), std::string::npos) << line;
  EXPECT_NE(line.find('%'), std::string::npos) << line;
  EXPECT_NE(line.find("±"), std::string::npos) << line;
  // One run, one record, as `drivelab run --repeat 3` writes it: three repetitions of the test.
  int records = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir / "out"))
    records += e.path().extension() == ".json" && e.path().filename() != "latest.json" ? 1 : 0;
  EXPECT_EQ(records, 1);
  const results::RunRecord rec = results::read_record(dir / "out" / "latest.json");
  ASSERT_EQ(rec.tests.size(), 3u);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(rec.tests[static_cast<std::size_t>(k)].repetition, k + 1);
  // Fewer than 3 runs is refused.
  EXPECT_EQ(
      run_command({DRIVELAB_EXE, "noise", protocol.string(), "--target", (dir / "target").string(), "--repeat", "2"},
                  dir / "stdout", dir / "err"),
      2);
}

}  // namespace
}  // namespace drivelab::report
