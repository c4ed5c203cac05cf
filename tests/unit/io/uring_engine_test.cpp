// io_uring specifics on real files: one submit for a batch, registered files and buffers are
// really used when asked (behaviour that only the registered path has), SQPOLL, polling reaps.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <thread>
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

bool uses(const IoEngine& engine, const char* feature) {
  const std::vector<std::string> f = engine.features_in_use();
  return std::find(f.begin(), f.end(), feature) != f.end();
}

TEST(UringEngine, SubmitsABatchOf32InOneCallAndReapsThemAll) {
  SKIP_UNLESS_USABLE("io_uring");
  drivelab::test_support::TempDir dir;
  TargetFile file = TargetFile::open(
      {.dir = dir.path(), .test_name = "b32", .size_bytes = 32 * kBlock, .direct = true, .fill = true});
  auto engine = make_engine("io_uring", {.queue_depth = 32});
  EXPECT_TRUE(engine->capabilities().has(Capability::batched));
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
  EXPECT_EQ(engine->submit(), 32u);  // one io_uring_enter for the whole batch
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

// A registered file is held by the ring: I/O by its index keeps working after the descriptor
// is closed. Without registration the same request fails with EBADF. So the flag is used.
TEST(UringEngine, RegisteredFilesAreUsedWhenAsked) {
  SKIP_UNLESS_USABLE("io_uring");
  drivelab::test_support::TempDir dir;
  TargetFile file =
      TargetFile::open({.dir = dir.path(), .test_name = "rf", .size_bytes = 4 * kBlock, .direct = false, .fill = true});
  AlignedBuffer buf(kBlock);
  for (const bool registered : {true, false}) {
    SCOPED_TRACE(registered ? "registered" : "not registered");
    auto engine = make_engine("io_uring", {.queue_depth = 4, .register_files = registered});
    UniqueFd dup_fd(::dup(file.fd()));
    ASSERT_TRUE(dup_fd);
    const int fds[] = {dup_fd.get()};
    engine->register_files(fds);
    EXPECT_EQ(uses(*engine, "registered_files"), registered);
    dup_fd.reset();  // close it: only a registered file survives this
    const std::vector<std::int64_t> r =
        test::run_batch(*engine, {{.op = Op::read, .length_bytes = kBlock, .buffer = buf.data(), .user_data = 0}});
    EXPECT_EQ(r[0], registered ? std::int64_t{kBlock} : -EBADF);
  }
}

// READ_FIXED takes the pages of the registered buffer `buffer_index`; an address outside it is
// -EFAULT. A plain READ of the same address works. So registered buffers are used when asked.
TEST(UringEngine, RegisteredBuffersAreUsedWhenAsked) {
  SKIP_UNLESS_USABLE("io_uring");
  drivelab::test_support::TempDir dir;
  TargetFile file =
      TargetFile::open({.dir = dir.path(), .test_name = "rb", .size_bytes = 4 * kBlock, .direct = true, .fill = true});
  AlignedBuffer registered_buf(2 * kBlock), other(kBlock);
  for (const bool fixed : {true, false}) {
    SCOPED_TRACE(fixed ? "fixedbufs" : "no fixedbufs");
    auto engine = make_engine("io_uring", {.queue_depth = 4, .register_buffers = fixed});
    const int fds[] = {file.fd()};
    engine->register_files(fds);
    const iovec iov[] = {{registered_buf.data(), registered_buf.size()}};
    engine->register_buffers(iov);
    EXPECT_EQ(uses(*engine, "registered_buffers"), fixed);
    const std::vector<std::int64_t> r = test::run_batch(
        *engine, {{.op = Op::read,
                   .length_bytes = kBlock,
                   .buffer = registered_buf.data() + kBlock,
                   .buffer_index = 0,
                   .user_data = 0},
                  {.op = Op::read, .length_bytes = kBlock, .buffer = other.data(), .buffer_index = 0, .user_data = 1}});
    EXPECT_EQ(r[0], kBlock) << "inside the registered buffer";
    EXPECT_EQ(r[1], fixed ? -EFAULT : std::int64_t{kBlock}) << "outside the registered buffer";
  }
}

TEST(UringEngine, SqpollRegistersTheFilesAndCompletesIo) {
  SKIP_UNLESS_USABLE("io_uring");
  drivelab::test_support::TempDir dir;
  TargetFile file =
      TargetFile::open({.dir = dir.path(), .test_name = "sq", .size_bytes = 16 * kBlock, .direct = true, .fill = true});
  auto engine = make_engine("io_uring", {.queue_depth = 16, .sqthread_poll = true, .sq_thread_idle_ms = 10});
  EXPECT_TRUE(uses(*engine, "sqthread_poll"));
  EXPECT_FALSE(uses(*engine, "defer_taskrun")) << "SQPOLL and DEFER_TASKRUN exclude each other";
  const int fds[] = {file.fd()};
  engine->register_files(fds);
  EXPECT_TRUE(uses(*engine, "registered_files")) << "fio: sqthread_poll implies registerfiles";
  AlignedBuffer buf(16 * kBlock);
  std::vector<IoRequest> reads;
  for (std::uint32_t i = 0; i < 16; ++i)
    reads.push_back({.op = Op::read,
                     .offset_bytes = i * kBlock,
                     .length_bytes = kBlock,
                     .buffer = buf.data() + i * kBlock,
                     .user_data = i});
  for (std::int64_t r : test::run_batch(*engine, reads)) EXPECT_EQ(r, kBlock);
}

// Jobs create and register their engine on one thread and run it on another. With SINGLE_ISSUER
// the ring binds to the thread of its first submit, so this must work (and keep working there).
TEST(UringEngine, CreatedOnOneThreadRunOnAnother) {
  SKIP_UNLESS_USABLE("io_uring");
  drivelab::test_support::TempDir dir;
  TargetFile file =
      TargetFile::open({.dir = dir.path(), .test_name = "thr", .size_bytes = 8 * kBlock, .direct = true, .fill = true});
  auto engine = make_engine("io_uring", {.queue_depth = 8, .register_files = true, .register_buffers = true});
  const int fds[] = {file.fd()};
  engine->register_files(fds);
  AlignedBuffer buf(8 * kBlock);
  const iovec iov[] = {{buf.data(), buf.size()}};
  engine->register_buffers(iov);
  std::vector<std::int64_t> first, second;
  std::thread worker([&] {
    for (auto* results : {&first, &second}) {
      std::vector<IoRequest> reads;
      for (std::uint32_t i = 0; i < 8; ++i)
        reads.push_back({.op = Op::read,
                         .offset_bytes = i * kBlock,
                         .length_bytes = kBlock,
                         .buffer = buf.data() + i * kBlock,
                         .buffer_index = 0,
                         .user_data = i});
      *results = test::run_batch(*engine, reads);
    }
  });
  worker.join();
  for (const auto* results : {&first, &second})
    for (std::int64_t r : *results) EXPECT_EQ(r, kBlock);
}

// min_events = 0 never sleeps; repeated polls collect everything (with DEFER_TASKRUN the poll
// must enter the kernel to have completions posted at all).
TEST(UringEngine, PollingReapsCollectEverything) {
  SKIP_UNLESS_USABLE("io_uring");
  drivelab::test_support::TempDir dir;
  TargetFile file = TargetFile::open(
      {.dir = dir.path(), .test_name = "poll", .size_bytes = 8 * kBlock, .direct = true, .fill = true});
  auto engine = make_engine("io_uring", {.queue_depth = 8});
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
  std::size_t got = 0;
  IoCompletion done[8];
  for (long polls = 0; got < 8 && polls < 10'000'000; ++polls) got += engine->reap(0, std::span(done).subspan(got), 1h);
  EXPECT_EQ(got, 8u);
  EXPECT_EQ(engine->in_flight(), 0u);
}

}  // namespace
}  // namespace drivelab::io
