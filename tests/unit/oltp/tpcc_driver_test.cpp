// The TPC-C driver's three ways of running terminals (pooled TP monitor, dedicated users, open
// loop) against real SQLite databases. No timing assertions: counts with generous bounds, and
// identities that hold exactly (response = queue wait + service).
#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/tpcc/tpcc_driver.hpp"
#include "test_db.hpp"

namespace drivelab::oltp::tpcc {
namespace {

namespace fs = std::filesystem;

struct DriverFixture : ::testing::Test {
  test::TempDir dir;
  std::unique_ptr<Backend> backend;

  void SetUp() override { backend = test::sqlite_at(test::copy_of_cached_database(dir.path())); }

  DriverOptions options() const {
    DriverOptions o;
    o.scale = {.warehouses = 1};
    Rng rng(7);
    o.c_run = make_c_run(rng, test::cached_c_load());
    o.seed = 11;
    return o;
  }

  /// 10 pooled terminals (one per district, clause 4.2.2) on `connections` connections, with the
  /// clause 5.2.5 keying and think times scaled by `think_scale`.
  DriverOptions pooled_with_think(int connections, double think_scale) const {
    DriverOptions o = options();
    o.users = 10;
    o.terminals = TerminalMode::pooled;
    o.connections = connections;
    o.think = ThinkMode::tpcc;
    o.think_scale = think_scale;
    return o;
  }

