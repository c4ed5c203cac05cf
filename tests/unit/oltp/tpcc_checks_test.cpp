#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/tpcc/tpcc_checks.hpp"
#include "drivelab/oltp/tpcc/tpcc_transactions.hpp"
#include "test_db.hpp"

namespace drivelab::oltp::tpcc {
namespace {

struct ChecksFixture : ::testing::Test {
  test::TempDir dir;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Connection> conn;
  void SetUp() override {
    backend = test::sqlite_at(test::copy_of_cached_database(dir.path()));
    conn = backend->connect();
  }
  /// Names of the conditions that did not pass, and the detail of each.
  std::map<std::string, std::string> failures() {
    std::map<std::string, std::string> out;
    const auto checks = check_consistency(*conn);
    EXPECT_EQ(checks.size(), 12u);
    for (const auto& c : checks)
      if (c.status != CheckStatus::passed) out[c.name] = c.detail;
    return out;
  }
};

TEST_F(ChecksFixture, AllTwelveHoldAfterTheLoad) {
  const auto checks = check_consistency(*conn);
  ASSERT_EQ(checks.size(), 12u);
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const auto& c = checks[i];
    EXPECT_EQ(c.name, "consistency_" + std::to_string(i + 1));
    EXPECT_EQ(c.condition, static_cast<int>(i + 1));
    EXPECT_EQ(c.status, CheckStatus::passed) << c.name << ": " << c.detail;
    EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
  }
  EXPECT_NE(checks[1].detail.find("10 districts"), std::string::npos) << checks[1].detail;
  EXPECT_NE(checks[5].detail.find("30000 orders"), std::string::npos) << checks[5].detail;
  EXPECT_NE(checks[9].detail.find("30000 customers"), std::string::npos) << checks[9].detail;
  // No Delivery ran yet: condition 11 holds in the clause's own form (= 2100) everywhere.
  EXPECT_NE(checks[10].detail.find("10 of them without a Delivery"), std::string::npos) << checks[10].detail;
}

TEST_F(ChecksFixture, AllTwelveHoldAfterAThousandMixedTransactions) {
  const auto statements = make_transactions(*conn, backend->dialect(), TxProtocol::statements);
  Transactions& tx = *statements;
  Rng c_rng(1);
  const InputGenerator gen({.warehouses = 1}, make_c_run(c_rng, test::cached_c_load()));
  Rng rng(2);
  Deck deck;
  int committed = 0, rolled_back = 0, deliveries = 0;
  for (int k = 0; k < 1000; ++k) {
    TxResult r;
    switch (deck.draw(rng)) {
      case TxType::new_order: {
        NewOrderOutput o;
        r = tx.new_order(gen.new_order(rng, 1), o);
        break;
      }
      case TxType::payment: {
        PaymentOutput o;
        r = tx.payment(gen.payment(rng, 1), o);
        break;
      }
      case TxType::order_status: {
        OrderStatusOutput o;
        r = tx.order_status(gen.order_status(rng, 1), o);
        break;
      }
      case TxType::delivery: {
        DeliveryOutput o;
        r = tx.delivery(gen.delivery(rng, 1), o);
        deliveries += o.delivered;
        break;
      }
      case TxType::stock_level: {
        StockLevelOutput o;
        r = tx.stock_level(gen.stock_level(rng, 1, 4), o);
        break;
      }
    }
    ASSERT_NE(r.end, TxEnd::failed) << r.status.to_string();
    (r.end == TxEnd::committed ? committed : rolled_back)++;
  }
  EXPECT_GT(committed, 950);
  EXPECT_GT(deliveries, 0);  // so conditions 5, 7, 10, 11 and 12 see delivered orders change
  EXPECT_EQ(failures(), (std::map<std::string, std::string>{}));
}

/// One corrupted value, the conditions it must break (a value feeds several conditions: W_YTD
/// is in 1 and 8), and where the offender is named.
struct Corruption {
  const char* damage;
  const char* repair;
  std::set<std::string> failing;
  const char* condition;  ///< the condition whose detail must name `where`
  const char* where;
};

/// Three batches; within a batch the corruptions break disjoint sets of conditions, so one
/// evaluation per batch shows each corruption caught by exactly its conditions (a full
/// evaluation per corruption would cost ~14 passes over the database).
const std::vector<std::vector<Corruption>> kBatches = {
    {
        {"UPDATE warehouse SET w_ytd = w_ytd + 1",
         "UPDATE warehouse SET w_ytd = w_ytd - 1",
         {"consistency_1", "consistency_8"},
         "consistency_8",
         "warehouse 1: w_ytd=300001.00"},
        {"UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_id = 3",
         "UPDATE district SET d_next_o_id = d_next_o_id - 1 WHERE d_id = 3",
         {"consistency_2"},
         "consistency_2",
         "warehouse 1 district 3"},
        {"UPDATE orders SET o_ol_cnt = o_ol_cnt + 1 WHERE o_d_id = 5 AND o_id = 10",
         "UPDATE orders SET o_ol_cnt = o_ol_cnt - 1 WHERE o_d_id = 5 AND o_id = 10",
         {"consistency_4", "consistency_6"},
         "consistency_6",
         "warehouse 1 district 5: 1 of 3000 orders (first o_id 10)"},
        {"UPDATE order_line SET ol_delivery_d = NULL WHERE ol_d_id = 7 AND ol_o_id = 50 AND ol_number = 1",
         "UPDATE order_line SET ol_delivery_d = '2020-01-01 00:00:00' WHERE ol_d_id = 7 AND ol_o_id = 50 AND ol_number "
         "= 1",
         {"consistency_7"},
         "consistency_7",
         "warehouse 1 district 7: 1 of"},
        {"UPDATE customer SET c_delivery_cnt = c_delivery_cnt + 1 WHERE c_d_id = 10 AND c_id = 1",
         "UPDATE customer SET c_delivery_cnt = c_delivery_cnt - 1 WHERE c_d_id = 10 AND c_id = 1",
         {"consistency_11"},
         "consistency_11",
         "warehouse 1 district 10"},
        {"UPDATE customer SET c_ytd_payment = c_ytd_payment + 1 WHERE c_d_id = 9 AND c_id = 11",
         "UPDATE customer SET c_ytd_payment = c_ytd_payment - 1 WHERE c_d_id = 9 AND c_id = 11",
         {"consistency_12"},
         "consistency_12",
         "warehouse 1 district 9: 1 of 3000 customers (first c_id 11)"},
    },
    {
        {"DELETE FROM new_order WHERE no_d_id = 4 AND no_o_id = 2500",
         "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (2500, 4, 1)",
         {"consistency_3", "consistency_5", "consistency_11"},
         "consistency_3",
         "warehouse 1 district 4"},
        {"UPDATE district SET d_ytd = d_ytd + 1 WHERE d_id = 8",
         "UPDATE district SET d_ytd = d_ytd - 1 WHERE d_id = 8",
         {"consistency_1", "consistency_9"},
         "consistency_9",
         "warehouse 1 district 8"},
        // A payment booked to the wrong customer of the same district: only balances disagree.
        {"UPDATE history SET h_c_id = 2 WHERE h_c_id = 1 AND h_c_d_id = 3",
         "UPDATE history SET h_c_id = 1 WHERE h_c_id = 2 AND h_c_d_id = 3 AND rowid = "
         "(SELECT MIN(rowid) FROM history WHERE h_c_id = 2 AND h_c_d_id = 3)",
         {"consistency_10"},
         "consistency_10",
         "warehouse 1 district 3: 2 of 3000 customers (first c_id 1)"},
        // An order line without an order: only the district totals of condition 4 see it.
        {"INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, "
         "ol_amount, ol_dist_info) VALUES (9999, 6, 1, 1, 1, 1, 5, 0, 'x')",
         "DELETE FROM order_line WHERE ol_o_id = 9999",
         {"consistency_4"},
         "consistency_4",
         "warehouse 1 district 6"},
    },
    {
        {"UPDATE orders SET o_carrier_id = NULL WHERE o_d_id = 6 AND o_id = 100",
         "UPDATE orders SET o_carrier_id = 1 WHERE o_d_id = 6 AND o_id = 100",
         {"consistency_5", "consistency_7"},
         "consistency_5",
         "warehouse 1 district 6: 1 of 3000 orders (first o_id 100)"},
        // A payment of nobody (no such customer): the warehouse and district history totals move.
        {"INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) "
         "VALUES (9999, 2, 1, 2, 1, '2020-01-01 00:00:00', 5, 'x')",
         "DELETE FROM history WHERE h_c_id = 9999",
         {"consistency_8", "consistency_9"},
         "consistency_9",
         "warehouse 1 district 2"},
        {"UPDATE customer SET c_balance = c_balance + 1 WHERE c_d_id = 9 AND c_id = 12",
         "UPDATE customer SET c_balance = c_balance - 1 WHERE c_d_id = 9 AND c_id = 12",
         {"consistency_10", "consistency_12"},
         "consistency_10",
         "warehouse 1 district 9: 1 of 3000 customers (first c_id 12)"},
    },
};

TEST_F(ChecksFixture, EachCorruptionFailsTheConditionsThatReadIt) {
  for (const auto& batch : kBatches) {
    std::set<std::string> expected;
    for (const Corruption& c : batch) {
      conn->execute_immediate(c.damage);
      expected.insert(c.failing.begin(), c.failing.end());
    }
    const auto f = failures();
    std::set<std::string> names;
    for (const auto& [name, detail] : f) names.insert(name);
    EXPECT_EQ(names, expected);
    for (const Corruption& c : batch) {
      SCOPED_TRACE(c.damage);
      ASSERT_TRUE(f.count(c.condition));
      EXPECT_NE(f.at(c.condition).find(c.where), std::string::npos) << f.at(c.condition);
      EXPECT_NE(f.at(c.condition).find("violated"), std::string::npos) << f.at(c.condition);
    }
    for (auto it = batch.rbegin(); it != batch.rend(); ++it) conn->execute_immediate(it->repair);
  }
  EXPECT_TRUE(failures().empty());
}

TEST_F(ChecksFixture, UnselectedConditionsAreReportedAsNotRunWithTheReason) {
  ConsistencyOptions o;
  o.conditions = {1, 4};
  const auto checks = check_consistency(*conn, o);
  ASSERT_EQ(checks.size(), 12u);
  for (const auto& c : checks) {
    if (c.condition == 1 || c.condition == 4) {
      EXPECT_EQ(c.status, CheckStatus::passed) << c.detail;
    } else {
      EXPECT_EQ(c.status, CheckStatus::not_run) << c.name;
      EXPECT_FALSE(c.passed);
      EXPECT_NE(c.detail.find("not run: not selected"), std::string::npos) << c.detail;
    }
  }
  o.conditions = {13};
  EXPECT_THROW(check_consistency(*conn, o), ConfigError);

  // Nothing to compare is "not run", never a pass: NEW-ORDER emptied.
  conn->execute_immediate("DELETE FROM new_order");
  o.conditions = {3};
  const auto empty = check_consistency(*conn, o);
  EXPECT_EQ(empty[2].status, CheckStatus::not_run) << empty[2].detail;
  EXPECT_NE(empty[2].detail.find("nothing to check"), std::string::npos) << empty[2].detail;
}

}  // namespace
}  // namespace drivelab::oltp::tpcc
