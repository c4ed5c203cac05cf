// The record's JSON Schema (docs/results.schema.json) through `drivelab results validate` (issue 18
// part 3): a short real protocol (TPC-C on SQLite, an io job, a vdbench curve) run twice, its
// journals, `results recover`, `results merge` of the two and `report --csv` of all of them are
// valid; so are the copies the test-suite hook keeps (DRIVELAB_KEEP_RECORDS_IN). A wrong type, a
// missing key, a bad status, a bad journal line and a bad CSV row are each rejected (exit 2) with
// the file, line and JSON pointer of the fault; no python3: exit 3.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <future>
#include <optional>

#include <nlohmann/json.hpp>

#include "process.hpp"

namespace {

namespace fs = std::filesystem;
using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;
using json = nlohmann::ordered_json;

const fs::path kSource = DRIVELAB_SOURCE_DIR;

/// Sets an environment variable for the children started in its scope (the tests are
/// single-threaded), restoring the previous value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// Seconds-long: a TPC-C test on SQLite (1,000 items: a testing scale), a psync random read and a
/// two-point vdbench curve of two workloads.
constexpr const char* kProtocol = R"(protocol: schema-check
seed: 11
defaults: {warmup: 0s, duration: 2s, interval: 1s}
tests:
  - name: oltp
    kind: tpcc
    tpcc: {backend: sqlite, warehouses: 1, users: 2, think: none, scale_items: 1000}
  - name: 4k-random-read
    kind: io
    io: {engine: psync, rw: randread, xfersize: 4k, iodepth: 1, file_size: 16MiB, direct: false}
  - name: mix
    kind: vdbench
    duration: 1s
    vdbench:
      engine: psync
      threads: 2
      jobs: 1
      file_size: 16MiB
      iorate: curve
      curve: [50, 100]
      workloads:
        - {name: reads, xfersize: 8k, rdpct: 100, seekpct: 100, skew: 70}
        - {name: writes, xfersize: 8k, rdpct: 0, seekpct: 100, skew: 30}
)";

/// `drivelab results validate ARGS...`.
drivelab::testing::Result validate(const ScratchDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {DRIVELAB_EXE, "results", "validate"});
  return drivelab::testing::run(args, dir.path(), std::chrono::seconds(300));
}

json load(const fs::path& p) { return json::parse(read_file(p)); }

void save(const fs::path& p, const json& j) { std::ofstream(p) << j.dump(1) << '\n'; }

std::string golden(const std::string& name) { return (kSource / "tests/golden" / name).string(); }

