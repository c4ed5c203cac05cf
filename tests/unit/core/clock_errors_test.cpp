// The monotonic clock helpers and the exception taxonomy.
#include <cerrno>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include <cctype>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"

namespace drivelab {
namespace {

TEST(Clock, MonotonicNeverGoesBack) {
  std::int64_t last = monotonic_ns();
  for (int i = 0; i < 10'000; ++i) {
    const std::int64_t now = monotonic_ns();
    ASSERT_GE(now, last);
    last = now;
  }
}

TEST(Clock, SleepUntilReturnsAtOrAfterDeadline) {
  const std::int64_t deadline = monotonic_ns() + 1'000'000;  // 1 ms
  EXPECT_GE(sleep_until_ns(deadline), deadline);
  const std::int64_t past = monotonic_ns() - 1'000'000'000;
  EXPECT_GE(sleep_until_ns(past), past);  // a deadline in the past returns at once
}

TEST(Clock, SecondsBetweenTwoInstants) {
  EXPECT_DOUBLE_EQ(seconds_between(1'000'000'000, 3'500'000'000), 2.5);
  EXPECT_DOUBLE_EQ(seconds_between(3'500'000'000, 1'000'000'000), -2.5);  // `to` earlier: negative
  EXPECT_EQ(seconds_between(42, 42), 0.0);
  // Far from the epoch the difference is taken in integers first: 1 ns stays 1 ns.
  constexpr std::int64_t far = 9'000'000'000'000'000'000;
  EXPECT_DOUBLE_EQ(seconds_between(far, far + 1), 1e-9);
  static_assert(seconds_between(0, 1'000'000'000) == 1.0);
}

TEST(Clock, UtcTimestampIsIso8601WithMilliseconds) {
  const std::string ts = utc_timestamp();
  // Shape "YYYY-MM-DDTHH:MM:SS.mmmZ": digits everywhere but the fixed separators.
  const std::string shape = "dddd-dd-ddTdd:dd:dd.dddZ";
  ASSERT_EQ(ts.size(), shape.size()) << ts;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 'd')
      EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(ts[i]))) << ts;
    else
      EXPECT_EQ(ts[i], shape[i]) << ts;
  }
}

TEST(Errors, ThrowErrnoNamesTheCause) {
  try {
    throw_errno("open data.db", ENOENT);
    FAIL() << "did not throw";
  } catch (const EnvironmentError& e) {
    EXPECT_EQ(std::string(e.what()), "open data.db: No such file or directory");
  }
}

TEST(Errors, ErrnoTextHasTheMessageAndTheSymbolicName) {
  EXPECT_EQ(errno_text(EPERM), "Operation not permitted (EPERM)");
  EXPECT_EQ(errno_text(ENOSPC), "No space left on device (ENOSPC)");
  EXPECT_EQ(errno_text(EIO), "Input/output error (EIO)");
  // No symbolic name: strerror's own text and the number.
  EXPECT_EQ(errno_text(4242), "Unknown error 4242 (4242)");
}

TEST(Errors, Taxonomy) {
  // NotCompiledIn is an EnvironmentError (the feature is unavailable here), all are Errors.
  EXPECT_THROW(throw NotCompiledIn("io_uring"), EnvironmentError);
  EXPECT_THROW(throw ConfigError("x"), Error);
  EXPECT_THROW(throw InternalError("x"), Error);
  const BackendError e("deadlock", "40001", 1213);
  EXPECT_EQ(e.sqlstate(), "40001");
  EXPECT_EQ(e.native_code(), 1213);
  EXPECT_STREQ(e.what(), "deadlock");
  const BackendError bare("fatal");
  EXPECT_EQ(bare.sqlstate(), "");
  EXPECT_EQ(bare.native_code(), 0);
}

}  // namespace
}  // namespace drivelab
