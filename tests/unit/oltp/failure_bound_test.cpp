// The bound on failed attempts per transaction type (oltp/backend/failure_bound.hpp), the
// `failure_bound:` key of tpcc and sysbench, and TPC-C's clause 5.2.4.2 mix check
// (mix_shortfalls). Issue 29.
#include <gtest/gtest.h>

#include "drivelab/oltp/backend/failure_bound.hpp"
#include "drivelab/oltp/sysbench/sysbench_config.hpp"
#include "drivelab/oltp/tpcc/tpcc_config.hpp"
#include "drivelab/oltp/tpcc/tpcc_random.hpp"

namespace drivelab::oltp {
namespace {

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kT0 = 1000 * kS;  // the start of the measured phase (monotonic ns)

DbStatus serialization_failure() {
  DbStatus s;
  s.outcome = Outcome::retryable;
  s.sqlstate = "40001";
  s.message = "could not serialize access due to concurrent update";
  return s;
}

FailureMeter tpcc_meter(FailureBound b = {}) {
  return FailureMeter(b, {"new_order", "payment", "order_status", "delivery", "stock_level"});
}

/// Attempts of `kind` every `step_ns` in [from, to), failing or not; returns the first reason.
std::optional<std::string> run(FailureMeter& m, std::size_t kind, std::int64_t from, std::int64_t to,
                               std::int64_t step_ns, bool fail) {
  const DbStatus err = serialization_failure();
  std::optional<std::string> first;
  for (std::int64_t t = from; t < to; t += step_ns)
    if (auto r = m.attempt(kind, fail ? &err : nullptr, t); r && !first) first = r;
  return first;
}

// Issue 29's case: every Payment fails from 8 s into a 30 s run. Before, the run ended
// complete; now the first window that ends after it fails the test, naming the type, its error
// and when it began.
TEST(FailureBound, ATypeThatFailsOnEveryTryFailsTheTestNamingItsErrorAndWhenItBegan) {
  FailureMeter m = tpcc_meter();
  m.start(kT0);
  EXPECT_FALSE(run(m, 1, kT0, kT0 + 8 * kS, kS / 400, false));   // 400 Payments/s succeed
  EXPECT_FALSE(run(m, 0, kT0, kT0 + 30 * kS, kS / 400, false));  // New-Order goes on
  // 8..10 s: 2 s of failures in the window 5..10 s with 3 s of successes: 1,200 + ~5,000 failed
  // of ~6,200: above 50%, judged when the next window's first attempt arrives.
  const auto reason = run(m, 1, kT0 + 8 * kS, kT0 + 30 * kS, kS / 2500, true);
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("payment: "), std::string::npos) << *reason;
  EXPECT_NE(reason->find("from 5.0 to 10.0 s into the measured phase"), std::string::npos) << *reason;
  EXPECT_NE(reason->find("SQLSTATE 40001 could not serialize access due to concurrent update"), std::string::npos)
      << *reason;
  EXPECT_NE(reason->find("since 8.0 s into the measured phase"), std::string::npos) << *reason;
  EXPECT_NE(reason->find("more than failure_bound's 50% over 5 s"), std::string::npos) << *reason;
  // Once: the other terminals' later attempts do not report it again.
  EXPECT_FALSE(run(m, 1, kT0 + 30 * kS, kT0 + 40 * kS, kS / 100, true));
  const auto totals = m.totals();
  EXPECT_EQ(totals[1].attempts, 3200u + 55000u + 1000u);
  EXPECT_EQ(totals[1].failed, 55000u + 1000u);
  EXPECT_NEAR(totals[1].first_error_s, 8.0, 1e-9);
  EXPECT_EQ(totals[0].failed, 0u);
  EXPECT_FALSE(totals[0].first_error);
}

TEST(FailureBound, AWholeWindowOfFailuresNamesEveryAttemptFailedSinceItsStart) {
  FailureMeter m = tpcc_meter();
  m.start(kT0);
  EXPECT_FALSE(run(m, 3, kT0, kT0 + 5 * kS, kS / 10, true));  // Delivery fails from 0 s
  const auto reason = run(m, 3, kT0 + 5 * kS, kT0 + 6 * kS, kS / 10, true);
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("delivery: 50 of 50 attempts failed from 0.0 to 5.0 s"), std::string::npos) << *reason;
  EXPECT_NE(reason->find("every attempt has failed since 0.0 s"), std::string::npos) << *reason;
}

