#include <gtest/gtest.h>

#include <set>

#include <fmt/format.h>

#include "drivelab/oltp/tpcc/tpcc_checks.hpp"
#include "drivelab/oltp/tpcc/tpcc_transactions.hpp"
#include "test_db.hpp"

namespace drivelab::oltp::tpcc {
namespace {

using test::query_double;
using test::query_int;
using test::query_text;

struct TxFixture : ::testing::Test {
  test::TempDir dir;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Connection> conn;   // runs the transactions
  std::unique_ptr<Connection> probe;  // reads the effects
  std::unique_ptr<Transactions> tx;

  void SetUp() override {
    backend = test::sqlite_at(test::copy_of_cached_database(dir.path()));
    conn = backend->connect();
    probe = backend->connect();
    tx = make_transactions(*conn, backend->dialect(), TxProtocol::statements);
  }
  std::int64_t i(const std::string& sql) { return query_int(*probe, sql); }
  double d(const std::string& sql) { return query_double(*probe, sql); }
  std::string t(const std::string& sql) { return query_text(*probe, sql); }
};

TEST_F(TxFixture, NewOrderInsertsTheOrderAndAppliesTheStockRules) {
  // Two lines with known stock: 50 - 5 = 45 (>= 10), and 15 - 10 = 5 (< 10: +91 -> 96).
  probe->execute_immediate(
      "UPDATE stock SET s_quantity = 50 WHERE s_w_id = 1 AND s_i_id = 11;"
      "UPDATE stock SET s_quantity = 15 WHERE s_w_id = 1 AND s_i_id = 22;");
  const auto ytd_22 = i("SELECT s_ytd FROM stock WHERE s_w_id = 1 AND s_i_id = 22");
  NewOrderInput in;
  in.w_id = 1;
  in.d_id = 4;
  in.c_id = 123;
  in.ol_cnt = 2;
  in.lines[0] = {.i_id = 11, .supply_w_id = 1, .quantity = 5};
  in.lines[1] = {.i_id = 22, .supply_w_id = 1, .quantity = 10};
  NewOrderOutput out;
  const TxResult r = tx->new_order(in, out);
  ASSERT_EQ(r.end, TxEnd::committed) << r.status.to_string();

  EXPECT_EQ(out.o_id, 3001);
  EXPECT_TRUE(out.all_local);
  EXPECT_EQ(i("SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4"), 3002);
  EXPECT_EQ(i("SELECT o_c_id FROM orders WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = 3001"), 123);
  EXPECT_EQ(i("SELECT o_ol_cnt FROM orders WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = 3001"), 2);
  EXPECT_EQ(i("SELECT o_all_local FROM orders WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = 3001"), 1);
  EXPECT_EQ(i("SELECT COUNT(*) FROM orders WHERE o_id = 3001 AND o_carrier_id IS NULL"), 1);
  EXPECT_EQ(i("SELECT COUNT(*) FROM new_order WHERE no_w_id = 1 AND no_d_id = 4 AND no_o_id = 3001"), 1);
  EXPECT_EQ(i("SELECT COUNT(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id = 3001"), 2);
  EXPECT_EQ(i("SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = 11"), 45);
  EXPECT_EQ(i("SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = 22"), 96);
  EXPECT_EQ(i("SELECT s_ytd FROM stock WHERE s_w_id = 1 AND s_i_id = 22"), ytd_22 + 10);
  EXPECT_EQ(i("SELECT s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 22"), 1);
  EXPECT_EQ(i("SELECT s_remote_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 22"), 0);
  // OL_DIST_INFO is S_DIST_04 of the item (district 4).
  EXPECT_EQ(t("SELECT ol_dist_info FROM order_line WHERE ol_o_id = 3001 AND ol_d_id = 4 AND ol_number = 2"),
            t("SELECT s_dist_04 FROM stock WHERE s_w_id = 1 AND s_i_id = 22"));
  // OL_AMOUNT = quantity x I_PRICE; total = sum x (1 - discount) x (1 + w_tax + d_tax).
  const double p11 = d("SELECT i_price FROM item WHERE i_id = 11");
  const double p22 = d("SELECT i_price FROM item WHERE i_id = 22");
  EXPECT_NEAR(d("SELECT SUM(ol_amount) FROM order_line WHERE ol_o_id = 3001 AND ol_d_id = 4"), 5 * p11 + 10 * p22,
              1e-6);
  const double disc = d("SELECT c_discount FROM customer WHERE c_w_id = 1 AND c_d_id = 4 AND c_id = 123");
  const double taxes =
      d("SELECT w_tax FROM warehouse WHERE w_id = 1") + d("SELECT d_tax FROM district WHERE d_w_id = 1 AND d_id = 4");
  EXPECT_NEAR(out.total_amount, (5 * p11 + 10 * p22) * (1 - disc) * (1 + taxes), 1e-6);
}

TEST_F(TxFixture, NewOrderWithAnUnusedItemRollsBackEverything) {
  const auto lines_before = i("SELECT COUNT(*) FROM order_line");
  const auto stock_before = i("SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = 33");
  NewOrderInput in;
  in.w_id = 1;
  in.d_id = 2;
  in.c_id = 7;
  in.ol_cnt = 2;
  in.lines[0] = {.i_id = 33, .supply_w_id = 1, .quantity = 3};
  in.lines[1] = {.i_id = kItems + 1, .supply_w_id = 1, .quantity = 3};  // unused (2.4.1.4)
  in.will_roll_back = true;
  NewOrderOutput out;
  const TxResult r = tx->new_order(in, out);
  EXPECT_EQ(r.end, TxEnd::rolled_back);
  EXPECT_EQ(i("SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 2"), 3001);
  EXPECT_EQ(i("SELECT COUNT(*) FROM orders WHERE o_d_id = 2 AND o_id = 3001"), 0);
  EXPECT_EQ(i("SELECT COUNT(*) FROM order_line"), lines_before);
  EXPECT_EQ(i("SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = 33"), stock_before);
  // The connection is usable afterwards.
  in.ol_cnt = 1;
  EXPECT_EQ(tx->new_order(in, out).end, TxEnd::committed);
}

TEST_F(TxFixture, InputGeneratorFollowsClause241) {
  InputGenerator gen({.warehouses = 1}, {.c_last = 1, .c_id = 2, .ol_i_id = 3});
  Rng rng(4);
  int rollbacks = 0;
  for (int k = 0; k < 2000; ++k) {
    const NewOrderInput in = gen.new_order(rng, 1);
    ASSERT_GE(in.ol_cnt, 5);
    ASSERT_LE(in.ol_cnt, 15);
    ASSERT_GE(in.d_id, 1);
    ASSERT_LE(in.d_id, 10);
    for (int n = 0; n < in.ol_cnt; ++n) {
      const auto& l = in.lines[static_cast<std::size_t>(n)];
      ASSERT_EQ(l.supply_w_id, 1) << "one warehouse: every line is local";
      ASSERT_GE(l.quantity, 1);
      ASSERT_LE(l.quantity, 10);
      if (!(in.will_roll_back && n == in.ol_cnt - 1)) {
        ASSERT_LE(l.i_id, kItems);
      }
    }
    if (in.will_roll_back) {
      ++rollbacks;
      EXPECT_EQ(in.lines[static_cast<std::size_t>(in.ol_cnt - 1)].i_id, kItems + 1);
    }
  }
  EXPECT_GT(rollbacks, 5);
  EXPECT_LT(rollbacks, 50);

  // With W > 1: ~1% remote lines, ~15% remote payments, never the home warehouse as "remote".
  InputGenerator gen4({.warehouses = 4}, {});
  int remote_lines = 0, lines = 0, remote_payments = 0, by_name = 0;
  for (int k = 0; k < 5000; ++k) {
    const NewOrderInput in = gen4.new_order(rng, 2);
    for (int n = 0; n < in.ol_cnt; ++n, ++lines)
      if (in.lines[static_cast<std::size_t>(n)].supply_w_id != 2) ++remote_lines;
    const PaymentInput p = gen4.payment(rng, 2);
    if (p.c_w_id != 2) ++remote_payments;
    ASSERT_GE(p.c_w_id, 1);
    ASSERT_LE(p.c_w_id, 4);
    ASSERT_GE(p.h_amount, 1.0);
    ASSERT_LE(p.h_amount, 5000.0);
    if (p.by_last_name) ++by_name;
  }
  EXPECT_NEAR(remote_lines / static_cast<double>(lines), 0.01, 0.004);
  EXPECT_NEAR(remote_payments / 5000.0, 0.15, 0.02);
  EXPECT_NEAR(by_name / 5000.0, 0.60, 0.03);
}

TEST_F(TxFixture, PaymentByIdUpdatesYtdBalancesAndHistory) {
  const double w_ytd = d("SELECT w_ytd FROM warehouse WHERE w_id = 1");
  const double d_ytd = d("SELECT d_ytd FROM district WHERE d_w_id = 1 AND d_id = 6");
  const double bal = d("SELECT c_balance FROM customer WHERE c_w_id = 1 AND c_d_id = 6 AND c_id = 55");
  const auto history = i("SELECT COUNT(*) FROM history");
  PaymentInput in{.w_id = 1,
                  .d_id = 6,
                  .c_w_id = 1,
                  .c_d_id = 6,
                  .by_last_name = false,
                  .c_id = 55,
                  .c_last = {},
                  .h_amount = 123.45};
  PaymentOutput out;
  const TxResult r = tx->payment(in, out);
  ASSERT_EQ(r.end, TxEnd::committed) << r.status.to_string();
  EXPECT_EQ(out.c_id, 55);
  EXPECT_NEAR(d("SELECT w_ytd FROM warehouse WHERE w_id = 1"), w_ytd + 123.45, 1e-6);
  EXPECT_NEAR(d("SELECT d_ytd FROM district WHERE d_w_id = 1 AND d_id = 6"), d_ytd + 123.45, 1e-6);
  EXPECT_NEAR(d("SELECT c_balance FROM customer WHERE c_w_id = 1 AND c_d_id = 6 AND c_id = 55"), bal - 123.45, 1e-6);
  EXPECT_NEAR(out.c_balance, bal - 123.45, 1e-6);
  EXPECT_EQ(i("SELECT c_payment_cnt FROM customer WHERE c_w_id = 1 AND c_d_id = 6 AND c_id = 55"), 2);
  EXPECT_NEAR(d("SELECT c_ytd_payment FROM customer WHERE c_w_id = 1 AND c_d_id = 6 AND c_id = 55"), 133.45, 1e-6);
  EXPECT_EQ(i("SELECT COUNT(*) FROM history"), history + 1);
  const std::string h_data = t("SELECT h_data FROM history WHERE h_amount = 123.45");
  EXPECT_EQ(h_data, t("SELECT w_name FROM warehouse") + "    " + t("SELECT d_name FROM district WHERE d_id = 6"));
}

TEST_F(TxFixture, PaymentOfABadCreditCustomerPrefixesCData) {
  const auto c_id = i("SELECT MIN(c_id) FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_credit = 'BC'");
  const std::string before = t(fmt::format("SELECT c_data FROM customer WHERE c_d_id = 2 AND c_id = {}", c_id));
  PaymentInput in{.w_id = 1,
                  .d_id = 9,
                  .c_w_id = 1,
                  .c_d_id = 2,
                  .by_last_name = false,
                  .c_id = static_cast<int>(c_id),
                  .c_last = {},
                  .h_amount = 10.5};
  PaymentOutput out;
  ASSERT_EQ(tx->payment(in, out).end, TxEnd::committed);
  EXPECT_EQ(out.c_credit, "BC");
  const std::string after = t(fmt::format("SELECT c_data FROM customer WHERE c_d_id = 2 AND c_id = {}", c_id));
  const std::string prefix = fmt::format("{} 2 1 9 1 10.50 ", c_id);
  EXPECT_EQ(after.substr(0, prefix.size()), prefix);
  EXPECT_EQ(after, (prefix + before).substr(0, 500));
  EXPECT_LE(after.size(), 500u);
}

TEST_F(TxFixture, ByLastNamePicksTheMiddleCustomerOrderedByFirstName) {
  // Clause 2.5.2.2: position ceil(n/2) of the customers with that name sorted by C_FIRST.
  const std::string name = last_name(5);  // c_id 6 has it, plus NURand picks among 1,001..3,000
  auto q = probe->prepare("SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 3 AND c_last = ? ORDER BY c_first");
  q->bind_text(1, name);
  ASSERT_TRUE(q->execute().ok());
  std::vector<int> ids;
  DbStatus st;
  while (q->next(st)) ids.push_back(static_cast<int>(q->column_int64(0)));
  ASSERT_FALSE(ids.empty());
  const int expected = ids[(ids.size() + 1) / 2 - 1];

  PaymentInput in{
      .w_id = 1, .d_id = 3, .c_w_id = 1, .c_d_id = 3, .by_last_name = true, .c_id = 0, .c_last = name, .h_amount = 1.0};
  PaymentOutput pout;
  ASSERT_EQ(tx->payment(in, pout).end, TxEnd::committed);
  EXPECT_EQ(pout.c_id, expected);

  OrderStatusInput os{.w_id = 1, .d_id = 3, .by_last_name = true, .c_id = 0, .c_last = name};
  OrderStatusOutput oout;
  ASSERT_EQ(tx->order_status(os, oout).end, TxEnd::committed);
  EXPECT_EQ(oout.c_id, expected);
}

TEST_F(TxFixture, OrderStatusReturnsTheLatestOrderAndItsLines) {
  // Give customer 77 of district 5 a new order, so its latest order is 3001.
  NewOrderInput no;
  no.w_id = 1;
  no.d_id = 5;
  no.c_id = 77;
  no.ol_cnt = 3;
  for (int n = 0; n < 3; ++n)
    no.lines[static_cast<std::size_t>(n)] = {.i_id = 100 + n, .supply_w_id = 1, .quantity = 1};
  NewOrderOutput nout;
  ASSERT_EQ(tx->new_order(no, nout).end, TxEnd::committed);
  OrderStatusInput in{.w_id = 1, .d_id = 5, .by_last_name = false, .c_id = 77, .c_last = {}};
  OrderStatusOutput out;
  const TxResult r = tx->order_status(in, out);
  ASSERT_EQ(r.end, TxEnd::committed) << r.status.to_string();
  EXPECT_EQ(out.o_id, 3001);
  EXPECT_EQ(out.lines, 3);
  EXPECT_EQ(out.o_carrier_id, 0);
  EXPECT_NEAR(out.c_balance, -10.0, 1e-9);

  // A customer with only the initial order: that order, with its o_ol_cnt lines.
  OrderStatusInput in2{.w_id = 1, .d_id = 5, .by_last_name = false, .c_id = 78, .c_last = {}};
  ASSERT_EQ(tx->order_status(in2, out).end, TxEnd::committed);
  EXPECT_EQ(out.o_id, i("SELECT o_id FROM orders WHERE o_w_id = 1 AND o_d_id = 5 AND o_c_id = 78"));
  EXPECT_EQ(out.lines, i(fmt::format("SELECT o_ol_cnt FROM orders WHERE o_d_id = 5 AND o_id = {}", out.o_id)));
}

TEST_F(TxFixture, DeliveryDeliversTheOldestOrderOfEveryDistrict) {
  const auto c_id = i("SELECT o_c_id FROM orders WHERE o_w_id = 1 AND o_d_id = 8 AND o_id = 2101");
  const double bal = d(fmt::format("SELECT c_balance FROM customer WHERE c_d_id = 8 AND c_id = {}", c_id));
  const double amount = d("SELECT SUM(ol_amount) FROM order_line WHERE ol_d_id = 8 AND ol_o_id = 2101");
  DeliveryInput in{.w_id = 1, .o_carrier_id = 7};
  DeliveryOutput out;
  const TxResult r = tx->delivery(in, out);
  ASSERT_EQ(r.end, TxEnd::committed) << r.status.to_string();
  EXPECT_EQ(out.delivered, 10);
  EXPECT_EQ(out.skipped, 0);
  EXPECT_EQ(i("SELECT COUNT(*) FROM new_order"), 9000 - 10);
  EXPECT_EQ(i("SELECT MIN(no_o_id) FROM new_order"), 2102);
  EXPECT_EQ(i("SELECT COUNT(*) FROM orders WHERE o_id = 2101 AND o_carrier_id = 7"), 10);
  EXPECT_EQ(i("SELECT COUNT(*) FROM order_line WHERE ol_o_id = 2101 AND ol_delivery_d IS NULL"), 0);
  EXPECT_EQ(i("SELECT COUNT(*) FROM order_line WHERE ol_o_id = 2102 AND ol_delivery_d IS NOT NULL"), 0);
  EXPECT_NEAR(d(fmt::format("SELECT c_balance FROM customer WHERE c_d_id = 8 AND c_id = {}", c_id)), bal + amount,
              1e-6);
  EXPECT_EQ(i(fmt::format("SELECT c_delivery_cnt FROM customer WHERE c_d_id = 8 AND c_id = {}", c_id)), 1);

  // A district without undelivered orders is skipped, the others still delivered.
  probe->execute_immediate("DELETE FROM new_order WHERE no_d_id = 3");
  ASSERT_EQ(tx->delivery(in, out).end, TxEnd::committed);
  EXPECT_EQ(out.delivered, 9);
  EXPECT_EQ(out.skipped, 1);
}

TEST_F(TxFixture, StockLevelCountsDistinctLowStockItemsOfTheLast20Orders) {
  probe->execute_immediate("UPDATE stock SET s_quantity = 5 WHERE s_w_id = 1 AND s_i_id % 3 = 0");
  // Independent computation: the item ids of orders 2981..3000 of district 9, checked one by one.
  auto q = probe->prepare("SELECT ol_i_id FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 9 AND ol_o_id >= 2981");
  ASSERT_TRUE(q->execute().ok());
  std::set<std::int64_t> items;
  DbStatus st;
  while (q->next(st)) items.insert(q->column_int64(0));
  int expected = 0;
  for (auto item : items)
    if (i(fmt::format("SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = {}", item)) < 15) ++expected;
  ASSERT_GT(expected, 0);

  StockLevelInput in{.w_id = 1, .d_id = 9, .threshold = 15};
  StockLevelOutput out;
  const TxResult r = tx->stock_level(in, out);
  ASSERT_EQ(r.end, TxEnd::committed) << r.status.to_string();
  EXPECT_EQ(out.low_stock, expected);
}

}  // namespace
}  // namespace drivelab::oltp::tpcc
