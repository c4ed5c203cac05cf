// The reporter's model: imports (fio, sysbench, published CSV, drivelab records), ranking in the
// metric's direction, repetitions and noise, partial runs, unknown schemas. Real files: fio and
// sysbench are run for real; the drivelab records are the checked-in real records of
// tests/golden/report_*.json.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/report/report.hpp"
#include "report_test_util.hpp"

namespace drivelab::report {
namespace {

using testing::golden_records;
using testing::read_text;
using testing::run_command;
using testing::table_of;
using testing::TempDir;

const Cell* cell_of(const Report& r, const std::string& test, const std::string& metric, const std::string& drive) {
  for (const auto& t : r.tables)
    if (t.test == test && t.metric == metric)
      for (const auto& c : t.cells)
        if (c.drive == drive) return &c;
  return nullptr;
}

TEST(ReportDirection, FromUnit) {
  EXPECT_EQ(better_for_unit("1/s"), Better::higher);
  EXPECT_EQ(better_for_unit("MB/s"), Better::higher);
  EXPECT_EQ(better_for_unit("1/min"), Better::higher);
  EXPECT_EQ(better_for_unit("ms"), Better::lower);
  EXPECT_EQ(better_for_unit("us"), Better::lower);
  EXPECT_EQ(better_for_unit("s"), Better::lower);
  EXPECT_EQ(better_for_unit("count"), Better::unranked);
  EXPECT_EQ(better_for_unit("%"), Better::unranked);
}

TEST(ReportPlace, OrdinalsAsReviewsWriteThem) {
  EXPECT_EQ(ordinal(1), "1st");
  EXPECT_EQ(ordinal(2), "2nd");
  EXPECT_EQ(ordinal(3), "3rd");
  EXPECT_EQ(ordinal(4), "4th");
  EXPECT_EQ(ordinal(11), "11th");
  EXPECT_EQ(ordinal(12), "12th");
  EXPECT_EQ(ordinal(13), "13th");
  EXPECT_EQ(ordinal(21), "21st");
  EXPECT_EQ(ordinal(102), "102nd");
}

Result make(const std::string& drive, const std::string& test, std::vector<results::Metric> m) {
  Result r;
  r.drive = drive;
  r.test = test;
  r.kind = "io";
  r.source = drive + ".json";
  r.metrics = std::move(m);
  return r;
}

TEST(ReportRanking, HigherAndLowerDirectionsTiesAndMedians) {
  Dataset d;
  d.results.push_back(make("A", "t", {{"iops", 100, "1/s", ""}, {"latency_avg_us", 50, "us", ""}}));
  d.results.push_back(make("B", "t", {{"iops", 300, "1/s", ""}, {"latency_avg_us", 20, "us", ""}}));
  d.results.push_back(make("C", "t", {{"iops", 100, "1/s", ""}, {"latency_avg_us", 90, "us", ""}}));
  // Repetitions of B: median of 300, 200, 250 is 250.
  d.results.push_back(make("B", "t", {{"iops", 200, "1/s", ""}, {"latency_avg_us", 30, "us", ""}}));
  d.results.push_back(make("B", "t", {{"iops", 250, "1/s", ""}, {"latency_avg_us", 25, "us", ""}}));
  const Report r = build_report(std::move(d));
  const auto* iops = table_of(r, "t", "iops");
  ASSERT_NE(iops, nullptr);
  ASSERT_EQ(iops->cells.size(), 3u);
  EXPECT_EQ(iops->cells[0].drive, "B");
  EXPECT_EQ(iops->cells[0].median, 250);
  EXPECT_EQ(iops->cells[0].min, 200);
  EXPECT_EQ(iops->cells[0].max, 300);
  EXPECT_EQ(iops->cells[0].n, 3u);
  EXPECT_EQ(place(iops->cells[0]), "1st of 3");
  // A and C tie at 100: both 2nd, no 3rd.
  EXPECT_EQ(place(iops->cells[1]), "2nd of 3");
  EXPECT_EQ(place(iops->cells[2]), "2nd of 3");
  const auto* lat = table_of(r, "t", "latency_avg_us");
  ASSERT_NE(lat, nullptr);
  EXPECT_EQ(lat->better, Better::lower);
  EXPECT_EQ(lat->cells[0].drive, "B");
  EXPECT_EQ(lat->cells[1].drive, "A");
  EXPECT_EQ(lat->cells[2].drive, "C");
  EXPECT_EQ(place(lat->cells[2]), "3rd of 3");
}

TEST(ReportComparison, AgainstTheLeaderWithTheIntervalOfTheRatio) {
  Dataset d;
  for (double v : {100.0, 104.0, 98.0}) d.results.push_back(make("A", "t", {{"tps", v, "1/s", ""}}));
  for (double v : {101.0, 95.0}) d.results.push_back(make("B", "t", {{"tps", v, "1/s", ""}}));
  for (double v : {50.0, 52.0}) d.results.push_back(make("C", "t", {{"tps", v, "1/s", ""}}));
  d.results.push_back(make("D", "t", {{"tps", 99.0, "1/s", ""}}));
  const Report r = build_report(std::move(d));
  ASSERT_EQ(r.comparisons.size(), 3u);
  for (const auto& c : r.comparisons) {
    EXPECT_EQ(c.leader, "A");
    if (c.other == "B") {
      ASSERT_TRUE(c.result.tested());
      EXPECT_TRUE(c.result.change_ci_pct().contains(0.0));  // B's 95 and 101 beside A's 98 to 104
      EXPECT_EQ(verdict_word(c.result), "no difference detected");
      EXPECT_NEAR(c.diff_pct, -2.0, 1e-9);  // medians 98 vs 100
    } else if (c.other == "C") {
      ASSERT_TRUE(c.result.tested());
      EXPECT_EQ(verdict_word(c.result), "slower");
      EXPECT_NEAR(c.diff_pct, -49.0, 1e-9);
    } else {
      EXPECT_EQ(c.other, "D");
      EXPECT_FALSE(c.result.tested());  // one repetition: nothing is claimed
    }
  }
  const std::string md = to_markdown(r);
  EXPECT_NE(md.find("no difference detected"), std::string::npos);
  EXPECT_NE(md.find("slower"), std::string::npos);
  EXPECT_NE(md.find("not tested (needs 2+ repetitions on both)"), std::string::npos);
  EXPECT_NE(md.find("[min 98 TPS, max 104 TPS, n=3; mean"), std::string::npos) << md;
}

TEST(ReportImport, UnknownSchemaVersionIsAClearError) {
  TempDir dir;
  const auto p = dir / "future.json";
  std::ofstream(p) << R"({"schema": "drivelab.run/2", "run_id": "x", "status": "complete", "tests": []})";
  Dataset d;
  try {
    add_file(d, p, {});
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("unsupported result schema 'drivelab.run/2'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("drivelab.run/1"), std::string::npos) << msg;
  }
  const auto q = dir / "other.json";
  std::ofstream(q) << R"({"hello": 1})";
  EXPECT_THROW(add_file(d, q, {}), ConfigError);
  // A device is refused before it is read (/dev/zero never ends).
  try {
    add_file(d, "/dev/zero", {});
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "/dev/zero: a device or socket, not a result file");
  }
}

TEST(ReportImport, AJournalIsNamedAsOneWithTheWayToItsRecord) {
  TempDir dir;
  const auto p = dir / "20261207T055351Z-9c2d31.journal.jsonl";
  std::ofstream(p) << R"({"event":"run_start","record":{"schema":"drivelab.run/1","run_id":"x","tests":[]}})" << "\n"
                   << R"({"event":"test_start","name":"t","kind":"io"})" << "\n";
  Dataset d;
  try {
    add_file(d, p, {});
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("a run's journal, not a result record"), std::string::npos) << msg;
    EXPECT_NE(msg.find((dir / "20261207T055351Z-9c2d31.json").string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("drivelab results recover " + p.string()), std::string::npos) << msg;
  }
}

TEST(ReportImport, GoldenRecordsGroupByTargetIdentity) {
  Dataset d;
  for (const auto& p : golden_records()) add_file(d, p, {});
  const Report r = build_report(std::move(d));
  // Two targets, two runs each: every table of a measured test has exactly two drives, each with
  // two repetitions.
  const auto* t = table_of(r, "4k_random_read", "iops");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->cells.size(), 2u);
  for (const auto& c : t->cells) EXPECT_EQ(c.n, 2u) << c.drive;
  EXPECT_NE(t->cells[0].drive, t->cells[1].drive);
  EXPECT_GE(t->cells[0].median, t->cells[1].median);
  // The curve test kept its points.
  int curves = 0;
  for (const auto& res : r.data.results)
    if (res.test == "sql" && res.curve.size() >= 2) ++curves;
  EXPECT_EQ(curves, 4);
}

// latest.json is a copy of the newest record: given both, the run must count once, not as two
// repetitions with zero spread.
TEST(ReportImport, TheSameRunGivenTwiceCountsOnce) {
  const auto records = golden_records();
  ASSERT_FALSE(records.empty());
  Dataset d;
  add_file(d, records[0], {});
  const std::size_t once = d.results.size();
  add_file(d, records[0], {});
  EXPECT_EQ(d.results.size(), once);
  ASSERT_FALSE(d.notes.empty());
  EXPECT_NE(d.notes.back().find("was already read from"), std::string::npos) << d.notes.back();
  const Report r = build_report(std::move(d));
  const auto* t = table_of(r, "4k_random_read", "iops");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->cells.size(), 1u);
  EXPECT_EQ(t->cells[0].n, 1u);
}

