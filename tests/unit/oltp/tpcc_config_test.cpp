#include <gtest/gtest.h>

#include "drivelab/oltp/backends/sqlite/sqlite_backend.hpp"
#include "drivelab/oltp/tpcc/tpcc_config.hpp"

namespace drivelab::oltp::tpcc {
namespace {

struct Decoded {
  TpccConfig config;
  std::string errors;
};

// Decoded as on a 2-CPU machine, so the CPU-dependent defaults are fixed.
Decoded decode(const std::string& yaml, int cpus = 2) {
  config::Diagnostics diags;
  const auto doc = config::Document::load_string(yaml, "t.yaml", diags);
  const config::Node root = doc.root(diags);
  Decoded d;
  d.config = decode_tpcc_config(root.child("tpcc"), cpus);
  d.errors = diags.to_string();
  return d;
}

void expect_error(const std::string& yaml, const std::string& needle) {
  const auto d = decode(yaml);
  EXPECT_NE(d.errors.find(needle), std::string::npos)
      << "yaml: " << yaml << "\nwanted: " << needle << "\ngot: " << d.errors;
}

TEST(TpccConfig, DefaultsWhenTheSectionIsAbsent) {
  const auto d = decode("other: 1\n");
  EXPECT_EQ(d.errors, "");
  EXPECT_EQ(d.config.database.backend, BackendKind::sqlite);
  EXPECT_EQ(d.config.warehouses, 1);
  EXPECT_EQ(d.config.users, 10);
  EXPECT_EQ(d.config.think, ThinkMode::none);
  EXPECT_EQ(d.config.terminals, TerminalMode::dedicated);  // think: none measures the drive
  EXPECT_EQ(d.config.connections, 10);                     // dedicated: one per user
  EXPECT_EQ(d.config.rate_per_s, 0.0);
  EXPECT_EQ(d.config.login_rate_per_s, 50.0);
  EXPECT_EQ(d.config.think_scale, 1.0);
  EXPECT_EQ(d.config.reconnect_timeout, std::chrono::seconds(10));
  const SqliteOptions sqlite = sqlite_options(d.config.database.options);  // the sqlite row's defaults
  EXPECT_EQ(sqlite.journal_mode, "WAL");
  EXPECT_EQ(sqlite.synchronous, "FULL");
  EXPECT_EQ(sqlite.cache_size_bytes, 64u << 20);
  EXPECT_FALSE(d.config.reuse);
  EXPECT_FALSE(d.config.keep_database);
  EXPECT_EQ(d.config.load_threads, 1);
  EXPECT_EQ(d.config.scale_items, kItems);
}

TEST(TpccConfig, KeysDecodeAndUsersDefaultToTenPerWarehouse) {
  auto d = decode(
      "tpcc: {warehouses: 3, think: tpcc, cache_size: 8MiB, busy_timeout: 250ms, "
      "synchronous: normal, journal_mode: delete, reuse: true, keep_database: true}\n");
  EXPECT_EQ(d.errors, "");
  EXPECT_EQ(d.config.users, 30);
  EXPECT_EQ(d.config.think, ThinkMode::tpcc);
  const SqliteOptions sqlite = sqlite_options(d.config.database.options);
  EXPECT_EQ(sqlite.cache_size_bytes, 8u << 20);
  EXPECT_EQ(sqlite.busy_timeout, std::chrono::milliseconds(250));
  EXPECT_EQ(sqlite.journal_mode, "delete");  // as written: SQLite takes its words in any case
  EXPECT_TRUE(d.config.reuse);
  const auto j = to_json(d.config);
  EXPECT_EQ(j["backend"], "sqlite");
  EXPECT_EQ(j["users"], 30);
  EXPECT_EQ(j["think"], "tpcc");
  EXPECT_EQ(j["terminals"], "pooled");
  EXPECT_EQ(j["think_scale"], 1.0);
  d = decode("tpcc: {warehouses: 2, users: 4}\n");
  EXPECT_EQ(d.config.users, 4);
}

TEST(TpccConfig, ThinkTimesDefaultToAPoolSizedByTheMachine) {
  // max(8, 4 x CPUs), at most users.
  EXPECT_EQ(default_connections(15'000, 2), 8);
  EXPECT_EQ(default_connections(15'000, 16), 64);
  EXPECT_EQ(default_connections(5, 16), 5);
  auto d = decode("tpcc: {warehouses: 50, users: 15000, think: tpcc}\n", 4);
  EXPECT_EQ(d.errors, "");
  EXPECT_EQ(d.config.terminals, TerminalMode::pooled);
  EXPECT_EQ(d.config.connections, 16);
  d = decode("tpcc: {warehouses: 2, think: tpcc, connections: 5, think_scale: 0.01}\n");
  EXPECT_EQ(d.errors, "");
  EXPECT_EQ(d.config.connections, 5);
  EXPECT_EQ(d.config.think_scale, 0.01);
}

TEST(TpccConfig, DedicatedTerminalsAndOpenLoop) {
  auto d = decode("tpcc: {warehouses: 2, think: tpcc, terminals: dedicated, login_rate: 10}\n");
  EXPECT_EQ(d.errors, "");
  EXPECT_EQ(d.config.terminals, TerminalMode::dedicated);
  EXPECT_EQ(d.config.connections, 20);
  EXPECT_EQ(d.config.login_rate_per_s, 10.0);
  EXPECT_EQ(to_json(d.config)["login_rate"], 10.0);
  d = decode("tpcc: {rate: 500, connections: 32}\n");
  EXPECT_EQ(d.errors, "");
  EXPECT_EQ(d.config.terminals, TerminalMode::pooled);  // rate implies the pool
  EXPECT_EQ(d.config.rate_per_s, 500.0);
  EXPECT_EQ(d.config.connections, 32);  // open loop: more connections than users is fine
  EXPECT_EQ(to_json(d.config)["rate"], 500.0);
}

TEST(TpccConfig, ServerBackendsTakeTheSharedDatabaseKeys) {
  const auto d =
      decode("tpcc:\n  backend: postgres\n  warehouses: 10\n  server: {managed: postgres, buffer: 256MiB}\n", 2);
  EXPECT_EQ(d.errors, "");
  EXPECT_EQ(d.config.database.backend, BackendKind::postgres);
  ASSERT_TRUE(d.config.database.managed.has_value());
  EXPECT_EQ(d.config.load_threads, 4);  // min(warehouses, 2 x CPUs)
  const auto j = to_json(d.config);
  EXPECT_EQ(j["backend"], "postgres");
  EXPECT_EQ(j["server"]["managed"], "postgres");
  EXPECT_EQ(decode("tpcc: {backend: mysql, warehouses: 2, server: {managed: mariadb}}\n", 8).config.load_threads, 2);
}

TEST(TpccConfig, TransactionsDefaultToProceduresOnServersAndStatementsElsewhere) {
  const auto pg = decode("tpcc: {backend: postgres, server: {managed: postgres}}\n");
  EXPECT_EQ(pg.errors, "");
  EXPECT_EQ(pg.config.transactions, TxProtocol::procedures);  // HammerDB's way on PostgreSQL
  EXPECT_EQ(to_json(pg.config)["transactions"], "procedures");
  EXPECT_EQ(decode("tpcc: {backend: mysql, server: {managed: mariadb}}\n").config.transactions, TxProtocol::procedures);
  const auto lite = decode("tpcc: {warehouses: 1}\n");
  EXPECT_EQ(lite.config.transactions, TxProtocol::statements);
  EXPECT_EQ(to_json(lite.config)["transactions"], "statements");
  const auto chosen = decode("tpcc: {backend: postgres, server: {managed: postgres}, transactions: statements}\n");
  EXPECT_EQ(chosen.errors, "");
  EXPECT_EQ(chosen.config.transactions, TxProtocol::statements);
}

TEST(TpccConfig, ABadTransactionsValueIsReportedAtItsKey) {
  const auto d = decode("tpcc:\n  backend: postgres\n  server: {managed: postgres}\n  transactions: stored\n");
  EXPECT_NE(d.errors.find("t.yaml:4:17"), std::string::npos) << d.errors;
  EXPECT_NE(d.errors.find("tpcc.transactions"), std::string::npos) << d.errors;
  EXPECT_NE(d.errors.find("procedures, statements"), std::string::npos) << d.errors;
  const auto lite = decode("tpcc:\n  warehouses: 1\n  transactions: procedures\n");
  EXPECT_NE(lite.errors.find("t.yaml:3:17"), std::string::npos) << lite.errors;
  EXPECT_NE(lite.errors.find("transactions: procedures needs backend: postgres or mysql"), std::string::npos)
      << lite.errors;
  EXPECT_EQ(lite.config.transactions, TxProtocol::statements);
}

TEST(TpccConfig, DatabaseKeyErrorsAreReportedAtTheirKeys) {
  const auto d = decode("tpcc:\n  backend: postgres\n");
  EXPECT_NE(d.errors.find("t.yaml:2:"), std::string::npos) << d.errors;
  EXPECT_NE(d.errors.find("needs a 'server:' section"), std::string::npos) << d.errors;
  expect_error("tpcc: {backend: oracle}\n", "tpcc.backend");
  expect_error("tpcc: {backend: postgres, server: {managed: postgres}, synchronous: OFF}\n",
               "'synchronous' is a sqlite key; this test's backend is postgres");
}

TEST(TpccConfig, EveryNewKeyHasItsErrors) {
  expect_error("tpcc: {terminals: shared}\n", "tpcc.terminals");
  expect_error("tpcc: {terminals: dedicated, connections: 4}\n", "connections sizes the pool of terminals: pooled");
  expect_error("tpcc: {terminals: pooled, users: 4, connections: 8}\n", "connections (8) must not exceed users (4)");
  expect_error("tpcc: {connections: 0}\n", "tpcc.connections");
  expect_error("tpcc: {rate: 0}\n", "tpcc.rate");
  expect_error("tpcc: {rate: lots}\n", "tpcc.rate");
  expect_error("tpcc: {rate: 100, think: tpcc}\n", "rate (open loop");
  expect_error("tpcc: {rate: 100, terminals: dedicated}\n", "rate needs terminals: pooled");
  expect_error("tpcc: {think: tpcc, login_rate: 10}\n", "login_rate staggers the logins of terminals: dedicated");
  expect_error("tpcc: {login_rate: -1}\n", "tpcc.login_rate");
  expect_error("tpcc: {think_scale: 0.5}\n", "think_scale scales the keying and think times of think: tpcc");
  expect_error("tpcc: {think: tpcc, think_scale: 2}\n", "tpcc.think_scale");
  expect_error("tpcc: {think: tpcc, think_scale: 0}\n", "tpcc.think_scale");
  expect_error("tpcc: {reconnect_timeout: 10ms}\n", "tpcc.reconnect_timeout");
  expect_error("tpcc: {reconnect_timeout: soon}\n", "tpcc.reconnect_timeout");
}

TEST(TpccConfig, BadValuesAreAllReported) {
  const auto d = decode(
      "tpcc: {warehouses: 0, users: 0, think: lots, journal_mode: fast, "
      "synchronous: maybe, load_threads: 4, warehuses: 2}\n");
  for (const char* needle : {"tpcc.warehouses", "tpcc.users", "tpcc.think", "tpcc.journal_mode", "tpcc.synchronous",
                             "load_threads must be 1", "unknown key 'warehuses'"})
    EXPECT_NE(d.errors.find(needle), std::string::npos) << needle << "\n" << d.errors;
}

// Issue 16: several ranks on one server need a server every rank reaches.
TEST(TpccConfig, SharedDatabaseNeedsAnExistingServer) {
  expect_error("tpcc: {shared_database: true}\n",
               "tpcc.shared_database: shared_database needs an existing server that every rank reaches");
  expect_error("tpcc: {shared_database: true, backend: postgres, server: {managed: postgres}}\n",
               "shared_database needs an existing server");
  const auto d = decode("tpcc: {shared_database: true, backend: postgres, server: {connection: 'host=db1'}}\n");
  EXPECT_EQ(d.errors, "");
  EXPECT_TRUE(d.config.shared_database);
  EXPECT_EQ(to_json(d.config)["shared_database"], true);
  EXPECT_FALSE(to_json(decode("tpcc: {}\n").config).contains("shared_database")) << "written only when set";
}

TEST(TpccConfig, RateCurveWithSloBounds) {
  const auto d = decode(
      "tpcc:\n  users: 8\n  rate: curve\n  curve: [25, 50, 100, 120]\n"
      "  slo: {new_order_p99_ms: 10, p90_ms: 50}\n");
  ASSERT_EQ(d.errors, "");
  EXPECT_TRUE(d.config.rate_curve);
  EXPECT_EQ(d.config.rate_per_s, 0.0);  // the max run is a closed loop
  EXPECT_EQ(d.config.terminals, TerminalMode::pooled);
  EXPECT_EQ(d.config.curve, (std::vector<double>{25, 50, 100, 120}));
  ASSERT_EQ(d.config.slo.size(), 2u);
  EXPECT_EQ(d.config.slo[0].key, "p90_ms");
  EXPECT_EQ(d.config.slo[0].subject, "");  // all types together
  EXPECT_EQ(d.config.slo[0].figure, "p90 of all types");
  EXPECT_DOUBLE_EQ(d.config.slo[0].percentile, 90);
  EXPECT_EQ(d.config.slo[1].key, "new_order_p99_ms");
  EXPECT_EQ(d.config.slo[1].subject, to_string(TxType::new_order));
  EXPECT_EQ(d.config.slo[1].figure, "New-Order p99");
  EXPECT_DOUBLE_EQ(d.config.slo[1].bound_ms, 10);
  EXPECT_TRUE(d.config.warnings.empty());
  const results::Json j = to_json(d.config);
  EXPECT_EQ(j["rate"], "curve");
  EXPECT_EQ(j["slo"]["new_order_p99_ms"], 10.0);
  // The default curve goes past the max run to 120%.
  EXPECT_EQ(decode("tpcc:\n  rate: curve\n").config.curve, (std::vector<double>{10, 50, 70, 80, 90, 100, 110, 120}));
  // Without rate: curve an slo is kept (one override turns a curve into a run) but ignored: a
  // warning at its key, which `drivelab validate` prints and the run records.
  const auto ignored = decode("tpcc:\n  users: 8\n  rate: 100\n  slo: {new_order_p99_ms: 10}\n");
  EXPECT_EQ(ignored.errors, "");
  EXPECT_EQ(ignored.config.warnings,
            (std::vector<std::string>{"t.yaml:4:8: tpcc.slo: the sizing answers are read off a curve; this test is not "
                                      "one (rate: curve), so slo is ignored"}));
}

TEST(TpccConfig, RateCurveMistakesAreReportedAtTheirKeys) {
  expect_error("tpcc:\n  rate: curve\n  think: tpcc\n", "tpcc.rate: rate (open loop");
  expect_error("tpcc:\n  rate: curve\n  terminals: dedicated\n", "tpcc.rate: rate needs terminals: pooled");
  expect_error("tpcc:\n  rate: curve\n  curve: [0, 50]\n",
               "t.yaml:3:11: tpcc.curve[0]: curve points must be above 0 and at most 1000%, found 0");
  expect_error(
      "tpcc:\n  rate: curve\n  slo: {new_order_p98_ms: 5}\n",
      "t.yaml:3:9: tpcc.slo.new_order_p98_ms: unknown key 'new_order_p98_ms' (did you mean 'new_order_p90_ms'?)");
  expect_error("tpcc:\n  rate: curve\n  slo: {}\n", "tpcc.slo: slo needs at least one bound in ms");
  expect_error("tpcc:\n  rate: curve\n  slo: {payment_p90_ms: -1}\n",
               "tpcc.slo.payment_p90_ms: payment_p90_ms must be");
  expect_error("tpcc:\n  rate: fast\n", "tpcc.rate: expected a number, found 'fast'");
}

}  // namespace
}  // namespace drivelab::oltp::tpcc
