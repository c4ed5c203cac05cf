// TPC-C on the real PostgreSQL test server: a parallel load (2 warehouses, 2 threads, small
// ITEM count) checked against a one-thread SQLite load of the same seed, each of the five
// transactions, and the consistency conditions. One load per test (each load is ~0.8 M rows).
#include <gtest/gtest.h>

#include "drivelab/oltp/backends/sqlite/sqlite_backend.hpp"
#include "drivelab/oltp/tpcc/tpcc_checks.hpp"
#include "drivelab/oltp/tpcc/tpcc_schema.hpp"
#include "drivelab/oltp/tpcc/tpcc_transactions.hpp"
#include "postgres_test_db.hpp"
#include "test_db.hpp"

namespace drivelab::oltp::tpcc {
namespace {

using test::pg_value;

struct PgTpcc : test::PgTest {};

constexpr Scale kScale{.warehouses = 2, .items = 1000};
constexpr CConstants kCLoad{.c_last = 17, .c_id = 0, .ol_i_id = 0};

TEST_F(PgTpcc, ParallelLoadThenEveryTransactionThenConsistency) {
  std::vector<LoadProgress> progress;
  LoadOptions opt;
  opt.threads = 2;
  opt.progress = [&](const LoadProgress& p) { progress.push_back(p); };
  const LoadStats stats = load_database(*backend, kScale, kCLoad, Rng(5), opt);
  ASSERT_TRUE(stats.complete);
  EXPECT_EQ(stats.threads, 2);
  ASSERT_EQ(progress.size(), 2u);
  EXPECT_EQ(progress.back().warehouses_done, 2);
  EXPECT_EQ(progress.back().eta_s, 0.0);

  // The free-space estimate is within 15% of the real size (it is fitted within 1.5%).
  const double size = static_cast<double>(backend->size_bytes().value_or(0));
  EXPECT_NEAR(static_cast<double>(estimated_database_bytes(kScale, backend->capabilities())) / size, 1.0, 0.15) << size;

  auto c = backend->connect();
  EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM item"), "1000");
  EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM stock"), "2000");
  EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM customer"), "60000");
  EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM new_order"), "18000");
  EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM order_line"), pg_value(*c, "SELECT SUM(o_ol_cnt) FROM orders"));
  // The primary keys were built after the COPY, with the names and columns of the DDL.
  EXPECT_EQ(
      pg_value(*c,
               "SELECT COUNT(*) FROM pg_constraint WHERE contype = 'p' AND conrelid::regclass::text IN "
               "('warehouse','district','customer','new_order','orders','order_line','item','stock','drivelab_meta')"),
      "9");
  EXPECT_EQ(pg_value(*c,
                     "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'order_line'::regclass "
                     "AND contype = 'p'"),
            "PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)");
  EXPECT_EQ(
      pg_value(*c, "SELECT COUNT(*) FROM pg_indexes WHERE indexname IN ('customer_last_name', 'orders_customer')"),
      "2");
  std::optional<LoadMeta> meta;
  EXPECT_EQ(reuse_problem(*c, kScale, meta), "");
  ASSERT_TRUE(meta.has_value());
  EXPECT_EQ(meta->c_load.c_last, kCLoad.c_last);
  EXPECT_NE(reuse_problem(*c, {.warehouses = 3, .items = 1000}, meta), "");

  for (const ConsistencyCheck& check : check_consistency(*c))
    EXPECT_TRUE(check.passed) << check.name << ": " << check.detail;

  {
    // Rows depend on the seed and the warehouse only: SQLite loaded by one thread up to the
    // first district of warehouse 2 holds the same rows as PostgreSQL loaded by two threads.
    test::TempDir dir;
    auto lite = test::sqlite_at(dir.path() / "ref.db");
    LoadOptions one;
    one.stop = [polls = 0]() mutable { return ++polls > kDistrictsPerWarehouse + 1; };
    EXPECT_FALSE(load_database(*lite, kScale, kCLoad, Rng(5), one).complete);
    auto lc = lite->connect();
    for (const std::string sql :
         {"SELECT c_first || c_last || c_data FROM customer WHERE c_w_id = 2 AND c_d_id = 1 AND c_id = 2345",
          "SELECT c_first || c_last || c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 7 AND c_id = 12",
          "SELECT s_data || s_dist_03 FROM stock WHERE s_w_id = 2 AND s_i_id = 777",
          "SELECT i_name || i_data FROM item WHERE i_id = 500",
          "SELECT CAST(SUM(ol_i_id) AS INTEGER) FROM order_line WHERE ol_w_id = 2 AND ol_d_id = 1"}) {
      EXPECT_EQ(pg_value(*c, sql), test::query_text(*lc, sql)) << sql;
    }
  }

  const auto statements = make_transactions(*c, backend->dialect(), TxProtocol::statements);
  Transactions& tx = *statements;
  const InputGenerator gen(kScale, {.c_last = kCLoad.c_last + 70, .c_id = 5, .ol_i_id = 7});
  Rng rng(99);
  int committed = 0;
  for (int round = 0; round < 10; ++round) {
    const int w = 1 + round % 2;
    NewOrderOutput no;
    NewOrderInput ni = gen.new_order(rng, w);
    ni.will_roll_back = round == 3;  // one business rollback (clause 2.4.1.4)
    if (ni.will_roll_back) ni.lines[static_cast<std::size_t>(ni.ol_cnt - 1)].i_id = kScale.items + 1;
    const TxResult r1 = tx.new_order(ni, no);
    ASSERT_NE(r1.end, TxEnd::failed) << r1.status.to_string();
    EXPECT_EQ(r1.end, ni.will_roll_back ? TxEnd::rolled_back : TxEnd::committed);
    if (r1.end == TxEnd::committed) {
      ++committed;
      EXPECT_GE(no.o_id, 3001);  // D_NEXT_O_ID of a freshly loaded district
    }

    PaymentOutput po;
    const TxResult r2 = tx.payment(gen.payment(rng, w), po);
    ASSERT_EQ(r2.end, TxEnd::committed) << r2.status.to_string();
    OrderStatusOutput oo;
    const TxResult r3 = tx.order_status(gen.order_status(rng, w), oo);
    ASSERT_EQ(r3.end, TxEnd::committed) << r3.status.to_string();
    EXPECT_GE(oo.lines, 5);
    DeliveryOutput dout;
    const TxResult r4 = tx.delivery(gen.delivery(rng, w), dout);
    ASSERT_EQ(r4.end, TxEnd::committed) << r4.status.to_string();
    EXPECT_EQ(dout.delivered, 10);
    StockLevelOutput so;
    const TxResult r5 = tx.stock_level(gen.stock_level(rng, w, 1 + round % 10), so);
    ASSERT_EQ(r5.end, TxEnd::committed) << r5.status.to_string();
    EXPECT_GE(so.low_stock, 0);
  }
  EXPECT_EQ(committed, 9);
  // Each Delivery took the oldest NEW-ORDER of all 10 districts of its warehouse.
  EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM new_order"), std::to_string(18000 + committed - 10 * 10));
  for (const ConsistencyCheck& check : check_consistency(*c))
    EXPECT_TRUE(check.passed) << check.name << ": " << check.detail;
}

TEST_F(PgTpcc, StoppedLoadStaysIncompleteAndIsNotReusable) {
  LoadOptions opt;
  opt.threads = 2;
  opt.stop = [polls = 0]() mutable { return ++polls > 3; };
  const LoadStats stats = load_database(*backend, kScale, kCLoad, Rng(3), opt);
  EXPECT_FALSE(stats.complete);
  auto c = backend->connect();
  std::optional<LoadMeta> meta;
  EXPECT_EQ(reuse_problem(*c, kScale, meta), "its load did not finish");
  EXPECT_TRUE(backend->exists());
  backend->destroy();  // drivelab_meta is there: the partial load is ours to remove
  EXPECT_FALSE(backend->exists());
}

}  // namespace
}  // namespace drivelab::oltp::tpcc
