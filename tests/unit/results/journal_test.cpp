// The journal: durable appends, and recovery of a valid record from any prefix of the file.
#include "drivelab/results/journal.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "../io/target_loop_device.hpp"
#include "drivelab/core/errors.hpp"
#include "test_util.hpp"

namespace drivelab::results {
namespace {

using testing::TempDir;

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream whole;  // not istreambuf_iterator: GCC 14 -Wnull-dereference in libstdc++
  whole << in.rdbuf();
  return whole.str();
}

void write_all(const std::filesystem::path& p, std::string_view text) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(text.data(), static_cast<std::streamsize>(text.size()));
}

RunRecord header() {
  RunRecord r = testing::sample_run();
  r.tests.clear();
  r.status = Status::running;
  r.finished_at.clear();
  return r;
}

TestRecord started(const std::string& name) {
  TestRecord t;
  t.name = name;
  t.kind = "fio";
  t.config = Json{{"rw", "randread"}, {"bs", 4096}};
  t.started_at = "2026-11-29T19:54:00.000Z";
  return t;
}

/// A run of two tests: `a` with 3 intervals and a test_end, `b` with 2 intervals, then run_end.
/// With `with_histograms`, the test_end record carries full histograms (a big line).
struct Script {
  RunRecord head;
  TestRecord a_end;
  std::vector<Interval> a_intervals{{5, 5, {{"iops", 1000}, {"lat_avg_ms", 0.5}}},
                                    {10, 5, {{"iops", 1100}, {"lat_avg_ms", 0.45}}},
                                    {12, 2, {{"iops", 900}, {"lat_avg_ms", 0.55}}}};
  std::vector<Interval> b_intervals{{5, 5, {{"iops", 50}}}, {7.5, 2.5, {{"iops", 55}}}};
  TestRecord b_end;
  Json a_end_json, b_end_json;  // computed once: the truncation loops compare against them

  explicit Script(bool with_histograms) {
    if (with_histograms) {
      head = header();
    } else {  // small, so that every byte offset can be tried quickly
      head.run_id = "r";
      head.warnings = {"w"};
    }
    a_end = with_histograms ? testing::sample_test("a") : started("a");
    if (with_histograms) {  // a few dozen bins each: enough to make test_end a long line
      a_end.histograms.insert_or_assign("response_time", testing::sample_histogram(1'000'000, 60));
      a_end.histograms.insert_or_assign("service_time", testing::sample_histogram(1'000, 60));
    }
    a_end.status = Status::complete;
    a_end.intervals = a_intervals;
    a_end.finished_at = "2026-11-29T19:55:00.000Z";
    b_end = started("b");
    b_end.status = Status::complete;
    b_end.intervals = b_intervals;
    a_end_json = to_json(a_end);
    b_end_json = to_json(b_end);
  }

  void write(Journal& j) const {
    j.append(journal_run_start(head));
    j.append(journal_test_start(started("a")));
    for (const Interval& i : a_intervals) j.append(journal_interval("a", i));
    j.append(journal_test_end(a_end));
    j.append(journal_test_start(started("b")));
    for (const Interval& i : b_intervals) j.append(journal_interval("b", i));
    j.append(journal_test_end(b_end));
    j.append(journal_run_end(Status::complete, "", "2026-11-29T20:00:00.000Z"));
  }
};

TEST(Journal, OneLinePerEventAndCreateTruncates) {
  TempDir dir;
  const auto path = dir / "run.journal.jsonl";
  write_all(path, "old content\n");
  {
    Journal j(path);
    EXPECT_TRUE(j.is_open());
    EXPECT_EQ(j.path(), path);
    Script(false).write(j);
  }
  const std::string text = read_all(path);
  EXPECT_EQ(text.rfind("{\"event\":\"run_start\"", 0), 0u);
  std::size_t lines = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line); ++lines) {
    Json parsed;  // assigned, not discarded: GCC ignores a (void) cast of a warn_unused_result call
    EXPECT_NO_THROW(parsed = Json::parse(line));
  }
  EXPECT_EQ(lines, 1u + 1u + 3u + 1u + 1u + 2u + 1u + 1u);
  EXPECT_EQ(text.back(), '\n');
}