// Same test name, another workload: another kind is reported as "name (kind)", another
// configuration of the same kind as "name (config N)"; neither is ranked against the first.
TEST(ReportImport, SameNameOtherWorkloadIsReportedApart) {
  const auto records = golden_records();
  ASSERT_GE(records.size(), 3u);
  TempDir dir;
  auto variant = [&](const std::filesystem::path& from, const std::string& run_id, auto&& edit) {
    auto j = results::Json::parse(read_text(from));
    j["run_id"] = run_id;
    for (auto& t : j["tests"]) edit(t);
    const auto out = dir / (run_id + ".json");
    std::ofstream(out) << j.dump();
    return out;
  };
  Dataset d;
  add_file(d, records[0], {});
  // The oltp test as another kind (a sysbench run named "oltp"), the io test as writes.
  add_file(d,
           variant(records[1], "other-kind",
                   [](auto& t) {
                     if (t["name"] == "oltp") t["kind"] = "sysbench";
                   }),
           {});
  add_file(d,
           variant(records[2], "other-config",
                   [](auto& t) {
                     if (t["kind"] == "io") t["config"]["rw"] = "randwrite";
                   }),
           {});
  const Report r = build_report(std::move(d));
  ASSERT_NE(table_of(r, "oltp", "tps"), nullptr);
  ASSERT_NE(table_of(r, "oltp (sysbench)", "tps"), nullptr);
  // oltp: disk (records[0]) and loop (records[2], unchanged); the sysbench one is apart.
  EXPECT_EQ(table_of(r, "oltp", "tps")->cells.size(), 2u);
  ASSERT_NE(table_of(r, "4k_random_read (config 2)", "iops"), nullptr);
  // 4k_random_read: the disk's two runs (records[0], records[1]) only; the loop's randwrite is apart.
  const auto* reads = table_of(r, "4k_random_read", "iops");
  ASSERT_EQ(reads->cells.size(), 1u);
  EXPECT_EQ(reads->cells[0].n, 2u);
  std::string notes;
  for (const auto& n : r.data.notes) notes += n + "\n";
  EXPECT_NE(notes.find("reported apart as oltp (sysbench)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("rw \"randwrite\" vs \"randread\""), std::string::npos) << notes;
}

