#include "drivelab/io/pump.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/rng.hpp"

namespace drivelab::io {

Pump::Pump(std::string_view engine, const EngineOptions& engine_options, const PumpOptions& options,
           std::span<const int> fds, std::vector<std::string> files)
    : Pump(make_engine(engine, engine_options), engine_options.queue_depth, options, fds, std::move(files)) {}

Pump::Pump(std::unique_ptr<IoEngine> engine, std::uint32_t queue_depth, const PumpOptions& options,
           std::span<const int> fds, std::vector<std::string> files)
    : opt_(options), files_(std::move(files)) {
  if (!engine) throw InternalError("pump: no engine");
  if (options.slot_bytes == 0) throw ConfigError("pump: slot_bytes must be at least 1");
  engine_ = std::move(engine);
  async_ = engine_->capabilities().has(Capability::async);
  depth_ = async_ ? std::max<std::uint32_t>(queue_depth, 1) : 1;  // psync: one I/O at a time (engine.hpp)
  const auto in_depth = [&](std::uint32_t v, std::uint32_t lo, const char* key) {
    if (v < lo || v > depth_)
      throw ConfigError(fmt::format("pump: {} must be between {} and the depth {}, found {}", key, lo, depth_, v));
  };
  opt_.batch_submit = std::min(options.batch_submit, depth_);
  opt_.complete_max = std::min(options.complete_max, depth_);
  opt_.complete_min = std::min(options.complete_min, opt_.complete_max);
  in_depth(opt_.batch_submit, 1, "batch_submit");
  in_depth(opt_.complete_max, 1, "complete_max");
  engine_->register_files(fds);

  buffers_ = AlignedBuffer(std::size_t{opt_.slot_bytes} * depth_);
  Rng rng(options.fill_seed);  // incompressible data: a compressing drive gains nothing
  for (std::size_t i = 0; i + sizeof(std::uint64_t) <= buffers_.size(); i += sizeof(std::uint64_t)) {
    const std::uint64_t word = rng();
    std::memcpy(buffers_.data() + i, &word, sizeof word);
  }
  if (options.register_buffers) {
    std::vector<iovec> iov(depth_);  // one per slot, as fio registers one per io_u (fixedbufs)
    for (std::uint32_t s = 0; s < depth_; ++s) iov[s] = {buffer(s), opt_.slot_bytes};
    engine_->register_buffers(iov);
  }
  requests_ = std::make_unique<IoRequest[]>(depth_);
  free_ = std::make_unique<std::uint32_t[]>(depth_);
  for (std::uint32_t s = 0; s < depth_; ++s) free_[s] = depth_ - 1 - s;  // slot 0 first
  free_n_ = depth_;
  done_ = std::make_unique<IoCompletion[]>(opt_.complete_max);
}

Pump::~Pump() {
  // run() always drains; an exception out of it may leave I/Os in the engine that use the buffers.
  if (!engine_) return;
  try {
    if (staged_ > 0) engine_->submit();
    while (engine_->in_flight() > 0)
      if (engine_->reap(1, {done_.get(), opt_.complete_max}, std::chrono::seconds(5)) == 0) break;
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor; the run already failed
  }
}

void Pump::throw_busy() const {
  throw InternalError(fmt::format("engine {} refused a request with {} of {} slots in flight (queue depth {})",
                                  engine_->name(), in_flight_, depth_, depth_));
}

std::string_view Pump::file_name(std::uint32_t index) const noexcept {
  if (index < files_.size()) return files_[index];
  return "target";
}

}  // namespace drivelab::io
