#pragma once
// The `video` emulator: VideoConfig -> prepare (file or device region) -> warm-up (unrecorded
// write/read cycles) -> run (alternating whole-file write and read passes of frame-sized I/Os)
// -> verify -> cleanup. See emulators/video.hpp and docs/video.md.
#include <memory>
#include <optional>

#include "drivelab/core/histogram.hpp"
#include "drivelab/emulators/video.hpp"
#include "drivelab/io/target_file.hpp"
#include "drivelab/runner/emulator.hpp"
#include "precondition_pump.hpp"

namespace drivelab::emulators::detail {

class VideoEmulator final : public runner::Emulator {
 public:
  explicit VideoEmulator(VideoConfig config) : config_(std::move(config)) {}
  ~VideoEmulator() override;

  results::Json effective_config() const override { return to_json(config_); }
  void prepare(runner::TestContext& ctx) override;
  void warmup(runner::TestContext& ctx) override;
  void run(runner::TestContext& ctx) override;
  void verify(runner::TestContext& ctx) override;
  void cleanup(runner::TestContext& ctx) noexcept override;
  runner::DeviceAccess device_access() const override { return runner::DeviceAccess::read_write; }
  bool owns_data_file() const override { return true; }

 private:
  /// Totals of one direction over the measured phase.
  struct Direction {
    std::uint64_t bytes = 0;
    std::uint64_t frames = 0;
    double seconds = 0;
    std::uint32_t passes = 0;  ///< complete passes
    LatencyHistogram latency;
  };
  /// Alternates whole passes until `deadline_ns` has passed after a read pass (and, when
  /// `record`, one of each is done); false if stopped.
  bool cycle(runner::TestContext& ctx, std::int64_t deadline_ns, bool record);
  /// One pass over the file in frames; false if stopped. Emits intervals when `record`.
  bool pass(runner::TestContext& ctx, io::Op op, bool record, std::int64_t& next_interval_ns);
  void emit_interval(runner::TestContext& ctx, std::int64_t now_ns);
  void record_table(runner::TestContext& ctx, double write_bps, double read_bps) const;

  VideoConfig config_;
  std::optional<io::TargetFile> file_;
  std::unique_ptr<IoPump> pump_;      // engine and frame buffers, reused by every pass
  std::uint64_t frame_bytes_ = 0;     // the catalog frame
  std::uint32_t transfer_bytes_ = 0;  // frame_bytes_ rounded up to the O_DIRECT alignment
  std::uint64_t frames_per_pass_ = 0;
  bool written_ = false;  // a complete write pass exists: reads are of written data
  io::Op next_op_ = io::Op::write;
  Direction write_, read_;
  double warmup_s_ = 0;
  std::int64_t run_start_ns_ = 0;
  std::int64_t interval_start_ns_ = 0;
  std::uint64_t interval_write_bytes_ = 0, interval_read_bytes_ = 0;
  std::uint64_t interval_bytes_sum_ = 0;
};

}  // namespace drivelab::emulators::detail