TEST(FailureBound, ContentionBelowTheShareAFewAttemptsAndTheWarmUpPass) {
  {
    // 40% of the attempts fail, window after window: contention, not a broken run.
    FailureMeter m = tpcc_meter();
    m.start(kT0);
    for (std::int64_t t = kT0; t < kT0 + 30 * kS; t += kS / 100) {
      const DbStatus err = serialization_failure();
      const bool fail = (t / (kS / 100)) % 5 < 2;
      EXPECT_FALSE(m.attempt(0, fail ? &err : nullptr, t));
    }
    EXPECT_FALSE(m.check_end(kT0 + 30 * kS));
  }
  {
    // 19 attempts a window, all failing: below kMinAttempts, not judged.
    FailureMeter m = tpcc_meter();
    m.start(kT0);
    EXPECT_FALSE(run(m, 2, kT0, kT0 + 30 * kS, 5 * kS / 19 + 1, true));
    EXPECT_FALSE(m.check_end(kT0 + 30 * kS));
  }
  {
    // Before start() (the warm-up) nothing counts.
    FailureMeter m = tpcc_meter();
    EXPECT_FALSE(run(m, 1, kT0 - 20 * kS, kT0, kS / 100, true));
    EXPECT_EQ(m.totals()[1].attempts, 0u);
    m.start(kT0);
    EXPECT_FALSE(run(m, 1, kT0, kT0 + 20 * kS, kS / 100, false));
  }
  {
    // failed: 100% switches the bound off.
    FailureMeter m = tpcc_meter({.failed_pct = 100});
    m.start(kT0);
    EXPECT_FALSE(run(m, 1, kT0, kT0 + 20 * kS, kS / 100, true));
    EXPECT_FALSE(m.check_end(kT0 + 20 * kS));
  }
}

TEST(FailureBound, TheLastWindowCountsWhenItLastedHalfAWindow) {
  {
    FailureMeter m = tpcc_meter();
    m.start(kT0);
    EXPECT_FALSE(run(m, 1, kT0, kT0 + 5 * kS, kS / 100, false));
    EXPECT_FALSE(run(m, 1, kT0 + 5 * kS, kT0 + 8 * kS, kS / 100, true));
    const auto reason = m.check_end(kT0 + 8 * kS);  // 3 s of the window 5..10 s
    ASSERT_TRUE(reason);
    EXPECT_NE(reason->find("payment: 300 of 300 attempts failed from 5.0 to 8.0 s"), std::string::npos) << *reason;
  }
  {
    FailureMeter m = tpcc_meter();
    m.start(kT0);
    EXPECT_FALSE(run(m, 1, kT0 + 5 * kS, kT0 + 7 * kS, kS / 100, true));
    EXPECT_FALSE(m.check_end(kT0 + 7 * kS));  // 2 s of 5: too short to judge
  }
  {
    // A failing window whose end passed without another attempt of its type.
    FailureMeter m = tpcc_meter({.failed_pct = 50, .window = std::chrono::seconds(2)});
    m.start(kT0);
    EXPECT_FALSE(run(m, 4, kT0, kT0 + 1 * kS, kS / 100, true));
    const auto reason = m.check_end(kT0 + 9 * kS);
    ASSERT_TRUE(reason);
    EXPECT_NE(reason->find("stock_level: 100 of 100 attempts failed from 0.0 to 2.0 s"), std::string::npos) << *reason;
  }
}

TEST(FailureBound, ErrorsAreQuotedWithTheirCode) {
  DbStatus mysql;
  mysql.outcome = Outcome::retryable;
  mysql.native_code = 1213;
  mysql.message = "Deadlock found when trying to get lock; try restarting transaction";
  EXPECT_EQ(describe_error(mysql), "error 1213 Deadlock found when trying to get lock; try restarting transaction");
  EXPECT_EQ(describe_error(serialization_failure()),
            "SQLSTATE 40001 could not serialize access due to concurrent update");
  DbStatus bare;
  bare.outcome = Outcome::retryable;
  EXPECT_EQ(describe_error(bare), "retryable");
}

// ---- the key ----------------------------------------------------------------------------------

std::string tpcc_errors(const std::string& yaml, tpcc::TpccConfig* out = nullptr) {
  config::Diagnostics diags;
  const auto doc = config::Document::load_string(yaml, "t.yaml", diags);
  const auto c = tpcc::decode_tpcc_config(doc.root(diags).child("tpcc"), 2);
  if (out) *out = c;
  return diags.to_string();
}

