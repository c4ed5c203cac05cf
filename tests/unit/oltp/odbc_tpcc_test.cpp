// TPC-C through ODBC: a small load (2 warehouses, fewer items), the five transactions with known
// inputs, a concurrent mix, and the consistency conditions, on PostgreSQL (psqlODBC, dialect
// postgres) and MariaDB (MariaDB Connector/ODBC, dialect mysql).
#include <gtest/gtest.h>

#include <thread>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/oltp/tpcc/tpcc_checks.hpp"
#include "drivelab/oltp/tpcc/tpcc_schema.hpp"
#include "drivelab/oltp/tpcc/tpcc_transactions.hpp"
#include "odbc_test_db.hpp"
#include "test_db.hpp"

namespace drivelab::oltp::tpcc {
namespace {

using test::OdbcServer;
using test::query_double;
using test::query_int;

class OdbcTpccTest : public ::testing::TestWithParam<OdbcServer> {};

void expect_consistent(Connection& c, std::string_view when) {
  const auto checks = check_consistency(c);
  EXPECT_FALSE(checks.empty());
  for (const auto& k : checks) EXPECT_TRUE(k.passed) << when << ": " << k.name << ": " << k.detail;
}

TEST_P(OdbcTpccTest, LoadRunAllFiveTransactionsAndCheckConsistency) {
  const auto services = testing::services();
  if (!services) return;
  test::OdbcTestDatabase db(*services, GetParam(), testing::unique_database_name());
  auto backend = db.backend();

  // ---- load: the BulkLoader's parameter arrays, then indexes and meta -------------------------
  const Scale scale{.warehouses = 2, .items = 1000};
  Rng c_rng(7);
  const CConstants c_load = make_c_load(c_rng);
  const std::int64_t t0 = monotonic_ns();
  const LoadStats stats = load_database(*backend, scale, c_load, Rng(42), nullptr, nullptr);
  const double seconds = static_cast<double>(monotonic_ns() - t0) / 1e9;
  ASSERT_TRUE(stats.complete);
  std::printf("[ odbc    ] %s: loaded %llu rows in %.1f s (%.0f rows/s), bulk: %s\n", GetParam().name,
              static_cast<unsigned long long>(stats.rows), seconds, static_cast<double>(stats.rows) / seconds,
              backend->describe()["bulk_load"].get<std::string>().c_str());
  EXPECT_TRUE(backend->exists());

  std::int64_t mark = monotonic_ns();
  const auto phase = [&](const char* what) {  // where the time goes, for the log
    const std::int64_t now = monotonic_ns();
    std::printf("[ odbc    ] %s: %s %.1f s\n", GetParam().name, what, static_cast<double>(now - mark) / 1e9);
    mark = now;
  };
  auto probe = backend->connect();
  const auto meta = read_meta(*probe);
  ASSERT_TRUE(meta.has_value());
  EXPECT_TRUE(meta->complete);
  EXPECT_EQ(meta->scale.warehouses, 2);
  EXPECT_EQ(meta->scale.items, 1000);
  EXPECT_EQ(query_int(*probe, "SELECT COUNT(*) FROM stock"), 2000);
  EXPECT_EQ(query_int(*probe, "SELECT COUNT(*) FROM customer"), 2 * 10 * 3000);
  EXPECT_EQ(query_int(*probe, "SELECT COUNT(*) FROM new_order"), 2 * 10 * 900);
  // The consistency conditions are checked once, after the run (on a fresh load they hold by
  // construction, and tpcc_checks_test covers that on SQLite); on MariaDB they take minutes here.
  phase("counts after the load");

  // ---- each transaction once with known inputs ----------------------------------------------
  auto conn = backend->connect();
  const auto statements = make_transactions(*conn, backend->dialect(), TxProtocol::statements);
  Transactions& tx = *statements;

  NewOrderInput no;
  no.w_id = 1;
  no.d_id = 4;
  no.c_id = 123;
  no.ol_cnt = 2;
  no.lines[0] = {.i_id = 11, .supply_w_id = 1, .quantity = 5};
  no.lines[1] = {.i_id = 22, .supply_w_id = 2, .quantity = 3};  // remote line
  NewOrderOutput noo;
  TxResult r = tx.new_order(no, noo);
  ASSERT_EQ(r.end, TxEnd::committed) << r.status.to_string();
  EXPECT_EQ(noo.o_id, 3001);
  EXPECT_FALSE(noo.all_local);
  EXPECT_GT(noo.total_amount, 0);
  EXPECT_EQ(query_int(*probe, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4"), 3002);
  EXPECT_EQ(query_int(*probe, "SELECT s_remote_cnt FROM stock WHERE s_w_id = 2 AND s_i_id = 22"), 1);

  no.lines[1].i_id = scale.items + 1;  // unused item: business rollback (clause 2.4.2.3)
  r = tx.new_order(no, noo);
  EXPECT_EQ(r.end, TxEnd::rolled_back) << r.status.to_string();
  EXPECT_EQ(query_int(*probe, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4"), 3002);

  PaymentInput pay;
  pay.w_id = 1;
  pay.d_id = 2;
  pay.c_w_id = 1;
  pay.c_d_id = 2;
  pay.c_id = 7;
  pay.h_amount = 123.45;
  const double w_ytd = query_double(*probe, "SELECT w_ytd FROM warehouse WHERE w_id = 1");
  PaymentOutput payo;
  r = tx.payment(pay, payo);
  ASSERT_EQ(r.end, TxEnd::committed) << r.status.to_string();
  EXPECT_EQ(payo.c_id, 7);
  EXPECT_NEAR(query_double(*probe, "SELECT w_ytd FROM warehouse WHERE w_id = 1"), w_ytd + 123.45, 0.005);
  EXPECT_NEAR(query_double(*probe, "SELECT c_balance FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 7"),
              -10.00 - 123.45, 0.005);
  pay.by_last_name = true;
  pay.c_last = last_name(0);  // BARBARBAR: customers 1.. of each district have known last names
  r = tx.payment(pay, payo);
  ASSERT_EQ(r.end, TxEnd::committed) << r.status.to_string();

  OrderStatusInput os;
  os.w_id = 1;
  os.d_id = 4;
  os.c_id = 123;
  OrderStatusOutput oso;
  r = tx.order_status(os, oso);
  ASSERT_EQ(r.end, TxEnd::committed) << r.status.to_string();
  EXPECT_EQ(oso.o_id, 3001);
  EXPECT_EQ(oso.lines, 2);
  EXPECT_EQ(oso.o_carrier_id, 0);

  DeliveryOutput dout;
  r = tx.delivery({.w_id = 2, .o_carrier_id = 3}, dout);
  ASSERT_EQ(r.end, TxEnd::committed) << r.status.to_string();
  EXPECT_EQ(dout.delivered, 10);
  EXPECT_EQ(query_int(*probe, "SELECT COUNT(*) FROM new_order WHERE no_w_id = 2"), 10 * 899);
  EXPECT_EQ(query_int(*probe, "SELECT o_carrier_id FROM orders WHERE o_w_id = 2 AND o_d_id = 1 AND o_id = 2101"), 3);

  StockLevelOutput slo;
  r = tx.stock_level({.w_id = 1, .d_id = 4, .threshold = 101}, slo);
  ASSERT_EQ(r.end, TxEnd::committed) << r.status.to_string();
  EXPECT_GT(slo.low_stock, 0);  // every quantity is below 101

  phase("five transactions");

  // ---- a concurrent mix: 4 terminals on both warehouses, retries where the server asks ------
  Rng run_rng(3);
  const InputGenerator gen(scale, make_c_run(run_rng, c_load));
  std::atomic<int> committed{0}, retried{0}, failed{0};
  std::vector<std::string> errors(4);
  std::vector<std::thread> terminals;
  for (int t = 0; t < 4; ++t) {
    terminals.emplace_back([&, t] {
      auto c = backend->connect();
      const auto own = make_transactions(*c, backend->dialect(), TxProtocol::statements);
      Transactions& mine = *own;
      Rng rng(100 + static_cast<std::uint64_t>(t));
      Deck deck;
      const int w = 1 + t % 2;
      for (int k = 0; k < 30; ++k) {
        const TxType type = deck.draw(rng);
        for (int attempt = 0;; ++attempt) {
          TxResult res;
          switch (type) {
            case TxType::new_order: {
              NewOrderOutput o;
              res = mine.new_order(gen.new_order(rng, w), o);
              break;
            }
            case TxType::payment: {
              PaymentOutput o;
              res = mine.payment(gen.payment(rng, w), o);
              break;
            }
            case TxType::order_status: {
              OrderStatusOutput o;
              res = mine.order_status(gen.order_status(rng, w), o);
              break;
            }
            case TxType::delivery: {
              DeliveryOutput o;
              res = mine.delivery(gen.delivery(rng, w), o);
              break;
            }
            case TxType::stock_level: {
              StockLevelOutput o;
              res = mine.stock_level(gen.stock_level(rng, w, 1 + t), o);
              break;
            }
          }
          if (res.end != TxEnd::failed) {
            ++committed;
            break;
          }
          (void)c->rollback();
          if (res.status.outcome == Outcome::retryable && attempt < 20) {
            ++retried;
            continue;
          }
          ++failed;
          errors[static_cast<std::size_t>(t)] = res.status.to_string();
          break;
        }
      }
    });
  }
  for (auto& th : terminals) th.join();
  EXPECT_EQ(failed.load(), 0) << fmt::format("{}", fmt::join(errors, " | "));
  EXPECT_EQ(committed.load(), 4 * 30);
  std::printf("[ odbc    ] %s: concurrent mix: %d transactions, %d retries\n", GetParam().name, committed.load(),
              retried.load());
  phase("concurrent mix");
  expect_consistent(*probe, "after the run");
  phase("checks after the run");
}

INSTANTIATE_TEST_SUITE_P(Drivers, OdbcTpccTest,
                         ::testing::Values(OdbcServer{"postgres", ServerKind::postgres, SqlDialect::postgres},
                                           OdbcServer{"mariadb", ServerKind::mariadb, SqlDialect::mysql}),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace drivelab::oltp::tpcc
