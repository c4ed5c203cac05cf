// The space estimate of a TPC-C run (tpcc_growth.hpp) and the session count of an OLTP run
// (database.hpp sessions_needed): pure functions, and whom the TPC-C emulator asks for its
// growth constants and HammerDB script (the backend or its managed server, never a name).
#include <gtest/gtest.h>

#include "drivelab/oltp/backends/mysql/mysql_backend.hpp"
#include "drivelab/oltp/backends/postgres/postgres_backend.hpp"
#include "drivelab/oltp/backends/sqlite/sqlite_backend.hpp"
#include "drivelab/oltp/database/database.hpp"
#include "drivelab/oltp/tpcc/tpcc_driver.hpp"
#include "drivelab/oltp/tpcc/tpcc_growth.hpp"
#include "temp_dir.hpp"  // tests/support

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
  const auto& k = sqlite_growth_constants();
  ASSERT_GT(k.table_bytes_per_new_order, 0.0);
  const GrowthEstimate e = estimate_growth(sqlite_growth_constants(), 50'000'000, false, 40.0, 600.0);
  EXPECT_EQ(e.database_bytes, 50'000'000u);
  EXPECT_DOUBLE_EQ(e.bytes_per_new_order, k.table_bytes_per_new_order);
  EXPECT_NEAR(static_cast<double>(e.growth_bytes), 40.0 * 600.0 * k.table_bytes_per_new_order, 1.0);
  EXPECT_EQ(e.log_bytes, k.log_allowance_bytes);  // SQLite: the WAL file's allowance
  EXPECT_EQ(e.needed_bytes(), e.database_bytes + e.growth_bytes + e.log_bytes);
  // After the warm-up the database is already written: only the growth and the log must fit.
  const GrowthEstimate on = estimate_growth(sqlite_growth_constants(), 50'000'000, true, 40.0, 600.0);
  EXPECT_EQ(on.needed_bytes(), e.growth_bytes + e.log_bytes);
  // Nothing grows without New-Orders or seconds; negative inputs count as none.
  EXPECT_EQ(estimate_growth(sqlite_growth_constants(), 1, false, 0.0, 600.0).growth_bytes, 0u);
  EXPECT_EQ(estimate_growth(sqlite_growth_constants(), 1, false, -5.0, 600.0).growth_bytes, 0u);
  EXPECT_EQ(estimate_growth(mariadb_growth_constants(), 1, false, 40.0, -1.0).growth_bytes, 0u);
}

