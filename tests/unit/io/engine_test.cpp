#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/io/engine.hpp"
#include "drivelab/io/target_file.hpp"
#include "temp_dir.hpp"

namespace drivelab::io {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kBlock = 4096;
constexpr std::uint32_t kBlocks = 64;

struct EngineCase {
  const char* engine;
  bool direct;
  bool registered;  // io_uring registered files + fixed buffers
};

std::string case_name(const testing::TestParamInfo<EngineCase>& info) {
  return std::string(info.param.engine) + (info.param.direct ? "_direct" : "_buffered") +
         (info.param.registered ? "_registered" : "");
}

// A macro, not a function: GTEST_SKIP() returns from the function it is written in.
#define SKIP_UNLESS_USABLE(engine)                       \
  do {                                                   \
    const EngineAvailability a_ = probe_engine(engine);  \
    if (!a_.usable) GTEST_SKIP() << a_.reason;           \
  } while (0)

// Queues every request, submits, and reaps until all are back; returns results by user_data.
std::vector<std::int64_t> run_batch(IoEngine& engine, const std::vector<IoRequest>& requests) {
  std::vector<std::int64_t> results(requests.size(), 1);
  for (const IoRequest& r : requests) EXPECT_NE(engine.queue(r), QueueStatus::busy);
  engine.submit();
  std::vector<IoCompletion> done(requests.size());
  std::size_t got = 0;
  for (int tries = 0; got < requests.size() && tries < 1000; ++tries)
    got += engine.reap(requests.size() - got, std::span(done).subspan(got), 100ms);
  EXPECT_EQ(got, requests.size());
  for (std::size_t i = 0; i < got; ++i) results.at(done[i].user_data) = done[i].result;
  EXPECT_EQ(engine.in_flight(), 0u);
  return results;
}

class EngineRoundTrip : public testing::TestWithParam<EngineCase> {};

// Writes a distinct pattern into every block with the engine, reads it back with the same engine
// into a second buffer and compares: the data really went to the file and came back.
TEST_P(EngineRoundTrip, WritesThenReadsBackEveryBlock) {
  const EngineCase c = GetParam();
  SKIP_UNLESS_USABLE(c.engine);
  test::TempDir dir;
  TargetFile file = TargetFile::open({.dir = dir.path(), .test_name = "rt", .size_bytes = kBlock * kBlocks,
                                      .direct = c.direct, .fill = false});
  ASSERT_EQ(kBlock % file.direct_alignment_bytes(), 0u);

  EngineOptions options{.queue_depth = kBlocks, .register_files = c.registered, .register_buffers = c.registered};
  auto engine = make_engine(c.engine, options);
  const int fds[] = {file.fd()};
  engine->register_files(fds);
  AlignedBuffer out(kBlock * kBlocks), in(kBlock * kBlocks);
  const iovec iov[] = {{out.data(), out.size()}, {in.data(), in.size()}};
  engine->register_buffers(iov);

  for (std::uint32_t b = 0; b < kBlocks; ++b)
    std::memset(out.data() + b * kBlock, static_cast<int>(b * 7 + 1), kBlock);
  std::vector<IoRequest> writes, reads;
  for (std::uint32_t b = 0; b < kBlocks; ++b) {
    writes.push_back({.op = Op::write, .offset_bytes = b * kBlock, .length_bytes = kBlock,
                      .buffer = out.data() + b * kBlock, .buffer_index = 0, .user_data = b});
    reads.push_back({.op = Op::read, .offset_bytes = b * kBlock, .length_bytes = kBlock,
                     .buffer = in.data() + b * kBlock, .buffer_index = 1, .user_data = b});
  }
  for (std::int64_t r : run_batch(*engine, writes)) EXPECT_EQ(r, kBlock);
  for (std::int64_t r : run_batch(*engine, reads)) EXPECT_EQ(r, kBlock);
  EXPECT_EQ(std::memcmp(out.data(), in.data(), out.size()), 0);
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineRoundTrip,
                         testing::Values(EngineCase{"psync", true, false}, EngineCase{"psync", false, false},
                                         EngineCase{"io_uring", true, false}, EngineCase{"io_uring", false, false},
                                         EngineCase{"io_uring", true, true}),
                         case_name);

TEST(Engine, UnknownNameIsAConfigErrorListingTheChoices) {
  try {
    make_engine("libaoi");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "unknown I/O engine 'libaoi' (choices: io_uring, psync, null)");
  }
  EXPECT_FALSE(probe_engine("libaoi").known);
}