TEST(Journal, EventsHaveTheDocumentedShape) {
  const Json start = journal_test_start(started("a"));
  EXPECT_EQ(start, (Json{{"event", "test_start"},
                         {"test", "a"},
                         {"kind", "fio"},
                         {"config", {{"rw", "randread"}, {"bs", 4096}}},
                         {"at", "2026-11-29T19:54:00.000Z"}}));
  const Json iv = journal_interval("a", Interval{5, 5, {{"iops", 1}}});
  EXPECT_EQ(iv, (Json{{"event", "interval"},
                      {"test", "a"},
                      {"interval", {{"t_s", 5.0}, {"duration_s", 5.0}, {"values", {{"iops", 1.0}}}}}}));
  EXPECT_EQ(journal_run_end(Status::failed, "boom", "t"),
            (Json{{"event", "run_end"}, {"status", "failed"}, {"reason", "boom"}, {"at", "t"}}));
  EXPECT_TRUE(journal_run_start(testing::sample_run())["record"]["tests"].empty());
}

TEST(Journal, AppendIsThreadSafe) {
  TempDir dir;
  const auto path = dir / "j.jsonl";
  Journal j(path);
  constexpr int kThreads = 4, kEach = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        j.append(Json{{"event", "x"}, {"thread", t}, {"i", i}, {"pad", std::string(300, 'p')}});
      }
    });
  }
  for (auto& th : threads) th.join();
  std::istringstream in(read_all(path));
  std::vector<int> seen(kThreads, 0);
  for (std::string line; std::getline(in, line);) {
    const Json e = Json::parse(line);  // an interleaved line would not parse
    EXPECT_EQ(e["i"].get<int>(), seen[e["thread"].get<std::size_t>()]++);
  }
  for (int n : seen) EXPECT_EQ(n, kEach);
}

// A reserve a live journal holds stays; one nobody holds (its run was killed) is removed.
TEST(Journal, StaleReservesAreRemovedAndLiveOnesKept) {
  TempDir dir;
  const auto live_path = dir.path() / "live.journal.jsonl";
  Journal live(live_path, 64 * 1024);
  ASSERT_TRUE(std::filesystem::exists(live.reserve_path()));
  const auto stale = dir.path() / "killed.journal.jsonl.reserve";
  std::ofstream(stale) << std::string(4096, '\0');
  const auto other = dir.path() / "not-a-reserve.dat";
  std::ofstream(other) << "x";
  const auto removed = remove_stale_reserves(dir.path());
  EXPECT_EQ(removed, std::vector<std::filesystem::path>{stale});
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(live.reserve_path())) << "held by a live journal";
  EXPECT_TRUE(std::filesystem::exists(other));
  live.release_reserve();
  EXPECT_FALSE(std::filesystem::exists(live.reserve_path()));
}

TEST(Journal, ErrorsAreEnvironmentErrors) {
  TempDir dir;
  EXPECT_THROW(Journal(dir / "missing" / "j.jsonl"), EnvironmentError);
  Journal closed;
  EXPECT_FALSE(closed.is_open());
  EXPECT_THROW(closed.append(Json{{"event", "x"}}), EnvironmentError);
  Journal moved_from(dir / "j.jsonl");
  Journal target = std::move(moved_from);
  EXPECT_TRUE(target.is_open());
  EXPECT_THROW(moved_from.append(Json{{"event", "x"}}), EnvironmentError);  // NOLINT(bugprone-use-after-move)
}