  /// Runs `o` for `measure` after a short unrecorded start; returns the totals.
  static DriverTotals run(Backend& b, const DriverOptions& o, std::chrono::milliseconds measure,
                          std::vector<IntervalStats>* intervals = nullptr) {
    Driver d(b, o);
    d.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    d.begin_measurement();
    for (int i = 0; i < 2; ++i) {
      std::this_thread::sleep_for(measure / 2);
      IntervalStats iv = d.take_interval();
      if (intervals) intervals->push_back(std::move(iv));
    }
    d.finish();
    EXPECT_FALSE(d.failed()) << d.fatal_error().value_or("");
    return d.totals();
  }
};

TypeStats all_types(const DriverTotals& t) {
  TypeStats all;
  for (const auto& s : t.by_type) all.merge(s);
  return all;
}

std::uint64_t completed(const TypeStats& s) { return s.commits + s.rollbacks; }

/// Response = queue wait + service for every transaction, so the exact means add up.
void expect_parts_add_up(const TypeStats& s) {
  ASSERT_GT(s.response_time.count(), 0u);
  EXPECT_EQ(s.queue_wait.count(), s.response_time.count());
  EXPECT_EQ(s.service_time.count(), s.response_time.count());
  EXPECT_NEAR(s.queue_wait.mean() + s.service_time.mean(), s.response_time.mean(), 0.01 * s.response_time.mean());
}

TEST(TpccDriverRules, ThinkTimeIsNegativeExponentialCappedAtTenTimesTheMean) {
  Rng rng(3);
  double sum = 0, max = 0;
  constexpr int kN = 200'000;
  for (int i = 0; i < kN; ++i) {
    const double t = think_time_s(rng, 12.0);
    ASSERT_GE(t, 0.0);
    ASSERT_LE(t, 120.0);
    sum += t;
    max = std::max(max, t);
  }
  // Truncation at 10 x mean removes e^-10 of the mass: the mean stays 12 s within sampling error.
  EXPECT_NEAR(sum / kN, 12.0, 0.15);
  EXPECT_GT(max, 80.0);  // the tail is reached (P(t > 80 s) = e^-6.7 per draw)
  // 1 / mean cycle of clause 5.2.5 (keying + mean think over the 23-card deck) = 23 / 476 s.
  EXPECT_NEAR(tpcc_terminal_rate_per_s(), 23.0 / 476.0, 1e-12);
}

TEST(TpccDriverRules, ImpossibleOptionsAreRejected) {
  test::TempDir dir;
  auto b = test::sqlite_at(dir.path() / "x.db");
  DriverOptions o;
  o.rate_per_s = 10;
  o.think = ThinkMode::tpcc;
  o.terminals = TerminalMode::pooled;
  EXPECT_THROW(Driver(*b, o), ConfigError);
  o.think = ThinkMode::none;
  o.terminals = TerminalMode::dedicated;
  EXPECT_THROW(Driver(*b, o), ConfigError);
  o = DriverOptions{};
  o.think_scale = 0;
  EXPECT_THROW(Driver(*b, o), ConfigError);
}

TEST_F(DriverFixture, PooledTerminalsWithScaledThinkTimesRunTheMixThroughThePool) {
  // Keying 36/6/4/4/4 ms, think means 24/24/20/10/10 ms.
  const DriverOptions o = pooled_with_think(3, 0.002);
  std::vector<IntervalStats> intervals;
  const DriverTotals t = run(*backend, o, std::chrono::milliseconds(2400), &intervals);
  const TypeStats all = all_types(t);
  // 10 terminals at ~1/(41 ms + response) each for 2.4 s: a few hundred transactions. The
  // bound is loose on purpose (sanitizer builds are slow), the mix is what is checked.
  ASSERT_GT(completed(all), 100u);
  for (TxType type : kAllTxTypes)
    EXPECT_GT(completed(t.by_type[static_cast<std::size_t>(type)]), 0u) << to_string(type);
  const auto share = [&](TxType type) {
    return static_cast<double>(completed(t.by_type[static_cast<std::size_t>(type)])) /
           static_cast<double>(completed(all));
  };
  // Deck: 10/23 = 43.5% each of New-Order and Payment, 1/23 = 4.3% of the others. Each terminal
  // has drawn at least a few full decks; the bounds allow the unfinished decks.
  EXPECT_NEAR(share(TxType::new_order), 10.0 / 23, 0.08);
  EXPECT_NEAR(share(TxType::payment), 10.0 / 23, 0.08);
  for (TxType type : {TxType::order_status, TxType::delivery, TxType::stock_level})
    EXPECT_NEAR(share(type), 1.0 / 23, 0.04) << to_string(type);
  EXPECT_EQ(all.errors, 0u);
  expect_parts_add_up(all);
  for (const auto& s : t.by_type) expect_parts_add_up(s);
  // Think and keying timers fired and their lateness was recorded.
  EXPECT_GT(t.timer_lateness.count(), completed(all));
  EXPECT_EQ(t.workers, 3);
  EXPECT_GT(t.pool_utilisation, 0.0);
  EXPECT_LE(t.pool_utilisation, 1.0 + 1e-9);
  ASSERT_EQ(intervals.size(), 2u);
  std::uint64_t interval_commits = 0;
  for (const auto& iv : intervals) {
    interval_commits += iv.commits;
    EXPECT_GE(iv.pool_utilisation, 0.0);
    EXPECT_LE(iv.pool_utilisation, 1.0 + 1e-9);
    EXPECT_GE(iv.queue_length_avg, 0.0);
    EXPECT_LE(iv.queue_length_avg, 10.0);  // at most one card per terminal is ever queued
    EXPECT_LE(iv.queue_length_max, 10u);
  }
  // Everything committed in the measured phase falls in one of the two intervals, except what
  // ended between the last take_interval() and finish().
  EXPECT_LE(interval_commits, all.commits);
  EXPECT_GE(interval_commits + 10, all.commits);
}

TEST_F(DriverFixture, PooledClosedLoopWithMoreTerminalsThanConnectionsQueues) {
  DriverOptions o = options();
  o.users = 8;
  o.terminals = TerminalMode::pooled;
  o.connections = 2;  // think: none, 8 terminals on 2 connections: 6 always wait
  const DriverTotals t = run(*backend, o, std::chrono::milliseconds(1000));
  const TypeStats all = all_types(t);
  ASSERT_GT(completed(all), 20u);
  expect_parts_add_up(all);
  // With 6 of the 8 cards waiting for a connection (or on their way back to their terminal),
  // queue wait is most of the response time.
  EXPECT_GT(all.queue_wait.mean(), all.service_time.mean());
  EXPECT_GT(t.queue_length_avg, 1.0);
  EXPECT_LE(t.queue_length_max, 8u);
  EXPECT_GT(t.pool_utilisation, 0.0);
  EXPECT_LE(t.pool_utilisation, 1.0 + 1e-9);
  EXPECT_EQ(t.timer_lateness.count(), 0u);  // no timers in a closed loop without think time
}

TEST_F(DriverFixture, PooledClosedLoopEveryResponseReachesItsTerminal) {
  // think: none, 40 terminals on 2 connections: each response goes straight back through the
  // workers' hand-back to its terminal, which submits again at once. A response that never
  // reached the timer thread would leave its terminal idle for good; once a few were lost the
  // queue would drain and the pool stop. So work still flows in the last interval, and the queue
  // holds most of the 40 cards over the run.
  DriverOptions o = options();
  o.users = 40;
  o.terminals = TerminalMode::pooled;
  o.connections = 2;
  std::vector<IntervalStats> intervals;
  const DriverTotals t = run(*backend, o, std::chrono::milliseconds(1000), &intervals);
  ASSERT_EQ(intervals.size(), 2u);
  EXPECT_GT(intervals[1].commits, 0u);
  EXPECT_GT(t.queue_length_avg, 20.0);  // 38 wait for a connection, minus those on their way back
  EXPECT_LE(t.queue_length_max, 40u);
  EXPECT_EQ(all_types(t).errors, 0u);
}

TEST_F(DriverFixture, PooledThinkTimersOfLongThinkTimesAreArmedByTheSweep) {
  // think_scale 0.02: think means 240/240/200/100/100 ms, so most responses have a think time
  // past the 50 ms horizon and do not wake the timer thread; the 10 ms sweep must take them and
  // arm their think timers, else each terminal would stop after its first such response.
  const DriverOptions o = pooled_with_think(2, 0.02);  // keying 360/60/40/40/40 ms: a cycle is ~0.3-0.6 s
  std::vector<IntervalStats> intervals;
  const DriverTotals t = run(*backend, o, std::chrono::milliseconds(3000), &intervals);
  const TypeStats all = all_types(t);
  ASSERT_EQ(intervals.size(), 2u);
  EXPECT_GT(intervals[1].commits, 0u);                  // terminals still cycle in the last 1.5 s
  EXPECT_GT(completed(all), 2u * 10u);                  // more than two cycles per terminal on average
  EXPECT_GT(t.timer_lateness.count(), completed(all));  // keying + think timers fired
  EXPECT_EQ(all.errors, 0u);
}

/// Threads of this process whose scheduling policy is SCHED_FIFO.
int fifo_threads() {
  int n = 0;
  for (const auto& task : fs::directory_iterator("/proc/self/task"))
    if (::sched_getscheduler(std::stoi(task.path().filename().string())) == SCHED_FIFO) ++n;
  return n;
}

/// Whether this process may put a thread under SCHED_FIFO (root or CAP_SYS_NICE, and real-time
/// time in its cgroup): tried on a thread of its own.
bool may_use_sched_fifo() {
  bool ok = false;
  std::thread probe([&ok] {
    sched_param p{};
    p.sched_priority = 1;
    ok = ::pthread_setschedparam(::pthread_self(), SCHED_FIFO, &p) == 0;
  });
  probe.join();
  return ok;
}

TEST_F(DriverFixture, PooledTimerThreadRunsUnderSchedFifoWhereAllowed) {
  // The timer thread asks for SCHED_FIFO and, where refused, a short SCHED_OTHER slice; the record
  // says which, and the kernel's view of the process's threads agrees.
  const DriverOptions o = pooled_with_think(2, 0.002);
  const bool allowed = may_use_sched_fifo();
  ASSERT_EQ(fifo_threads(), 0);
  Driver d(*backend, o);
  d.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the timer thread has started
  const int during = fifo_threads();
  d.begin_measurement();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  d.finish();
  ASSERT_FALSE(d.failed()) << d.fatal_error().value_or("");
  const DriverTotals t = d.totals();
  EXPECT_EQ(t.timer_thread_fifo, allowed);
  EXPECT_EQ(during, allowed ? 1 : 0);  // the timer thread only: the workers keep SCHED_OTHER
  if (t.timer_thread_fifo) {
    EXPECT_EQ(t.timer_thread_nice, 0);
    EXPECT_EQ(t.timer_thread_slice_us, 0);
  } else {
    EXPECT_EQ(t.timer_thread_slice_us, 100);  // sched_setattr is open to every thread for itself
  }
  EXPECT_GT(t.timer_lateness.count(), 0u);
  EXPECT_EQ(fifo_threads(), 0);  // joined
}

TEST_F(DriverFixture, OpenLoopArrivalsComeAtTheRequestedRate) {
  DriverOptions o = options();
  o.users = 10;
  o.terminals = TerminalMode::pooled;
  o.connections = 4;
  o.rate_per_s = 200;
  const DriverTotals t = run(*backend, o, std::chrono::milliseconds(2000));
  // Poisson arrivals at 200/s over the measured time (~2 s: ~400, standard deviation 20). The
  // bounds are far outside chance and scale with the phase as measured, so a loaded machine
  // (CI runs two test binaries on two cores, under ASan) cannot fail them.
  const double expected = 200.0 * t.measured_s;
  EXPECT_GT(static_cast<double>(t.arrivals), 0.6 * expected) << t.measured_s;
  EXPECT_LT(static_cast<double>(t.arrivals), 1.4 * expected + 50) << t.measured_s;
  EXPECT_EQ(t.arrivals_dropped, 0u);
  const TypeStats all = all_types(t);
  // The arrivals are served (SQLite in memory), not only counted: most are done by the end.
  EXPECT_GT(completed(all) + all.errors, t.arrivals / 2);
  EXPECT_LE(completed(all), t.arrivals + 50);  // only arrivals of the measured phase (+ warm-up backlog)
  expect_parts_add_up(all);
  EXPECT_GT(t.timer_lateness.count(), 0u);
}

TEST_F(DriverFixture, DedicatedUsersHaveNoDriverQueue) {
  DriverOptions o = options();
  o.users = 3;
  o.terminals = TerminalMode::dedicated;
  o.login_rate_per_s = 0;  // all at once
  const DriverTotals t = run(*backend, o, std::chrono::milliseconds(1000));
  const TypeStats all = all_types(t);
  ASSERT_GT(completed(all), 20u);
  EXPECT_EQ(all.queue_wait.max(), 0);  // submitted and started at the same instant
  expect_parts_add_up(all);
  EXPECT_EQ(t.workers, 3);
  EXPECT_EQ(t.users_logged_in, 3);
  EXPECT_EQ(t.queue_length_max, 0u);
}

TEST_F(DriverFixture, DedicatedLoginsAreStaggeredAndAStopDuringTheRampIsPrompt) {
  DriverOptions o = options();
  o.users = 4;
  o.terminals = TerminalMode::dedicated;
  o.login_rate_per_s = 0.25;  // one login every 4 s
  Driver d(*backend, o);
  d.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LE(d.users_logged_in(), 1);  // user 2 logs in at +4 s
  const auto t0 = std::chrono::steady_clock::now();
  d.finish();
  // The waiting users end at once (not after their login slot); 2 s is a bound for slow builds.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_FALSE(d.failed());
}

TEST_F(DriverFixture, ThinkTimeDedicatedUsersRecordTimerLateness) {
  DriverOptions o = options();
  o.users = 4;
  o.terminals = TerminalMode::dedicated;
  o.login_rate_per_s = 0;
  o.think = ThinkMode::tpcc;
  o.think_scale = 0.002;
  const DriverTotals t = run(*backend, o, std::chrono::milliseconds(1000));
  const TypeStats all = all_types(t);
  EXPECT_GT(completed(all), 10u);
  EXPECT_GT(t.timer_lateness.count(), completed(all));  // keying + think sleeps
}

// profile: hammerdb in both terminal modes with (scaled) think times: HammerDB's home warehouses,
// mix and whole-second think times drive the same terminals without errors.
TEST_F(DriverFixture, HammerDbProfileRunsDedicatedAndPooledTerminalsWithThinkTimes) {
  for (const TerminalMode mode : {TerminalMode::dedicated, TerminalMode::pooled}) {
    DriverOptions o = options();
    o.profile = Profile::hammerdb;
    o.users = 6;
    o.terminals = mode;
    o.connections = 2;
    o.login_rate_per_s = mode == TerminalMode::dedicated ? 100 : 0;
    o.think = ThinkMode::tpcc;
    o.think_scale = 0.002;  // keying 36/6/4/4/4 ms; think 0, 2, 4, ... ms (whole seconds x 0.002)
    const DriverTotals t = run(*backend, o, std::chrono::milliseconds(1200));
    const TypeStats all = all_types(t);
    EXPECT_GT(completed(all), 10u) << to_string(mode);
    EXPECT_EQ(all.errors, 0u) << to_string(mode);
    EXPECT_GT(t.timer_lateness.count(), 0u) << to_string(mode);
    expect_parts_add_up(all);
  }
}

TEST_F(DriverFixture, AMissingTableIsAFatalErrorThatStopsEveryTerminal) {
  // The statements prepare at start; dropping a table afterwards makes New-Order fail fatally.
  DriverOptions o = options();
  o.users = 2;
  o.terminals = TerminalMode::pooled;
  o.connections = 2;
  Driver d(*backend, o);
  d.start();
  d.begin_measurement();
  {
    auto conn = backend->connect();
    conn->execute_immediate("DROP TABLE new_order");
  }
  for (int i = 0; i < 100 && !d.failed(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(d.failed());
  d.finish();
  const auto err = d.fatal_error();
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("new_order"), std::string::npos) << *err;
  EXPECT_NE(err->find("connection"), std::string::npos) << *err;  // names who failed
  EXPECT_GE(all_types(d.totals()).errors, 1u);
}

}  // namespace
}  // namespace drivelab::oltp::tpcc
