#include <gtest/gtest.h>

#include "test_db.hpp"

namespace drivelab::oltp::tpcc {
namespace {

using test::query_double;
using test::query_int;
using test::query_text;

struct LoadedDb : ::testing::Test {
  test::TempDir dir;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Connection> conn;
  void SetUp() override {
    backend = test::sqlite_at(test::copy_of_cached_database(dir.path()));
    conn = backend->connect();
  }
};

TEST_F(LoadedDb, ExactCardinalitiesOfClause4331ForOneWarehouse) {
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM warehouse"), 1);
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM district"), 10);
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM customer"), 30'000);
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM history"), 30'000);
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM orders"), 30'000);
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM new_order"), 9'000);
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM item"), 100'000);
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM stock"), 100'000);
  const auto lines = query_int(*conn, "SELECT COUNT(*) FROM order_line");
  EXPECT_EQ(lines, query_int(*conn, "SELECT SUM(o_ol_cnt) FROM orders"));
  EXPECT_GT(lines, 5 * 30'000);
  EXPECT_LT(lines, 15 * 30'000);
  EXPECT_EQ(query_int(*conn, "SELECT MIN(o_ol_cnt) FROM orders"), 5);
  EXPECT_EQ(query_int(*conn, "SELECT MAX(o_ol_cnt) FROM orders"), 15);
  // 900 undelivered orders per district, 2,101..3,000.
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM new_order WHERE no_d_id = 7"), 900);
  EXPECT_EQ(query_int(*conn, "SELECT MIN(no_o_id) FROM new_order"), 2101);
  EXPECT_EQ(query_int(*conn, "SELECT MAX(no_o_id) FROM new_order"), 3000);
  EXPECT_EQ(query_int(*conn, "SELECT MIN(d_next_o_id) FROM district"), 3001);
}

TEST_F(LoadedDb, RowContentFollowsClause4331) {
  // Undelivered orders: no carrier, order lines without delivery date and with an amount.
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL"), 9'000);
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL AND o_id < 2101"), 0);
  EXPECT_EQ(query_int(*conn, "SELECT MIN(o_carrier_id) FROM orders"), 1);
  EXPECT_EQ(query_int(*conn, "SELECT MAX(o_carrier_id) FROM orders"), 10);
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM order_line WHERE ol_delivery_d IS NULL AND ol_o_id < 2101"), 0);
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM order_line WHERE ol_delivery_d IS NOT NULL AND ol_o_id >= 2101"), 0);
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM order_line WHERE ol_amount <> 0 AND ol_o_id < 2101"), 0);
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(*) FROM order_line WHERE ol_amount < 0.01 AND ol_o_id >= 2101"), 0);
  // Every customer has exactly one order (O_C_ID is a permutation per district).
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(DISTINCT o_c_id) FROM orders WHERE o_d_id = 3"), 3'000);
  // Last names: c_id - 1 for the first 1,000 customers; every number 0..999 is used once each.
  EXPECT_EQ(query_text(*conn, "SELECT c_last FROM customer WHERE c_d_id = 1 AND c_id = 1"), "BARBARBAR");
  EXPECT_EQ(query_text(*conn, "SELECT c_last FROM customer WHERE c_d_id = 2 AND c_id = 372"), "PRICALLYOUGHT");
  EXPECT_EQ(query_int(*conn, "SELECT COUNT(DISTINCT c_last) FROM customer WHERE c_d_id = 1 AND c_id <= 1000"), 1000);
  // ~10% bad credit, ~10% ORIGINAL items and stock.
  const double bc = static_cast<double>(query_int(*conn, "SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'"));
  EXPECT_NEAR(bc / 30'000, 0.10, 0.01);
  const double orig = static_cast<double>(query_int(*conn, "SELECT COUNT(*) FROM item WHERE i_data LIKE '%ORIGINAL%'"));
  EXPECT_NEAR(orig / 100'000, 0.10, 0.01);
  const double sorig =
      static_cast<double>(query_int(*conn, "SELECT COUNT(*) FROM stock WHERE s_data LIKE '%ORIGINAL%'"));
  EXPECT_NEAR(sorig / 100'000, 0.10, 0.01);
  // Fixed initial values.
  EXPECT_DOUBLE_EQ(query_double(*conn, "SELECT w_ytd FROM warehouse"), 300'000.0);
  EXPECT_DOUBLE_EQ(query_double(*conn, "SELECT SUM(d_ytd) FROM district"), 300'000.0);
  EXPECT_DOUBLE_EQ(query_double(*conn, "SELECT MIN(c_balance) FROM customer"), -10.0);
  EXPECT_EQ(query_int(*conn, "SELECT MIN(s_quantity) FROM stock"), 10);
  EXPECT_EQ(query_int(*conn, "SELECT MAX(s_quantity) FROM stock"), 100);
  EXPECT_EQ(query_text(*conn, "SELECT c_middle FROM customer WHERE c_id = 5 AND c_d_id = 5"), "OE");
  EXPECT_EQ(query_int(*conn, "SELECT LENGTH(s_dist_05) FROM stock WHERE s_i_id = 77"), 24);
  EXPECT_LE(query_double(*conn, "SELECT MAX(c_discount) FROM customer"), 0.5);
  EXPECT_LE(query_double(*conn, "SELECT MAX(d_tax) FROM district"), 0.2);
}

TEST_F(LoadedDb, MetaRecordsScaleAndCLoadAndIndexesExist) {
  const auto meta = read_meta(*conn);
  ASSERT_TRUE(meta.has_value());
  EXPECT_TRUE(meta->complete);
  EXPECT_EQ(meta->scale.warehouses, 1);
  EXPECT_EQ(meta->scale.items, kItems);
  EXPECT_EQ(meta->c_load.c_last, test::cached_c_load().c_last);
  EXPECT_EQ(query_int(*conn,
                      "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name IN "
                      "('customer_last_name', 'orders_customer')"),
            2);
  // The loaded file was switched to WAL for the run.
  EXPECT_EQ(query_text(*conn, "PRAGMA journal_mode"), "wal");
}

TEST(Load, ReproducibleAndStoppable) {
  // (Progress reporting and a complete load through the emulator: tpcc_emulator_test.cpp.)
  test::TempDir dir;
  const CConstants c{.c_last = 10, .c_id = 0, .ol_i_id = 0};
  const Scale scale{.warehouses = 2, .items = 1000};
  const auto stop_after_first_district = [] {
    return [polls = 0]() mutable { return ++polls > 1; };  // polled before each district
  };

  auto a = test::sqlite_at(dir.path() / "a.db");
  int calls = 0;
  const auto stats =
      load_database(*a, scale, c, Rng(1), [&](const LoadProgress&) { ++calls; }, stop_after_first_district());
  EXPECT_FALSE(stats.complete);
  EXPECT_EQ(calls, 0);
  auto ca = a->connect();
  EXPECT_EQ(query_int(*ca, "SELECT COUNT(*) FROM item"), 1'000);
  EXPECT_EQ(query_int(*ca, "SELECT COUNT(*) FROM stock"), 1'000);
  EXPECT_EQ(query_int(*ca, "SELECT COUNT(*) FROM district"), 1);
  EXPECT_EQ(query_int(*ca, "SELECT COUNT(*) FROM customer"), 3'000);
  EXPECT_LE(query_int(*ca, "SELECT MAX(ol_i_id) FROM order_line"), 1000);
  // An interrupted load stays marked incomplete, so prepare never reuses it.
  const auto meta = read_meta(*ca);
  ASSERT_TRUE(meta.has_value());
  EXPECT_FALSE(meta->complete);
  EXPECT_EQ(meta->scale.warehouses, 2);
  EXPECT_EQ(meta->scale.items, 1000);

  // Same seed -> same rows.
  auto b = test::sqlite_at(dir.path() / "b.db");
  EXPECT_FALSE(load_database(*b, scale, c, Rng(1), nullptr, stop_after_first_district()).complete);
  auto cb = b->connect();
  const std::string sql =
      "SELECT c_first || c_last || c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 1234";
  EXPECT_EQ(query_text(*cb, sql), query_text(*ca, sql));
  EXPECT_EQ(query_text(*cb, "SELECT s_data FROM stock WHERE s_i_id = 77"),
            query_text(*ca, "SELECT s_data FROM stock WHERE s_i_id = 77"));
}

}  // namespace
}  // namespace drivelab::oltp::tpcc