TEST(TpccGrowth, PostgresWalIsOneCheckpointCycleCappedByMaxWalSizePlusWalKeepSize) {
  const double wal = postgres_growth_constants().wal_bytes_per_new_order;
  ASSERT_GT(wal, 0.0);
  WalSettings w;  // the managed profile: 16 GB, 5 min, 0.9
  // A 60 s run keeps all its WAL (shorter than a checkpoint cycle).
  EXPECT_NEAR(static_cast<double>(estimate_growth(postgres_growth_constants(), 0, true, 100.0, 60.0, w).log_bytes),
              100.0 * 60.0 * wal, 1.0);
  // A 2 h run keeps (1 + 0.9) x 300 s of it.
  EXPECT_NEAR(static_cast<double>(estimate_growth(postgres_growth_constants(), 0, true, 100.0, 7200.0, w).log_bytes),
              100.0 * 570.0 * wal, 1.0);
  // At most max_wal_size, then wal_keep_size on top.
  w.max_wal_size_bytes = 1'000'000;
  w.wal_keep_size_bytes = 500'000;
  EXPECT_EQ(estimate_growth(postgres_growth_constants(), 0, true, 100.0, 7200.0, w).log_bytes, 1'500'000u);
  // A load still to come writes about its own size of WAL first, which the run recycles: the
  // larger of the two counts, capped by max_wal_size.
  const double load_ratio = postgres_growth_constants().load_wal_per_loaded_byte;
  WalSettings big;
  EXPECT_NEAR(
      static_cast<double>(estimate_growth(postgres_growth_constants(), 1'000'000'000, false, 1.0, 60.0, big).log_bytes),
      load_ratio * 1e9, 1.0);
  EXPECT_NEAR(
      static_cast<double>(estimate_growth(postgres_growth_constants(), 1'000'000'000, true, 1.0, 60.0, big).log_bytes),
      60.0 * wal, 1.0);
  // MariaDB's redo log is preallocated at the server's start: nothing to add.
  EXPECT_EQ(estimate_growth(mariadb_growth_constants(), 0, true, 100.0, 7200.0, w).log_bytes, 0u);
}

TEST(TpccGrowth, TheRefusalPrintsEveryTermOrNothingWhenItFits) {
  const GrowthEstimate e = estimate_growth(sqlite_growth_constants(), 45'000'000, false, 43.5, 3600.0);
  EXPECT_EQ(growth_refusal(e, e.needed_bytes(), "/t", "estimated load"), "");
  const std::string r = growth_refusal(e, 100'000'000, "/t", "estimated load");
  for (const std::string part : {"not enough free space in /t", "estimated load 42.9 MiB",
                                 "growth 43.5 New-Orders/s x 3600 s", "+ log allowance", "needed", "95.4 MiB free"})
    EXPECT_NE(r.find(part), std::string::npos) << part << " in: " << r;
  // A closed loop before its load: no rate yet, and the message says when the growth is checked.
  const GrowthEstimate closed = estimate_growth(sqlite_growth_constants(), 45'000'000, false, 0.0, 3600.0);
  const std::string c = growth_refusal(closed, 1'000'000, "/t", "estimated load");
  EXPECT_NE(c.find("the run's growth (a closed loop: checked after the warm-up"), std::string::npos) << c;
  EXPECT_EQ(c.find("0.0 New-Orders/s"), std::string::npos) << c;
}

TEST(TpccGrowth, OnlyDatabasesInTheTargetAreCheckedWithTheConstantsOfWhatKeepsThem) {
  test_support::TempDir dir("growth");
  // An embedded backend keeps its file on the drive: its own constants.
  const auto sqlite = make_sqlite_backend({.path = dir.path() / "g.db"});
  ASSERT_TRUE(growth_constants(*sqlite, nullptr).has_value());
  EXPECT_EQ(growth_constants(*sqlite, nullptr)->table_bytes_per_new_order, 1164);
  EXPECT_EQ(growth_constants(*sqlite, nullptr)->log_allowance_bytes, 16ull << 20);
  // A server backend without a managed server: an existing server, not on the drive.
  const auto pg = make_postgres_backend({});  // nothing is connected until connect()
  EXPECT_FALSE(growth_constants(*pg, nullptr).has_value());
  // With a managed server, the server's (nothing is started until start()).
  ManagedServerOptions server_options;
  server_options.data_dir = dir.path() / "pg";
  const auto managed_pg = make_managed_postgres(server_options);
  ASSERT_TRUE(growth_constants(*pg, managed_pg.get()).has_value());
  EXPECT_EQ(growth_constants(*pg, managed_pg.get())->table_bytes_per_new_order, 3106);
  EXPECT_EQ(growth_constants(*pg, managed_pg.get())->wal_bytes_per_new_order, 30734);
  EXPECT_EQ(growth_constants(*pg, managed_pg.get())->load_wal_per_loaded_byte, 0.95);
  // A server not started: the profile's WAL bounds (the running server's: postgres_server_test).
  EXPECT_EQ(managed_pg->wal_settings().max_wal_size_bytes, 16ull << 30);
  EXPECT_EQ(managed_pg->wal_settings().checkpoint_timeout_s, 300);
  // MariaDB's server states its own (mysql_managed_test, on a real server).
}

TEST(TpccGrowth, TheHammerDbScriptIsTheBackendsWord) {
  test_support::TempDir dir("script");
  EXPECT_EQ(make_sqlite_backend({.path = dir.path() / "s.db"})->hammerdb_script(), HammerDbScript::postgresql);
  EXPECT_EQ(make_postgres_backend({})->hammerdb_script(), HammerDbScript::postgresql);
  // The mysql backend answers MariaDB's (mysql_managed_test, on a real server).
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
