// TPC-C as server-side procedures (`transactions: procedures`) on the real PostgreSQL and MariaDB
// test servers. One load per server (2 warehouses, 1,000 items), copied to a second database, so
// that the same inputs can be run through both protocols:
//   - statements on one copy and procedures on the other give the same outcomes and the same
//     database (row counts, sums and digests of everything but the timestamps), and both pass
//     the twelve consistency conditions; among the inputs, New-Orders that order one item on
//     several lines (the set-based PostgreSQL New-Order must apply the stock rule per line);
//   - a retryable error inside a procedure (PostgreSQL: a lock timeout, 55P03; MariaDB: the
//     waiting call killed with KILL QUERY, 1317) is rolled back, retried and counted by the
//     driver's retry loop, and the run goes on without errors.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "drivelab/oltp/tpcc/tpcc_checks.hpp"
#include "drivelab/oltp/tpcc/tpcc_driver.hpp"
#include "drivelab/oltp/tpcc/tpcc_procedures.hpp"
#include "drivelab/oltp/tpcc/tpcc_schema.hpp"
#include "drivelab/oltp/tpcc/tpcc_transactions.hpp"
#include "mysql_test_util.hpp"
#include "postgres_test_db.hpp"

namespace drivelab::oltp::tpcc {
namespace {

constexpr Scale kScale{.warehouses = 2, .items = 1000};
constexpr CConstants kCLoad{.c_last = 17, .c_id = 0, .ol_i_id = 0};

std::map<std::string, std::string> not_passed(Connection& c) {
  std::map<std::string, std::string> out;
  for (const auto& check : check_consistency(c))
    if (check.status != CheckStatus::passed) out[check.name] = check.detail;
  return out;
}

/// The first row of `sql` as "v1|v2|...|" (`columns` values).
std::string text_of(Connection& c, const std::string& sql, int columns) {
  auto q = c.prepare(sql);
  DbStatus s = q->execute();
  if (!s.ok() || !q->next(s)) throw std::runtime_error("query failed: " + sql + " " + s.to_string());
  std::string out;
  for (int col = 0; col < columns; ++col) {
    out += q->is_null(col) ? std::string("NULL") : std::string(q->column_text(col));
    out += '|';
  }
  return out;
}

/// Everything the transactions change except timestamps, per table, as one text each.
std::map<std::string, std::string> fingerprint(Connection& c, bool mysql) {
  // A digest of the text columns the transactions write: PostgreSQL md5 of the ordered
  // concatenation, MariaDB the sum of per-row CRC32s.
  const auto digest = [mysql](const std::string& expr, const std::string& order) {
    return mysql ? fmt::format("SUM(CRC32({}))", expr)
                 : fmt::format("md5(string_agg({}, '|' ORDER BY {}))", expr, order);
  };
  const auto cat = [mysql](std::initializer_list<const char*> cols) {
    std::string out = mysql ? "CONCAT_WS(','" : "concat_ws(','";
    for (const char* col : cols) out += fmt::format(", {}", col);
    return out + ")";
  };
  std::map<std::string, std::string> f;
  f["warehouse"] = text_of(c, "SELECT SUM(w_ytd) FROM warehouse", 1);
  f["district"] = text_of(c, "SELECT SUM(d_ytd), SUM(d_next_o_id) FROM district", 2);
  f["customer"] = text_of(c,
                          "SELECT SUM(c_balance), SUM(c_ytd_payment), SUM(c_payment_cnt), SUM(c_delivery_cnt), " +
                              digest(cat({"c_w_id", "c_d_id", "c_id", "c_data"}), "c_w_id, c_d_id, c_id") +
                              " FROM customer WHERE c_payment_cnt > 1 OR c_delivery_cnt > 0",
                          5);
  f["history"] = text_of(c,
                         "SELECT COUNT(*), SUM(h_amount), " +
                             digest(cat({"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_amount", "h_data"}),
                                    "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_amount, h_data") +
                             " FROM history",
                         3);
  f["orders"] = text_of(c,
                        "SELECT COUNT(*), SUM(o_c_id), SUM(o_ol_cnt), SUM(o_all_local), "
                        "SUM(COALESCE(o_carrier_id, 0)), COUNT(o_carrier_id) FROM orders",
                        6);
  f["new_order"] = text_of(c, "SELECT COUNT(*), SUM(no_o_id) FROM new_order", 2);
  f["order_line"] = text_of(c,
                            "SELECT COUNT(*), SUM(ol_amount), SUM(ol_quantity), SUM(ol_i_id), SUM(ol_supply_w_id), "
                            "COUNT(ol_delivery_d), " +
                                digest(cat({"ol_w_id", "ol_d_id", "ol_o_id", "ol_number", "ol_dist_info"}),
                                       "ol_w_id, ol_d_id, ol_o_id, ol_number") +
                                " FROM order_line WHERE ol_o_id > 3000",
                            7);
  f["stock"] = text_of(c, "SELECT SUM(s_quantity), SUM(s_ytd), SUM(s_order_cnt), SUM(s_remote_cnt) FROM stock", 4);
  return f;
}

/// What one transaction ended as, with the outputs both protocols fill.
struct Step {
  TxType type;
  TxEnd end;
  int value;  // New-Order o_id, Payment/Order-Status c_id, Delivery delivered, Stock-Level low_stock
  bool operator==(const Step&) const = default;
};

/// 150 transactions of every type on both warehouses from a fixed seed, two of them New-Orders
/// that roll back.
std::vector<Step> run_sequence(Transactions& tx) {
  Rng c_rng(7);
  const InputGenerator gen(kScale, make_c_run(c_rng, kCLoad));
  Rng rng(3);
  std::vector<Step> steps;
  for (int k = 0; k < 150; ++k) {
    const int w = 1 + k % 2;
    const auto type = static_cast<TxType>((k / 2) % kTxTypes);
    Step step{type, TxEnd::failed, 0};
    TxResult r;
    switch (type) {
      case TxType::new_order: {
        NewOrderInput in = gen.new_order(rng, w);
        if (k == 20 || k == 100) {
          in.will_roll_back = true;
          in.lines[static_cast<std::size_t>(in.ol_cnt - 1)].i_id = kScale.items + 1;
        }
        // One item on every line: its S_QUANTITY rule (clause 2.4.2.2) applies once per line in
        // line order, wrapping by +91 on the way (10 x 10 ordered); then one item from both
        // warehouses on alternate lines (two stock rows, each on several lines, remote on
        // half). PostgreSQL's set-based New-Order must give what the per-line statements give.
        if (k == 40 || k == 41) {
          in.ol_cnt = 10;
          for (int n = 0; n < in.ol_cnt; ++n) {
            OrderLineInput& line = in.lines[static_cast<std::size_t>(n)];
            line.i_id = 7;
            line.supply_w_id = k == 40 ? w : 1 + n % 2;
            line.quantity = 10;
          }
        }
        NewOrderOutput o;
        r = tx.new_order(in, o);
        step.value = o.o_id;
        break;
      }
      case TxType::payment: {
        PaymentOutput o;
        r = tx.payment(gen.payment(rng, w), o);
        step.value = o.c_id;
        break;
      }
      case TxType::order_status: {
        OrderStatusOutput o;
        r = tx.order_status(gen.order_status(rng, w), o);
        step.value = o.c_id;
        break;
      }
      case TxType::delivery: {
        DeliveryOutput o;
        r = tx.delivery(gen.delivery(rng, w), o);
        step.value = o.delivered;
        break;
      }
      case TxType::stock_level: {
        StockLevelOutput o;
        r = tx.stock_level(gen.stock_level(rng, w, 1 + k % 10), o);
        step.value = o.low_stock;
        break;
      }
    }
    EXPECT_NE(r.end, TxEnd::failed) << "transaction " << k << ": " << r.status.to_string();
    step.end = r.end;
    steps.push_back(step);
  }
  return steps;
}

int count(const std::vector<Step>& steps, TxEnd end) {
  int n = 0;
  for (const Step& s : steps) n += s.end == end ? 1 : 0;
  return n;
}

/// Both protocols from the same inputs on two copies of one database.
void expect_same_results(Backend& statements_db, Backend& procedures_db, bool mysql) {
  auto a = statements_db.connect();
  auto b = procedures_db.connect();
  create_procedures(*b, procedures_db.dialect());
  create_procedures(*b, procedures_db.dialect());  // idempotent: a reused schema gets them again
  // Every other customer of bad credit, so that Payments book on C_DATA (clause 2.5.2.2) in both;
  // the fingerprint's C_DATA digest then compares that rule too.
  for (Connection* c : {a.get(), b.get()})
    c->execute_immediate("UPDATE customer SET c_credit = 'BC' WHERE c_id % 2 = 0");
  const auto statements = make_transactions(*a, statements_db.dialect(), TxProtocol::statements);
  const auto procedures = make_transactions(*b, procedures_db.dialect(), TxProtocol::procedures);
  Transactions& by_statements = *statements;
  Transactions& by_procedures = *procedures;
  EXPECT_EQ(by_procedures.protocol(), TxProtocol::procedures);

  const std::vector<Step> sa = run_sequence(by_statements);
  const std::vector<Step> sb = run_sequence(by_procedures);
  EXPECT_EQ(count(sa, TxEnd::rolled_back), 2);
  EXPECT_EQ(count(sb, TxEnd::rolled_back), 2);
  ASSERT_EQ(sa.size(), sb.size());
  for (std::size_t i = 0; i < sa.size(); ++i)
    EXPECT_TRUE(sa[i] == sb[i]) << "transaction " << i << " type " << static_cast<int>(sa[i].type) << ": statements "
                                << static_cast<int>(sa[i].end) << "/" << sa[i].value << ", procedures "
                                << static_cast<int>(sb[i].end) << "/" << sb[i].value;
  // Every type ran and changed something: New-Orders committed, Deliveries delivered.
  int new_orders = 0, delivered = 0;
  for (const Step& s : sb) {
    if (s.type == TxType::new_order && s.end == TxEnd::committed) ++new_orders;
    if (s.type == TxType::delivery) delivered += s.value;
  }
  EXPECT_EQ(new_orders, 30 - 2);
  EXPECT_EQ(delivered, 30 * 10);

  EXPECT_GT(std::stoi(text_of(*b, "SELECT COUNT(*) FROM customer WHERE c_credit = 'BC' AND c_payment_cnt > 1", 1)), 0)
      << "no Payment booked on a BC customer";
  const auto fa = fingerprint(*a, mysql);
  const auto fb = fingerprint(*b, mysql);
  EXPECT_EQ(fa, fb);
  EXPECT_EQ(not_passed(*a), (std::map<std::string, std::string>{}));
  EXPECT_EQ(not_passed(*b), (std::map<std::string, std::string>{}));
}

/// One dedicated terminal (home warehouse 1) running procedures while `provoke` makes some of
/// its calls fail with a retryable error; they are retried and counted, none is an error.
void expect_retried_and_counted(Backend& db, const std::function<int()>& provoke) {
  auto holder = db.connect();
  DriverOptions opt;
  opt.scale = kScale;
  Rng c_rng(11);
  opt.c_run = make_c_run(c_rng, kCLoad);
  opt.users = 1;
  opt.think = ThinkMode::none;
  opt.terminals = TerminalMode::dedicated;
  opt.login_rate_per_s = 0;
  opt.protocol = TxProtocol::procedures;
  opt.seed = 5;
  Driver driver(db, opt);

  // Every district of warehouse 1 locked: New-Order (district FOR UPDATE) and Payment (district
  // UPDATE) of the terminal wait on it.
  ASSERT_TRUE(holder->begin(TxMode::read_write).ok());
  auto lock = holder->prepare(
      render_select(db.dialect(), {.columns = "d_id", .table = "district", .where = "d_w_id = ?", .lock_rows = true}));
  lock->bind_int64(1, 1);
  DbStatus s = lock->execute();
  ASSERT_TRUE(s.ok()) << s.to_string();
  int locked = 0;
  while (lock->next(s)) ++locked;
  ASSERT_EQ(locked, 10);

  driver.start();
  driver.begin_measurement();
  const int provoked = provoke();
  ASSERT_TRUE(holder->rollback().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // commits after the locks are gone
  driver.finish();
  ASSERT_FALSE(driver.fatal_error().has_value()) << *driver.fatal_error();

  const DriverTotals t = driver.totals();
  std::uint64_t retries = 0, errors = 0, commits = 0;
  for (const TypeStats& ts : t.by_type) {
    retries += ts.retries;
    errors += ts.errors;
    commits += ts.commits;
  }
  EXPECT_GE(provoked, 2);
  EXPECT_GE(retries, 2u);
  EXPECT_EQ(errors, 0u);
  EXPECT_EQ(t.in_doubt, 0u);
  EXPECT_GT(commits, 0u);
  EXPECT_GT(t.by_type[static_cast<std::size_t>(TxType::new_order)].retries +
                t.by_type[static_cast<std::size_t>(TxType::payment)].retries,
            0u);
  EXPECT_EQ(not_passed(*holder), (std::map<std::string, std::string>{}));
}

// ---- PostgreSQL --------------------------------------------------------------------------------

struct PgProcedures : test::PgTest {
  std::string copy = name.substr(0, 48) + "_p";  // identifiers are at most 63 characters
  void TearDown() override {
    if (admin) admin->execute_immediate("DROP DATABASE IF EXISTS \"" + copy + "\" WITH (FORCE)");
    PgTest::TearDown();
  }
};

TEST_F(PgProcedures, SameResultsAsStatementsThenALockTimeoutIsRetried) {
  LoadOptions lo;
  lo.threads = 2;
  ASSERT_TRUE(load_database(*backend, kScale, kCLoad, Rng(5), lo).complete);
  // The second copy: a file-level copy of the loaded database (no session may be open on it).
  admin->execute_immediate("DROP DATABASE IF EXISTS \"" + copy + "\" WITH (FORCE)");
  admin->execute_immediate("CREATE DATABASE \"" + copy + "\" TEMPLATE \"" + name + "\"");
  auto procedures_db = make_postgres_backend(test::pg_options(svc, copy));
  expect_same_results(*backend, *procedures_db, false);

  // Every session of this backend gives up a lock wait after 100 ms (SQLSTATE 55P03).
  PostgresOptions o = test::pg_options(svc, copy);
  o.conninfo_extra = "options='-c lock_timeout=100'";
  auto timing_out = make_postgres_backend(o);
  expect_retried_and_counted(*timing_out, [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // ~15 timeouts if all wait
    return 15;
  });
}

// ---- MariaDB -----------------------------------------------------------------------------------

struct MysqlProcedures : test::MysqlFixture {
  std::string copy = database.substr(0, 48) + "_p";  // database names are at most 64 characters
  void TearDown() override {
    if (backend) {
      auto system = make_mysql_backend(test::mysql_options("mysql"));
      system->connect()->execute_immediate("DROP DATABASE IF EXISTS `" + copy + "`");
    }
    MysqlFixture::TearDown();
  }
};

TEST_F(MysqlProcedures, SameResultsAsStatementsThenAKilledCallIsRetried) {
  LoadOptions lo;
  lo.threads = 2;
  ASSERT_TRUE(load_database(*backend, kScale, kCLoad, Rng(5), lo).complete);
  {
    // The second copy, table by table on the server (CREATE TABLE LIKE keeps the keys).
    auto c = backend->connect();
    c->execute_immediate("DROP DATABASE IF EXISTS `" + copy + "`");
    c->execute_immediate("CREATE DATABASE `" + copy + "`");
    for (std::string_view t : kTables)
      c->execute_immediate(fmt::format(
          "CREATE TABLE `{0}`.{1} LIKE `{2}`.{1}; INSERT INTO `{0}`.{1} SELECT * FROM `{2}`.{1}", copy, t, database));
    c->execute_immediate(
        fmt::format("CREATE TABLE `{0}`.drivelab_meta LIKE `{1}`.drivelab_meta; "
                    "INSERT INTO `{0}`.drivelab_meta SELECT * FROM `{1}`.drivelab_meta",
                    copy, database));
  }
  auto procedures_db = make_mysql_backend(test::mysql_options(copy));
  expect_same_results(*backend, *procedures_db, true);

  auto killer = procedures_db->connect();
  expect_retried_and_counted(*procedures_db, [&] {
    // KILL QUERY the terminal's waiting call (ER_QUERY_INTERRUPTED, 1317: retryable) three times.
    int kills = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (kills < 3 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      auto q = killer->prepare(
          // The only busy session of this database but ours: the terminal's call waiting on the
          // locked rows (the holder sleeps; INFO of a binary-protocol execute is not matched on).
          "SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND "
          "id <> CONNECTION_ID() AND command <> 'Sleep' AND time_ms > 50");
      DbStatus s = q->execute();
      if (!s.ok() || !q->next(s)) continue;
      killer->execute_immediate(fmt::format("KILL QUERY {}", q->column_int64(0)));
      ++kills;
    }
    return kills;
  });
}

}  // namespace
}  // namespace drivelab::oltp::tpcc
