// sysbench's tables (oltp_common.lua create_table) on a real SQLite database.
#include <gtest/gtest.h>

#include "drivelab/oltp/sysbench/sysbench_schema.hpp"
#include "test_db.hpp"

namespace drivelab::oltp::sysbench {
namespace {

TEST(SysbenchSchema, CreateTableFollowsTheScriptPerDialect) {
  const std::string pg = create_table_sql(make_dialect(SqlDialect::postgres), 3);
  EXPECT_NE(pg.find("CREATE TABLE sbtest3("), std::string::npos);
  EXPECT_NE(pg.find("id SERIAL"), std::string::npos);
  EXPECT_NE(pg.find("k INTEGER DEFAULT '0' NOT NULL"), std::string::npos);
  EXPECT_NE(pg.find("c CHAR(120) DEFAULT '' NOT NULL"), std::string::npos);
  EXPECT_NE(pg.find("pad CHAR(60) DEFAULT '' NOT NULL"), std::string::npos);
  EXPECT_NE(pg.find("PRIMARY KEY (id)"), std::string::npos);
  const std::string my = create_table_sql(make_dialect(SqlDialect::mysql), 1);
  EXPECT_NE(my.find("id INTEGER NOT NULL AUTO_INCREMENT"), std::string::npos);
  EXPECT_NE(my.find("ENGINE=InnoDB"), std::string::npos);
  const std::string lite = create_table_sql(make_dialect(SqlDialect::sqlite), 1);
  EXPECT_NE(lite.find("id INTEGER NOT NULL"), std::string::npos);
  EXPECT_EQ(create_index_sql(12), "CREATE INDEX k_12 ON sbtest12(k)");
}

struct SchemaFixture : ::testing::Test {
  test::TempDir dir;
  std::unique_ptr<Backend> backend = test::sqlite_at(dir.path() / "sb.db");
};

TEST_F(SchemaFixture, LoadWritesSysbenchsRows) {
  const Scale scale{.tables = 3, .table_size = 2000};
  std::vector<int> progress;
  const auto stats = load_tables(
      *backend, scale, RandOptions{}, Rng(1), 4, [&](const LoadProgress& p) { progress.push_back(p.tables_done); },
      nullptr);
  ASSERT_TRUE(stats.complete);
  EXPECT_EQ(stats.rows, 6000u);
  EXPECT_EQ(stats.threads, 1);  // SQLite: one writer
  EXPECT_EQ(progress, (std::vector<int>{1, 2, 3}));
  auto conn = backend->connect();
  for (int t = 1; t <= 3; ++t) {
    const std::string tbl = table_name(t);
    EXPECT_EQ(test::query_int(*conn, "SELECT COUNT(*) FROM " + tbl), 2000);
    EXPECT_EQ(test::query_int(*conn, "SELECT MIN(id) FROM " + tbl), 1);
    EXPECT_EQ(test::query_int(*conn, "SELECT MAX(id) FROM " + tbl), 2000);
    EXPECT_EQ(test::query_int(*conn, "SELECT COUNT(*) FROM " + tbl + " WHERE k < 1 OR k > 2000"), 0);
    // k from the special distribution: ~75% within the middle 1% (ids 990..1010).
    EXPECT_GT(test::query_int(*conn, "SELECT COUNT(*) FROM " + tbl + " WHERE k BETWEEN 985 AND 1015"), 1300);
    EXPECT_EQ(test::query_int(*conn, "SELECT COUNT(*) FROM " + tbl +
                                         " WHERE length(c) = 119 AND "
                                         "length(pad) = 59 AND c LIKE '___________-%' AND substr(pad, 48, 1) = '-'"),
              2000);
    EXPECT_EQ(test::query_int(*conn, fmt::format("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND "
                                                 "name = 'k_{}'",
                                                 t)),
              1);
  }
  // The content of a table does not depend on the number of tables or loader threads.
  const std::string first_c = test::query_text(*conn, "SELECT c FROM sbtest2 WHERE id = 1");
  EXPECT_TRUE(has_drivelab_meta(*conn));
  EXPECT_EQ(check_reusable(*conn, scale), std::nullopt);
  const auto other = check_reusable(*conn, {.tables = 3, .table_size = 1000});
  ASSERT_TRUE(other.has_value());
  EXPECT_NE(other->find("3 table(s) of 2000 rows"), std::string::npos) << *other;
  conn.reset();

  test::TempDir dir2;
  auto b2 = test::sqlite_at(dir2.path() / "sb.db");
  ASSERT_TRUE(load_tables(*b2, {.tables = 2, .table_size = 2000}, RandOptions{}, Rng(1), 1, nullptr, nullptr).complete);
  auto c2 = b2->connect();
  EXPECT_EQ(test::query_text(*c2, "SELECT c FROM sbtest2 WHERE id = 1"), first_c);
}

TEST_F(SchemaFixture, TablesPreparedByAnotherToolAreCheckedByTheirKeys) {
  // What `sysbench prepare` leaves: the tables, no drivelab_meta.
  {
    auto conn = backend->connect();
    for (int t = 1; t <= 2; ++t) {
      conn->execute_immediate(create_table_sql(backend->dialect(), t));
      conn->execute_immediate(
          fmt::format("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) "
                      "INSERT INTO sbtest{} (k, c, pad) SELECT i, 'c', 'p' FROM n",
                      t));
    }
    EXPECT_FALSE(has_drivelab_meta(*conn));
    EXPECT_EQ(check_reusable(*conn, {.tables = 2, .table_size = 300}), std::nullopt);
    const auto size = check_reusable(*conn, {.tables = 2, .table_size = 400});
    ASSERT_TRUE(size.has_value());
    EXPECT_NE(size->find("sbtest1 has MAX(id) = 300, not table_size = 400"), std::string::npos) << *size;
    const auto missing = check_reusable(*conn, {.tables = 3, .table_size = 300});
    ASSERT_TRUE(missing.has_value());
    EXPECT_NE(missing->find("table sbtest3 is missing"), std::string::npos) << *missing;
  }
}

TEST_F(SchemaFixture, AStoppedLoadIsNotReusable) {
  const auto stats = load_tables(*backend, {.tables = 2, .table_size = 120'000}, RandOptions{}, Rng(1), 1, nullptr,
                                 [] { return true; });
  EXPECT_FALSE(stats.complete);
  auto conn = backend->connect();
  const auto why = check_reusable(*conn, {.tables = 2, .table_size = 120'000});
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "its load did not finish");
}

}  // namespace
}  // namespace drivelab::oltp::sysbench