TEST(RecordSchema, ARealRunItsJournalRecoveryMergeAndReportAllValidate) {
  ScratchDir dir("record-schema-run");
  const fs::path protocol = dir.path() / "schema-check.yaml";
  std::ofstream(protocol) << kProtocol;
  const fs::path kept = dir.path() / "kept";
  std::vector<fs::path> records, journals;
  {
    ScopedEnv env("DRIVELAB_KEEP_RECORDS_IN", kept.string());  // the suite's hook, into our own directory
    // The two runs at the same time, each on its own target: `results merge` takes records of
    // hosts that ran together and refuses runs that did not (docs/results.md, "The ranks of one run").
    const auto run_into = [&](const std::string& out) {
      fs::create_directories(dir.path() / ("target-" + out));
      return drivelab::testing::run(
          {DRIVELAB_EXE, "run", protocol.string(), "--target", (dir.path() / ("target-" + out)).string(), "--out",
           (dir.path() / out).string(), "--quiet"},
          dir.path(), std::chrono::seconds(600));
    };
    auto second = std::async(std::launch::async, run_into, "out2");
    const auto first = run_into("out1");
    const auto other = second.get();
    ASSERT_EQ(first.status, 0) << first.out << first.err;
    ASSERT_EQ(other.status, 0) << other.out << other.err;
    for (const char* out : {"out1", "out2"}) {
      for (const auto& e : fs::directory_iterator(dir.path() / out)) {
        const std::string name = e.path().filename().string();
        if (name.ends_with(".journal.jsonl"))
          journals.push_back(e.path());
        else if (name.ends_with(".json") && name != "latest.json")
          records.push_back(e.path());
      }
    }
  }
  ASSERT_EQ(records.size(), 2u);
  ASSERT_EQ(journals.size(), 2u);
  // The record has every kind of content the schema describes: metrics with `of`, groups,
  // histograms, intervals with their own histograms, checks.
  const json r0 = load(records[0]);
  ASSERT_EQ(r0["tests"].size(), 3u);
  EXPECT_TRUE(r0["tests"][0]["metrics"]["latency_p99_ms"].contains("of")) << r0["tests"][0]["metrics"].dump();
  EXPECT_FALSE(r0["tests"][1]["intervals"].empty());
  EXPECT_TRUE(r0["tests"][1]["intervals"][0].contains("histograms"));

  const fs::path recovered = dir.path() / "recovered.json";
  const auto rec = drivelab::testing::run(
      {DRIVELAB_EXE, "results", "recover", journals[0].string(), "-o", recovered.string()}, dir.path());
  ASSERT_EQ(rec.status, 0) << rec.err;
  const fs::path merged = dir.path() / "merged.json";
  const auto mrg = drivelab::testing::run(
      {DRIVELAB_EXE, "results", "merge", records[0].string(), records[1].string(), "-o", merged.string()}, dir.path());
  ASSERT_EQ(mrg.status, 0) << mrg.err;
  EXPECT_EQ(load(merged)["hosts"].size(), 2u);
  const fs::path csv = dir.path() / "report.csv";
  const auto rep = drivelab::testing::run(
      {DRIVELAB_EXE, "report", records[0].string(), records[1].string(), merged.string(), "--csv", csv.string()},
      dir.path());
  ASSERT_EQ(rep.status, 0) << rep.err;
  EXPECT_NE(read_file(csv).find(",system,2,,"), std::string::npos) << read_file(csv);  // the merged 2-host row

  std::vector<std::string> files;
  for (const auto& p : records) files.push_back(p.string());
  for (const auto& p : journals) files.push_back(p.string());
  for (const auto& p : {recovered, merged, csv}) files.push_back(p.string());
  for (const char* g : {"report_run_disk_1.json", "report_run_loop_2.json", "report_two_targets.csv"})
    files.push_back(golden(g));
  const auto v = validate(dir, files);
  EXPECT_EQ(v.status, 0) << v.out << v.err;
  EXPECT_NE(v.out.find("10 of 10 files valid"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find(journals[0].string() + ": valid (journal, "), std::string::npos) << v.out;

  // The hook kept each run's final record and journal (as <pid>-<name>), and the recovered and
  // merged records were not kept (they were made outside its scope); the copies validate too.
  std::vector<std::string> copies;
  for (const auto& e : fs::directory_iterator(kept)) copies.push_back(e.path().string());
  EXPECT_EQ(copies.size(), 4u);
  for (const auto& p : records) {
    bool found = false;
    for (const auto& c : copies) found = found || c.ends_with("-" + p.filename().string());
    EXPECT_TRUE(found) << p;
  }
  const auto vk = validate(dir, copies);
  EXPECT_EQ(vk.status, 0) << vk.out << vk.err;
}

TEST(RecordSchema, FaultsAreRejectedWithTheirFileLineAndPointer) {
  ScratchDir dir("record-schema-faults");
  json r = load(golden("report_run_disk_1.json"));
  json wrong_type = r;
  wrong_type["tests"][0]["metrics"]["tps"]["value"] = "fast";
  json missing = r;
  missing.erase("run_id");
  json bad_status = r;
  bad_status["tests"][1]["status"] = "done";
  const fs::path a = dir.path() / "wrong_type.json", b = dir.path() / "missing.json",
                 c = dir.path() / "bad_status.json";
  save(a, wrong_type);
  save(b, missing);
  save(c, bad_status);

  const auto va = validate(dir, {a.string()});
  EXPECT_EQ(va.status, 2) << va.out << va.err;
  EXPECT_NE(va.out.find(a.string() + ": /tests/0/metrics/tps/value: 'fast' is not of type 'number', 'null'"),
            std::string::npos)
      << va.out;
  const auto vb = validate(dir, {b.string()});
  EXPECT_EQ(vb.status, 2);
  EXPECT_NE(vb.out.find(b.string() + ": /run_id: required key missing"), std::string::npos) << vb.out;
  const auto vc = validate(dir, {c.string(), golden("report_run_disk_2.json")});
  EXPECT_EQ(vc.status, 2);
  EXPECT_NE(vc.out.find(c.string() + ": /tests/1/status: 'done' is not one of"), std::string::npos) << vc.out;
  EXPECT_NE(vc.out.find("1 of 2 files valid"), std::string::npos) << vc.out;

  // A journal: the fault's line and its pointer inside the event.
  const fs::path journal = dir.path() / "run.journal.jsonl";
  {
    std::ofstream j(journal);
    json start{{"event", "run_start"}, {"record", r}};
    start["record"]["tests"] = json::array();
    j << start.dump() << '\n';
    j << json{{"event", "test_start"},
              {"test", "oltp"},
              {"kind", "tpcc"},
              {"config", json::object()},
              {"at", "2026-11-30T03:19:30.000Z"}}
             .dump()
      << '\n';
    j << json{{"event", "interval"},
              {"test", "oltp"},
              {"interval", {{"t_s", "one"}, {"duration_s", 1.0}, {"values", json::object()}}}}
             .dump()
      << '\n';
    j << json{{"event", "run_end"}, {"status", "complete"}, {"reason", ""}, {"at", "2026-11-30T03:24:15.649Z"}}.dump()
      << '\n';
  }
  const auto vj = validate(dir, {journal.string()});
  EXPECT_EQ(vj.status, 2);
  EXPECT_NE(vj.out.find(journal.string() + ":3: /interval/t_s: 'one' is not of type 'number', 'null'"),
            std::string::npos)
      << vj.out;
  EXPECT_EQ(vj.out.find(":1: "), std::string::npos) << vj.out;  // the other lines are valid

  // A report CSV: a rank that is not a number, on the row's line.
  std::string text = read_file(golden("report_two_targets.csv"));
  const auto second_line = text.find('\n') + 1;
  const auto rank_at = text.find(",measured,1,", second_line) + 10;
  text.replace(rank_at, 1, "first");
  const fs::path csv = dir.path() / "report.csv";
  std::ofstream(csv) << text;
  const auto vr = validate(dir, {csv.string()});
  EXPECT_EQ(vr.status, 2);
  EXPECT_NE(vr.out.find(csv.string() + ":2: /rank: 'first' does not match"), std::string::npos) << vr.out;

  // --schema: another schema file.
  const fs::path schema = dir.path() / "strict.json";
  std::ofstream(schema) << R"({"$schema": "https://json-schema.org/draft/2020-12/schema", "required": ["lab"]})";
  const auto vs = validate(dir, {"--schema", schema.string(), golden("report_run_disk_1.json")});
  EXPECT_EQ(vs.status, 2);
  EXPECT_NE(vs.out.find("report_run_disk_1.json: /lab: required key missing"), std::string::npos) << vs.out;
}

// Journals as `results recover` reads them: the first event is run_start; a last line cut off by
// a kill is noted, not a fault; a file that is not text is reported and the others still checked.
TEST(RecordSchema, JournalsFollowRecoverAndBinaryFilesAreReportedNotFatal) {
  ScratchDir dir("record-schema-journals");
  const fs::path empty = dir.path() / "empty.jsonl", interval_only = dir.path() / "interval.jsonl",
                 cut = dir.path() / "cut.jsonl", binary = dir.path() / "binary.json", good = dir.path() / "good.json";
  std::ofstream(empty) << "";
  std::ofstream(interval_only) << R"({"event":"interval","test":"a","interval":{"t_s":1,"duration_s":1,"values":{}}})"
                               << '\n';
  std::ofstream(cut) << R"({"event":"run_start","record":{"schema":"drivelab.run/1")";  // cut by a kill, no newline
  std::ofstream(binary, std::ios::binary) << std::string(
      "\x7f"
      "ELF\x02\x01\x01\0\xd0\xff\xfe\0",  // 12 bytes, the last a NUL
      12);
  save(good, load(golden("report_run_disk_1.json")));
  const auto v = validate(dir, {empty.string(), interval_only.string(), cut.string(), binary.string(), good.string()});
  EXPECT_EQ(v.status, 2) << v.out << v.err;
  EXPECT_NE(v.out.find(empty.string() + ": (document root): no events: a journal starts with the run_start event"),
            std::string::npos)
      << v.out;
  EXPECT_NE(v.out.find(interval_only.string() + ":1: /event: a journal starts with the run_start event"),
            std::string::npos)
      << v.out;
  EXPECT_NE(v.out.find(cut.string() + ":1: note: the last line is cut off"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find(binary.string() + ": (document root): not valid JSON or CSV: not UTF-8 text"), std::string::npos)
      << v.out << v.err;
  EXPECT_NE(v.out.find(good.string() + ": valid (record)"), std::string::npos)
      << "checked after the binary file: " << v.out;
}

// What the journal writes when the results disk fills (a torn line, then its next events on lines
// of their own) is a note, not a fault: the journal drivelab wrote validates.
TEST(RecordSchema, AJournalLineTornByAFullDiskIsANoteNotAFault) {
  ScratchDir dir("record-schema-torn");
  const fs::path target = dir.path() / "target", out = dir.path() / "out";
  fs::create_directories(target);
  const auto r =
      drivelab::testing::run({DRIVELAB_EXE, "io", "--target", target.string(), "--out", out.string(), "--engine",
                              "null", "--warmup", "0s", "--duration", "2s", "--interval", "500ms", "--quiet"},
                             dir.path());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  fs::path journal;
  for (const auto& e : fs::directory_iterator(out))
    if (e.path().string().ends_with(".journal.jsonl")) journal = e.path();
  ASSERT_FALSE(journal.empty());
  std::string text = read_file(journal);
  const std::size_t third = text.find('\n', text.find('\n') + 1) + 1;
  text.insert(third, "{\"event\":\"interval\",\"test\":\"io\",\"interv\n");
  std::ofstream(journal) << text;
  const auto v = validate(dir, {journal.string()});
  EXPECT_EQ(v.status, 0) << v.out << v.err;
  EXPECT_NE(v.out.find(journal.string() + ":3: note: a write torn by a full disk"), std::string::npos) << v.out;
  // Garbage that is not the start of an event stays a fault.
  text.insert(third, "garbage\n");
  std::ofstream(journal) << text;
  const auto g = validate(dir, {journal.string()});
  EXPECT_EQ(g.status, 2) << g.out << g.err;
  EXPECT_NE(g.out.find(journal.string() + ":3: (document root): not valid JSON"), std::string::npos) << g.out;
}

TEST(RecordSchema, WithoutPython3TheValidatorCannotRun) {
  ScratchDir dir("record-schema-nopython");
  ScopedEnv env("PATH", dir.path().string());  // no python3 there
  const auto v = validate(dir, {golden("report_run_disk_1.json")});
  EXPECT_EQ(v.status, 3) << v.out << v.err;
  EXPECT_NE(v.err.find("python3 not found"), std::string::npos) << v.err;
}

}  // namespace
