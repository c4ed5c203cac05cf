// The command line itself, through the real binary (issue 15 part 7): a --target that is neither a
// directory nor a block device is a bad option (exit 2, README "Exit status"), an unknown
// subcommand names itself and the valid ones, and `--backend help` lists every backend from the
// one list the protocol key decodes with (oltp::kBackendKindNames).
#include <gtest/gtest.h>

#include <fstream>

#include "drivelab/oltp/database/database.hpp"
#include "drivelab/results/identity.hpp"
#include "drivelab/results/journal.hpp"
#include "drivelab/results/merge.hpp"
#include "drivelab/results/record.hpp"
#include "process.hpp"

namespace {

using drivelab::testing::ScratchDir;

TEST(Cli, TargetThatIsARegularFileExitsWithBadOptions) {
  ScratchDir dir("cli-target-file");
  const auto file = dir.path() / "not-a-directory";
  std::ofstream(file) << "x";
  for (const std::vector<std::string>& cmd :
       {std::vector<std::string>{DRIVELAB_EXE, "io", "--target", file.string(), "--rw", "randread", "--duration", "1s"},
        std::vector<std::string>{DRIVELAB_EXE, "oltp", "tpcc", "--target", file.string(), "--duration", "1s"}}) {
    const auto r = drivelab::testing::run(cmd, dir.path(), std::chrono::seconds(60));
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("is neither a directory nor a block device"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(file.string()), std::string::npos) << r.err;
  }
  const auto missing =
      drivelab::testing::run({DRIVELAB_EXE, "io", "--target", (dir.path() / "nowhere").string(), "--duration", "1s"},
                             dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(missing.status, 2) << missing.err;
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
  // Nothing was created beside the file: no run started.
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "drivelab-results"));
}

// A relative --target, and one reached through a symbolic link: the record names the test file by
// its absolute path, spelled as it spells the target (target.path, links resolved), so that the
// record read elsewhere says which file was measured, in one spelling.
TEST(Cli, ARelativeTargetIsRecordedWithAbsolutePaths) {
  ScratchDir dir("cli-relative-target");
  std::filesystem::create_directories(dir.path() / "t");
  std::filesystem::create_directory_symlink("t", dir.path() / "link");
  const auto target = std::filesystem::canonical(dir.path() / "t");
  for (const char* given : {"t", "link"}) {
    std::filesystem::remove_all(dir.path() / "drivelab-results");
    const auto r = drivelab::testing::run(
        {DRIVELAB_EXE, "io", "--target", given, "--rw", "randread", "--size", "4MiB", "--warmup", "0s", "--duration",
         "1s", "--interval", "500ms", "--engine", "psync", "--no-harness-ceiling", "-q"},
        dir.path(), std::chrono::seconds(120), /*cwd=*/dir.path());
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    std::ifstream in(dir.path() / "drivelab-results" / "latest.json");
    const auto rec = drivelab::results::Json::parse(in);
    EXPECT_EQ(rec.at("target").at("path").get<std::string>(), target.string()) << given;
    const std::string file = rec.at("tests").at(0).at("details").at("file").at("path").get<std::string>();
    EXPECT_EQ(std::filesystem::path(file).parent_path(), target) << given << ": " << file;
  }
}