// Issue 15: a journal on a filesystem that fills. The reserve is allocated at creation; the first
// failed append releases it, writes the event again into that space and still throws the error
// (ENOSPC, named); failure() keeps it, and the events after it (test_end, run_end) fit.
TEST(Journal, AFullFilesystemReleasesTheReserveKeepsTheEventAndThrows) {
  TempDir dir;
  const auto small = dir / "small";
  std::filesystem::create_directories(small);
  std::string why;
  const auto tmpfs = drivelab::testing::TmpfsMount::on(small, 4 << 20, why);
  if (!tmpfs) GTEST_SKIP() << why;
  const auto path = small / "j.jsonl";
  EXPECT_THROW(Journal(path, 8 << 20), EnvironmentError) << "a reserve larger than the free space refuses the run";
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".reserve"));
  EXPECT_FALSE(std::filesystem::exists(path)) << "a refused run leaves no empty journal behind";
  {
    Journal j(path, 1 << 20);
    EXPECT_TRUE(std::filesystem::exists(j.reserve_path()));
    j.append(journal_run_start(header()));
    j.append(journal_test_start(started("a")));
    // Take every byte left.
    const int fd = ::open((small / "filler").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    for (int i = 0; i < 3; ++i) {
      struct statvfs v{};
      ASSERT_EQ(::statvfs(small.c_str(), &v), 0);
      const off_t free = static_cast<off_t>(v.f_bavail) * static_cast<off_t>(v.f_frsize);
      if (free == 0) break;
      ::posix_fallocate(fd, ::lseek(fd, 0, SEEK_END), free);
    }
    std::string pad(8192, 'x');  // the last partial page
    while (::write(fd, pad.data(), pad.size()) > 0) {
    }
    ::close(fd);
    EXPECT_EQ(j.failure(), "");
    try {
      Interval big{1, 1, {}};  // > 4 KiB: past the journal's last tmpfs page, which has room for a short line
      for (int k = 0; k < 400; ++k) big.values.emplace_back("value_" + std::to_string(k), k);
      j.append(journal_interval("a", big));
      ADD_FAILURE() << "the append into a full filesystem did not fail";
    } catch (const EnvironmentError& e) {
      EXPECT_EQ(std::string(e.what()),
                "cannot append to journal '" + path.string() + "': No space left on device (ENOSPC)");
    }
    EXPECT_EQ(j.failure(), "cannot append to journal '" + path.string() + "': No space left on device (ENOSPC)");
    EXPECT_TRUE(j.kept_after_failure());
    EXPECT_FALSE(std::filesystem::exists(j.reserve_path())) << "released";
    TestRecord a = started("a");
    a.status = Status::failed;
    a.reason = "run failed: " + j.failure();
    j.append(journal_test_end(a));
    j.append(journal_run_end(Status::failed, "the result journal could not be written", "2026-11-29T20:00:00.000Z"));
  }
  const RunRecord r = recover_from_journal(path);
  EXPECT_EQ(r.status, Status::failed);
  EXPECT_EQ(r.reason, "the result journal could not be written");
  ASSERT_EQ(r.tests.size(), 1u);
  EXPECT_EQ(r.tests[0].status, Status::failed);
  EXPECT_NE(r.tests[0].reason.find("(ENOSPC)"), std::string::npos) << r.tests[0].reason;
}

TEST(Recovery, CompleteJournalGivesTheFinalRecord) {
  TempDir dir;
  const auto path = dir / "j.jsonl";
  const Script script(true);
  {
    Journal j(path);
    script.write(j);
  }
  const RunRecord r = recover_from_journal(path);
  EXPECT_EQ(r.status, Status::complete);
  EXPECT_EQ(r.reason, "");
  EXPECT_EQ(r.finished_at, "2026-11-29T20:00:00.000Z");
  EXPECT_EQ(r.warnings, header().warnings);  // nothing added by recovery
  ASSERT_EQ(r.tests.size(), 2u);
  EXPECT_EQ(to_json(r.tests[0]), to_json(script.a_end));
  EXPECT_EQ(to_json(r.tests[1]), to_json(script.b_end));
  RunRecord expected = header();
  expected.status = Status::complete;
  expected.finished_at = "2026-11-29T20:00:00.000Z";
  expected.tests = {script.a_end, script.b_end};
  EXPECT_EQ(to_json(r), to_json(expected));
}

