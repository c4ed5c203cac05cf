// The results store (issue 18 part 4) through the binary: `drivelab results import` keeps a run
// once however often it is imported (rows counted with SQLite itself), `drivelab report --db`
// gives exactly the golden report of the same records as files (tests/golden/report_two_targets.*,
// the output ReportGolden.TwoTargetsRankedInHtmlMarkdownAndCsv pins), `--where` selects with bound
// values, and a file that is not a record, or a database that is not a store, is refused by name.
#include <sqlite3.h>

#include <gtest/gtest.h>

#include <fstream>
#include <csignal>
#include <thread>
#include <future>

#include <nlohmann/json.hpp>

#include "drivelab/results/record.hpp"
#include "process.hpp"

namespace {

namespace fs = std::filesystem;
using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;

const fs::path kSource = DRIVELAB_SOURCE_DIR;
using nlohmann::json;

/// The golden records as a user types them from the source root (the golden test's sources).
const std::vector<std::string> kGolden = {"tests/golden/report_run_disk_1.json", "tests/golden/report_run_disk_2.json",
                                          "tests/golden/report_run_loop_1.json", "tests/golden/report_run_loop_2.json"};

/// `drivelab ARGS...` run in the source root.
drivelab::testing::Result run_drivelab(const ScratchDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), DRIVELAB_EXE);
  return drivelab::testing::run(args, dir.path(), std::chrono::seconds(120), kSource);
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// One integer from SQL run on the database directly.
long long query(const fs::path& db, const char* sql) {
  sqlite3* h = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(h, sql, -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(h);
  long long v = -1;
  if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(h);
  return v;
}

TEST(ResultsStore, ImportTwiceStoresOnceAndSaysSo) {
  ScratchDir dir("store-twice");
  const std::string db = (dir.path() / "runs.sqlite").string();
  const auto first = run_drivelab(dir, {"results", "import", kGolden[0], "--db", db});
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_NE(first.out.find("imported 1, already stored 0"), std::string::npos) << first.out;
  const auto again = run_drivelab(dir, {"results", "import", kGolden[0], kGolden[1], "--db", db});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("imported 1, already stored 1"), std::string::npos) << again.out;
  EXPECT_NE(
      again.out.find(kGolden[0] + ": run 20261130T031927Z-0c79cd already stored (imported from " + kGolden[0] + ")"),
      std::string::npos)
      << again.out;
  EXPECT_EQ(query(db, "SELECT count(*) FROM runs"), 2);
  EXPECT_EQ(query(db, "SELECT count(*) FROM runs WHERE run_id = '20261130T031927Z-0c79cd'"), 1);
  EXPECT_EQ(query(db, "SELECT count(*) FROM tests"), 6);  // three tests per run
  EXPECT_EQ(query(db, "PRAGMA user_version"), 2);
  // The record is kept whole: its JSON is the file's, byte for byte.
  EXPECT_EQ(query(db, "SELECT length(record) FROM runs WHERE rowid = 1"),
            static_cast<long long>(fs::file_size(kSource / kGolden[0])));
  // Headline metrics of each test, queryable with SQLite's JSON functions.
  EXPECT_EQ(query(db, "SELECT count(*) FROM tests WHERE kind = 'io' AND json_extract(headline, '$.iops.unit') = '1/s'"),
            2);
}

TEST(ResultsStore, ReportFromTheStoreIsTheGoldenReportOfTheFiles) {
  ScratchDir dir("store-golden");
  const std::string db = (dir.path() / "runs.sqlite").string();
  const auto imp = run_drivelab(dir, with({"results", "import"}, with(kGolden, {"--db", db})));
  ASSERT_EQ(imp.status, 0) << imp.err;
  EXPECT_NE(imp.out.find("imported 4, already stored 0"), std::string::npos) << imp.out;
  const fs::path csv = dir.path() / "db.csv", md = dir.path() / "db.md";
  const auto rep = run_drivelab(dir, {"report", "--db", db, "--csv", csv.string(), "--md", md.string()});
  ASSERT_EQ(rep.status, 0) << rep.err;
  EXPECT_EQ(read_file(csv), read_file(kSource / "tests/golden/report_two_targets.csv"));
  EXPECT_EQ(read_file(md), read_file(kSource / "tests/golden/report_two_targets.md"));
  // And the same as `report` on the files, through the binary, the HTML page included (without
  // charts: gnuplot's drawing is the browser test's).
  const fs::path files_csv = dir.path() / "files.csv", files_html = dir.path() / "files.html",
                 html = dir.path() / "db.html";
  const auto from_files = run_drivelab(
      dir,
      with({"report"}, with(kGolden, {"--csv", files_csv.string(), "--html", files_html.string(), "--no-charts"})));
  ASSERT_EQ(from_files.status, 0) << from_files.err;
  EXPECT_EQ(read_file(csv), read_file(files_csv));
  const auto db_html = run_drivelab(dir, {"report", "--db", db, "--html", html.string(), "--no-charts"});
  ASSERT_EQ(db_html.status, 0) << db_html.err;
  EXPECT_NE(read_file(html).find("1st of 2"), std::string::npos);  // the ranked tables are there
  EXPECT_EQ(read_file(html), read_file(files_html));
}