TEST(Cli, UnknownSubcommandNamesItselfAndTheValidOnes) {
  ScratchDir dir("cli-subcommand");
  const auto top =
      drivelab::testing::run({DRIVELAB_EXE, "rnu", "config/quick.yaml"}, dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(top.status, 2);
  EXPECT_NE(top.err.find("unknown subcommand 'rnu'"), std::string::npos) << top.err;
  for (const char* sub : {"run", "validate", "io", "oltp", "results", "report", "trace", "list", "version"})
    EXPECT_NE(top.err.find(sub), std::string::npos) << sub << " missing from: " << top.err;
  const auto nested =
      drivelab::testing::run({DRIVELAB_EXE, "trace", "stats", "x"}, dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(nested.status, 2);
  EXPECT_NE(nested.err.find("unknown subcommand 'stats' of drivelab trace"), std::string::npos) << nested.err;
  EXPECT_NE(nested.err.find("stat, convert"), std::string::npos) << nested.err;
}

// `validate` says the warnings of the tests that decoded also when another test has an error:
// every finding at once, not the warnings only after the errors are fixed.
TEST(Cli, ValidateSaysWarningsBesideErrors) {
  ScratchDir dir("cli-validate-warnings");
  const auto file = dir.path() / "p.yaml";
  std::ofstream(file) << "protocol: p\ntests:\n"
                         "  - {name: sb, kind: sysbench, duration: 2s, sysbench: {rate: 10, slo: {p99_ms: 5}}}\n"
                         "  - {name: bad, kind: io, duration: 2s, io: {iodepth: 0}}\n";
  const auto r =
      drivelab::testing::run({DRIVELAB_EXE, "validate", file.string()}, dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("tests[1].io.iodepth"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": tests[0].sysbench.slo: the sizing answers are read off a curve"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("warning: "), std::string::npos) << r.err;
}

TEST(Cli, BackendHelpListsEveryBackend) {
  ScratchDir dir("cli-backend-help");
  const auto r =
      drivelab::testing::run({DRIVELAB_EXE, "oltp", "tpcc", "--backend", "help"}, dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(r.status, 0) << r.err;
  for (const auto& [word, kind] : drivelab::oltp::kBackendKindNames)
    EXPECT_NE(r.out.find(std::string(word)), std::string::npos) << word << " missing from: " << r.out;
  const auto help =
      drivelab::testing::run({DRIVELAB_EXE, "oltp", "tpcc", "--help"}, dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("sqlite, postgres, mysql, odbc"), std::string::npos) << help.out;
}

// Issue 16: `drivelab results merge` writes <job_id>.json beside the first input, exits 0 when
// every host is there and complete, 1 naming a missing host, 2 rather than overwrite an input.
TEST(Cli, ResultsMergeWritesTheJobRecordAndNamesAMissingHost) {
  using namespace drivelab::results;  // NOLINT(google-build-using-namespace)
  ScratchDir dir("cli-merge");
  const auto rank_file = [&](int rank, int size) {
    RunRecord r;
    r.run_id = "job1-r" + std::to_string(rank);
    r.status = Status::complete;
    r.protocol = "quick";
    // A rank's record as a run writes it (the merged record is kept and checked against the
    // schema: docs/results.md, Schema): this machine's tool and host, named vm<rank>.
    r.tool = probe_tool();
    r.host = probe_host();
    r.host["hostname"] = "vm" + std::to_string(rank);
    r.cohort = Json{{"job_id", "job1"},     {"rank", rank},
                    {"size", size},         {"hosts", {"vm0", "vm1", "vm2"}},
                    {"clock_offset_ns", 0}, {"clock_offset_uncertainty_ns", 0}};
    TestRecord t;
    t.name = "io";
    t.status = Status::complete;
    t.metrics = {{"iops", 1000.0 + rank, "1/s", ""}};
    r.tests = {t};
    const auto path = dir.path() / ("rank" + std::to_string(rank) + ".json");
    write_record(path, r);
    return path.string();
  };
  const std::string r0 = rank_file(0, 3);
  const std::string r2 = rank_file(2, 3);
  const auto partial =
      drivelab::testing::run({DRIVELAB_EXE, "results", "merge", r2, r0}, dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(partial.status, 1) << partial.err;
  EXPECT_NE(partial.out.find("no record or journal of rank 1 (host vm1)"), std::string::npos) << partial.out;
  const RunRecord merged = read_record(dir.path() / "job1.json");
  EXPECT_EQ(merged.status, Status::interrupted);
  EXPECT_DOUBLE_EQ(merged.tests.at(0).metrics.at(0).value, 2002);
  const auto refused = drivelab::testing::run({DRIVELAB_EXE, "results", "merge", r0, r2, "-o", r2}, dir.path(),
                                              std::chrono::seconds(60));
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("is the input"), std::string::npos) << refused.err;
  EXPECT_EQ(read_record(r2).run_id, "job1-r2") << "the input is untouched";
  const std::string r1 = rank_file(1, 3);
  const auto all =
      drivelab::testing::run({DRIVELAB_EXE, "results", "merge", r0, r1, r2, "-o", (dir.path() / "all.json").string()},
                             dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(all.status, 0) << all.err << all.out;
  EXPECT_EQ(read_record(dir.path() / "all.json").status, Status::complete);
}

// Issue 34: a rank killed mid-run leaves a record still `running` (rewritten when its intervals
// last doubled: 1 here) and a journal with every interval (3) and its 8 MiB reserve. `results
// merge` takes the journal's intervals, writes no merged `running` and removes the reserve.
TEST(Cli, ResultsMergeTakesTheJournalOfAStaleRecordNeverWritesRunningAndRemovesItsReserve) {
  using namespace drivelab::results;  // NOLINT(google-build-using-namespace)
  ScratchDir dir("cli-merge-stale");
  const auto rank_record = [&](int rank, Status status, int intervals) {
    RunRecord r;
    r.run_id = "job2-r" + std::to_string(rank);
    r.status = status;
    r.protocol = "quick";
    r.tool = probe_tool();
    r.host = probe_host();
    r.host["hostname"] = "vm" + std::to_string(rank);
    r.cohort = Json{{"job_id", "job2"},        {"rank", rank},         {"size", 2},
                    {"hosts", {"vm0", "vm1"}}, {"clock_offset_ns", 0}, {"clock_offset_uncertainty_ns", 0}};
    TestRecord t;
    t.name = "io";
    t.kind = "io";
    t.status = status;
    if (status == Status::complete) t.metrics = {{"iops", 1000.0, "1/s", ""}};
    for (int k = 0; k < intervals; ++k) t.intervals.push_back(Interval{k + 1.0, 1.0, {{"iops", 1000.0}}});
    r.tests = {t};
    return r;
  };
  const auto r0 = dir.path() / "job2-r0.json";
  write_record(r0, rank_record(0, Status::complete, 3));
  const RunRecord stale = rank_record(1, Status::running, 1);
  const auto r1 = dir.path() / "job2-r1.json";
  write_record(r1, stale);
  const auto journal_path = dir.path() / "job2-r1.journal.jsonl";
  {
    Journal j(journal_path, 0);
    j.append(journal_run_start(stale));
    TestRecord t = stale.tests[0];
    t.intervals.clear();
    j.append(journal_test_start(t));
    for (int k = 0; k < 3; ++k) j.append(journal_interval("io", Interval{k + 1.0, 1.0, {{"iops", 900.0}}}));
  }
  const auto reserve = journal_path.string() + ".reserve";
  std::ofstream(reserve) << std::string(4096, '\0');  // what the killed rank left (8 MiB in a run)

  const auto r = drivelab::testing::run({DRIVELAB_EXE, "results", "merge", r0.string(), r1.string()}, dir.path(),
                                        std::chrono::seconds(60));
  EXPECT_EQ(r.status, 1) << r.err << r.out;  // not complete
  EXPECT_NE(r.err.find("job2-r1.json is stale (a live record, 1 intervals): its journal"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the reserve of a run that was killed"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(reserve));
  const RunRecord merged = read_record(dir.path() / "job2.json");
  EXPECT_EQ(merged.status, Status::interrupted) << merged.reason;
  EXPECT_EQ(merged.hosts[1]["tests"][0]["intervals"].size(), 3u) << "the journal's, not the stale record's 1";
  for (const TestRecord& t : merged.tests) EXPECT_NE(t.status, Status::running);
}

}  // namespace