// A published row with a negative value is an error at its line; an unknown unit is a note.
TEST(ReportImport, PublishedCsvRejectsNegativeValuesAndNotesUnknownUnits) {
  TempDir dir;
  const std::string header = "drive,capacity,source,test,metric,value,unit,vms,note\n";
  const auto bad = dir.write("bad.csv", header + "Drive A,1TB,x,4k_random_read,iops,-5,iops,,\n");
  Dataset d;
  try {
    add_file(d, bad, {});
    FAIL() << "a negative value was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:2: value '-5'"), std::string::npos) << e.what();
  }
  const auto odd = dir.write("odd.csv", header + "Drive A,1TB,x,4k_random_read,distance,3,furlongs,,\n");
  Dataset d2;
  add_file(d2, odd, {});
  ASSERT_EQ(d2.notes.size(), 1u);
  EXPECT_NE(d2.notes[0].find("odd.csv:2: distance in unit 'furlongs'"), std::string::npos) << d2.notes[0];
}

// Issue 15 part 5: the golden records' 4k-random-read is an io test at QD16; the published 4K
// random read peaks are the lab's 128-thread vdbench curve peaks. Same name, other configuration:
// the published rows are a reference block, never ranked with the measured drives.
TEST(ReportImport, PublishedPeaksOfAnotherConfigurationAreAReferenceBlock) {
  const auto csv = std::filesystem::path(DRIVELAB_SOURCE_DIR) / "../shared/data/published_results.csv";
  if (!std::filesystem::exists(csv)) GTEST_SKIP() << "no " << csv;
  Dataset d;
  for (const auto& p : golden_records()) add_file(d, p, {});
  add_file(d, csv, {});
  const Report r = build_report(std::move(d));
  const auto* t = table_of(r, "4k_random_read", "iops");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->cells.size(), 2u);  // the two measured drives only
  for (const auto& c : t->cells) {
    EXPECT_EQ(c.origin, Origin::measured);
    EXPECT_EQ(c.of, 2);
  }
  const auto* ref = table_of(r, "4k_random_read (other configuration)", "iops");
  ASSERT_NE(ref, nullptr);
  EXPECT_EQ(ref->cells.size(), 4u);  // Toshiba XG6, Sabrent Rocket, KIOXIA XG8, KIOXIA CD6
  for (const auto& c : ref->cells) {
    EXPECT_EQ(c.origin, Origin::published);
    EXPECT_EQ(c.rank, 0) << c.drive << ": a reference block is not ranked";
  }
  EXPECT_NE(ref->other_configuration.find("128 threads"), std::string::npos) << ref->other_configuration;
  EXPECT_NE(ref->other_configuration.find("io: 4 KiB random, 100% reads, 16 outstanding"), std::string::npos)
      << ref->other_configuration;
  const Cell* xg6 = cell_of(r, "4k_random_read (other configuration)", "iops", "Toshiba XG6 1TB");
  ASSERT_NE(xg6, nullptr);
  EXPECT_EQ(xg6->median, 366208);
  // The SQL mix peaks are the lab's unpublished mix, not the golden records' reconstruction.
  const auto* sql = table_of(r, "sql", "iops");
  ASSERT_NE(sql, nullptr);
  EXPECT_EQ(sql->cells.size(), 2u);
  EXPECT_NE(table_of(r, "sql (other configuration)", "iops"), nullptr);
  // No measured test of the name: published numbers among themselves, ranked as before.
  EXPECT_EQ(cell_of(r, "vdi_boot", "iops", "KIOXIA XG8 2TB")->rank, 1);
  EXPECT_NE(table_of(r, "sqlserver_oltp_4vms", "tps"), nullptr);
  const std::string md = to_markdown(r);
  EXPECT_NE(md.find("## 4k_random_read (other configuration)\n\nReference only, other configuration"),
            std::string::npos);
  EXPECT_NE(md.find("| Toshiba XG6 1TB | published | 366.2K IOPS |"), std::string::npos);
  EXPECT_NE(to_csv(r).find("4k_random_read (other configuration),iops,1/s,higher,Toshiba XG6 1TB,published,,,,366208,"),
            std::string::npos);
  EXPECT_NE(to_html(r, {}, "").find("class=\"other-configuration\""), std::string::npos);
}

