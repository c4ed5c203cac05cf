// profile: hammerdb draws what HammerDB v4.12 TPROC-C's driver scripts draw (docs/oltp-tpcc.md
// section 2a), checked statistically against the exact distributions HammerDB's code defines.
//
// Every test draws from a fixed seed and compares the counts with a chi-square test at the
// significance level alpha = 0.001 (critical values: the tables' for 1..4 degrees of freedom, the
// Wilson-Hilferty approximation above, within 1% of the exact quantile from 5 degrees on); bins
// whose expected count is below 5 are pooled into one. CHI2_TRACE=1 prints every statistic. Where a rule replaces a
// TPC-C rule, the same test run on the default profile's draws must reject, so each test is shown to tell the two rules
// apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "drivelab/config/document.hpp"
#include "drivelab/oltp/tpcc/tpcc_config.hpp"
#include "drivelab/oltp/tpcc/tpcc_driver.hpp"
#include "drivelab/oltp/tpcc/tpcc_random.hpp"
#include "drivelab/oltp/tpcc/tpcc_transaction_data.hpp"

namespace drivelab::oltp::tpcc {
namespace {

constexpr double kZ999 = 3.090232;  // standard normal quantile of 1 - 0.001

/// The chi-square quantile of 1 - alpha (alpha = 0.001) with `df` degrees of freedom.
double chi2_critical(int df) {
  constexpr double kExact[] = {0, 10.828, 13.816, 16.266, 18.467};  // df 1..4, from the tables
  if (df >= 1 && df <= 4) return kExact[df];
  const double k = df;
  const double t = 1.0 - 2.0 / (9.0 * k) + kZ999 * std::sqrt(2.0 / (9.0 * k));
  return k * t * t * t;
}

struct ChiSquare {
  double statistic = 0;
  int df = 0;
  bool rejects() const { return statistic > chi2_critical(df); }
};

/// Pearson's statistic of `counts` (n draws) against the probabilities `pmf` (same length; their
/// sum may be below 1 when a tail without draws is left out: it is added as one more bin).
ChiSquare chi_square(const std::vector<std::uint64_t>& counts, const std::vector<double>& pmf) {
  double n = 0;
  for (auto c : counts) n += static_cast<double>(c);
  ChiSquare out;
  double pooled_obs = 0, pooled_exp = 0, p_sum = 0;
  int bins = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    p_sum += pmf[i];
    const double e = pmf[i] * n;
    if (e < 5) {
      pooled_obs += static_cast<double>(counts[i]);
      pooled_exp += e;
      continue;
    }
    const double d = static_cast<double>(counts[i]) - e;
    out.statistic += d * d / e;
    ++bins;
  }
  if (1.0 - p_sum > 1e-9) pooled_exp += (1.0 - p_sum) * n;  // the tail beyond the listed values
  if (pooled_exp > 1e-6) {
    const double d = pooled_obs - pooled_exp;
    out.statistic += d * d / pooled_exp;
    ++bins;
  }
  out.df = bins - 1;
  if (std::getenv("CHI2_TRACE"))
    std::fprintf(stderr, "chi2 %.1f df %d crit %.1f\n", out.statistic, out.df, chi2_critical(out.df));
  return out;
}

std::vector<double> uniform_pmf(std::size_t k) { return std::vector<double>(k, 1.0 / static_cast<double>(k)); }

/// HammerDB's NURand(255, 0, 999, 123) exactly: ((RandomNumber 0 255 | RandomNumber 0 999) + 123)
/// % 1000 over all 256 x 1000 equally likely pairs (tpcccommon-1.0.tm 15, 132).
std::vector<double> hammerdb_last_name_pmf() {
  std::vector<double> pmf(1000, 0.0);
  for (int a = 0; a <= 255; ++a)
    for (int b = 0; b <= 999; ++b) pmf[static_cast<std::size_t>(((a | b) + kHammerDbCLast) % 1000)] += 1.0 / 256'000.0;
  return pmf;
}

/// HammerDB's thinktime: abs(round(ln(r) x mean)) with r uniform in (0, 1): k = 0 when the
/// exponential is below 0.5, else k when it lies in [k - 0.5, k + 0.5) (tpcccommon-1.0.tm 145-149).
/// Values 0..kmax, and the tail above kmax as the last entry.
std::vector<double> hammerdb_think_pmf(double mean, int kmax) {
  std::vector<double> pmf(static_cast<std::size_t>(kmax) + 2);
  pmf[0] = 1.0 - std::exp(-0.5 / mean);
  for (int k = 1; k <= kmax; ++k)
    pmf[static_cast<std::size_t>(k)] = std::exp(-(k - 0.5) / mean) - std::exp(-(k + 0.5) / mean);
  pmf.back() = std::exp(-(kmax + 0.5) / mean);
  return pmf;
}

InputGenerator hammerdb_gen(int warehouses, HammerDbScript script = HammerDbScript::postgresql) {
  Rng c(11);
  return InputGenerator({.warehouses = warehouses}, make_c_run(c, make_c_load(c, Profile::hammerdb), Profile::hammerdb),
                        Profile::hammerdb, script);
}

InputGenerator tpcc_gen(int warehouses) {
  Rng c(11);
  return InputGenerator({.warehouses = warehouses}, make_c_run(c, make_c_load(c)));
}

TEST(HammerDbProfile, CustomerIdsAreUniformNotNURand) {
  for (const bool hammerdb : {true, false}) {
    const InputGenerator gen = hammerdb ? hammerdb_gen(1) : tpcc_gen(1);
    Rng rng(21);
    std::vector<std::uint64_t> new_order(kCustomersPerDistrict, 0), by_id(kCustomersPerDistrict, 0);
    for (int i = 0; i < 300'000; ++i) ++new_order[static_cast<std::size_t>(gen.new_order(rng, 1).c_id - 1)];
    for (int i = 0; i < 200'000; ++i) {
      const PaymentInput p = gen.payment(rng, 1);
      if (!p.by_last_name) ++by_id[static_cast<std::size_t>(p.c_id - 1)];
      const OrderStatusInput o = gen.order_status(rng, 1);
      if (!o.by_last_name) ++by_id[static_cast<std::size_t>(o.c_id - 1)];
    }
    const ChiSquare a = chi_square(new_order, uniform_pmf(kCustomersPerDistrict));
    const ChiSquare b = chi_square(by_id, uniform_pmf(kCustomersPerDistrict));
    EXPECT_EQ(a.df, kCustomersPerDistrict - 1);
    // HammerDB: RandomNumber 1 3000 passes; TPC-C's NURand(1023, 1, 3000) is rejected.
    EXPECT_EQ(a.rejects(), !hammerdb) << "hammerdb=" << hammerdb << " chi2 " << a.statistic << " df " << a.df;
    EXPECT_EQ(b.rejects(), !hammerdb) << "hammerdb=" << hammerdb << " chi2 " << b.statistic << " df " << b.df;
  }
}

TEST(HammerDbProfile, ItemIdsAreUniformOverAllItems) {
  for (const bool hammerdb : {true, false}) {
    const InputGenerator gen = hammerdb ? hammerdb_gen(1) : tpcc_gen(1);
    Rng rng(22);
    std::vector<std::uint64_t> buckets(100, 0);  // item ids 1..100,000 in 100 bins of 1,000
    for (int i = 0; i < 60'000; ++i) {
      const NewOrderInput in = gen.new_order(rng, 1);
      for (int l = 0; l < in.ol_cnt; ++l) {
        const int id = in.lines[static_cast<std::size_t>(l)].i_id;
        if (id > kItems) continue;  // the rollback's unused item
        ASSERT_GE(id, 1);
        ++buckets[static_cast<std::size_t>((id - 1) / 1000)];
      }
    }
    const ChiSquare c = chi_square(buckets, uniform_pmf(100));
    EXPECT_EQ(c.rejects(), !hammerdb) << "hammerdb=" << hammerdb << " chi2 " << c.statistic << " df " << c.df;
  }
}

TEST(HammerDbProfile, LastNamesFollowNURandWithHammerDbsConstant123) {
  std::map<std::string, int> number_of;
  for (int n = 0; n < 1000; ++n) number_of.emplace(last_name(n), n);
  ASSERT_EQ(number_of.size(), 1000u);  // a name gives back its number
  const std::vector<double> pmf = hammerdb_last_name_pmf();
  for (const bool hammerdb : {true, false}) {
    const InputGenerator gen = hammerdb ? hammerdb_gen(1) : tpcc_gen(1);
    Rng rng(23);
    std::vector<std::uint64_t> counts(1000, 0);
    std::uint64_t by_name = 0, all = 0;
    for (int i = 0; i < 250'000; ++i) {
      const PaymentInput p = gen.payment(rng, 1);
      ++all;
      if (p.by_last_name) ++counts[static_cast<std::size_t>(number_of.at(p.c_last))], ++by_name;
    }
    const ChiSquare c = chi_square(counts, pmf);
    EXPECT_GT(c.df, 500);
    // The default's C-Run differs from 123, so its hot names are elsewhere: rejected.
    EXPECT_EQ(c.rejects(), !hammerdb) << "hammerdb=" << hammerdb << " chi2 " << c.statistic << " df " << c.df;
    // 60% by name in both (pgoltp.tcl 3061).
    const ChiSquare share = chi_square({by_name, all - by_name}, {0.6, 0.4});
    EXPECT_FALSE(share.rejects()) << share.statistic;
  }
  Rng c(1);
  EXPECT_EQ(make_c_load(c, Profile::hammerdb).c_last, kHammerDbCLast);
  EXPECT_EQ(make_c_run(c, make_c_load(c), Profile::hammerdb).c_last, kHammerDbCLast);
}

TEST(HammerDbProfile, MixIsAnIndependentDrawOfOneIn23PerTransaction) {
  Rng rng(24);
  constexpr int kWindows = 20'000;
  std::vector<std::uint64_t> types(kTxTypes, 0), new_orders_per_window(24, 0);
  for (int w = 0; w < kWindows; ++w) {
    int no = 0;
    for (int i = 0; i < Deck::kCards; ++i) {
      const TxType t = hammerdb_transaction(rng);
      ++types[static_cast<std::size_t>(t)];
      no += t == TxType::new_order;
    }
    ++new_orders_per_window[static_cast<std::size_t>(no)];
  }
  // Shares 10/23, 10/23, 1/23 x 3 (pgoltp.tcl 3221-3242).
  const ChiSquare shares = chi_square(types, {10 / 23.0, 10 / 23.0, 1 / 23.0, 1 / 23.0, 1 / 23.0});
  EXPECT_FALSE(shares.rejects()) << shares.statistic;
  // New-Orders among 23 consecutive transactions: Binomial(23, 10/23), not always 10 (the deck).
  std::vector<double> binomial(24);
  for (int k = 0; k <= 23; ++k)
    binomial[static_cast<std::size_t>(k)] = std::exp(std::lgamma(24.0) - std::lgamma(k + 1.0) - std::lgamma(24.0 - k) +
                                                     k * std::log(10 / 23.0) + (23 - k) * std::log(13 / 23.0));
  const ChiSquare windows = chi_square(new_orders_per_window, binomial);
  EXPECT_GT(windows.df, 5);
  EXPECT_FALSE(windows.rejects()) << windows.statistic << " df " << windows.df;
  // The deck gives exactly 10 New-Orders in every 23: the binomial test rejects it.
  Deck deck;
  std::vector<std::uint64_t> deck_windows(24, 0);
  for (int w = 0; w < kWindows; ++w) {
    int no = 0;
    for (int i = 0; i < Deck::kCards; ++i) no += deck.draw(rng) == TxType::new_order;
    ++deck_windows[static_cast<std::size_t>(no)];
  }
  EXPECT_TRUE(chi_square(deck_windows, binomial).rejects());
}

TEST(HammerDbProfile, ThinkTimesAreRoundedUntruncatedExponentialsInWholeSeconds) {
  // HammerDB's means (thinktime 12/12/5/10/5): Order-Status and Delivery swapped against clause 5.2.5.4.
  EXPECT_EQ(mean_think_time_s(Profile::hammerdb, TxType::order_status), 5.0);
  EXPECT_EQ(mean_think_time_s(Profile::hammerdb, TxType::delivery), 10.0);
  EXPECT_EQ(mean_think_time_s(Profile::tpcc, TxType::order_status), 10.0);
  EXPECT_EQ(mean_think_time_s(Profile::tpcc, TxType::delivery), 5.0);
  for (TxType type : kAllTxTypes) {
    const double mean = mean_think_time_s(Profile::hammerdb, type);
    const int kmax = static_cast<int>(20 * mean);
    Rng rng(25 + static_cast<int>(type));
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(kmax) + 2, 0);  // last: above kmax
    std::uint64_t beyond_cap = 0;
    for (int i = 0; i < 200'000; ++i) {
      const double s = think_time_s(rng, mean, Profile::hammerdb);
      ASSERT_EQ(s, std::floor(s)) << "whole seconds";
      ASSERT_GE(s, 0.0);
      if (s > 10 * mean) ++beyond_cap;
      ++counts[std::min(static_cast<std::size_t>(s), counts.size() - 1)];
    }
    const ChiSquare c = chi_square(counts, hammerdb_think_pmf(mean, kmax));
    EXPECT_FALSE(c.rejects()) << to_string(type) << " chi2 " << c.statistic << " df " << c.df;
    // No cap at 10 x the mean: P(exceed) = exp(-(10 mean + 0.5) / mean) ~ 4e-5, about 8 of 200,000.
    EXPECT_GT(beyond_cap, 0u) << to_string(type);
    // The TPC-C think time (continuous, capped) is rejected by the same test.
    Rng rng2(25);
    std::vector<std::uint64_t> tpcc_counts(counts.size(), 0);
    for (int i = 0; i < 200'000; ++i) {
      const double s = think_time_s(rng2, mean);
      ASSERT_LE(s, 10 * mean);
      ++tpcc_counts[static_cast<std::size_t>(std::floor(s))];
    }
    EXPECT_TRUE(chi_square(tpcc_counts, hammerdb_think_pmf(mean, kmax)).rejects()) << to_string(type);
  }
}

TEST(HammerDbProfile, PaymentsGoRemoteAlsoOnOneWarehouseAndPayWholeAmounts) {
  // W = 1: 15% take the remote branch; its district is random(1,10), so 15% x 9/10 differ.
  {
    const InputGenerator gen = hammerdb_gen(1);
    Rng rng(26);
    std::uint64_t other_district = 0;
    std::vector<std::uint64_t> amounts(50, 0);  // 1..5000 in 50 bins of 100
    constexpr int kN = 200'000;
    for (int i = 0; i < kN; ++i) {
      const PaymentInput p = gen.payment(rng, 1);
      ASSERT_EQ(p.c_w_id, 1);
      other_district += p.c_d_id != p.d_id;
      ASSERT_EQ(p.h_amount, std::floor(p.h_amount));
      ASSERT_GE(p.h_amount, 1.0);
      ASSERT_LE(p.h_amount, 5000.0);
      ++amounts[static_cast<std::size_t>((static_cast<int>(p.h_amount) - 1) / 100)];
    }
    EXPECT_FALSE(chi_square({other_district, kN - other_district}, {0.135, 0.865}).rejects()) << other_district;
    EXPECT_FALSE(chi_square(amounts, uniform_pmf(50)).rejects());
  }
  // The default keeps every W = 1 payment at home.
  {
    const InputGenerator gen = tpcc_gen(1);
    Rng rng(26);
    for (int i = 0; i < 10'000; ++i) {
      const PaymentInput p = gen.payment(rng, 1);
      ASSERT_EQ(p.c_d_id, p.d_id);
    }
  }
  // W = 4, home 2: 85% home; the remote 15% spread evenly over warehouses 1, 3, 4.
  const InputGenerator gen = hammerdb_gen(4);
  Rng rng(27);
  std::vector<std::uint64_t> by_w(4, 0);
  for (int i = 0; i < 200'000; ++i) ++by_w[static_cast<std::size_t>(gen.payment(rng, 2).c_w_id - 1)];
  EXPECT_FALSE(chi_square(by_w, {0.05, 0.85, 0.05, 0.05}).rejects());
}

TEST(HammerDbProfile, NewOrderLinesFollowTheScriptOfTheDatabase) {
  // W = 4, home 1. PostgreSQL (pgoltp.tcl 1062-1067): a remote line's warehouse is
  // 1 + (1 + random(0,3)) mod 4: any of the 4, home included. MariaDB (mariaoltp.tcl 111-120): one
  // of the other 3.
  const std::vector<double> pg{0.99 + 0.01 / 4, 0.01 / 4, 0.01 / 4, 0.01 / 4};
  const std::vector<double> maria{0.99, 0.01 / 3, 0.01 / 3, 0.01 / 3};
  for (const auto script : {HammerDbScript::postgresql, HammerDbScript::mariadb}) {
    const InputGenerator gen = hammerdb_gen(4, script);
    Rng rng(28);
    std::vector<std::uint64_t> supply(4, 0);
    std::uint64_t rollbacks = 0, orders = 0;
    for (int i = 0; i < 400'000; ++i) {
      const NewOrderInput in = gen.new_order(rng, 1);
      ++orders;
      rollbacks += in.will_roll_back;
      for (int l = 0; l < in.ol_cnt; ++l)
        ++supply[static_cast<std::size_t>(in.lines[static_cast<std::size_t>(l)].supply_w_id - 1)];
    }
    const bool is_pg = script == HammerDbScript::postgresql;
    EXPECT_FALSE(chi_square(supply, is_pg ? pg : maria).rejects()) << "pg=" << is_pg;
    EXPECT_TRUE(chi_square(supply, is_pg ? maria : pg).rejects()) << "pg=" << is_pg;
    // Rollback: DBMS_RANDOM(1,100) = 1 (pg) or FLOOR(1 + RAND() * 99) = 1 (MariaDB).
    const double p = is_pg ? 1 / 100.0 : 1 / 99.0;
    EXPECT_FALSE(chi_square({rollbacks, orders - rollbacks}, {p, 1 - p}).rejects()) << rollbacks;
  }
  // W = 1: the 1% "remote" lines stay home in both scripts.
  for (const auto script : {HammerDbScript::postgresql, HammerDbScript::mariadb}) {
    const InputGenerator gen = hammerdb_gen(1, script);
    Rng rng(29);
    for (int i = 0; i < 5'000; ++i) {
      const NewOrderInput in = gen.new_order(rng, 1);
      for (int l = 0; l < in.ol_cnt; ++l) ASSERT_EQ(in.lines[static_cast<std::size_t>(l)].supply_w_id, 1);
    }
  }
}

TEST(HammerDbProfile, HomeWarehouseAndDistrictAreDrawnPerTerminal) {
  constexpr int kW = 5;
  std::vector<std::uint64_t> w(kW, 0), d(kDistrictsPerWarehouse, 0);
  const Rng base(30);
  for (int number = 0; number < 50'000; ++number) {
    Rng rng = base.split(static_cast<std::uint64_t>(number) + 1);
    const TerminalHome h = TerminalHome::make(Profile::hammerdb, false, number, 50'000, kW, rng);
    ++w[static_cast<std::size_t>(h.home_w_id() - 1)];
    ++d[static_cast<std::size_t>(h.stock_level_d_id() - 1)];
    EXPECT_EQ(h.warehouse(rng), h.home_w_id());
  }
  EXPECT_FALSE(chi_square(w, uniform_pmf(kW)).rejects());
  EXPECT_FALSE(chi_square(d, uniform_pmf(kDistrictsPerWarehouse)).rejects());
  // The default: clause 4.2.2's placement, no draw.
  Rng rng(1);
  const Rng before = rng;
  const TerminalHome t = TerminalHome::make(Profile::tpcc, false, 13, 20, kW, rng);
  EXPECT_EQ(t.home_w_id(), 13 % kW + 1);
  EXPECT_EQ(t.stock_level_d_id(), 13 / kW % 10 + 1);
  EXPECT_EQ(rng(), Rng(before)());
}

TEST(HammerDbProfile, AllWarehousesGivesEachTerminalItsShareAndDrawsEvenly) {
  // W = 10, V = 4: ceil(10/4) = 3 warehouses each, ((j + 4k) mod 10) + 1 (gentpcc.tcl 9-22).
  const std::map<int, std::set<int>> expected{{0, {1, 5, 9}}, {1, {2, 6, 10}}, {2, {3, 7, 1}}, {3, {4, 8, 2}}};
  for (const auto& [j, owned] : expected) {
    Rng rng(31 + j);
    const TerminalHome h = TerminalHome::make(Profile::hammerdb, true, j, 4, 10, rng);
    EXPECT_EQ(h.owned_warehouses(), 3);
    std::map<int, std::uint64_t> seen;
    for (int i = 0; i < 30'000; ++i) ++seen[h.warehouse(rng)];
    std::set<int> keys;
    std::vector<std::uint64_t> counts;
    for (const auto& [wh, n] : seen) keys.insert(wh), counts.push_back(n);
    EXPECT_EQ(keys, owned) << "terminal " << j;
    EXPECT_FALSE(chi_square(counts, uniform_pmf(3)).rejects()) << "terminal " << j;
  }
}

// ---- the keys -----------------------------------------------------------------------------------

std::pair<TpccConfig, std::string> decode(const std::string& yaml) {
  config::Diagnostics diags;
  const auto doc = config::Document::load_string(yaml, "t.yaml", diags);
  TpccConfig c = decode_tpcc_config(doc.root(diags).child("tpcc"), 2);
  return {c, diags.to_string()};
}

TEST(HammerDbProfile, ProfileKeyDecodesAndIsRecordedOnlyWhenNotTheDefault) {
  auto [c, errors] = decode("tpcc: {warehouses: 2}\n");
  EXPECT_EQ(errors, "");
  EXPECT_EQ(c.profile, Profile::tpcc);
  EXPECT_FALSE(to_json(c).contains("profile"));
  EXPECT_FALSE(to_json(c).contains("all_warehouses"));
  std::tie(c, errors) = decode("tpcc: {warehouses: 2, profile: hammerdb, all_warehouses: true}\n");
  EXPECT_EQ(errors, "");
  EXPECT_EQ(c.profile, Profile::hammerdb);
  EXPECT_TRUE(c.all_warehouses);
  EXPECT_EQ(to_json(c)["profile"], "hammerdb");
  EXPECT_EQ(to_json(c)["all_warehouses"], true);
  EXPECT_EQ(c.login_rate_per_s, kHammerDbLoginRatePerS);  // HammerDB's 500 ms between users
  std::tie(c, errors) = decode("tpcc: {profile: hammerdb, login_rate: 20}\n");
  EXPECT_EQ(c.login_rate_per_s, 20.0);
  std::tie(c, errors) = decode("tpcc:\n  warehouses: 2\n  all_warehouses: true\n");
  EXPECT_NE(errors.find("t.yaml:3:19"), std::string::npos) << errors;
  EXPECT_NE(errors.find("needs profile: hammerdb"), std::string::npos) << errors;
  EXPECT_FALSE(c.all_warehouses);
  std::tie(c, errors) = decode("tpcc:\n  profile: hammer\n");
  EXPECT_NE(errors.find("t.yaml:2:12"), std::string::npos) << errors;
  EXPECT_NE(errors.find("tpcc.profile"), std::string::npos) << errors;
  EXPECT_NE(errors.find("hammerdb"), std::string::npos) << errors;
}

}  // namespace
}  // namespace drivelab::oltp::tpcc
