// The worker threads on a real SQLite database: counts, intervals, fairness, stop.
#include <gtest/gtest.h>

#include <thread>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/sysbench/sysbench_driver.hpp"
#include "test_db.hpp"

namespace drivelab::oltp::sysbench {
namespace {

struct DriverFixture : ::testing::Test {
  test::TempDir dir;
  std::unique_ptr<Backend> backend = test::sqlite_at(dir.path() / "sb.db");
  Scale scale{.tables = 2, .table_size = 1000};

  void SetUp() override {
    ASSERT_TRUE(load_tables(*backend, scale, RandOptions{}, Rng(5), 1, nullptr, nullptr).complete);
  }

  DriverTotals run(Workload w, int threads, std::vector<IntervalStats>* intervals = nullptr) {
    DriverOptions o;
    o.workload = w;
    o.scale = scale;
    o.threads = threads;
    o.seed = 3;
    Driver d(*backend, o);
    d.start();
    d.begin_measurement();
    for (int i = 0; i < 3; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      IntervalStats iv = d.take_interval();
      if (intervals) intervals->push_back(std::move(iv));
    }
    d.finish();
    EXPECT_FALSE(d.fatal_error().has_value()) << *d.fatal_error();
    return d.totals();
  }
};

TEST_F(DriverFixture, ReadWriteRunsTwentyQueriesPerTransaction) {
  std::vector<IntervalStats> intervals;
  const DriverTotals t = run(Workload::oltp_read_write, 2, &intervals);
  const Counters& c = t.counters;
  ASSERT_GT(c.events, 0u);
  EXPECT_EQ(c.latency.count(), c.events);
  // SQLite serialises writers, so no transaction fails: exactly sysbench's 14/4/2 per event.
  EXPECT_EQ(c.queries.errors, 0u);
  EXPECT_EQ(c.queries.reads, 14 * c.events);
  EXPECT_EQ(c.queries.writes, 4 * c.events);
  EXPECT_EQ(c.queries.other, 2 * c.events);
  EXPECT_EQ(c.reconnects, 0u);
  EXPECT_GT(t.measured_s, 0.4);
  ASSERT_EQ(t.threads.size(), 2u);
  EXPECT_EQ(t.threads[0].events + t.threads[1].events, c.events);
  // Intervals add up to (at most) the totals: events finishing after the last take are in the
  // totals only.
  std::uint64_t interval_events = 0;
  for (const auto& iv : intervals) {
    EXPECT_GT(iv.duration_s, 0.1);
    interval_events += iv.counters.events;
  }
  EXPECT_LE(interval_events, c.events);
  EXPECT_GT(interval_events, 0u);
  // Each DELETE has its INSERT: the tables keep their rows.
  auto conn = backend->connect();
  for (int tbl = 1; tbl <= scale.tables; ++tbl)
    EXPECT_EQ(test::query_int(*conn, fmt::format("SELECT COUNT(*) FROM sbtest{}", tbl)), scale.table_size);
}

TEST_F(DriverFixture, ReadOnlyAndWriteOnlyHaveTheirScriptsQueryMix) {
  const Counters ro = run(Workload::oltp_read_only, 2).counters;
  ASSERT_GT(ro.events, 0u);
  EXPECT_EQ(ro.queries.reads, 14 * ro.events);
  EXPECT_EQ(ro.queries.writes, 0u);
  EXPECT_EQ(ro.queries.other, 2 * ro.events);
  const Counters wo = run(Workload::oltp_write_only, 1).counters;
  ASSERT_GT(wo.events, 0u);
  EXPECT_EQ(wo.queries.reads, 0u);
  EXPECT_EQ(wo.queries.writes, 4 * wo.events);
  EXPECT_EQ(wo.queries.other, 2 * wo.events);
}

TEST_F(DriverFixture, AMissingTableFailsTheStartWithTheBackendsMessage) {
  DriverOptions o;
  o.scale = {.tables = 3, .table_size = 1000};  // sbtest3 does not exist
  o.threads = 2;
  Driver d(*backend, o);
  try {
    d.start();
    FAIL() << "start() should throw";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("sbtest3"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(d.failed());
}

}  // namespace
}  // namespace drivelab::oltp::sysbench
