#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "drivelab/oltp/tpcc/tpcc_driver.hpp"
#include "drivelab/oltp/tpcc/tpcc_random.hpp"

namespace drivelab::oltp::tpcc {
namespace {

// Draw counts of NURand(a, x, y, c) over n draws.
std::vector<int> histogram(int a, int x, int y, int c, int n) {
  Rng rng(7);
  std::vector<int> counts(static_cast<std::size_t>(y - x + 1), 0);
  for (int i = 0; i < n; ++i) {
    const auto v = nurand(rng, a, x, y, c);
    EXPECT_GE(v, x);
    EXPECT_LE(v, y);
    if (v < x || v > y) return counts;
    ++counts[static_cast<std::size_t>(v - x)];
  }
  return counts;
}

TEST(NURand, StaysInRangeForTheThreeUsesOfClause216) {
  histogram(255, 0, 999, 123, 100'000);
  histogram(1023, 1, 3000, 1000, 100'000);
  histogram(8191, 1, 100'000, 8000, 200'000);
}

TEST(NURand, IsNonUniformWhereUniformIsNot) {
  // NURand(255, 0, 999): the OR of two uniforms concentrates picks on values with many set bits
  // of the low byte: the hottest last-name number is drawn several times more often than the
  // mean, while a uniform draw stays near the mean.
  const int n = 200'000;
  const auto counts = histogram(255, 0, 999, 0, n);
  const double mean = n / 1000.0;
  const int hottest = *std::max_element(counts.begin(), counts.end());
  EXPECT_GT(hottest, 3 * mean);

  Rng rng(7);
  std::vector<int> uniform(1000, 0);
  for (int i = 0; i < n; ++i) ++uniform[static_cast<std::size_t>(rng.uniform(0, 999))];
  EXPECT_LT(*std::max_element(uniform.begin(), uniform.end()), 1.5 * mean);
}

TEST(NURand, ConstantCShiftsTheHotValues) {
  const auto a = histogram(255, 0, 999, 0, 100'000);
  const auto b = histogram(255, 0, 999, 100, 100'000);
  // Same draws, C = 100: the C = 0 distribution rotated by 100.
  for (std::size_t i = 0; i < 1000; ++i) ASSERT_EQ(a[i], b[(i + 100) % 1000]) << i;
}

TEST(CRun, ConstraintOfClause2161) {
  EXPECT_TRUE(c_last_run_is_valid(0, 65));
  EXPECT_TRUE(c_last_run_is_valid(200, 81));   // delta 119
  EXPECT_TRUE(c_last_run_is_valid(100, 200));  // delta 100
  EXPECT_FALSE(c_last_run_is_valid(0, 64));
  EXPECT_FALSE(c_last_run_is_valid(0, 120));
  EXPECT_FALSE(c_last_run_is_valid(10, 106));  // delta 96
  EXPECT_FALSE(c_last_run_is_valid(150, 38));  // delta 112
  EXPECT_FALSE(c_last_run_is_valid(7, 7));
}

TEST(CRun, ChosenRunConstantsAlwaysSatisfyTheConstraintAndStayInRange) {
  Rng rng(3);
  for (int c_load = 0; c_load <= 255; ++c_load) {
    for (int k = 0; k < 20; ++k) {
      const CConstants run = make_c_run(rng, {.c_last = c_load, .c_id = 0, .ol_i_id = 0});
      ASSERT_TRUE(c_last_run_is_valid(c_load, run.c_last)) << c_load << " -> " << run.c_last;
      ASSERT_GE(run.c_last, 0);
      ASSERT_LE(run.c_last, 255);
      ASSERT_GE(run.c_id, 0);
      ASSERT_LE(run.c_id, 1023);
      ASSERT_GE(run.ol_i_id, 0);
      ASSERT_LE(run.ol_i_id, 8191);
    }
  }
}

TEST(Deck, EveryBlockOf23HasExactlyTheMinimumMix) {
  Rng rng(11);
  Deck deck;
  std::set<std::vector<TxType>> orders;
  for (int block = 0; block < 50; ++block) {
    std::map<TxType, int> n;
    std::vector<TxType> order;
    for (int i = 0; i < Deck::kCards; ++i) {
      const TxType t = deck.draw(rng);
      ++n[t];
      order.push_back(t);
    }
    EXPECT_EQ(n[TxType::new_order], 10);
    EXPECT_EQ(n[TxType::payment], 10);
    EXPECT_EQ(n[TxType::order_status], 1);
    EXPECT_EQ(n[TxType::delivery], 1);
    EXPECT_EQ(n[TxType::stock_level], 1);
    orders.insert(order);
  }
  EXPECT_GT(orders.size(), 40u) << "the deck must be reshuffled for every block";
  // Clause 5.2.4.2 minimum: Payment >= 43%, the three others >= 4% each.
  EXPECT_GE(10.0 / 23, 0.43);
  EXPECT_GE(1.0 / 23, 0.04);
}

TEST(LastName, SyllablesOfClause4323) {
  const auto& s = last_name_syllables();
  EXPECT_EQ(s[0], "BAR");
  EXPECT_EQ(s[9], "EING");
  EXPECT_EQ(last_name(0), "BARBARBAR");
  EXPECT_EQ(last_name(371), "PRICALLYOUGHT");  // the clause's own example
  EXPECT_EQ(last_name(999), "EINGEINGEING");
  EXPECT_EQ(last_name(40), "BARPRESBAR");
  std::set<std::string> all;
  for (int i = 0; i < 1000; ++i) all.insert(last_name(i));
  EXPECT_EQ(all.size(), 1000u);
  for (const auto& n : all) EXPECT_LE(n.size(), 16u);  // C_LAST is VARCHAR(16)
}

TEST(Strings, AStringNStringZipAndOriginal) {
  Rng rng(5);
  std::string s;
  for (int i = 0; i < 1000; ++i) {
    a_string(rng, 8, 16, s);
    ASSERT_GE(s.size(), 8u);
    ASSERT_LE(s.size(), 16u);
    for (char c : s) ASSERT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << s;
    n_string(rng, 16, 16, s);
    ASSERT_EQ(s.size(), 16u);
    for (char c : s) ASSERT_TRUE(std::isdigit(static_cast<unsigned char>(c))) << s;
    zip_code(rng, s);
    ASSERT_EQ(s.size(), 9u);
    ASSERT_EQ(s.substr(4), "11111");
  }
  int original = 0;
  const int n = 20'000;
  for (int i = 0; i < n; ++i) {
    data_with_original(rng, s);
    ASSERT_GE(s.size(), 26u);
    ASSERT_LE(s.size(), 50u);
    if (s.find("ORIGINAL") != std::string::npos) ++original;
  }
  EXPECT_NEAR(original / static_cast<double>(n), 0.10, 0.01);
}

TEST(Strings, PermutationAndFixedPoint) {
  Rng rng(9);
  auto p = permutation(rng, 3000);
  ASSERT_EQ(p.size(), 3000u);
  std::vector<int> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(sorted[static_cast<std::size_t>(i)], i + 1);
  EXPECT_NE(p, sorted);
  for (int i = 0; i < 1000; ++i) {
    const double v = fixed_point(rng, 1.00, 100.00, 2);
    ASSERT_GE(v, 1.00);
    ASSERT_LE(v, 100.00);
    ASSERT_NEAR(v * 100, std::round(v * 100), 1e-6);
  }
}

TEST(ThinkTime, NegativeExponentialCappedAtTenTimesTheMean) {
  Rng rng(13);
  double sum = 0;
  double largest = 0;
  const int n = 100'000;
  for (int i = 0; i < n; ++i) {
    const double t = think_time_s(rng, 12.0);
    ASSERT_GE(t, 0.0);
    ASSERT_LE(t, 120.0);
    sum += t;
    largest = std::max(largest, t);
  }
  EXPECT_NEAR(sum / n, 12.0, 0.3);  // the cap removes only e^-10 of the mass
  EXPECT_GT(largest, 60.0);
}

}  // namespace
}  // namespace drivelab::oltp::tpcc
