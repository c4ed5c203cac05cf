#include "precondition_pump.hpp"

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/rng.hpp"

namespace drivelab::emulators::detail {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kStampStrideBytes = 4096;

struct Slot {
  PumpChunk chunk;
  std::int64_t issue_ns = 0;
};

}  // namespace

IoPump::IoPump(std::string_view engine, int fd, std::string file, std::uint32_t depth, std::uint32_t max_xfer_bytes,
               std::uint64_t seed)
    : fd_(fd), file_(std::move(file)), max_xfer_(max_xfer_bytes) {
  io::EngineOptions options;
  options.queue_depth = depth;
  engine_ = io::make_engine(engine, options);
  depth_ = engine_->capabilities().has(io::Capability::async) ? depth : 1;
  const int fds[] = {fd_};
  engine_->register_files(fds);
  buffers_ = AlignedBuffer(static_cast<std::size_t>(max_xfer_) * depth_);
  Rng rng(seed);
  for (std::size_t i = 0; i + sizeof(std::uint64_t) <= buffers_.size(); i += sizeof(std::uint64_t)) {
    const std::uint64_t word = rng();
    std::memcpy(buffers_.data() + i, &word, sizeof word);
  }
}

void IoPump::take(PumpSample& out) {
  out.latency.reset();
  out.ios = out.bytes = 0;
  std::swap(out, sample_);
}

bool IoPump::run(io::Op op, const std::function<std::optional<PumpChunk>()>& next,
                 const std::function<bool()>& keep_going) {
  const bool async = engine_->capabilities().has(io::Capability::async);
  std::vector<Slot> slots(depth_);
  std::vector<std::uint32_t> free_slots;
  for (std::uint32_t i = depth_; i-- > 0;) free_slots.push_back(i);
  std::vector<std::uint32_t> staged;
  std::vector<io::IoCompletion> done(depth_);
  bool exhausted = false, stopping = false;
  std::string error;

  for (;;) {
    while (!exhausted && !stopping && error.empty() && !free_slots.empty()) {
      const std::optional<PumpChunk> chunk = next();
      if (!chunk) {
        exhausted = true;
        break;
      }
      const std::uint32_t s = free_slots.back();
      std::byte* buf = buffers_.data() + static_cast<std::size_t>(s) * max_xfer_;
      if (op == io::Op::write)
        for (std::size_t at = 0; at + sizeof stamp_ <= chunk->length_bytes; at += kStampStrideBytes) {
          ++stamp_;
          std::memcpy(buf + at, &stamp_, sizeof stamp_);
        }
      slots[s] = {*chunk, monotonic_ns()};
      const io::IoRequest req{.op = op,
                              .file_index = 0,
                              .offset_bytes = chunk->offset_bytes,
                              .length_bytes = chunk->length_bytes,
                              .buffer = buf,
                              .user_data = s};
      if (engine_->queue(req) == io::QueueStatus::busy) throw InternalError("pump: engine busy below its depth");
      free_slots.pop_back();
      staged.push_back(s);
      ++issued_;
    }
    if (!staged.empty()) {
      if (async) {
        const std::int64_t now = monotonic_ns();
        for (std::uint32_t s : staged) slots[s].issue_ns = now;
      }
      engine_->submit();
      staged.clear();
    }
    if (engine_->in_flight() == 0) break;
    const std::size_t n = engine_->reap(1, done, 10ms);
    const std::int64_t now = monotonic_ns();
    for (std::size_t i = 0; i < n; ++i) {
      const auto s = static_cast<std::uint32_t>(done[i].user_data);
      free_slots.push_back(s);
      ++completed_;
      const PumpChunk& c = slots[s].chunk;
      if (done[i].result != static_cast<std::int64_t>(c.length_bytes)) {
        if (error.empty())
          error = phase_.failure({.op = op,
                                  .length_bytes = c.length_bytes,
                                  .offset_bytes = c.offset_bytes,
                                  .file = file_,
                                  .result = done[i].result});
        continue;
      }
      sample_.latency.record(now - slots[s].issue_ns);
      ++sample_.ios;
      sample_.bytes += c.length_bytes;
    }
    if (!stopping && !keep_going()) stopping = true;
  }
  if (!error.empty()) throw EnvironmentError(error);
  return exhausted;  // next() is not asked once stopping, so this means every chunk was done
}

}  // namespace drivelab::emulators::detail