TEST(Recovery, MultiHostFieldsSurviveTheJournal) {
  // mh-spec (issue 16): the cohort in run_start, interval histograms in interval events, and
  // barriers and provenance in test_end come back from the journal as written.
  TempDir dir;
  const auto path = dir / "j.jsonl";
  const RunRecord rank = testing::sample_rank_run(2, 4);
  {
    Journal j(path);
    j.append(journal_run_start(rank));
    const TestRecord& t = rank.tests[0];
    j.append(journal_test_start(t));
    for (const Interval& i : t.intervals) j.append(journal_interval(t.name, i));
    j.append(journal_test_end(t));
    TestRecord open = rank.tests[1];
    j.append(journal_test_start(open));
    j.append(journal_interval(open.name, open.intervals[0]));
  }
  const RunRecord r = recover_from_journal(path);
  EXPECT_EQ(r.cohort, rank.cohort);
  ASSERT_EQ(r.tests.size(), 2u);
  EXPECT_EQ(to_json(r.tests[0]), to_json(rank.tests[0]));
  ASSERT_EQ(r.tests[1].intervals.size(), 1u);
  EXPECT_EQ(to_json(r.tests[1].intervals[0]), to_json(rank.tests[1].intervals[0]));
  EXPECT_EQ(r.tests[1].intervals[0].histograms.at("latency").count(), 50u);
}

/// Byte ranges of the lines of `text` (without their '\n').
std::vector<std::pair<std::size_t, std::size_t>> line_spans(const std::string& text) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    spans.emplace_back(start, nl);
    start = nl + 1;
  }
  return spans;
}

/// Truncates the journal of `script` at `cut` bytes, recovers, and checks the record against what
/// the surviving lines say. Line indices: 0 run_start, 1 test_start a, 2-4 intervals a, 5 test_end
/// a, 6 test_start b, 7-8 intervals b, 9 test_end b, 10 run_end.
void check_cut(const Script& script, const std::string& full, std::size_t cut, const std::filesystem::path& path) {
  SCOPED_TRACE("cut at byte " + std::to_string(cut) + " of " + std::to_string(full.size()));
  // Shrinking in place is what a crash leaves, and far cheaper than rewriting the file each time.
  if (!std::filesystem::exists(path) || std::filesystem::file_size(path) < cut) write_all(path, full);
  std::filesystem::resize_file(path, cut);
  const auto spans = line_spans(full);
  ASSERT_EQ(spans.size(), 11u);
  std::size_t complete = 0;  // lines whose content survived entirely (the '\n' is not needed)
  bool torn = false;
  for (const auto& [start, end] : spans) {
    if (end <= cut)
      ++complete;
    else if (start < cut)
      torn = true;
  }
  if (complete == 0) {
    EXPECT_THROW(recover_from_journal(path), ConfigError);
    return;
  }
  const RunRecord r = recover_from_journal(path);
  // Valid: serialises and reads back exactly.
  const Json j = to_json(r);
  EXPECT_EQ(to_json(run_record_from_json(Json::parse(j.dump()))), j);

  const std::string torn_warning = "journal recovery: dropped the incomplete last line";
  const bool warned = !r.warnings.empty() && r.warnings.back().rfind(torn_warning, 0) == 0;
  EXPECT_EQ(warned, torn);
  EXPECT_EQ(r.warnings.size(), script.head.warnings.size() + (torn ? 1 : 0));

  if (complete == 11) {
    EXPECT_EQ(r.status, Status::complete);
    EXPECT_EQ(r.reason, "");
  } else {
    EXPECT_EQ(r.status, Status::interrupted);
    EXPECT_EQ(r.reason, "journal ends before run_end");
    EXPECT_EQ(r.finished_at, "");
  }
  const std::size_t tests = complete >= 7 ? 2 : complete >= 2 ? 1 : 0;
  ASSERT_EQ(r.tests.size(), tests);
  if (tests >= 1) {
    const TestRecord& a = r.tests[0];
    if (complete >= 6) {
      EXPECT_EQ(to_json(a), script.a_end_json);
    } else {
      const std::size_t n = complete - 2;  // intervals that survived
      EXPECT_EQ(a.status, Status::interrupted);
      EXPECT_EQ(a.reason, "journal ends before test_end");
      EXPECT_EQ(a.kind, "fio");
      EXPECT_EQ(a.started_at, "2026-11-29T19:54:00.000Z");
      EXPECT_EQ(a.config, started("a").config);
      ASSERT_EQ(a.intervals.size(), n);
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(to_json(a.intervals[i]), to_json(script.a_intervals[i]));
      }
      EXPECT_EQ(a.measured_s, n ? script.a_intervals[n - 1].t_s : 0.0);
      EXPECT_TRUE(a.metrics.empty());
    }
  }
  if (tests == 2) {
    const TestRecord& b = r.tests[1];
    if (complete >= 10) {
      EXPECT_EQ(to_json(b), script.b_end_json);
    } else {
      EXPECT_EQ(b.status, Status::interrupted);
      EXPECT_EQ(b.intervals.size(), complete - 7);
    }
  }
}