TEST(Engine, UringUnavailableMessageNamesTheSysctl) {
  // The EPERM text users see when kernel.io_uring_disabled or a seccomp profile blocks io_uring.
  EngineAvailability a = probe_engine("io_uring");
  EXPECT_TRUE(a.known);
  if (a.compiled_in && !a.usable) {
    EXPECT_NE(a.reason.find("io_uring is not available on this kernel/container"), std::string::npos) << a.reason;
  } else if (!a.compiled_in) {
    EXPECT_NE(a.reason.find("not compiled into this build"), std::string::npos) << a.reason;
  } else {
    EXPECT_TRUE(a.reason.empty());
  }
}

TEST(NullEngine, CompletesEverythingAtSubmitUpToItsQueueDepth) {
  auto engine = make_engine("null", {.queue_depth = 16});
  EXPECT_TRUE(engine->capabilities().has(Capability::no_io));
  EXPECT_TRUE(engine->capabilities().has(Capability::async));
  for (std::uint64_t i = 0; i < 16; ++i)
    EXPECT_EQ(engine->queue({.length_bytes = 512, .user_data = i}), QueueStatus::queued);
  EXPECT_EQ(engine->queue({.length_bytes = 512, .user_data = 99}), QueueStatus::busy);
  IoCompletion done[32];
  EXPECT_EQ(engine->reap(0, done, 0ns), 0u) << "nothing completes before submit()";
  EXPECT_EQ(engine->submit(), 16u);
  ASSERT_EQ(engine->reap(1, done, 0ns), 16u);
  for (std::uint64_t i = 0; i < 16; ++i) {
    EXPECT_EQ(done[i].user_data, i);
    EXPECT_EQ(done[i].result, 512);
  }
  EXPECT_EQ(engine->in_flight(), 0u);
}

TEST(PsyncEngine, IsSynchronousSoItsDepthIsOnePerJob) {
  test::TempDir dir;
  TargetFile file = TargetFile::open({.dir = dir.path(), .test_name = "ps", .size_bytes = 64 * 1024,
                                      .direct = false, .fill = false});
  auto engine = make_engine("psync", {.queue_depth = 4});
  EXPECT_FALSE(engine->capabilities().has(Capability::async));
  const int fds[] = {file.fd()};
  engine->register_files(fds);
  AlignedBuffer buf(4096);
  // The I/O is done inside queue(): it is complete before submit().
  EXPECT_EQ(engine->queue({.op = Op::read, .length_bytes = 4096, .buffer = buf.data(), .user_data = 7}),
            QueueStatus::completed);
  EXPECT_EQ(engine->submit(), 1u);
  IoCompletion done[4];
  ASSERT_EQ(engine->reap(1, done, 0ns), 1u);
  EXPECT_EQ(done[0].user_data, 7u);
  EXPECT_EQ(done[0].result, 4096);
}

TEST(UringEngine, SubmitsABatchOf32InOneCallAndReapsThemAll) {
  SKIP_UNLESS_USABLE("io_uring");
  test::TempDir dir;
  TargetFile file = TargetFile::open({.dir = dir.path(), .test_name = "b32", .size_bytes = 32 * kBlock,
                                      .direct = true, .fill = true});
  auto engine = make_engine("io_uring", {.queue_depth = 32});
  EXPECT_TRUE(engine->capabilities().has(Capability::batched));
  const int fds[] = {file.fd()};
  engine->register_files(fds);
  AlignedBuffer buf(32 * kBlock);
  for (std::uint32_t i = 0; i < 32; ++i)
    ASSERT_EQ(engine->queue({.op = Op::read, .offset_bytes = (31 - i) * kBlock, .length_bytes = kBlock,
                             .buffer = buf.data() + i * kBlock, .user_data = 1000 + i}),
              QueueStatus::queued);
  EXPECT_EQ(engine->queue({.op = Op::read, .length_bytes = kBlock, .buffer = buf.data()}), QueueStatus::busy);
  EXPECT_EQ(engine->in_flight(), 32u);
  EXPECT_EQ(engine->submit(), 32u);  // one io_uring_submit for the whole batch
  std::vector<IoCompletion> done(32);
  std::size_t got = 0;
  while (got < 32) got += engine->reap(32 - got, std::span(done).subspan(got), 1s);
  std::vector<bool> seen(32, false);
  for (const IoCompletion& c : done) {
    ASSERT_GE(c.user_data, 1000u);
    ASSERT_LT(c.user_data, 1032u);
    seen[c.user_data - 1000] = true;
    EXPECT_EQ(c.result, kBlock);
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), 32);
}

}  // namespace
}  // namespace drivelab::io