// A measured test that ran the lab's configuration (a vdbench 4K random read at 128 threads)
// gets the published peaks in its own table, ranked together ("of 6").
TEST(ReportImport, PublishedPeaksJoinAMeasuredTestOfTheirConfiguration) {
  const auto csv = std::filesystem::path(DRIVELAB_SOURCE_DIR) / "../shared/data/published_results.csv";
  if (!std::filesystem::exists(csv)) GTEST_SKIP() << "no " << csv;
  Dataset d;
  for (const auto& p : golden_records()) {
    results::Json j = results::Json::parse(read_text(p));
    for (auto& t : j["tests"])
      if (t["name"] == "4k-random-read") {
        t["kind"] = "vdbench";
        t["config"] = {{"engine", "io_uring"},
                       {"threads", 128},
                       {"jobs", 4},
                       {"iorate", "curve"},
                       {"workloads",
                        {{{"name", "4k-random-read"},
                          {"xfersize", {{{"size", "4 KiB"}, {"pct", 100.0}}}},
                          {"rdpct", 100.0},
                          {"seekpct", 100.0}}}}};
      }
    add_record(d, results::run_record_from_json(j), p.string(), {});
  }
  add_file(d, csv, {});
  const Report r = build_report(std::move(d));
  const auto* t = table_of(r, "4k_random_read", "iops");
  ASSERT_NE(t, nullptr);
  int measured = 0, published = 0;
  for (const auto& c : t->cells) (c.origin == Origin::published ? published : measured)++;
  EXPECT_EQ(measured, 2);
  EXPECT_EQ(published, 4);
  const Cell* xg6 = cell_of(r, "4k_random_read", "iops", "Toshiba XG6 1TB");
  ASSERT_NE(xg6, nullptr);
  EXPECT_EQ(xg6->median, 366208);
  EXPECT_EQ(xg6->of, 6);
  EXPECT_EQ(table_of(r, "4k_random_read (other configuration)", "iops"), nullptr);
}

