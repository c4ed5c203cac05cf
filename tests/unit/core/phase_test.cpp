// core/phase.hpp: wait_until's abort and deadline, for_each_interval's boundaries. No assertion
// depends on how long a wait took: counts and the order of calls only.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/phase.hpp"

namespace drivelab {
namespace {

constexpr std::int64_t kMs = 1'000'000;

TEST(WaitUntil, ReturnsTrueOnceThePassedDeadlineIsReached) {
  int asked = 0;
  EXPECT_TRUE(wait_until(monotonic_ns() - kMs, [&] { return ++asked, false; }));
  EXPECT_EQ(asked, 1);  // asked once, then the deadline had passed
  const std::int64_t deadline = monotonic_ns() + 2 * kMs;
  EXPECT_TRUE(wait_until(deadline, [] { return false; }));
  EXPECT_GE(monotonic_ns(), deadline);  // never returns true before its deadline
}

TEST(WaitUntil, AbortIsAskedFirstAndEndsTheWait) {
  // Aborted before the first slice: false, even with the deadline already passed.
  EXPECT_FALSE(wait_until(monotonic_ns() - kMs, [] { return true; }));
  // A far deadline: the abort that turns true on its third question ends the wait; with the
  // 10 ms rule that is two slices, not the hour.
  int asked = 0;
  EXPECT_FALSE(wait_until(monotonic_ns() + 3'600'000 * kMs, [&] { return ++asked == 3; }));
  EXPECT_EQ(asked, 3);
}

TEST(WaitUntil, PollRuleIsTenMilliseconds) { EXPECT_EQ(kWaitPollNs, 10 * kMs); }

TEST(ForEachInterval, CallsOncePerBoundaryAndMarksTheLast) {
  std::vector<bool> calls;
  const std::int64_t t0 = monotonic_ns();
  for_each_interval(t0, t0 + 5 * kMs, 2 * kMs, [] { return false; }, [&](bool last) { calls.push_back(last); });
  // Boundaries t0 + 2, + 4 and the end clipped to + 5 ms.
  EXPECT_EQ(calls, (std::vector<bool>{false, false, true}));
  EXPECT_GE(monotonic_ns(), t0 + 5 * kMs);
}

TEST(ForEachInterval, EndOnABoundaryGivesNoEmptyExtraInterval) {
  int calls = 0;
  const std::int64_t t0 = monotonic_ns();
  for_each_interval(t0, t0 + 4 * kMs, 2 * kMs, [] { return false; }, [&](bool) { ++calls; });
  EXPECT_EQ(calls, 2);
}

TEST(ForEachInterval, AnEmptyPhaseStillClosesItsOneInterval) {
  std::vector<bool> calls;
  const std::int64_t t0 = monotonic_ns();
  for_each_interval(t0, t0, 2 * kMs, [] { return false; }, [&](bool last) { calls.push_back(last); });
  EXPECT_EQ(calls, (std::vector<bool>{true}));
  calls.clear();
  for_each_interval(t0, t0 - kMs, 2 * kMs, [] { return false; }, [&](bool last) { calls.push_back(last); });
  EXPECT_EQ(calls, (std::vector<bool>{true}));
}

TEST(ForEachInterval, AbortMakesTheCurrentCallTheLast) {
  std::vector<bool> calls;
  const std::int64_t t0 = monotonic_ns();
  bool stop = false;
  for_each_interval(
      t0, t0 + 3'600'000 * kMs, kMs, [&] { return stop; },
      [&](bool last) {
        calls.push_back(last);
        if (calls.size() == 2) stop = true;  // as a stop request between two boundaries
      });
  EXPECT_EQ(calls, (std::vector<bool>{false, false, true}));
}

TEST(ForEachInterval, ZeroIntervalIsRaisedToTheMinimum) {
  int calls = 0;
  const std::int64_t t0 = monotonic_ns();
  for_each_interval(t0, t0 + 3 * kMinIntervalNs, 0, [] { return false; }, [&](bool) { ++calls; });
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace drivelab