TEST(Recovery, TruncationsAllOverASmallJournalGiveValidRecords) {
  TempDir dir;
  const Script script(false);
  const auto path = dir / "j.jsonl";
  {
    Journal j(path);
    script.write(j);
  }
  const std::string full = read_all(path);
  // Every 17th byte (so every line is cut somewhere in its middle) plus every byte within 2 of a
  // line boundary, where the off-by-one mistakes live. Descending: the file is shrunk in place.
  std::set<std::size_t, std::greater<>> cuts;
  for (std::size_t cut = 0; cut <= full.size(); cut += 17) cuts.insert(cut);
  for (const auto& [start, end] : line_spans(full)) {
    for (std::size_t d = 0; d <= 2; ++d) {
      for (std::size_t cut : {start + d, start - std::min(start, d), end + d, end - d}) {
        if (cut <= full.size()) cuts.insert(cut);
      }
    }
  }
  cuts.insert(full.size());
  ASSERT_GT(cuts.size(), full.size() / 17);
  for (std::size_t cut : cuts) check_cut(script, full, cut, path);
}

TEST(Recovery, TruncationsAroundEveryLineOfAJournalWithHistograms) {
  TempDir dir;
  const Script script(true);
  const auto path = dir / "j.jsonl";
  {
    Journal j(path);
    script.write(j);
  }
  const std::string full = read_all(path);
  for (const auto& [start, end] : line_spans(full)) {
    for (std::size_t cut : {(start + end) / 2, end - 1, end}) {
      if (cut <= full.size()) check_cut(script, full, cut, dir / "cut.jsonl");  // increasing
    }
  }
}

TEST(Recovery, RunEndWinsEvenWithAnUnfinishedTest) {
  TempDir dir;
  const auto path = dir / "j.jsonl";
  {
    Journal j(path);
    j.append(journal_run_start(header()));
    j.append(journal_test_start(started("a")));
    j.append(journal_interval("a", Interval{5, 5, {{"iops", 1}}}));
    j.append(journal_run_end(Status::failed, "target vanished", "2026-11-29T20:00:00.000Z"));
  }
  const RunRecord r = recover_from_journal(path);
  EXPECT_EQ(r.status, Status::failed);
  EXPECT_EQ(r.reason, "target vanished");
  ASSERT_EQ(r.tests.size(), 1u);
  EXPECT_EQ(r.tests[0].status, Status::interrupted);
  EXPECT_EQ(r.tests[0].reason, "journal ends before test_end");
  EXPECT_EQ(r.tests[0].measured_s, 5);
}