TEST(ResultsStore, WhereSelectsWithBoundValues) {
  ScratchDir dir("store-where");
  const std::string db = (dir.path() / "runs.sqlite").string();
  ASSERT_EQ(run_drivelab(dir, with({"results", "import"}, with(kGolden, {"--db", db}))).status, 0);
  const auto csv_of = [&](const std::vector<std::string>& where) {
    std::vector<std::string> args{"report", "--db", db, "--csv", (dir.path() / "w.csv").string()};
    for (const auto& w : where) args.insert(args.end(), {"--where", w});
    const auto r = run_drivelab(dir, args);
    EXPECT_EQ(r.status, 0) << r.err;
    return read_file(dir.path() / "w.csv");
  };
  // kind=io: only the io test's rows, of both drives.
  const std::string io = csv_of({"kind=io"});
  EXPECT_NE(io.find("\n4k_random_read,iops,"), std::string::npos) << io;
  EXPECT_EQ(io.find("\noltp,"), std::string::npos) << io;
  EXPECT_EQ(io.find("\nsql,"), std::string::npos) << io;
  // serial: one drive only, both its runs.
  const std::string disk = csv_of({"serial=20066322120588140"});
  EXPECT_NE(disk.find("disk 20066322120588140"), std::string::npos);
  EXPECT_EQ(disk.find("loop0 (ext4)"), std::string::npos);
  EXPECT_NE(disk.find("tests/golden/report_run_disk_1.json;tests/golden/report_run_disk_2.json"), std::string::npos);
  // Two values of one key are alternatives; dates compare as days.
  const std::string two =
      csv_of({"run=20261130T031927Z-0c79cd", "run=no-such-run", "since=2026-11-30", "until=2026-11-30"});
  EXPECT_NE(two.find("tests/golden/report_run_disk_1.json,"), std::string::npos) << two;
  const std::string none = csv_of({"since=2099-01-01"});
  EXPECT_EQ(none.find('\n'), none.size() - 1) << none;  // the header only
  // ... and the emptiness is said, on stderr and in the report's notes.
  const auto empty =
      run_drivelab(dir, {"report", "--db", db, "--where", "kind=nosuch", "--md", (dir.path() / "e.md").string()});
  EXPECT_EQ(empty.status, 0) << empty.err;
  const std::string no_run = "no stored run of " + db + " matches --where kind=nosuch";
  EXPECT_NE(empty.err.find(no_run), std::string::npos) << empty.err;
  EXPECT_EQ(empty.err.find(no_run), empty.err.rfind(no_run)) << "said once\n" << empty.err;
  EXPECT_NE(read_file(dir.path() / "e.md").find("no stored run of"), std::string::npos);
  // Text that would change an SQL statement spliced into it is a value like any other.
  EXPECT_EQ(csv_of({"serial=x' OR '1'='1"}).find("measured"), std::string::npos);
  const auto bad = run_drivelab(dir, {"report", "--db", db, "--where", "drive=x"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("unknown key 'drive'"), std::string::npos) << bad.err;
  const auto bad_date = run_drivelab(dir, {"report", "--db", db, "--where", "since=yesterday"});
  EXPECT_EQ(bad_date.status, 2);
  EXPECT_NE(bad_date.err.find("since must be a UTC date"), std::string::npos) << bad_date.err;
  // Dates the calendar does not have are refused too, not compared as text.
  for (const char* impossible : {"since=2026-02-30", "since=2026-13-45", "until=2026-12-06T25:61:00"}) {
    const auto r = run_drivelab(dir, {"report", "--db", db, "--where", impossible});
    EXPECT_EQ(r.status, 2) << impossible << ": " << r.out;
    EXPECT_NE(r.err.find("is not a"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("must be a UTC date"), std::string::npos) << "the date has the right form\n" << r.err;
  }
}

// A run killed before it finished leaves a live record (run interrupted "run in progress, ...", its current
// test running: what runner/run.cpp writes); its finished or recovered record (`results recover`) of the same
// run id takes the live one's place; a live record never replaces another.
TEST(ResultsStore, AFinishedRecordReplacesTheLiveRecordOfItsRun) {
  ScratchDir dir("store-live");
  const std::string db = (dir.path() / "runs.sqlite").string();
  json rec = json::parse(read_file(kSource / kGolden[0]));
  rec["status"] = "interrupted";
  rec["reason"] = std::string(drivelab::results::kLiveRecordReason);
  rec["tests"][2]["status"] = "running";
  const fs::path live = dir.path() / "live.json";
  std::ofstream(live) << rec.dump();
  ASSERT_EQ(run_drivelab(dir, {"results", "import", live.string(), "--db", db}).status, 0);
  EXPECT_EQ(query(db, "SELECT count(*) FROM tests WHERE status = 'running'"), 1);
  const auto done = run_drivelab(dir, {"results", "import", kGolden[0], "--db", db});
  ASSERT_EQ(done.status, 0) << done.err;
  EXPECT_NE(
      done.out.find("imported run 20261130T031927Z-0c79cd (in place of the live record imported from " + live.string()),
      std::string::npos)
      << done.out;
  EXPECT_NE(done.out.find("imported 1, already stored 0"), std::string::npos) << done.out;
  EXPECT_EQ(query(db, "SELECT count(*) FROM runs"), 1);
  EXPECT_EQ(query(db, "SELECT count(*) FROM runs WHERE status = 'complete'"), 1);
  EXPECT_EQ(query(db, "SELECT count(*) FROM tests"), 3) << "the live record's tests went with it";
  const auto again = run_drivelab(dir, {"results", "import", live.string(), "--db", db});
  EXPECT_NE(again.out.find("already stored (imported from " + kGolden[0] + "; this file differs"), std::string::npos)
      << again.out;
  EXPECT_EQ(query(db, "SELECT count(*) FROM runs WHERE status = 'complete'"), 1) << "a live record replaces nothing";

  // A recovery from a journal cut short holds fewer intervals than the live record: the live record is kept.
  const std::string db2 = (dir.path() / "runs2.sqlite").string();
  ASSERT_EQ(run_drivelab(dir, {"results", "import", live.string(), "--db", db2}).status, 0);
  json cut = json::parse(read_file(kSource / kGolden[0]));
  cut["status"] = "interrupted";
  cut["reason"] = "journal ends before run_end";
  ASSERT_FALSE(cut["tests"][2]["intervals"].empty());
  cut["tests"][2]["intervals"] = json::array();
  const fs::path recovered = dir.path() / "cut.recovered.json";
  std::ofstream(recovered) << cut.dump();
  const auto kept = run_drivelab(dir, {"results", "import", recovered.string(), "--db", db2});
  EXPECT_NE(kept.out.find("already stored (imported from " + live.string()), std::string::npos) << kept.out;
  EXPECT_EQ(query(db2, "SELECT count(*) FROM tests WHERE status = 'running'"), 1) << "the live record stays";
}

// A run recovered while it is still going is a live record (its reserve is held), said on stderr; the run's own
// record replaces it in the store when the run ends. `recover -o` onto its journal is refused.
TEST(ResultsStore, ARecoveryOfARunStillGoingIsLiveAndGivesWayToItsRecord) {
  ScratchDir dir("store-recover-live");
  const fs::path out = dir.path() / "out";
  drivelab::testing::Child child({DRIVELAB_EXE, "io", "--target", dir.path().string(), "--rw", "randread", "--duration",
                                  "60s", "--interval", "1s", "--file-size", "16MiB", "--out", out.string(), "--quiet"},
                                 dir.path() / "io.out", dir.path() / "io.err", dir.path());
  fs::path journal;
  for (int i = 0; i < 600 && journal.empty(); ++i) {  // up to 60 s: the fill, then two intervals journaled
    std::error_code ec;
    for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().string().ends_with(".journal.jsonl")) {
        const std::string text = read_file(it->path());
        if (text.find("\"interval\"") != std::string::npos &&
            text.find("\"interval\"", text.find("\"interval\"") + 1) != std::string::npos)
          journal = it->path();
      }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(journal.empty()) << "no journal with two intervals: " << child.err();
  const auto self = run_drivelab(dir, {"results", "recover", journal.string(), "-o", journal.string()});
  EXPECT_EQ(self.status, 2) << self.out << self.err;
  EXPECT_NE(self.err.find("is the journal"), std::string::npos) << self.err;
  const fs::path snap = dir.path() / "snap.json";
  const auto rec = run_drivelab(dir, {"results", "recover", journal.string(), "-o", snap.string()});
  ASSERT_EQ(rec.status, 0) << rec.err;
  EXPECT_NE(rec.err.find("is still going (its reserve is held)"), std::string::npos) << rec.err;
  EXPECT_EQ(json::parse(read_file(snap))["reason"], std::string(drivelab::results::kLiveRecordReason));
  const std::string db = (dir.path() / "runs.sqlite").string();
  const auto journal_in = run_drivelab(dir, {"results", "import", journal.string(), "--db", db});
  EXPECT_EQ(journal_in.status, 2);
  EXPECT_NE(journal_in.err.find("a run's journal, not a result record"), std::string::npos) << journal_in.err;
  ASSERT_EQ(run_drivelab(dir, {"results", "import", snap.string(), "--db", db}).status, 0);
  child.signal(SIGINT);
  EXPECT_EQ(child.wait(std::chrono::seconds(60)), 130) << child.err();
  const std::string run_id = journal.filename().string().substr(0, journal.filename().string().find('.'));
  const auto done = run_drivelab(dir, {"results", "import", (out / (run_id + ".json")).string(), "--db", db});
  EXPECT_NE(done.out.find("(in place of the live record imported from " + snap.string()), std::string::npos)
      << done.out;
  EXPECT_EQ(query(db, ("SELECT count(*) FROM runs WHERE reason <> '" +
                       std::string(drivelab::results::kLiveRecordReason) + "'")
                          .c_str()),
            1);
}

// --db that names no lasting file is refused; several imports making one new store at once all store their run.
TEST(ResultsStore, ANameThatIsNoFileIsRefusedAndParallelFirstImportsAllStore) {
  ScratchDir dir("store-parallel");
  for (const std::string name : {"", ":memory:", "file:x.sqlite?mode=memory"}) {
    const auto r = run_drivelab(dir, {"results", "import", kGolden[0], "--db", name});
    EXPECT_EQ(r.status, 2) << "'" << name << "': " << r.out;
    EXPECT_NE(r.err.find("not a file's name"), std::string::npos) << r.err;
  }
  const std::string db = (dir.path() / "runs.sqlite").string();
  std::vector<std::future<drivelab::testing::Result>> imports;
  for (std::size_t i = 0; i < 6; ++i)
    imports.push_back(std::async(std::launch::async, [&, i] {
      return run_drivelab(dir, {"results", "import", kGolden[i % kGolden.size()], "--db", db});
    }));
  for (auto& f : imports) {
    const auto r = f.get();
    EXPECT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(query(db, "SELECT count(*) FROM runs"), static_cast<long long>(kGolden.size()));
}

// A record whose started_at is not a timestamp would be misplaced by since/until: refused by name.
TEST(ResultsStore, ARecordWhoseStartIsNotATimestampIsRefused) {
  ScratchDir dir("store-bad-start");
  const std::string db = (dir.path() / "runs.sqlite").string();
  json rec = json::parse(read_file(kSource / "tests/golden/report_run_disk_1.json"));
  rec["started_at"] = "not-a-date";
  const fs::path bad = dir.path() / "baddate.json";
  std::ofstream(bad) << rec.dump();
  const auto r = run_drivelab(dir, {"results", "import", bad.string(), "--db", db});
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE((r.out + r.err).find("started_at 'not-a-date' is not a UTC time"), std::string::npos) << r.out << r.err;
}

TEST(ResultsStore, ANonRecordOrANonStoreIsRefusedByName) {
  ScratchDir dir("store-refused");
  const std::string db = (dir.path() / "runs.sqlite").string();
  const fs::path garbage = dir.path() / "garbage.json", fio = dir.path() / "other.json";
  std::ofstream(garbage) << "{\"schema\": \"drivelab.run/1\", \"run_id\": ";
  std::ofstream(fio) << R"({"schema": "drivelab.run/7", "tests": []})";
  const auto r = run_drivelab(dir, {"results", "import", garbage.string(), kGolden[2], fio.string(), "--db", db});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.err.find("result record '" + garbage.string() + "': not valid JSON"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("result record '" + fio.string() + "': unsupported result schema 'drivelab.run/7'"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("imported 1, already stored 0, refused 2"), std::string::npos) << r.out;
  EXPECT_EQ(query(db, "SELECT count(*) FROM runs"), 1);  // the good file is stored, nothing of the others

  // A database that is not a store: an SQLite file of other tables, and a text file.
  const fs::path other = dir.path() / "other.sqlite";
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "CREATE TABLE accounts (id INTEGER)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
  const auto rep = run_drivelab(dir, {"report", "--db", other.string()});
  EXPECT_EQ(rep.status, 2);
  EXPECT_NE(rep.err.find("results store '" + other.string() + "': an SQLite database of something else"),
            std::string::npos)
      << rep.err;
  const auto imp = run_drivelab(dir, {"results", "import", kGolden[0], "--db", garbage.string()});
  EXPECT_EQ(imp.status, 2);
  EXPECT_NE(imp.err.find("results store '" + garbage.string() + "'"), std::string::npos) << imp.err;
  EXPECT_NE(imp.err.find("not a drivelab results store"), std::string::npos) << imp.err;
}

}  // namespace