TEST(ReportImport, PublishedConfigurationsFollowEachReview) {
  // 64K sequential read: 16 outstanding in the XG6 review (Little's law on its peak), 32 in the others.
  const auto* xg6 = published_configuration("64k_sequential_read", "001_ddcecffda6a7ac13.txt");
  const auto* cd6 = published_configuration("64k_sequential_read", "004_0413b8abb055afcd.txt");
  ASSERT_NE(xg6, nullptr);
  ASSERT_NE(cd6, nullptr);
  EXPECT_EQ(xg6->io->outstanding, 16u);
  EXPECT_EQ(cd6->io->outstanding, 32u);
  EXPECT_EQ(published_configuration("my_own_test", "x.txt"), nullptr);
  const results::Json quick{
      {"engine", "io_uring"}, {"rw", "randread"}, {"xfersize", "4 KiB"}, {"iodepth", 32}, {"jobs", 1}};
  EXPECT_FALSE(measures(*published_configuration("4k_random_read", "000_948965f824cc5f36.txt"), "io", quick));
  const results::Json qd128{
      {"engine", "io_uring"}, {"rw", "randread"}, {"xfersize", "4 KiB"}, {"iodepth", 32}, {"jobs", 4}};
  EXPECT_TRUE(measures(*published_configuration("4k_random_read", "000_948965f824cc5f36.txt"), "io", qd128));
  EXPECT_FALSE(
      measures(*published_configuration("vdi_boot", "000_948965f824cc5f36.txt"), "vdi", results::Json::object()));
}

TEST(ReportImport, PublishedCsvErrorsNameFileAndLine) {
  Dataset d;
  EXPECT_THROW(
      add_published_csv(d, "drive,capacity,source,test,metric,value,unit,vms,note\nA,1TB,s,t,tps,abc,tps,,\n", "p.csv"),
      ConfigError);
  try {
    add_published_csv(d, "drive,capacity,source,test,metric,value,unit,vms,note\nA,1TB,s,t,tps\n", "p.csv");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("p.csv:2"), std::string::npos) << e.what();
  }
}

const Cell* left_out_cell_of(const Report& r, const std::string& test, const std::string& metric,
                             const std::string& drive) {
  for (const auto& t : r.tables)
    if (t.test == test && t.metric == metric)
      for (const auto& c : t.left_out)
        if (c.drive == drive) return &c;
  return nullptr;
}