TEST(FailureBound, TheKeyDecodesWithErrorsAtFileLineAndKey) {
  tpcc::TpccConfig c;
  EXPECT_EQ(tpcc_errors("tpcc: {warehouses: 1}\n", &c), "");
  EXPECT_EQ(c.failure_bound.failed_pct, 50.0);
  EXPECT_EQ(c.failure_bound.window, std::chrono::seconds(5));
  EXPECT_EQ(tpcc::to_json(c)["failure_bound"].dump(), R"({"failed_pct":50.0,"window":"5s"})");
  EXPECT_EQ(tpcc_errors("tpcc:\n  failure_bound: {failed: 10%, window: 30s}\n", &c), "");
  EXPECT_EQ(c.failure_bound.failed_pct, 10.0);
  EXPECT_EQ(c.failure_bound.window, std::chrono::seconds(30));

  std::string e = tpcc_errors("tpcc:\n  failure_bound: {failed: 150%}\n");
  EXPECT_NE(e.find("t.yaml:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("failed must be between 0 and 100"), std::string::npos) << e;
  e = tpcc_errors("tpcc:\n  warehouses: 1\n  failure_bound:\n    window: 100ms\n");
  EXPECT_NE(e.find("t.yaml:4:"), std::string::npos) << e;
  EXPECT_NE(e.find("window"), std::string::npos) << e;
  e = tpcc_errors("tpcc:\n  failure_bound: {faild: 10}\n");
  EXPECT_NE(e.find("t.yaml:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key 'faild'"), std::string::npos) << e;
  e = tpcc_errors("tpcc:\n  failure_bound: 10\n");
  EXPECT_NE(e.find("t.yaml:2:"), std::string::npos) << e;

  config::Diagnostics diags;
  const auto doc = config::Document::load_string("sysbench:\n  failure_bound: {failed: x}\n", "s.yaml", diags);
  const auto sc = sysbench::decode_sysbench_config(doc.root(diags).child("sysbench"));
  EXPECT_NE(diags.to_string().find("s.yaml:2:"), std::string::npos) << diags.to_string();
  EXPECT_NE(diags.to_string().find("expected a percentage"), std::string::npos) << diags.to_string();
  EXPECT_EQ(sysbench::to_json(sc)["failure_bound"]["failed_pct"], 50.0);
}

// ---- clause 5.2.4.2 ---------------------------------------------------------------------------

TEST(MixCheck, TheDecksMixPassesAndIssue29sPaymentShareFails) {
  using tpcc::mix_shortfalls;
  // Whole decks: 43.48% / 43.48% / 4.35% x 3.
  EXPECT_TRUE(mix_shortfalls({10'000, 10'000, 1'000, 1'000, 1'000}, 10).empty());
  EXPECT_TRUE(mix_shortfalls({0, 0, 0, 0, 0}, 10).empty());
  // Issue 29: Payment at 40.1% of 16,532 completed, 10 terminals: 113 Payments of partial decks
  // cannot explain the ~480 missing.
  const auto misses = mix_shortfalls({7'746, 6'629, 719, 719, 719}, 10);
  ASSERT_EQ(misses.size(), 1u);
  EXPECT_EQ(misses[0].type, tpcc::TxType::payment);
  EXPECT_EQ(misses[0].count, 6'629u);
  EXPECT_NEAR(misses[0].pct, 40.1, 0.05);
  EXPECT_EQ(misses[0].min_pct, 43.0);
}

TEST(MixCheck, PartialDecksOfAShortRunAreAllowedForButNotBeyond) {
  using tpcc::mix_shortfalls;
  // 4 terminals, 30 transactions each: Payment at 30% and no Delivery is within what 4
  // terminals' partial decks allow (45 Payments, 7.7 of a one-card type).
  EXPECT_TRUE(mix_shortfalls({68, 36, 8, 0, 8}, 4).empty());
  // The same counts judged as they are (profile: hammerdb): both below the minimum.
  const auto raw = mix_shortfalls({68, 36, 8, 0, 8}, 0);
  ASSERT_EQ(raw.size(), 2u);
  EXPECT_EQ(raw[0].type, tpcc::TxType::payment);
  EXPECT_EQ(raw[1].type, tpcc::TxType::delivery);
  // Delivery never completing in a long run is more than any deck boundary.
  const auto none = mix_shortfalls({10'000, 10'000, 1'000, 0, 1'000}, 10);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].type, tpcc::TxType::delivery);
}

TEST(MixCheck, HammerDbsIndependentDrawsAreWarnedOnlyBeyondChance) {
  using tpcc::mix_shortfalls_beyond_chance;
  // 10,000 transactions at HammerDB's odds (expected 4,348 Payments, 435 of each small type):
  // 4,280 Payments (42.8%) and 395 Deliveries (3.95%) are below the minimums but within 3
  // standard deviations (149 and 61) of the odds: chance, not failure.
  EXPECT_EQ(tpcc::mix_shortfalls({4'500, 4'280, 395, 410, 415}, 0).size(), 2u);
  EXPECT_TRUE(mix_shortfalls_beyond_chance({4'500, 4'280, 395, 410, 415}).empty());
  // 4,100 Payments (41%) is 248 below its expected count, beyond 3 standard deviations.
  const auto misses = mix_shortfalls_beyond_chance({4'680, 4'100, 400, 410, 410});
  ASSERT_EQ(misses.size(), 1u);
  EXPECT_EQ(misses[0].type, tpcc::TxType::payment);
}

}  // namespace
}  // namespace drivelab::oltp
