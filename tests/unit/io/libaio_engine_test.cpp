// The libaio engine on real files: batching (one io_submit for a whole batch, busy at the queue
// depth), O_DIRECT alignment errors delivered as completions, requests io_submit refuses, and
// polling reaps. (Read-back of written data is in engine_test.cpp with every engine.)
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "drivelab/core/fd.hpp"
#include "drivelab/io/engine.hpp"
#include "drivelab/io/target_file.hpp"
#include "engine_test_support.hpp"
#include "temp_dir.hpp"

namespace drivelab::io {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kBlock = 4096;

TEST(LibaioEngine, DeclaresAnAsynchronousBatchedEngine) {
  SKIP_UNLESS_USABLE("libaio");
  auto engine = make_engine("libaio", {.queue_depth = 8});
  EXPECT_EQ(engine->name(), "libaio");
  EXPECT_TRUE(engine->capabilities().has(Capability::async));
  EXPECT_TRUE(engine->capabilities().has(Capability::batched));
  EXPECT_TRUE(engine->capabilities().has(Capability::supports_direct));
  EXPECT_FALSE(engine->capabilities().has(Capability::registered_buffers));
  const EngineAvailability a = probe_engine("libaio");
  EXPECT_NE(a.note.find("direct"), std::string::npos) << "the O_DIRECT caveat is part of the probe";
}

TEST(LibaioEngine, StagesUpToItsDepthAndSubmitsTheWholeBatchAtOnce) {
  SKIP_UNLESS_USABLE("libaio");
  drivelab::test_support::TempDir dir;
  TargetFile file =
      TargetFile::open({.dir = dir.path(), .test_name = "b", .size_bytes = 32 * kBlock, .direct = true, .fill = true});
  auto engine = make_engine("libaio", {.queue_depth = 32});
  const int fds[] = {file.fd()};
  engine->register_files(fds);
  AlignedBuffer buf(32 * kBlock);
  for (std::uint32_t i = 0; i < 32; ++i)
    ASSERT_EQ(engine->queue({.op = Op::read,
                             .offset_bytes = (31 - i) * kBlock,
                             .length_bytes = kBlock,
                             .buffer = buf.data() + i * kBlock,
                             .user_data = 1000 + i}),
              QueueStatus::queued);
  EXPECT_EQ(engine->queue({.op = Op::read, .length_bytes = kBlock, .buffer = buf.data()}), QueueStatus::busy);
  EXPECT_EQ(engine->in_flight(), 32u);
  IoCompletion early[32];
  EXPECT_EQ(engine->reap(1, early, 0ns), 0u) << "nothing was handed to the kernel before submit()";
  EXPECT_EQ(engine->submit(), 32u);  // one io_submit for the whole batch
  EXPECT_EQ(engine->submit(), 0u);   // nothing left staged
  std::vector<IoCompletion> done(32);
  std::size_t got = 0;
  for (int tries = 0; got < 32 && tries < 100; ++tries) got += engine->reap(32 - got, std::span(done).subspan(got), 1s);
  ASSERT_EQ(got, 32u);
  std::vector<bool> seen(32, false);
  for (const IoCompletion& c : done) {
    ASSERT_GE(c.user_data, 1000u);
    ASSERT_LT(c.user_data, 1032u);
    seen[c.user_data - 1000] = true;
    EXPECT_EQ(c.result, kBlock);
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), 32);
  EXPECT_EQ(engine->in_flight(), 0u);
}

TEST(LibaioEngine, ReapNeverReturnsMoreThanAskedAndPollingDoesNotWait) {
  SKIP_UNLESS_USABLE("libaio");
  drivelab::test_support::TempDir dir;
  TargetFile file =
      TargetFile::open({.dir = dir.path(), .test_name = "m", .size_bytes = 8 * kBlock, .direct = true, .fill = true});
  auto engine = make_engine("libaio", {.queue_depth = 8});
  const int fds[] = {file.fd()};
  engine->register_files(fds);
  AlignedBuffer buf(8 * kBlock);
  for (std::uint32_t i = 0; i < 8; ++i)
    ASSERT_EQ(engine->queue({.op = Op::read,
                             .offset_bytes = i * kBlock,
                             .length_bytes = kBlock,
                             .buffer = buf.data() + i * kBlock,
                             .user_data = i}),
              QueueStatus::queued);
  ASSERT_EQ(engine->submit(), 8u);
  // out.size() is the maximum (fio's iodepth_batch_complete_max): one at a time here.
  std::size_t total = 0;
  for (int tries = 0; total < 8 && tries < 1000; ++tries) {
    IoCompletion one[1];
    const std::size_t n = engine->reap(1, one, 1s);
    ASSERT_LE(n, 1u);
    total += n;
  }
  EXPECT_EQ(total, 8u);
  // Nothing in flight: a poll returns 0 at once.
  IoCompletion none[4];
  EXPECT_EQ(engine->reap(0, none, 10s), 0u);
}