TEST(ReportImport, PartialAndInterruptedRunsAreMarked) {
  const auto records = golden_records();
  ASSERT_FALSE(records.empty());
  results::RunRecord rec = results::read_record(records.front());
  rec.status = results::Status::interrupted;
  rec.reason = "SIGINT";
  rec.tests[1].status = results::Status::interrupted;
  rec.tests[1].reason = "SIGINT";
  rec.tests[2].status = results::Status::skipped;
  rec.tests[2].reason = "the run was interrupted";
  ASSERT_EQ(rec.tests[1].name, "4k-random-read");
  const auto dataset = [&] {
    Dataset d;
    add_record(d, rec, "partial.json", "Drive P");
    for (std::size_t i = 1; i < records.size(); ++i) add_file(d, records[i], {});
    return d;
  };

  // Default: the interrupted test is not ranked with the complete ones but shown apart.
  {
    const Report r = build_report(dataset());
    EXPECT_EQ(cell_of(r, "4k_random_read", "iops", "Drive P"), nullptr);
    const Cell* c = left_out_cell_of(r, "4k_random_read", "iops", "Drive P");
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(c->partial);
    EXPECT_EQ(c->rank, 0);
    EXPECT_EQ(c->n, 1u);
    EXPECT_EQ(c->median, rec.tests[1].find_metric("iops")->value);
    const MetricTable* t = table_of(r, "4k_random_read", "iops");
    ASSERT_NE(t, nullptr);
    for (const auto& ranked : t->cells) {
      EXPECT_FALSE(ranked.partial) << ranked.drive;
      EXPECT_EQ(ranked.of, static_cast<int>(t->cells.size())) << ranked.drive;
    }
    for (const auto& cmp : r.comparisons) {  // complete tests only
      if (cmp.test == "4k_random_read") {
        EXPECT_NE(cmp.other, "Drive P") << cmp.metric;
      }
    }
    // Its complete test (oltp) is ranked as usual.
    const Cell* oltp = cell_of(r, rec.tests[0].name, "tps", "Drive P");
    ASSERT_NE(oltp, nullptr);
    EXPECT_GT(oltp->rank, 0);
    const std::string md = to_markdown(r);
    EXPECT_NE(md.find("| Drive P (partial, not ranked) |"), std::string::npos) << md;
    EXPECT_NE(md.find("partial.json: test 4k_random_read on Drive P is interrupted: left out of the ranking, which "
                      "compares complete tests only"),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("partial.json: run " + rec.run_id + " is interrupted: SIGINT"), std::string::npos) << md;
    EXPECT_NE(md.find("partial.json: test " + rec.tests[2].name + " was skipped"), std::string::npos) << md;
    EXPECT_NE(to_csv(r).find(",,,,"), std::string::npos);
    EXPECT_NE(to_csv(r).find(",partial_not_ranked,partial.json"), std::string::npos);
    EXPECT_EQ(to_csv(r).find(",partial,"), std::string::npos);
    const std::string html = to_html(r, {}, "");
    EXPECT_NE(html.find("<tr class=\"measured partial not-ranked\"><td>Drive P (partial, not ranked)</td>"),
              std::string::npos);
  }
  // include_partial: pooled and ranked with the complete ones, marked partial.
  {
    const Report r = build_report(dataset(), ReportOptions{.include_partial = true});
    const Cell* c = cell_of(r, "4k_random_read", "iops", "Drive P");
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(c->partial);
    EXPECT_GT(c->rank, 0);
    EXPECT_EQ(left_out_cell_of(r, "4k_random_read", "iops", "Drive P"), nullptr);
    const std::string md = to_markdown(r);
    EXPECT_NE(md.find("| Drive P (partial) |"), std::string::npos) << md;
    EXPECT_EQ(md.find("not ranked"), std::string::npos) << md;
    EXPECT_NE(to_csv(r).find(",partial,partial.json"), std::string::npos);
    EXPECT_NE(to_html(r, {}, "").find("class=\"measured partial\""), std::string::npos);
  }
}

/// The first golden record cut to its first two tests and altered by `alter`, added to a dataset
/// as `source` on `drive`.
Dataset two_tests_of_a_golden_record(const std::string& source, const std::string& drive,
                                     const std::function<void(results::RunRecord&)>& alter) {
  const auto records = golden_records();
  if (records.empty()) throw std::runtime_error("no golden records");
  results::RunRecord rec = results::read_record(records.front());
  rec.tests.resize(2);
  alter(rec);
  Dataset d;
  add_record(d, rec, source, drive);
  return d;
}

