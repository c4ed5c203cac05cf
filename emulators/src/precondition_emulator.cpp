#include "precondition_emulator.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/rng.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/io/storage_failure.hpp"
#include "drivelab/io/target_safety.hpp"
#include "precondition_pump.hpp"

namespace drivelab::emulators::detail {
namespace cat = results::catalogue;
namespace {

constexpr std::int64_t kMessageNs = 1'000'000'000;  // progress line once a second

std::string eta_text(double remaining_s) {
  if (!std::isfinite(remaining_s) || remaining_s < 0) return "?";
  return format_duration(std::chrono::nanoseconds(static_cast<std::int64_t>(std::ceil(remaining_s)) * 1'000'000'000));
}

}  // namespace

void PreconditionEmulator::prepare(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  io::TargetFileSpec spec{.dir = ctx.target_dir,
                          .test_name = ctx.settings.name,
                          .size_bytes = 0,
                          .direct = true,
                          .fill = false,
                          .seed = ctx.seed,
                          .region = config_.region};
  // for_test and file_size only apply to a directory: on a device, its region itself is the target
  // (so one protocol serves both).
  if (!io::is_block_device(ctx.target_dir)) {
    spec.test_name = config_.for_test.empty() ? ctx.settings.name : config_.for_test;
    spec.size_bytes = config_.file_size_bytes;
  }
  file_ = io::TargetFile::open(spec);
  const std::uint32_t align = file_->direct_alignment_bytes();
  for (const auto& [key, bytes] :
       {std::pair{"xfersize", config_.xfersize_bytes}, std::pair{"random_xfersize", config_.random_xfersize_bytes}})
    if (bytes % align != 0)
      throw ConfigError(fmt::format("precondition.{}: {} is not a multiple of the O_DIRECT alignment of {} ({} bytes)",
                                    key, format_size(bytes), file_->path().string(), align));
  if (file_->region_length() < config_.random_xfersize_bytes || file_->region_length() < align)
    throw ConfigError(fmt::format("precondition: the region of {} ({}) is smaller than one transfer",
                                  file_->path().string(), format_size(file_->region_length())));
  rec.message(fmt::format("preconditioning {}: {} from offset {} (fill{})", file_->path().string(),
                          format_size(file_->region_length()), format_size(file_->region_offset()),
                          config_.random_passes > 0 ? fmt::format(" + {} random pass{}", config_.random_passes,
                                                                  config_.random_passes == 1 ? "" : "es")
                                                    : std::string()));
}

bool PreconditionEmulator::run_pass(runner::TestContext& ctx, std::size_t index, bool random,
                                    std::int64_t run_start_ns) {
  auto& rec = *ctx.recorder;
  const std::uint64_t xfer = random ? config_.random_xfersize_bytes : config_.xfersize_bytes;
  const std::uint32_t depth = random ? config_.random_iodepth : config_.iodepth;
  const std::uint64_t base = file_->region_offset();
  const std::uint64_t len = file_->region_length();
  const std::uint64_t blocks = len / xfer;
  const std::uint64_t random_bytes = config_.random_pass_size_bytes > 0 ? config_.random_pass_size_bytes : len;
  const std::uint64_t total = random ? align_down(random_bytes, xfer) : len;
  const std::size_t pass_count = 1 + config_.random_passes;
  const std::string label = fmt::format("pass {}/{} {}", index + 1, pass_count, random ? "random" : "fill");

  IoPump pump(config_.engine, file_->fd(), file_->path().string(), depth, static_cast<std::uint32_t>(xfer),
              Rng(ctx.seed).split(index)());
  Rng offsets = Rng(ctx.seed ^ 0x9E3779B97F4A7C15ull).split(index);
  std::uint64_t handed_out = 0;
  const auto next = [&]() -> std::optional<PumpChunk> {
    if (handed_out >= total) return std::nullopt;
    PumpChunk c;
    if (random) {
      c.offset_bytes =
          base + static_cast<std::uint64_t>(offsets.uniform(0, static_cast<std::int64_t>(blocks) - 1)) * xfer;
      c.length_bytes = static_cast<std::uint32_t>(xfer);
    } else {
      c.offset_bytes = base + handed_out;
      c.length_bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(xfer, total - handed_out));
    }
    handed_out += c.length_bytes;
    return c;
  };

  PassResult result{.kind = random ? "random" : "fill"};
  const std::int64_t t0 = monotonic_ns();
  pump.phase_clock().start(random ? "random pass" : "fill", t0);
  const std::int64_t interval_ns = ctx.settings.interval.count();
  std::int64_t next_message = t0 + kMessageNs, next_interval = t0 + interval_ns, interval_start = t0;
  PumpSample sample, in_interval;
  LatencyHistogram pass_latency;
  const auto absorb = [&] {
    pump.take(sample);
    result.bytes += sample.bytes;
    result.ios += sample.ios;
    in_interval.bytes += sample.bytes;
    in_interval.ios += sample.ios;
    in_interval.latency.merge(sample.latency);
    pass_latency.merge(sample.latency);
  };
  const auto emit_interval = [&](std::int64_t now) {
    const double d = seconds_between(interval_start, now);
    if (d <= 0) return;
    rec.interval({.t_s = seconds_between(run_start_ns, now),
                  .duration_s = d,
                  .values = {results::interval_value(cat::pass, static_cast<double>(index + 1)),
                             results::interval_value(cat::mb_s, static_cast<double>(in_interval.bytes) / 1e6 / d),
                             results::interval_value(cat::iops, static_cast<double>(in_interval.ios) / d),
                             results::interval_value(cat::latency_avg_us, in_interval.latency.mean() / 1e3),
                             results::interval_value(cat::done_pct, 100.0 * static_cast<double>(result.bytes) /
                                                                        static_cast<double>(total))}});
    interval_bytes_sum_ += in_interval.bytes;
    in_interval.bytes = in_interval.ios = 0;
    in_interval.latency.reset();
    interval_start = now;
  };
  const auto keep_going = [&] {
    const std::int64_t now = monotonic_ns();
    if (now >= std::min(next_message, next_interval)) {
      absorb();
      if (now >= next_message) {
        const double elapsed = seconds_between(t0, now);
        const double rate = elapsed > 0 ? static_cast<double>(result.bytes) / elapsed : 0;
        rec.message(fmt::format("{}: {} of {} ({:.0f}%), {:.0f} MB/s, {:.0f} IOPS, ETA {}", label,
                                format_size(result.bytes), format_size(total),
                                100.0 * static_cast<double>(result.bytes) / static_cast<double>(total), rate / 1e6,
                                elapsed > 0 ? static_cast<double>(result.ios) / elapsed : 0.0,
                                eta_text(rate > 0 ? static_cast<double>(total - result.bytes) / rate : -1)));
        next_message = now + kMessageNs;
      }
      if (now >= next_interval) {
        emit_interval(now);
        next_interval += interval_ns;
      }
    }
    return !ctx.stop_requested();
  };

  try {
    result.complete = pump.run(io::Op::write, next, keep_going);
  } catch (...) {
    issued_ += pump.issued();
    completed_ += pump.completed();
    throw;
  }
  absorb();
  const std::int64_t end = monotonic_ns();
  emit_interval(end);
  result.seconds = seconds_between(t0, end);
  issued_ += pump.issued();
  completed_ += pump.completed();
  if (result.complete && ::fdatasync(file_->fd()) != 0)
    throw EnvironmentError(io::storage_sync_failure(file_->path().native(), label, errno));

  const double mb_s = result.seconds > 0 ? static_cast<double>(result.bytes) / 1e6 / result.seconds : 0.0;
  const std::string group = fmt::format("pass_{}_{}", index + 1, result.kind);
  rec.group_metric(group, cat::bytes, static_cast<double>(result.bytes), "bytes written in this pass");
  rec.group_metric(group, cat::seconds, result.seconds, "time of this pass");
  rec.group_metric(group, cat::mb_s, mb_s, "average write throughput of this pass, MB = 10^6 bytes");
  rec.group_metric(group, cat::iops, result.seconds > 0 ? static_cast<double>(result.ios) / result.seconds : 0.0,
                   "writes per second in this pass");
  rec.group_metric(group, cat::latency_p99_us, static_cast<double>(pass_latency.percentile(99)) / 1e3,
                   "99th percentile write latency in this pass");
  rec.histogram(group + "_latency", pass_latency);
  rec.message(fmt::format("{}: {} in {:.1f} s, {:.0f} MB/s{}", label, format_size(result.bytes), result.seconds, mb_s,
                          result.complete ? "" : " (stopped)"));
  passes_.push_back(std::move(result));
  return passes_.back().complete;
}

void PreconditionEmulator::run(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  const std::int64_t t0 = monotonic_ns();
  bool complete = run_pass(ctx, 0, false, t0);
  // The whole file now holds written data: the test it was made for reuses it as is.
  if (complete && !file_->is_device()) file_->mark_filled();
  for (std::uint32_t p = 1; complete && p <= config_.random_passes; ++p) complete = run_pass(ctx, p, true, t0);
  const double total_s = seconds_between(t0, monotonic_ns());
  rec.set_phase_times(0, total_s);

  std::uint64_t bytes = 0, random_bytes = 0;
  double random_s = 0;
  for (const PassResult& r : passes_) {
    bytes += r.bytes;
    if (r.kind == "random") {
      random_bytes += r.bytes;
      random_s += r.seconds;
    }
  }
  const PassResult& fill = passes_.front();
  rec.metric(cat::fill_mb_s, fill.seconds > 0 ? static_cast<double>(fill.bytes) / 1e6 / fill.seconds : 0.0,
             "sequential fill throughput, MB = 10^6 bytes");
  if (config_.random_passes > 0)
    rec.metric(cat::random_mb_s, random_s > 0 ? static_cast<double>(random_bytes) / 1e6 / random_s : 0.0,
               "random-pass write throughput over all random passes, MB = 10^6 bytes");
  rec.metric(cat::bytes_written, static_cast<double>(bytes), "bytes written by every pass");
  rec.metric(cat::seconds, total_s, "time of every pass");
  rec.metric(cat::region_bytes, static_cast<double>(file_->region_length()), "bytes preconditioned (the region)");
  results::Json passes = results::Json::array();
  for (const PassResult& r : passes_)
    passes.push_back({{"kind", r.kind}, {"bytes", r.bytes}, {"seconds", r.seconds}, {"complete", r.complete}});
  rec.detail("passes", std::move(passes));
  rec.detail("target", results::Json{{"path", file_->path().string()},
                                     {"device", file_->is_device()},
                                     {"region_offset_bytes", file_->region_offset()},
                                     {"region_length_bytes", file_->region_length()},
                                     {"direct_alignment_bytes", file_->direct_alignment_bytes()}});
  rec.detail("engine", config_.engine);
}

void PreconditionEmulator::verify(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  rec.check("every issued write completed", issued_ == completed_,
            fmt::format("{} issued, {} completed", issued_, completed_));
  std::uint64_t bytes = 0;
  for (const PassResult& r : passes_) bytes += r.bytes;
  rec.check("interval bytes add up to the passes' bytes", interval_bytes_sum_ == bytes,
            fmt::format("intervals {}, passes {}", interval_bytes_sum_, bytes));
  if (!passes_.empty() && passes_.front().complete)
    rec.check("the fill wrote the whole region once", passes_.front().bytes == file_->region_length(),
              fmt::format("{} written, region {}", passes_.front().bytes, file_->region_length()));
}

}  // namespace drivelab::emulators::detail
