#pragma once
// Helpers shared by the engine tests: skip an engine this machine cannot run, and run one batch
// of requests through an engine (queue all, one submit, reap until all are back).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "drivelab/io/engine.hpp"

// A macro, not a function: GTEST_SKIP() returns from the function it is written in.
#define SKIP_UNLESS_USABLE(engine)                                                      \
  do {                                                                                  \
    const ::drivelab::io::EngineAvailability a_ = ::drivelab::io::probe_engine(engine); \
    if (!a_.usable) GTEST_SKIP() << a_.reason;                                          \
  } while (0)

namespace drivelab::io::test {

/// Queues every request, submits once, and reaps until all are back; returns the results indexed
/// by user_data (which must be 0..requests.size()-1).
/// `timeout`: of each reap (IoEngine::kNoTimeout: untimed waits, as the closed-loop workers use).
inline std::vector<std::int64_t> run_batch(IoEngine& engine, const std::vector<IoRequest>& requests,
                                           std::chrono::nanoseconds timeout = std::chrono::milliseconds(100)) {
  std::vector<std::int64_t> results(requests.size(), 1);
  for (const IoRequest& r : requests) EXPECT_NE(engine.queue(r), QueueStatus::busy);
  engine.submit();
  std::vector<IoCompletion> done(requests.size());
  std::size_t got = 0;
  for (int tries = 0; got < requests.size() && tries < 1000; ++tries)
    got += engine.reap(requests.size() - got, std::span(done).subspan(got), timeout);
  EXPECT_EQ(got, requests.size());
  for (std::size_t i = 0; i < got; ++i) results.at(done[i].user_data) = done[i].result;
  EXPECT_EQ(engine.in_flight(), 0u);
  return results;
}

}  // namespace drivelab::io::test