// O_DIRECT needs offsets, lengths and buffers aligned to the logical block size. A misaligned
// request is an I/O error of that request (-EINVAL), reported as its completion — never an
// exception, and the engine stays usable.
TEST(LibaioEngine, MisalignedDirectRequestsCompleteWithEinval) {
  SKIP_UNLESS_USABLE("libaio");
  drivelab::test_support::TempDir dir;
  if (filesystem_type(dir.path()) == "tmpfs") GTEST_SKIP() << "tmpfs accepts any alignment with O_DIRECT";
  TargetFile file =
      TargetFile::open({.dir = dir.path(), .test_name = "al", .size_bytes = 16 * kBlock, .direct = true, .fill = true});
  ASSERT_GE(file.direct_alignment_bytes(), 512u);
  auto engine = make_engine("libaio", {.queue_depth = 4});
  const int fds[] = {file.fd()};
  engine->register_files(fds);
  AlignedBuffer buf(4 * kBlock);
  const std::vector<IoRequest> requests = {
      {.op = Op::read, .offset_bytes = 100, .length_bytes = kBlock, .buffer = buf.data(), .user_data = 0},
      {.op = Op::read, .offset_bytes = kBlock, .length_bytes = 100, .buffer = buf.data() + kBlock, .user_data = 1},
      {.op = Op::write,
       .offset_bytes = 2 * kBlock,
       .length_bytes = kBlock,
       .buffer = buf.data() + 2 * kBlock + 1,
       .user_data = 2},
      {.op = Op::read,
       .offset_bytes = 3 * kBlock,
       .length_bytes = kBlock,
       .buffer = buf.data() + 3 * kBlock,
       .user_data = 3},  // aligned: succeeds beside the failures
  };
  const std::vector<std::int64_t> results = test::run_batch(*engine, requests);
  EXPECT_EQ(results[0], -EINVAL) << "offset not a multiple of " << file.direct_alignment_bytes();
  EXPECT_EQ(results[1], -EINVAL) << "length not a multiple of the alignment";
  EXPECT_EQ(results[2], -EINVAL) << "buffer address not aligned";
  EXPECT_EQ(results[3], kBlock);
}

// io_submit refuses a request with a bad descriptor outright (it returns -EBADF for it instead of
// queueing it); the engine turns that into the request's completion and still submits the rest.
TEST(LibaioEngine, ARequestIoSubmitRefusesBecomesItsCompletion) {
  SKIP_UNLESS_USABLE("libaio");
  drivelab::test_support::TempDir dir;
  TargetFile file = TargetFile::open(
      {.dir = dir.path(), .test_name = "bad", .size_bytes = 4 * kBlock, .direct = false, .fill = true});
  auto engine = make_engine("libaio", {.queue_depth = 4});
  const int fds[] = {file.fd(), -1};
  engine->register_files(fds);
  AlignedBuffer buf(2 * kBlock);
  const std::vector<IoRequest> requests = {
      {.op = Op::read, .file_index = 1, .length_bytes = kBlock, .buffer = buf.data(), .user_data = 0},
      {.op = Op::read, .file_index = 0, .length_bytes = kBlock, .buffer = buf.data() + kBlock, .user_data = 1},
  };
  const std::vector<std::int64_t> results = test::run_batch(*engine, requests);
  EXPECT_EQ(results[0], -EBADF);
  EXPECT_EQ(results[1], kBlock);
}

}  // namespace
}  // namespace drivelab::io