// A journal write that fails in a test_end (a full results disk) is written again from the
// reserve, and then the runner ends the test again as failed: one test, the later end wins
// (the fresh-user review found two tests, one of them "complete").
TEST(Recovery, ATestEndedAgainIsOneTestWithItsLaterEnd) {
  TempDir dir;
  const auto path = dir / "j.jsonl";
  {
    Journal j(path);
    j.append(journal_run_start(header()));
    j.append(journal_test_start(started("a")));
    TestRecord done = started("a");
    done.status = Status::complete;
    j.append(journal_test_end(done));
    done.status = Status::failed;
    done.reason = "the result journal could not be written";
    j.append(journal_test_end(done));
    j.append(journal_test_start(started("b")));
    TestRecord b = started("b");
    b.status = Status::complete;
    j.append(journal_test_end(b));
    j.append(journal_run_end(Status::failed, "the result journal could not be written", "2026-11-29T20:00:00.000Z"));
  }
  const RunRecord r = recover_from_journal(path);
  ASSERT_EQ(r.tests.size(), 2u);
  EXPECT_EQ(r.tests[0].name, "a");
  EXPECT_EQ(r.tests[0].status, Status::failed);
  EXPECT_EQ(r.tests[0].reason, "the result journal could not be written");
  EXPECT_EQ(r.tests[1].name, "b");
  EXPECT_EQ(r.tests[1].status, Status::complete);
}

// A curve killed after its max run and a point: the groups journaled as each run finished are
// recovered into the interrupted test, which says they are the finished runs of an interrupted test.
TEST(Recovery, GroupsOfAnInterruptedTestAreRecoveredAndMarked) {
  TempDir dir;
  const auto path = dir / "j.jsonl";
  const Metric tps{"tps", 100, "1/s", "", std::nullopt};
  {
    Journal j(path);
    j.append(journal_run_start(header()));
    j.append(journal_test_start(started("a")));
    j.append(journal_interval("a", Interval{5, 5, {{"tps", 100}}}));
    j.append(journal_groups("a", {MetricGroup{"max", {tps}}}));
    j.append(journal_groups("ghost", {MetricGroup{"max", {tps}}}));
    Metric later = tps;
    later.value = 101;
    j.append(journal_groups("a", {MetricGroup{"max", {later}}, MetricGroup{"point_050", {tps}}}));
    j.append(journal_interval("a", Interval{10, 5, {{"tps", 50}}}));
  }
  const RunRecord r = recover_from_journal(path);
  ASSERT_EQ(r.tests.size(), 1u);
  const TestRecord& t = r.tests[0];
  EXPECT_EQ(t.status, Status::interrupted);
  ASSERT_EQ(t.groups.size(), 2u);
  EXPECT_EQ(t.groups[0].name, "max");
  ASSERT_EQ(t.groups[0].metrics.size(), 1u);
  EXPECT_EQ(t.groups[0].metrics[0].value, 101);  // the later group replaces the earlier
  EXPECT_EQ(t.groups[0].metrics[0].unit, "1/s");
  EXPECT_EQ(t.groups[1].name, "point_050");
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_TRUE(t.warnings[0].starts_with(std::string(kRecoveredGroupsWarning) + "max, point_050: ")) << t.warnings[0];
  EXPECT_EQ(r.warnings.back(), "journal recovery: groups for test 'ghost' that was not started; skipped");
  // A test that ended has its record as written at its end: no recovery warning.
  {
    Journal j(path);
    j.append(journal_run_start(header()));
    j.append(journal_test_start(started("a")));
    j.append(journal_groups("a", {MetricGroup{"max", {tps}}}));
    TestRecord done = started("a");
    done.status = Status::complete;
    j.append(journal_test_end(done));
  }
  const RunRecord ended = recover_from_journal(path);
  ASSERT_EQ(ended.tests.size(), 1u);
  EXPECT_TRUE(ended.tests[0].groups.empty());
  EXPECT_TRUE(ended.tests[0].warnings.empty());
}

