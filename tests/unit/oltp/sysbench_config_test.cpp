// The `sysbench:` section: sysbench's option names and defaults, errors at file:line:col.
#include <gtest/gtest.h>

#include "drivelab/oltp/backends/sqlite/sqlite_backend.hpp"
#include "drivelab/oltp/sysbench/sysbench_config.hpp"
#include "drivelab/oltp/sysbench/sysbench_preflight.hpp"

namespace drivelab::oltp::sysbench {
namespace {

struct Decoded {
  SysbenchConfig config;
  std::string errors;
};

Decoded decode(const std::string& yaml) {
  config::Diagnostics diags;
  const auto doc = config::Document::load_string(yaml, "t.yaml", diags);
  Decoded d;
  d.config = decode_sysbench_config(doc.root(diags).child("sysbench"));
  d.errors = diags.to_string();
  return d;
}

TEST(SysbenchConfig, DefaultsAreSysbenchs) {
  const auto d = decode("other: 1\n");
  EXPECT_EQ(d.errors, "");
  const auto& c = d.config;
  EXPECT_EQ(c.workload, Workload::oltp_read_write);
  EXPECT_EQ(c.tables, 1);
  EXPECT_EQ(c.table_size, 10000);
  EXPECT_EQ(c.threads, 1);
  EXPECT_EQ(c.rand.type, RandType::special);
  EXPECT_EQ(c.rand.spec_iter, 12);
  EXPECT_EQ(c.rand.spec_pct, 1);
  EXPECT_EQ(c.rand.spec_res, 75);
  EXPECT_DOUBLE_EQ(c.rand.pareto_h, 0.2);
  EXPECT_EQ(c.statements.point_selects, 10);
  EXPECT_EQ(c.statements.simple_ranges, 1);
  EXPECT_EQ(c.statements.delete_inserts, 1);
  EXPECT_TRUE(c.statements.range_selects);
  EXPECT_EQ(c.statements.range_size, 100);
  EXPECT_EQ(c.database.backend, BackendKind::sqlite);
  EXPECT_FALSE(c.reuse);
}

TEST(SysbenchConfig, EveryKeyDecodesAndIsRecorded) {
  const auto d = decode(
      "sysbench: {workload: oltp_write_only, tables: 4, table_size: 100000, threads: 8, rand_type: uniform,\n"
      "  rand_spec_pct: 5, rand_spec_res: 50, rand_spec_iter: 6, rand_pareto_h: 0.3, point_selects: 2,\n"
      "  simple_ranges: 0, sum_ranges: 3, order_ranges: 4, distinct_ranges: 5, index_updates: 6,\n"
      "  non_index_updates: 7, delete_inserts: 8, range_selects: false, range_size: 10, skip_trx: false,\n"
      "  reuse: true, keep_database: true, backend: sqlite, synchronous: NORMAL}\n");
  EXPECT_EQ(d.errors, "");
  const auto& c = d.config;
  EXPECT_EQ(c.workload, Workload::oltp_write_only);
  EXPECT_EQ(c.tables, 4);
  EXPECT_EQ(c.table_size, 100000);
  EXPECT_EQ(c.threads, 8);
  EXPECT_EQ(c.rand.type, RandType::uniform);
  EXPECT_EQ(c.statements.non_index_updates, 7);
  EXPECT_FALSE(c.statements.range_selects);
  EXPECT_EQ(sqlite_options(c.database.options).synchronous, "NORMAL");
  const auto j = to_json(c);
  EXPECT_EQ(j["workload"], "oltp_write_only");
  EXPECT_EQ(j["rand_type"], "uniform");
  EXPECT_EQ(j["rand_spec_res"], 50);
  EXPECT_EQ(j["delete_inserts"], 8);
  EXPECT_EQ(j["skip_trx"], false);
  EXPECT_EQ(j["reuse"], true);
  EXPECT_EQ(j["database"]["backend"], "sqlite");
}

TEST(SysbenchConfig, MistakesAreReportedAtTheirKeyAllAtOnce) {
  const auto d = decode(
      "sysbench:\n"
      "  workload: oltp_point_select\n"
      "  rand_spec_res: 100\n"
      "  skip_trx: true\n"
      "  tabels: 3\n"
      "  backend: postgres\n");
  EXPECT_NE(d.errors.find("t.yaml:2:13: sysbench.workload: workload must be one of: oltp_read_write, "
                          "oltp_read_only, oltp_write_only"),
            std::string::npos)
      << d.errors;
  EXPECT_NE(d.errors.find("t.yaml:3:18: sysbench.rand_spec_res: rand_spec_res must be between 0 and 99"),
            std::string::npos)
      << d.errors;
  EXPECT_NE(d.errors.find("sysbench.skip_trx: skip_trx: true is not supported"), std::string::npos) << d.errors;
  EXPECT_NE(d.errors.find("unknown key 'tabels' (did you mean 'tables'?)"), std::string::npos) << d.errors;
  // A server backend needs a server (database.hpp's rule, reported through the same reader).
  EXPECT_NE(d.errors.find("server"), std::string::npos) << d.errors;
}

TEST(SysbenchPreflight, PreparedStatementShortageNamesTheVariableTheNeedAndTheLimit) {
  SysbenchConfig c;
  c.tables = 100;
  c.threads = 32;
  const auto msg = prepared_statement_problem(c, 16'382, 0, kDocumentedMaxPreparedStmtCount);
  ASSERT_TRUE(msg.has_value());
  EXPECT_NE(msg->find("max_prepared_stmt_count is 16382"), std::string::npos) << *msg;
  EXPECT_NE(msg->find("prepares 28800 server-side statements"), std::string::npos) << *msg;
  EXPECT_NE(msg->find("9 per table x 100 table(s) = 900 per connection, x 32 connections"), std::string::npos) << *msg;
  EXPECT_NE(msg->find("SET GLOBAL max_prepared_stmt_count = 28800"), std::string::npos) << *msg;
  // Statements other sessions hold count against the limit too.
  EXPECT_EQ(prepared_statement_problem(c, 28'800, 0, kDocumentedMaxPreparedStmtCount), std::nullopt);
  EXPECT_TRUE(prepared_statement_problem(c, 28'800, 1, kDocumentedMaxPreparedStmtCount).has_value());
  c.workload = Workload::oltp_read_only;  // 5 per table: 16,000
  EXPECT_EQ(prepared_statement_problem(c, 16'382, 0, kDocumentedMaxPreparedStmtCount), std::nullopt);
}

TEST(SysbenchPreflight, ANeedAboveTheServersMaximumAdvisesSizesThatFitInsteadOfRaisingTheVariable) {
  SysbenchConfig c;
  c.tables = 1000;
  c.threads = 200;  // 9 x 1000 = 9,000 per connection, 1,800,000 in all
  const auto msg = prepared_statement_problem(c, 16'382, 576, 1'048'576);
  ASSERT_TRUE(msg.has_value());
  EXPECT_EQ(*msg,
            "max_prepared_stmt_count is 16382 (576 already in use), but oltp_read_write with 1000 table(s) and "
            "200 thread(s) prepares 1800000 server-side statements (9 per table x 1000 table(s) = 9000 per "
            "connection, x 200 connections; sysbench prepares the same); 1800576 is above 1048576, the largest "
            "value this server accepts for max_prepared_stmt_count, so raising it cannot help: use at most 116 "
            "thread(s) with 1000 table(s), or at most 582 table(s) with 200 thread(s). drivelab always prepares "
            "its statements on the server (sysbench can run this size only with --db-ps-mode=disable, "
            "statements sent as text, which is a different test)");
  EXPECT_EQ(msg->find("SET GLOBAL"), std::string::npos) << *msg;
  // The advised sizes do fit: 116 x 9,000 + 576 and 582 x 9 x 200 + 576 are <= 1,048,576.
  SysbenchConfig fewer_threads = c;
  fewer_threads.threads = 116;
  EXPECT_EQ(prepared_statement_problem(fewer_threads, 1'048'576, 576, 1'048'576), std::nullopt);
  SysbenchConfig fewer_tables = c;
  fewer_tables.tables = 582;
  EXPECT_EQ(prepared_statement_problem(fewer_tables, 1'048'576, 576, 1'048'576), std::nullopt);
  // Exactly at the maximum the variable can still be raised.
  c.threads = 116;
  const auto at_max = prepared_statement_problem(c, 16'382, 0, 1'044'000);
  ASSERT_TRUE(at_max.has_value());
  EXPECT_NE(at_max->find("SET GLOBAL max_prepared_stmt_count = 1044000"), std::string::npos) << *at_max;
  // A single connection above the maximum: only fewer tables can help.
  c.tables = 100'000;
  c.threads = 2;
  const auto one = prepared_statement_problem(c, 16'382, 200'000, 1'048'576);
  ASSERT_TRUE(one.has_value());
  EXPECT_NE(one->find("so raising it cannot help: use at most 47143 table(s) with 2 thread(s)."), std::string::npos)
      << *one;
  EXPECT_EQ(one->find("thread(s) with 100000 table(s)"), std::string::npos) << *one;
}

TEST(SysbenchConfig, RateIsSysbenchsOpenLoop) {
  const auto d = decode("sysbench:\n  threads: 4\n  rate: 250.5\n");
  ASSERT_EQ(d.errors, "");
  EXPECT_DOUBLE_EQ(d.config.rate_per_s, 250.5);
  EXPECT_FALSE(d.config.rate_curve);
  EXPECT_EQ(to_json(d.config)["rate"], 250.5);
  // A closed loop writes no rate, so the records of closed-loop runs keep their keys.
  const auto closed = decode("sysbench: {}\n");
  EXPECT_EQ(closed.config.rate_per_s, 0.0);
  EXPECT_FALSE(to_json(closed.config).contains("rate"));
  EXPECT_FALSE(to_json(closed.config).contains("curve"));
}

TEST(SysbenchConfig, RateCurveWithSloBounds) {
  const auto d = decode("sysbench:\n  rate: curve\n  curve: [25, 50, 100, 120]\n  slo: {p99_ms: 10, p90_ms: 4}\n");
  ASSERT_EQ(d.errors, "");
  EXPECT_TRUE(d.config.rate_curve);
  EXPECT_EQ(d.config.rate_per_s, 0.0);  // the max run is a closed loop
  EXPECT_EQ(d.config.curve, (std::vector<double>{25, 50, 100, 120}));
  ASSERT_EQ(d.config.slo.size(), 2u);
  EXPECT_EQ(d.config.slo[0].key, "p90_ms");  // in the order of runner::kOltpSloPercentiles
  EXPECT_DOUBLE_EQ(d.config.slo[0].percentile, 90);
  EXPECT_DOUBLE_EQ(d.config.slo[0].bound_ms, 4);
  EXPECT_EQ(d.config.slo[1].key, "p99_ms");
  EXPECT_DOUBLE_EQ(d.config.slo[1].percentile, 99);
  EXPECT_DOUBLE_EQ(d.config.slo[1].bound_ms, 10);
  const results::Json j = to_json(d.config);
  EXPECT_EQ(j["rate"], "curve");
  EXPECT_EQ(j["curve"], (std::vector<double>{25, 50, 100, 120}));
  EXPECT_EQ(j["slo"]["p99_ms"], 10.0);
  // The default curve is runner::kDefaultSizingCurve: past the max run to 120%.
  EXPECT_EQ(decode("sysbench:\n  rate: curve\n").config.curve,
            (std::vector<double>{10, 50, 70, 80, 90, 100, 110, 120}));
  EXPECT_EQ(d.config.slo[1].figure, "p99 latency");
  EXPECT_TRUE(d.config.warnings.empty());
  // curve and slo are kept without rate: curve (an override turns a curve into one run); the
  // slo is warned about at its key (`drivelab validate` prints it, the run records it).
  const auto kept = decode("sysbench:\n  curve: [50]\n  slo: {p95_ms: 3}\n");
  EXPECT_EQ(kept.errors, "");
  EXPECT_EQ(kept.config.slo.size(), 1u);
  EXPECT_EQ(kept.config.warnings,
            (std::vector<std::string>{"t.yaml:3:8: sysbench.slo: the sizing answers are read off a curve; this test "
                                      "is not one (rate: curve), so slo is ignored"}));
}

TEST(SysbenchConfig, RateMistakesAreReportedAtTheirKeys) {
  const auto expect_error = [](const std::string& yaml, const std::string& expected) {
    const auto d = decode(yaml);
    EXPECT_NE(d.errors.find(expected), std::string::npos) << "expected: " << expected << "\ngot: " << d.errors;
  };
  expect_error("sysbench:\n  rate: 0\n",
               "t.yaml:2:9: sysbench.rate: rate must be above 0 transactions per second, found 0 (sysbench's "
               "--rate=0 means no limit: leave rate out for a closed loop)");
  expect_error("sysbench:\n  rate: -5\n",
               "t.yaml:2:9: sysbench.rate: rate must be above 0 transactions per second, found -5");
  expect_error("sysbench:\n  rate: fast\n", "t.yaml:2:9: sysbench.rate: expected a number, found 'fast'");
  expect_error("sysbench:\n  rate: 1e9\n", "t.yaml:2:9: sysbench.rate: rate must be");
  expect_error("sysbench:\n  rate: curve\n  curve: [0, 50]\n",
               "t.yaml:3:11: sysbench.curve[0]: curve points must be above 0 and at most 1000%, found 0");
  expect_error("sysbench:\n  rate: curve\n  curve: [50, 50]\n", "sysbench.curve[1]: curve point 50 repeats");
  expect_error("sysbench:\n  rate: curve\n  slo: {p98_ms: 5}\n",
               "t.yaml:3:9: sysbench.slo.p98_ms: unknown key 'p98_ms' (did you mean");
  expect_error("sysbench:\n  rate: curve\n  slo: {new_order_p99_ms: 5}\n",
               "sysbench.slo.new_order_p99_ms: unknown key 'new_order_p99_ms'");
  expect_error("sysbench:\n  rate: curve\n  slo: {}\n",
               "t.yaml:3:8: sysbench.slo: slo needs at least one bound in ms on the transaction latency");
  expect_error("sysbench:\n  rate: curve\n  slo: {p99_ms: -1}\n", "sysbench.slo.p99_ms: p99_ms must be");
  expect_error("sysbench:\n  rate: curve\n  slo: {p99_ms: abc}\n",
               "sysbench.slo.p99_ms: expected a number, found 'abc'");
}

}  // namespace
}  // namespace drivelab::oltp::sysbench
