// One sysbench event per workload: statement texts, parameters and counts against the Lua
// scripts of sysbench 1.0.20, and its execution on a real SQLite database.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "drivelab/oltp/sysbench/sysbench_driver.hpp"
#include "drivelab/oltp/sysbench/sysbench_schema.hpp"
#include "drivelab/oltp/sysbench/sysbench_transactions.hpp"
#include "test_db.hpp"

namespace drivelab::oltp::sysbench {
namespace {

const std::map<Kind, std::string> kLuaText = {
    // /usr/share/sysbench/oltp_common.lua, stmt_defs
    {Kind::point_select, "SELECT c FROM sbtest%u WHERE id=?"},
    {Kind::simple_range, "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ?"},
    {Kind::sum_range, "SELECT SUM(k) FROM sbtest%u WHERE id BETWEEN ? AND ?"},
    {Kind::order_range, "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c"},
    {Kind::distinct_range, "SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c"},
    {Kind::index_update, "UPDATE sbtest%u SET k=k+1 WHERE id=?"},
    {Kind::non_index_update, "UPDATE sbtest%u SET c=? WHERE id=?"},
    {Kind::delete_row, "DELETE FROM sbtest%u WHERE id=?"},
    {Kind::insert_row, "INSERT INTO sbtest%u (id, k, c, pad) VALUES (?, ?, ?, ?)"},
};

TEST(SysbenchStatements, TextsAreTheLuaScriptsStatements) {
  for (const auto& [kind, text] : kLuaText) EXPECT_EQ(sql_template(kind), text) << to_string(kind);
  EXPECT_EQ(statement_sql(Kind::sum_range, 17), "SELECT SUM(k) FROM sbtest17 WHERE id BETWEEN ? AND ?");
  EXPECT_EQ(statement_sql(Kind::insert_row, 3), "INSERT INTO sbtest3 (id, k, c, pad) VALUES (?, ?, ?, ?)");
  // Where Debian's sysbench is installed, the texts are checked against the script itself.
  std::ifstream lua("/usr/share/sysbench/oltp_common.lua");
  if (lua) {
    std::stringstream all;
    all << lua.rdbuf();
    for (const auto& [kind, text] : kLuaText)
      EXPECT_NE(all.str().find('"' + text + '"'), std::string::npos) << text << " not in oltp_common.lua";
  }
}

TEST(SysbenchStatements, PreparedPerConnectionAsTheScriptsPrepare) {
  const StatementOptions o;
  EXPECT_EQ(prepared_kinds(Workload::oltp_read_write, o).size(), 9u);
  EXPECT_EQ(prepared_kinds(Workload::oltp_read_only, o).size(), 5u);
  EXPECT_EQ(prepared_kinds(Workload::oltp_write_only, o).size(), 4u);
  StatementOptions no_ranges;
  no_ranges.range_selects = false;
  EXPECT_EQ(prepared_kinds(Workload::oltp_read_write, no_ranges).size(), 5u);
  EXPECT_EQ(prepared_kinds(Workload::oltp_read_only, no_ranges).size(), 1u);
  // A count of 0 does not stop sysbench from preparing the statement.
  StatementOptions zero;
  zero.point_selects = 0;
  EXPECT_EQ(prepared_kinds(Workload::oltp_read_only, zero).size(), 5u);
  // docs/protocol.md §2: 100 tables x 32 threads of oltp_read_write need 28,800 statements.
  EXPECT_EQ(prepared_per_connection(Workload::oltp_read_write, o, 100) * 32, 28'800);
}

std::map<Kind, int> kinds_of(const EventPlan& plan) {
  std::map<Kind, int> n;
  for (const Step& s : plan) ++n[s.kind];
  return n;
}

TEST(SysbenchEvent, ReadWriteHasTheScriptsEighteenStatementsInOrder) {
  SbRandom rnd(RandOptions{}, Rng(1));
  EventPlan plan;
  const Scale scale{.tables = 4, .table_size = 100'000};
  const StatementOptions o;
  plan_event(Workload::oltp_read_write, o, scale, rnd, plan);
  ASSERT_EQ(plan.size(), 18u);  // + BEGIN + COMMIT = sysbench's 20 queries per transaction
  const std::vector<Kind> order = {Kind::point_select, Kind::point_select,   Kind::point_select, Kind::point_select,
                                   Kind::point_select, Kind::point_select,   Kind::point_select, Kind::point_select,
                                   Kind::point_select, Kind::point_select,   Kind::simple_range, Kind::sum_range,
                                   Kind::order_range,  Kind::distinct_range, Kind::index_update, Kind::non_index_update,
                                   Kind::delete_row,   Kind::insert_row};
  for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(plan[i].kind, order[i]) << i;
}

TEST(SysbenchEvent, CountsFollowTheOptionsPerWorkload) {
  SbRandom rnd(RandOptions{}, Rng(2));
  EventPlan plan;
  const Scale scale{.tables = 2, .table_size = 1000};
  StatementOptions o;
  o.point_selects = 3;
  o.sum_ranges = 2;
  o.delete_inserts = 2;
  o.index_updates = 0;
  plan_event(Workload::oltp_read_only, o, scale, rnd, plan);
  auto n = kinds_of(plan);
  EXPECT_EQ(n[Kind::point_select], 3);
  EXPECT_EQ(n[Kind::simple_range], 1);
  EXPECT_EQ(n[Kind::sum_range], 2);
  EXPECT_EQ(n[Kind::order_range], 1);
  EXPECT_EQ(n[Kind::distinct_range], 1);
  EXPECT_EQ(plan.size(), 8u);

  plan_event(Workload::oltp_write_only, o, scale, rnd, plan);
  n = kinds_of(plan);
  EXPECT_EQ(n[Kind::index_update], 0);
  EXPECT_EQ(n[Kind::non_index_update], 1);
  EXPECT_EQ(n[Kind::delete_row], 2);
  EXPECT_EQ(n[Kind::insert_row], 2);
  EXPECT_EQ(plan.size(), 5u);

  o.range_selects = false;
  plan_event(Workload::oltp_read_write, o, scale, rnd, plan);
  n = kinds_of(plan);
  EXPECT_EQ(n.count(Kind::simple_range) + n.count(Kind::sum_range) + n.count(Kind::order_range) +
                n.count(Kind::distinct_range),
            0u);
  EXPECT_EQ(plan.size(), 3u + 0u + 1u + 4u);
}

TEST(SysbenchEvent, ParametersAreTheScriptsParameters) {
  SbRandom rnd(RandOptions{}, Rng(3));
  EventPlan plan;
  const Scale scale{.tables = 8, .table_size = 50'000};
  StatementOptions o;
  o.delete_inserts = 3;
  o.range_size = 37;
  std::set<int> point_tables_seen;
  for (int e = 0; e < 500; ++e) {
    plan_event(Workload::oltp_read_write, o, scale, rnd, plan);
    std::map<Kind, std::set<int>> tables;
    for (std::size_t i = 0; i < plan.size(); ++i) {
      const Step& s = plan[i];
      tables[s.kind].insert(s.table);
      ASSERT_GE(s.table, 1);
      ASSERT_LE(s.table, scale.tables);
      ASSERT_GE(s.id, 1);
      ASSERT_LE(s.id, scale.table_size);
      switch (s.kind) {
        case Kind::simple_range:
        case Kind::sum_range:
        case Kind::order_range:
        case Kind::distinct_range:
          EXPECT_EQ(s.arg, s.id + 36);  // BETWEEN id AND id + range_size - 1
          break;
        case Kind::non_index_update: EXPECT_EQ(s.c.size(), 119u); break;
        case Kind::delete_row: {
          ASSERT_LT(i + 1, plan.size());
          const Step& ins = plan[i + 1];
          EXPECT_EQ(ins.kind, Kind::insert_row);  // DELETE then INSERT of the same id
          EXPECT_EQ(ins.id, s.id);
          EXPECT_GE(ins.arg, 1);  // k from the default distribution
          EXPECT_LE(ins.arg, scale.table_size);
          EXPECT_EQ(ins.c.size(), 119u);
          EXPECT_EQ(ins.pad.size(), 59u);
          EXPECT_EQ(ins.c[11], '-');
          break;
        }
        default: break;
      }
    }
    // One table per statement group (get_table_num() once per execute_*()).
    for (const auto& [kind, set] : tables) EXPECT_EQ(set.size(), 1u) << to_string(kind);
    EXPECT_EQ(tables[Kind::delete_row], tables[Kind::insert_row]);
    point_tables_seen.insert(*tables[Kind::point_select].begin());
  }
  EXPECT_EQ(point_tables_seen.size(), 8u);  // uniform over the tables
}

TEST(SysbenchEvent, IgnoredErrorsAreSysbenchsList) {
  const auto with = [](Outcome o, int native, std::string sqlstate, bool lost = false) {
    DbStatus s;
    s.outcome = o;
    s.native_code = native;
    s.sqlstate = std::move(sqlstate);
    s.connection_lost = lost;
    return s;
  };
  for (int code : {1213, 1020, 1205})
    EXPECT_TRUE(is_ignored_error(with(Outcome::fatal, code, ""), make_dialect(SqlDialect::mysql))) << code;
  EXPECT_FALSE(
      is_ignored_error(with(Outcome::fatal, 1062, "23000"), make_dialect(SqlDialect::mysql)));  // duplicate key: fatal
  for (const char* st : {"40P01", "40001", "23505"})
    EXPECT_TRUE(is_ignored_error(with(Outcome::fatal, 0, st), make_dialect(SqlDialect::postgres))) << st;
  EXPECT_FALSE(is_ignored_error(with(Outcome::fatal, 0, "42P01"), make_dialect(SqlDialect::postgres)));
  EXPECT_FALSE(is_ignored_error(with(Outcome::fatal, 0, "23505"), make_dialect(SqlDialect::sqlite)));
  EXPECT_TRUE(is_ignored_error(with(Outcome::retryable, 5, ""), make_dialect(SqlDialect::sqlite)));  // SQLITE_BUSY
  EXPECT_TRUE(is_ignored_error(with(Outcome::in_doubt, 2013, "", true), make_dialect(SqlDialect::mysql)));
  EXPECT_FALSE(
      is_ignored_error(with(Outcome::in_doubt, 10, ""), make_dialect(SqlDialect::sqlite)));  // I/O error at commit
  EXPECT_FALSE(is_ignored_error(with(Outcome::ok, 0, ""), make_dialect(SqlDialect::mysql)));
}

struct SqliteTables : ::testing::Test {
  test::TempDir dir;
  std::unique_ptr<Backend> backend = test::sqlite_at(dir.path() / "sb.db");
  Scale scale{.tables = 2, .table_size = 500};

  void SetUp() override {
    const auto stats = load_tables(*backend, scale, RandOptions{}, Rng(5), 1, nullptr, nullptr);
    ASSERT_TRUE(stats.complete);
  }
};

TEST_F(SqliteTables, ReadWriteEventCountsQueriesLikeSysbench) {
  auto conn = backend->connect();
  const StatementOptions o;
  PreparedSet stmts(*conn, Workload::oltp_read_write, o, scale.tables);
  EXPECT_EQ(stmts.count(), 18u);  // 9 x 2 tables
  SbRandom rnd(RandOptions{}, Rng(9));
  EventPlan plan;
  QueryCounts q;
  for (int e = 0; e < 20; ++e) {
    plan_event(Workload::oltp_read_write, o, scale, rnd, plan);
    ASSERT_TRUE(execute_event(*conn, stmts, plan, TxMode::read_write, q).ok());
  }
  // Per transaction: 14 SELECTs (reads), 2 UPDATEs + DELETE + INSERT that each change a row
  // (writes), BEGIN + COMMIT (other).
  EXPECT_EQ(q.reads, 20u * 14);
  EXPECT_EQ(q.writes, 20u * 4);
  EXPECT_EQ(q.other, 20u * 2);
  EXPECT_EQ(q.errors, 0u);
  EXPECT_EQ(q.total(), 20u * 20);
  for (int t = 1; t <= scale.tables; ++t)
    EXPECT_EQ(test::query_int(*conn, fmt::format("SELECT COUNT(*) FROM sbtest{}", t)), scale.table_size);
}

TEST_F(SqliteTables, AnUpdateThatFindsNoRowCountsAsOther) {
  auto conn = backend->connect();
  const StatementOptions o;
  PreparedSet stmts(*conn, Workload::oltp_write_only, o, scale.tables);
  EventPlan plan;
  Step& s = plan.add();
  s.kind = Kind::index_update;
  s.table = 1;
  s.id = scale.table_size + 1000;  // no such row
  QueryCounts q;
  ASSERT_TRUE(execute_event(*conn, stmts, plan, TxMode::read_write, q).ok());
  EXPECT_EQ(q.writes, 0u);
  EXPECT_EQ(q.other, 3u);  // BEGIN, the UPDATE, COMMIT (drv_*: no row changed -> "other")
}

TEST_F(SqliteTables, ReadOnlyEventReadsOnly) {
  auto conn = backend->connect();
  const StatementOptions o;
  PreparedSet stmts(*conn, Workload::oltp_read_only, o, scale.tables);
  EXPECT_EQ(stmts.get(1, Kind::index_update), nullptr);
  SbRandom rnd(RandOptions{}, Rng(4));
  EventPlan plan;
  QueryCounts q;
  plan_event(Workload::oltp_read_only, o, scale, rnd, plan);
  ASSERT_TRUE(execute_event(*conn, stmts, plan, TxMode::read_only, q).ok());
  EXPECT_EQ(q.reads, 14u);
  EXPECT_EQ(q.writes, 0u);
  EXPECT_EQ(q.other, 2u);
}

TEST_F(SqliteTables, AFailedStatementIsCountedAsAnError) {
  auto conn = backend->connect();
  const StatementOptions o;
  PreparedSet stmts(*conn, Workload::oltp_write_only, o, scale.tables);
  EventPlan plan;
  Step& s = plan.add();
  s.kind = Kind::insert_row;  // an id that exists: primary key violation
  s.table = 2;
  s.id = 1;
  s.arg = 1;
  s.c = "x";
  s.pad = "y";
  QueryCounts q;
  const DbStatus st = execute_event(*conn, stmts, plan, TxMode::read_write, q);
  EXPECT_EQ(st.outcome, Outcome::fatal);
  EXPECT_EQ(q.errors, 1u);
  EXPECT_EQ(q.other, 1u);  // BEGIN went through
  conn->rollback();
}

}  // namespace
}  // namespace drivelab::oltp::sysbench
