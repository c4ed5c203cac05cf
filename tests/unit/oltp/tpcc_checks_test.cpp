#include <gtest/gtest.h>

#include <map>

#include "drivelab/oltp/tpcc_checks.hpp"
#include "drivelab/oltp/tpcc_transactions.hpp"
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
  /// Names of the failing conditions, and the detail of each.
  std::map<std::string, std::string> failures() {
    std::map<std::string, std::string> out;
    const auto checks = check_consistency(*conn);
    EXPECT_EQ(checks.size(), 4u);
    for (const auto& c : checks)
      if (!c.passed) out[c.name] = c.detail;
    return out;
  }
};

TEST_F(ChecksFixture, AllFourHoldAfterTheLoad) {
  const auto checks = check_consistency(*conn);
  ASSERT_EQ(checks.size(), 4u);
  for (const auto& c : checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
  EXPECT_NE(checks[1].detail.find("10 rows"), std::string::npos) << checks[1].detail;
}

TEST_F(ChecksFixture, AllFourHoldAfterAThousandMixedTransactions) {
  Transactions tx(*conn, backend->dialect());
  Rng c_rng(1);
  const InputGenerator gen({.warehouses = 1}, make_c_run(c_rng, test::cached_c_load()));
  Rng rng(2);
  Deck deck;
  int committed = 0, rolled_back = 0;
  for (int k = 0; k < 1000; ++k) {
    TxResult r;
    switch (deck.draw(rng)) {
      case TxType::new_order: { NewOrderOutput o; r = tx.new_order(gen.new_order(rng, 1), o); break; }
      case TxType::payment: { PaymentOutput o; r = tx.payment(gen.payment(rng, 1), o); break; }
      case TxType::order_status: { OrderStatusOutput o; r = tx.order_status(gen.order_status(rng, 1), o); break; }
      case TxType::delivery: { DeliveryOutput o; r = tx.delivery(gen.delivery(rng, 1), o); break; }
      case TxType::stock_level: { StockLevelOutput o; r = tx.stock_level(gen.stock_level(rng, 1, 4), o); break; }
    }
    ASSERT_NE(r.end, TxEnd::failed) << r.status.to_string();
    (r.end == TxEnd::committed ? committed : rolled_back)++;
  }
  EXPECT_GT(committed, 950);
  EXPECT_EQ(failures(), (std::map<std::string, std::string>{}));
}

TEST_F(ChecksFixture, EachCorruptionFailsItsOwnCondition) {
  conn->execute_immediate("UPDATE warehouse SET w_ytd = w_ytd + 1");
  auto f = failures();
  ASSERT_EQ(f.size(), 1u);
  ASSERT_TRUE(f.count("consistency_1"));
  EXPECT_NE(f["consistency_1"].find("warehouse 1"), std::string::npos) << f["consistency_1"];
  conn->execute_immediate("UPDATE warehouse SET w_ytd = w_ytd - 1");

  conn->execute_immediate("UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_id = 3");
  f = failures();
  ASSERT_EQ(f.size(), 1u);
  ASSERT_TRUE(f.count("consistency_2"));
  EXPECT_NE(f["consistency_2"].find("warehouse 1 district 3"), std::string::npos) << f["consistency_2"];
  EXPECT_EQ(f["consistency_2"].find("district 4"), std::string::npos);
  conn->execute_immediate("UPDATE district SET d_next_o_id = d_next_o_id - 1 WHERE d_id = 3");

  conn->execute_immediate("DELETE FROM new_order WHERE no_d_id = 4 AND no_o_id = 2500");
  f = failures();
  ASSERT_EQ(f.size(), 1u);
  ASSERT_TRUE(f.count("consistency_3"));
  EXPECT_NE(f["consistency_3"].find("warehouse 1 district 4"), std::string::npos) << f["consistency_3"];
  conn->execute_immediate("INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (2500, 4, 1)");

  conn->execute_immediate("UPDATE orders SET o_ol_cnt = o_ol_cnt + 1 WHERE o_d_id = 5 AND o_id = 10");
  f = failures();
  ASSERT_EQ(f.size(), 1u);
  ASSERT_TRUE(f.count("consistency_4"));
  EXPECT_NE(f["consistency_4"].find("warehouse 1 district 5"), std::string::npos) << f["consistency_4"];
  conn->execute_immediate("UPDATE orders SET o_ol_cnt = o_ol_cnt - 1 WHERE o_d_id = 5 AND o_id = 10");

  EXPECT_TRUE(failures().empty());
}

}  // namespace
}  // namespace drivelab::oltp::tpcc