// `results recover` given the record instead of the journal says so, naming the file, whether the
// record is indented (as the runner writes it) or on one line.
TEST(Recovery, ARecordIsNamedAsOneNotAJournal) {
  TempDir dir;
  const auto path = dir / "run.json";
  for (const int indent : {2, -1}) {
    write_record(path, testing::sample_run(), indent);
    try {
      recover_from_journal(path);
      FAIL() << indent;
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("'" + path.string() + "' is a result record, not a journal: ", 0), 0u)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("<run_id>.journal.jsonl"), std::string::npos) << e.what();
    }
  }
  // A killed run's record still says running: its journal, named, holds more.
  RunRecord killed = testing::sample_run();
  killed.status = Status::running;
  write_record(path, killed, 2);
  try {
    recover_from_journal(path);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("is the record of a run that never ended (a test still running"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("drivelab results recover " + (dir / "run.journal.jsonl").string()),
              std::string::npos)
        << e.what();
  }
}

TEST(Recovery, DamagedMiddleLinesAreSkippedWithWarnings) {
  TempDir dir;
  const auto path = dir / "j.jsonl";
  std::string text = journal_run_start(header()).dump() + "\n";
  text += journal_test_start(started("a")).dump() + "\n";
  text += "{\"event\":\"interval\",\"te\n";  // torn by ENOSPC
  text += journal_interval("a", Interval{10, 5, {{"iops", 2}}}).dump() + "\n";
  text += journal_interval("ghost", Interval{10, 5, {{"iops", 2}}}).dump() + "\n";
  text += R"({"event":"interval","test":"a","interval":{"t_s":"late"}})"
          "\n";
  text += R"({"event":"checkpoint","future":true})"
          "\n";  // unknown: ignored
  write_all(path, text);
  const RunRecord r = recover_from_journal(path);
  ASSERT_EQ(r.tests.size(), 1u);
  ASSERT_EQ(r.tests[0].intervals.size(), 1u);
  EXPECT_EQ(r.tests[0].intervals[0].t_s, 10);
  const auto& w = r.warnings;
  ASSERT_EQ(w.size(), header().warnings.size() + 3);
  EXPECT_EQ(w[w.size() - 3], "journal recovery: line 3 is not valid JSON; skipped");
  EXPECT_EQ(w[w.size() - 2], "journal recovery: interval for test 'ghost' that was not started; skipped");
  EXPECT_EQ(w[w.size() - 1], "journal recovery: line 6: interval event: t_s: expected a number, got string; skipped");
}

TEST(Recovery, RejectsWhatIsNotADrivelabJournal) {
  TempDir dir;
  const auto path = dir / "j.jsonl";
  write_all(path, "");
  EXPECT_THROW(recover_from_journal(path), ConfigError);
  try {
    recover_from_journal("/dev/zero");  // never ends: refused before reading
    FAIL();
  } catch (const EnvironmentError& e) {
    EXPECT_STREQ(e.what(), "cannot read journal '/dev/zero': it is a device or socket, not a file");
  }
  write_all(path, journal_test_start(started("a")).dump() + "\n");
  try {
    recover_from_journal(path);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("line 1: expected a run_start event first"), std::string::npos) << e.what();
  }
  Json start = journal_run_start(header());
  start["record"]["schema"] = "drivelab.run/0";
  write_all(path, start.dump() + "\n");
  try {
    recover_from_journal(path);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported result schema 'drivelab.run/0'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(recover_from_journal(dir / "absent.jsonl"), EnvironmentError);
}

}  // namespace
}  // namespace drivelab::results