TEST(ReportImport, ARunningTestOfAProvisionalRecordIsReportedInterrupted) {
  // What a SIGKILLed run leaves in <run_id>.json: the run `interrupted` (in progress), its current
  // test still `running`.
  Dataset d = two_tests_of_a_golden_record("live.json", "Drive K", [](results::RunRecord& rec) {
    rec.status = results::Status::interrupted;
    rec.reason = "run in progress, or the process ended before the run finished";
    rec.tests[1].status = results::Status::running;
    rec.tests[1].finished_at.clear();
  });
  ASSERT_EQ(d.results.size(), 2u);
  EXPECT_EQ(d.results[1].status, "interrupted");
  EXPECT_TRUE(d.results[1].partial());
  const Report r = build_report(std::move(d));
  const std::string md = to_markdown(r);
  EXPECT_NE(md.find("live.json: test 4k-random-read on Drive K is interrupted: the record ends before this test's end"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("running"), std::string::npos) << md;
  EXPECT_EQ(to_csv(r).find("running"), std::string::npos);
}

TEST(ReportImport, WarningsAndFailedChecksOfACompleteTestAreNotedBesideItsPlace) {
  Dataset d = two_tests_of_a_golden_record("warned.json", "Drive W", [](results::RunRecord& rec) {
    rec.warnings = {"built on a tmpfs target"};
    rec.tests[1].warnings = {"replay: lateness p99 1.247 ms exceeds the 1 ms bound"};
    rec.tests[1].checks = {{"littles_law_max", false, "IOPS x latency = 15.34 outstanding, threads 16"},
                           {"issued_counts", true, ""}};
  });
  ASSERT_EQ(d.results.size(), 2u);
  EXPECT_EQ(d.results[1].status, "complete");
  EXPECT_FALSE(d.results[1].partial());
  const Report r = build_report(std::move(d));
  const std::string md = to_markdown(r);
  EXPECT_NE(md.find("## Notes: partial runs, warnings, failed checks and configurations"), std::string::npos) << md;
  EXPECT_NE(md.find("warning: built on a tmpfs target"), std::string::npos) << md;
  EXPECT_NE(md.find("warned.json: test 4k-random-read on Drive W: warning: replay: lateness p99 1.247 ms"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("warned.json: test 4k-random-read on Drive W: check littles_law_max failed: IOPS x latency"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("issued_counts"), std::string::npos) << "a passed check is not a note\n" << md;
  EXPECT_NE(to_html(r, {}, "").find("check littles_law_max failed"), std::string::npos);
}

// fio 3.33 (Debian) for one second, json and json+: the import shows exactly fio's IOPS and p99.
class FioImport : public ::testing::TestWithParam<std::string> {};

TEST_P(FioImport, ShowsExactlyFiosIopsAndP99) {
  if (!find_program("fio")) GTEST_SKIP() << "fio is not installed (Debian package fio)";
  TempDir dir;
  const auto out = dir / "fio.json";
  const int rc = run_command({"fio", "--name=fio-4k-randread", "--filename=" + (dir / "fio.dat").string(), "--size=16M",
                              "--rw=randread", "--bs=4k", "--iodepth=1", "--ioengine=psync", "--runtime=1",
                              "--time_based", "--output-format=" + GetParam(), "--output=" + out.string()});
  ASSERT_EQ(rc, 0);
  const auto fio = results::Json::parse(read_text(out));
  const auto& read = fio["jobs"][0]["read"];
  const double fio_iops = read["iops"].get<double>();
  const double fio_p99_ns = read["clat_ns"]["percentile"]["99.000000"].get<double>();
  ASSERT_GT(fio_iops, 0);
  EXPECT_EQ(read["clat_ns"].contains("bins"), GetParam() == "json+");

  Dataset d;
  add_file(d, out, "tmpfs-or-disk");
  ASSERT_EQ(d.results.size(), 1u);
  const Result& r = d.results[0];
  EXPECT_EQ(r.test, "fio_4k_randread");
  EXPECT_EQ(r.origin, Origin::fio);
  ASSERT_NE(r.find_metric("iops"), nullptr);
  EXPECT_EQ(r.find_metric("iops")->value, fio_iops);  // exactly, not approximately
  ASSERT_NE(r.find_metric("latency_p99_us"), nullptr);
  EXPECT_EQ(r.find_metric("latency_p99_us")->value, fio_p99_ns / 1000.0);
  EXPECT_EQ(r.find_metric("throughput_mb_s")->value, read["bw_bytes"].get<double>() / 1e6);
  EXPECT_EQ(r.find_metric("latency_avg_us")->value, read["lat_ns"]["mean"].get<double>() / 1000.0);

  // The CSV carries the same numbers with every digit (shortest round-trip text).
  const Report rep = build_report(std::move(d));
  const std::string csv = to_csv(rep);
  EXPECT_NE(csv.find(fmt::format(",{},{},{},1,", fio_iops, fio_iops, fio_iops)), std::string::npos) << csv;
  const double p99_us = fio_p99_ns / 1000.0;
  EXPECT_NE(csv.find(fmt::format(",{},{},{},1,", p99_us, p99_us, p99_us)), std::string::npos) << csv;
  std::cout << "fio " << GetParam() << ": iops " << fmt::format("{}", fio_iops) << ", clat p99 "
            << fmt::format("{}", fio_p99_ns) << " ns; imported iops "
            << fmt::format("{}", rep.tables.front().cells.front().median) << '\n';
}

INSTANTIATE_TEST_SUITE_P(JsonAndJsonPlus, FioImport, ::testing::Values("json", "json+"), [](const auto& param_info) {
  return param_info.param == "json" ? std::string("json") : std::string("json_plus");
});

TEST(FioImport, MixedJobsGetReadAndWritePrefixes) {
  if (!find_program("fio")) GTEST_SKIP() << "fio is not installed (Debian package fio)";
  TempDir dir;
  const auto out = dir / "fio.json";
  ASSERT_EQ(run_command({"fio", "--name=mixed", "--filename=" + (dir / "fio.dat").string(), "--size=8M", "--rw=randrw",
                         "--bs=4k", "--ioengine=psync", "--runtime=1", "--time_based", "--output-format=json",
                         "--output=" + out.string()}),
            0);
  const auto fio = results::Json::parse(read_text(out));
  Dataset d;
  add_file(d, out, {});
  ASSERT_EQ(d.results.size(), 1u);
  EXPECT_EQ(d.results[0].find_metric("read_iops")->value, fio["jobs"][0]["read"]["iops"].get<double>());
  EXPECT_EQ(d.results[0].find_metric("write_iops")->value, fio["jobs"][0]["write"]["iops"].get<double>());
}

// sysbench 1.0 (Debian) for real: `sysbench cpu` prints the same statistics layout as the OLTP
// scripts ("General statistics", "Latency (ms)", --report-interval lines).
TEST(SysbenchImport, RealCpuRun) {
  if (!find_program("sysbench")) GTEST_SKIP() << "sysbench is not installed (Debian package sysbench)";
  TempDir dir;
  const auto out = dir / "sysbench.txt";
  ASSERT_EQ(
      run_command({"sysbench", "cpu", "--time=2", "--threads=1", "--report-interval=1", "--cpu-max-prime=2000", "run"},
                  out),
      0);
  const std::string text = read_text(out);
  Dataset d;
  add_file(d, out, "cpu");
  ASSERT_EQ(d.results.size(), 1u);
  const Result& r = d.results[0];
  EXPECT_EQ(r.test, "sysbench");
  ASSERT_NE(r.find_metric("eps"), nullptr);
  EXPECT_GT(r.find_metric("eps")->value, 0);
  ASSERT_NE(r.find_metric("latency_avg_ms"), nullptr);
  ASSERT_NE(r.find_metric("latency_p95_ms"), nullptr);
  EXPECT_GE(r.intervals.size(), 1u);
  // The value is the one sysbench printed.
  const auto pos = text.find("events per second:");
  ASSERT_NE(pos, std::string::npos);
  EXPECT_EQ(r.find_metric("eps")->value, std::stod(text.substr(pos + 18)));
}

// The OLTP layout of sysbench 1.0.20 (src/sb_counter / oltp_common.lua report), as printed by
// `sysbench oltp_read_write ... run` (docs/oltp-sysbench.md lists the same fields).
TEST(SysbenchImport, OltpLayout) {
  const std::string text = R"(sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 4
Report intermediate results every 1 second(s)

[ 1s ] thds: 4 tps: 310.84 qps: 6245.80 (r/w/o: 4375.82/1246.32/623.66) lat (ms,95%): 17.63 err/s: 0.00 reconn/s: 0.00
[ 2s ] thds: 4 tps: 325.02 qps: 6497.37 (r/w/o: 4548.26/1299.07/650.04) lat (ms,95%): 16.41 err/s: 0.00 reconn/s: 0.00
SQL statistics:
    queries performed:
        read:                            8918
        write:                           2548
        other:                           1274
        total:                           12740
    transactions:                        637    (317.92 per sec.)
    queries:                             12740  (6358.42 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          2.0024s
    total number of events:              637

Latency (ms):
         min:                                    5.88
         avg:                                   12.57
         max:                                   40.12
         95th percentile:                       17.01
         sum:                                 8007.53
)";
  Dataset d;
  add_sysbench_text(d, text, "sb.txt", "MariaDB on disk");
  ASSERT_EQ(d.results.size(), 1u);
  const Result& r = d.results[0];
  EXPECT_EQ(r.test, "sysbench_oltp");
  EXPECT_EQ(r.metrics.front().name, "tps");
  EXPECT_EQ(r.find_metric("tps")->value, 317.92);
  EXPECT_EQ(r.find_metric("qps")->value, 6358.42);
  EXPECT_EQ(r.find_metric("latency_avg_ms")->value, 12.57);
  EXPECT_EQ(r.find_metric("latency_p95_ms")->value, 17.01);
  ASSERT_EQ(r.intervals.size(), 2u);
  EXPECT_EQ(r.intervals[1].values[0].first, "tps");
  EXPECT_EQ(r.intervals[1].values[0].second, 325.02);
  EXPECT_EQ(r.intervals[1].values[2].first, "latency_p95_ms");
  EXPECT_THROW(add_sysbench_text(d, "nothing here", "x.txt", ""), ConfigError);
}

}  // namespace
}  // namespace drivelab::report
