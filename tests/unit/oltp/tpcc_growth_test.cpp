// The space estimate of a TPC-C run (tpcc_growth.hpp) and the session count of an OLTP run
// (database.hpp sessions_needed): pure functions.
#include <gtest/gtest.h>

#include "drivelab/oltp/database/database.hpp"
#include "drivelab/oltp/tpcc/tpcc_driver.hpp"
#include "drivelab/oltp/tpcc/tpcc_growth.hpp"

namespace drivelab::oltp::tpcc {
namespace {

TEST(TpccGrowth, OfferedNewOrderRateIsKnownOnlyWhenPaced) {
  TpccConfig c;
  EXPECT_FALSE(offered_new_order_rate(c).has_value());  // think: none, closed loop
  c.rate_per_s = 23;
  ASSERT_TRUE(offered_new_order_rate(c).has_value());
  EXPECT_NEAR(*offered_new_order_rate(c), 10.0, 1e-9);  // 10 of the deck's 23 cards
  c.rate_per_s = 0;
  c.think = ThinkMode::tpcc;
  c.users = 10;
  // One warehouse's 10 terminals at zero response time: 10 x 23/476 s x 10/23 = 100/476 per s,
  // 12.6 per minute, just under TPC-C's 12.86 tpmC ceiling (the deck has 43.5% New-Orders, not 45%).
  EXPECT_NEAR(*offered_new_order_rate(c) * 60, 6000.0 / 476.0, 1e-9);
  EXPECT_LT(*offered_new_order_rate(c) * 60, 12.86);
  c.think_scale = 0.1;  // ten times shorter keying and think times: ten times the rate
  EXPECT_NEAR(*offered_new_order_rate(c) * 60, 60000.0 / 476.0, 1e-9);
}

TEST(TpccGrowth, TheDatabaseGrowsByRateTimesSecondsTimesBytesPerNewOrder) {
  const auto& k = growth_constants(GrowthBackend::sqlite);
  ASSERT_GT(k.table_bytes_per_new_order, 0.0);
  const GrowthEstimate e = estimate_growth(GrowthBackend::sqlite, 50'000'000, false, 40.0, 600.0);
  EXPECT_EQ(e.database_bytes, 50'000'000u);
  EXPECT_DOUBLE_EQ(e.bytes_per_new_order, k.table_bytes_per_new_order);
  EXPECT_NEAR(static_cast<double>(e.growth_bytes), 40.0 * 600.0 * k.table_bytes_per_new_order, 1.0);
  EXPECT_EQ(e.log_bytes, k.log_allowance_bytes);  // SQLite: the WAL file's allowance
  EXPECT_EQ(e.needed_bytes(), e.database_bytes + e.growth_bytes + e.log_bytes);
  // After the warm-up the database is already written: only the growth and the log must fit.
  const GrowthEstimate on = estimate_growth(GrowthBackend::sqlite, 50'000'000, true, 40.0, 600.0);
  EXPECT_EQ(on.needed_bytes(), e.growth_bytes + e.log_bytes);
  // Nothing grows without New-Orders or seconds; negative inputs count as none.
  EXPECT_EQ(estimate_growth(GrowthBackend::sqlite, 1, false, 0.0, 600.0).growth_bytes, 0u);
  EXPECT_EQ(estimate_growth(GrowthBackend::sqlite, 1, false, -5.0, 600.0).growth_bytes, 0u);
  EXPECT_EQ(estimate_growth(GrowthBackend::mariadb, 1, false, 40.0, -1.0).growth_bytes, 0u);
}

TEST(TpccGrowth, PostgresWalIsOneCheckpointCycleCappedByMaxWalSizePlusWalKeepSize) {
  const double wal = growth_constants(GrowthBackend::postgres).wal_bytes_per_new_order;
  ASSERT_GT(wal, 0.0);
  WalSettings w;  // the managed profile: 16 GB, 5 min, 0.9
  // A 60 s run keeps all its WAL (shorter than a checkpoint cycle).
  EXPECT_NEAR(static_cast<double>(estimate_growth(GrowthBackend::postgres, 0, true, 100.0, 60.0, w).log_bytes),
              100.0 * 60.0 * wal, 1.0);
  // A 2 h run keeps (1 + 0.9) x 300 s of it.
  EXPECT_NEAR(static_cast<double>(estimate_growth(GrowthBackend::postgres, 0, true, 100.0, 7200.0, w).log_bytes),
              100.0 * 570.0 * wal, 1.0);
  // At most max_wal_size, then wal_keep_size on top.
  w.max_wal_size_bytes = 1'000'000;
  w.wal_keep_size_bytes = 500'000;
  EXPECT_EQ(estimate_growth(GrowthBackend::postgres, 0, true, 100.0, 7200.0, w).log_bytes, 1'500'000u);
  // A load still to come writes about its own size of WAL first, which the run recycles: the
  // larger of the two counts, capped by max_wal_size.
  const double load_ratio = growth_constants(GrowthBackend::postgres).load_wal_per_loaded_byte;
  WalSettings big;
  EXPECT_NEAR(
      static_cast<double>(estimate_growth(GrowthBackend::postgres, 1'000'000'000, false, 1.0, 60.0, big).log_bytes),
      load_ratio * 1e9, 1.0);
  EXPECT_NEAR(
      static_cast<double>(estimate_growth(GrowthBackend::postgres, 1'000'000'000, true, 1.0, 60.0, big).log_bytes),
      60.0 * wal, 1.0);
  // MariaDB's redo log is preallocated at the server's start: nothing to add.
  EXPECT_EQ(estimate_growth(GrowthBackend::mariadb, 0, true, 100.0, 7200.0, w).log_bytes, 0u);
}

TEST(TpccGrowth, TheRefusalPrintsEveryTermOrNothingWhenItFits) {
  const GrowthEstimate e = estimate_growth(GrowthBackend::sqlite, 45'000'000, false, 43.5, 3600.0);
  EXPECT_EQ(growth_refusal(e, e.needed_bytes(), "/t", "estimated load"), "");
  const std::string r = growth_refusal(e, 100'000'000, "/t", "estimated load");
  for (const std::string part : {"not enough free space in /t", "estimated load 42.9 MiB",
                                 "growth 43.5 New-Orders/s x 3600 s", "+ log allowance", "needed", "95.4 MiB free"})
    EXPECT_NE(r.find(part), std::string::npos) << part << " in: " << r;
  // A closed loop before its load: no rate yet, and the message says when the growth is checked.
  const GrowthEstimate closed = estimate_growth(GrowthBackend::sqlite, 45'000'000, false, 0.0, 3600.0);
  const std::string c = growth_refusal(closed, 1'000'000, "/t", "estimated load");
  EXPECT_NE(c.find("the run's growth (a closed loop: checked after the warm-up"), std::string::npos) << c;
  EXPECT_EQ(c.find("0.0 New-Orders/s"), std::string::npos) << c;
}

TEST(TpccGrowth, OnlyDatabasesInTheTargetAreChecked) {
  DatabaseConfig c;
  EXPECT_EQ(growth_backend(c), GrowthBackend::sqlite);
  c.backend = BackendKind::postgres;
  EXPECT_FALSE(growth_backend(c).has_value());  // an existing server: not on the target
  c.managed = ServerKind::postgres;
  EXPECT_EQ(growth_backend(c), GrowthBackend::postgres);
  c.backend = BackendKind::mysql;
  c.managed = ServerKind::mariadb;
  EXPECT_EQ(growth_backend(c), GrowthBackend::mariadb);
}

TEST(SessionsNeeded, WorkersPlusOneTheLoadersOrTheFinishingSessions) {
  const Capabilities pg = capabilities_of(BackendKind::postgres);
  const Capabilities my = capabilities_of(BackendKind::mysql);
  EXPECT_EQ(pg.finish_load_sessions, 5);  // CHECKPOINT + 4 ANALYZE sessions
  EXPECT_EQ(my.finish_load_sessions, 1);
  EXPECT_EQ(sessions_needed(12, 2, pg), 13);  // 12 terminals + the counters/checks session
  EXPECT_EQ(sessions_needed(2, 2, pg), 5);    // the ANALYZE after the load needs more
  EXPECT_EQ(sessions_needed(2, 8, my), 8);    // the loaders
  EXPECT_EQ(sessions_needed(8, 4, my), 9);
}

}  // namespace
}  // namespace drivelab::oltp::tpcc
