#include "video_emulator.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/io/target_safety.hpp"

namespace drivelab::emulators::detail {
namespace cat = results::catalogue;
namespace {

double per_s(double amount, double s) { return s > 0 ? amount / s : 0.0; }

}  // namespace

VideoEmulator::~VideoEmulator() = default;

void VideoEmulator::prepare(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  const VideoFormat& format = *find_video_format(config_.format);
  const VideoCodec& codec = *find_video_codec(config_.codec);
  frame_bytes_ = video_frame_bytes(format, codec);
  // On a device without a region the "file" is its first file_size bytes; with one, the region.
  const bool sized = !(io::is_block_device(ctx.target_dir) && config_.region);
  file_ = io::TargetFile::open({.dir = ctx.target_dir,
                                .test_name = ctx.settings.name,
                                .size_bytes = sized ? config_.file_size_bytes : 0,
                                .direct = config_.direct,
                                .fill = false,
                                .seed = ctx.seed,
                                .region = config_.region});
  const std::uint64_t align = std::max<std::uint64_t>(file_->direct_alignment_bytes(), 1);
  transfer_bytes_ = static_cast<std::uint32_t>(align_up(frame_bytes_, align));
  frames_per_pass_ = file_->region_length() / transfer_bytes_;
  if (frames_per_pass_ < 2)
    throw ConfigError(fmt::format("video: {} of {} holds fewer than two {} {} frames ({} each)",
                                  format_size(file_->region_length()), file_->path().string(), format.id, codec.id,
                                  format_size(transfer_bytes_)));
  pump_ = std::make_unique<IoPump>(config_.engine, file_->fd(), file_->path().string(), config_.iodepth,
                                   transfer_bytes_, ctx.seed);
  rec.message(fmt::format("video: {} {} frames of {} ({} bytes each, {} per I/O), {} per pass over {}", format.name,
                          codec.name, format_size(frame_bytes_), frame_bytes_, format_size(transfer_bytes_),
                          frames_per_pass_, file_->path().string()));
}

bool VideoEmulator::pass(runner::TestContext& ctx, io::Op op, bool record, std::int64_t& next_interval_ns) {
  auto& rec = *ctx.recorder;
  const std::uint64_t base = file_->region_offset();
  std::uint64_t frame = 0;
  const auto next = [&]() -> std::optional<PumpChunk> {
    if (frame >= frames_per_pass_) return std::nullopt;
    return PumpChunk{base + frame++ * transfer_bytes_, transfer_bytes_};
  };
  Direction& dir = op == io::Op::write ? write_ : read_;
  PumpSample sample;
  const auto absorb = [&] {
    pump_->take(sample);
    if (!record) return;
    dir.bytes += sample.bytes;
    dir.frames += sample.ios;
    dir.latency.merge(sample.latency);
    (op == io::Op::write ? interval_write_bytes_ : interval_read_bytes_) += sample.bytes;
  };
  const std::int64_t interval_ns = ctx.settings.interval.count();
  const auto keep_going = [&] {
    if (record && monotonic_ns() >= next_interval_ns) {
      absorb();
      emit_interval(ctx, monotonic_ns());
      next_interval_ns += interval_ns;
    }
    return !ctx.stop_requested();
  };
  const std::int64_t t0 = monotonic_ns();
  const bool complete = pump_->run(op, next, keep_going);
  absorb();
  if (record) {
    dir.seconds += seconds_between(t0, monotonic_ns());
    dir.passes += complete ? 1 : 0;
  }
  if (complete && op == io::Op::write) written_ = true;
  (void)rec;
  return complete;
}

void VideoEmulator::emit_interval(runner::TestContext& ctx, std::int64_t now) {
  const double d = seconds_between(interval_start_ns_, now);
  if (d <= 0) return;
  const double w = static_cast<double>(interval_write_bytes_), r = static_cast<double>(interval_read_bytes_);
  ctx.recorder->interval(
      {.t_s = seconds_between(run_start_ns_, now),
       .duration_s = d,
       .values = {results::interval_value(cat::write_mb_s, w / 1e6 / d),
                  results::interval_value(cat::read_mb_s, r / 1e6 / d),
                  results::interval_value(cat::write_fps, w / static_cast<double>(frame_bytes_) / d),
                  results::interval_value(cat::read_fps, r / static_cast<double>(frame_bytes_) / d)}});
  interval_bytes_sum_ += interval_write_bytes_ + interval_read_bytes_;
  interval_write_bytes_ = interval_read_bytes_ = 0;
  interval_start_ns_ = now;
}

bool VideoEmulator::cycle(runner::TestContext& ctx, std::int64_t deadline_ns, bool record) {
  std::int64_t next_interval = monotonic_ns() + ctx.settings.interval.count();
  for (;;) {
    // Never read before a whole write pass: unwritten blocks read as zeros without device I/O.
    const io::Op op = written_ && next_op_ == io::Op::read ? io::Op::read : io::Op::write;
    if (!pass(ctx, op, record, next_interval)) return false;
    next_op_ = op == io::Op::write ? io::Op::read : io::Op::write;
    const bool both = !record || (write_.passes > 0 && read_.passes > 0);
    if (monotonic_ns() >= deadline_ns && both && next_op_ == io::Op::write) return true;
  }
}

void VideoEmulator::warmup(runner::TestContext& ctx) {
  if (ctx.settings.warmup.count() <= 0 || !pump_) return;
  const std::int64_t t0 = monotonic_ns();
  pump_->phase_clock().start("warm-up", t0);
  cycle(ctx, t0 + ctx.settings.warmup.count(), false);
  warmup_s_ = seconds_between(t0, monotonic_ns());
}

void VideoEmulator::run(runner::TestContext& ctx) {
  if (!pump_) return;
  auto& rec = *ctx.recorder;
  run_start_ns_ = interval_start_ns_ = monotonic_ns();
  pump_->phase_clock().start("measured phase", run_start_ns_);
  cycle(ctx, run_start_ns_ + ctx.settings.duration.count(), true);
  const std::int64_t end = monotonic_ns();
  emit_interval(ctx, end);
  rec.set_phase_times(warmup_s_, seconds_between(run_start_ns_, end));

  const double write_bps = per_s(static_cast<double>(write_.bytes), write_.seconds);
  const double read_bps = per_s(static_cast<double>(read_.bytes), read_.seconds);
  const auto ms = [](std::int64_t ns) { return static_cast<double>(ns) / 1e6; };
  rec.metric(cat::write_mb_s, write_bps / 1e6, "frame writes, bytes per second of write-pass time, MB = 10^6 bytes");
  rec.metric(cat::read_mb_s, read_bps / 1e6, "frame reads, bytes per second of read-pass time, MB = 10^6 bytes");
  rec.metric(cat::write_fps, write_bps / static_cast<double>(frame_bytes_),
             "frames of the tested format and codec written per second of write-pass time");
  rec.metric(cat::read_fps, read_bps / static_cast<double>(frame_bytes_),
             "frames of the tested format and codec read per second of read-pass time");
  rec.metric(cat::read_frame_latency_p99_ms, ms(read_.latency.percentile(99)),
             "99th percentile time to read one frame");
  rec.metric(cat::write_frame_latency_p99_ms, ms(write_.latency.percentile(99)),
             "99th percentile time to write one frame");
  rec.metric(cat::write_passes, write_.passes, "complete write passes over the file");
  rec.metric(cat::read_passes, read_.passes, "complete read passes over the file");
  rec.histogram("write_frame_latency", write_.latency);
  rec.histogram("read_frame_latency", read_.latency);
  rec.detail("frame", results::Json{{"format", config_.format},
                                    {"codec", config_.codec},
                                    {"frame_bytes", frame_bytes_},
                                    {"transfer_bytes", transfer_bytes_},
                                    {"frames_per_pass", frames_per_pass_},
                                    {"iodepth", pump_->depth()}});
  // The frames the measured phase moved: the device's demand per frame is per these.
  rec.detail("frames", results::Json{{"written", write_.bytes / frame_bytes_}, {"read", read_.bytes / frame_bytes_}});
  rec.detail("file", results::Json{{"path", file_->path().string()},
                                   {"device", file_->is_device()},
                                   {"region_offset_bytes", file_->region_offset()},
                                   {"region_length_bytes", file_->region_length()},
                                   {"direct", file_->direct()}});
  rec.detail("engine", std::string(pump_->engine().name()));
  record_table(ctx, write_bps, read_bps);
}

void VideoEmulator::record_table(runner::TestContext& ctx, double write_bps, double read_bps) const {
  results::Json table = results::Json::array();
  for (const VideoFormat& f : video_formats())
    for (const VideoCodec& c : video_codecs()) {
      const auto bytes = static_cast<double>(video_frame_bytes(f, c));
      const double wfps = write_bps / bytes, rfps = read_bps / bytes;
      results::Json sw = results::Json::array(), sr = results::Json::array();
      double wmax = 0, rmax = 0;
      for (double rate : video_frame_rates()) {
        if (wfps >= rate) {
          sw.push_back(rate);
          wmax = rate;
        }
        if (rfps >= rate) {
          sr.push_back(rate);
          rmax = rate;
        }
      }
      table.push_back({{"format", f.id},
                       {"codec", c.id},
                       {"frame_bytes", video_frame_bytes(f, c)},
                       {"write_fps", wfps},
                       {"read_fps", rfps},
                       {"write_sustains_fps", sw},
                       {"read_sustains_fps", sr}});
      ctx.recorder->message(fmt::format("{:<13} {:<20} {:>9}/frame: write {:7.1f} fps ({}), read {:7.1f} fps ({})",
                                        f.name, c.name, format_size(video_frame_bytes(f, c)), wfps,
                                        wmax > 0 ? fmt::format("up to {:g}", wmax) : "none", rfps,
                                        rmax > 0 ? fmt::format("up to {:g}", rmax) : "none"));
    }
  ctx.recorder->detail("formats", std::move(table));
  ctx.recorder->detail("frame_rates_fps",
                       results::Json(std::vector<double>(video_frame_rates().begin(), video_frame_rates().end())));
}

void VideoEmulator::verify(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  const std::uint64_t issued = pump_ ? pump_->issued() : 0, completed = pump_ ? pump_->completed() : 0;
  rec.check("every frame I/O completed", issued == completed,
            fmt::format("{} issued, {} completed (warm-up included)", issued, completed));
  rec.check("interval bytes add up to the passes' bytes", interval_bytes_sum_ == write_.bytes + read_.bytes,
            fmt::format("intervals {}, passes {}", interval_bytes_sum_, write_.bytes + read_.bytes));
  if (!ctx.stop_requested())
    rec.check("at least one whole write pass and one whole read pass", write_.passes > 0 && read_.passes > 0,
              fmt::format("{} write, {} read passes", write_.passes, read_.passes));
}

void VideoEmulator::cleanup(runner::TestContext&) noexcept {
  pump_.reset();
  io::release_test_file(file_, config_.keep_file);
}

}  // namespace drivelab::emulators::detail
