#include "io_emulator.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/core/clock.hpp"
#include "drivelab/core/cpu_usage.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/phase.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/runner/latency_metrics.hpp"
#include "worker_failure.hpp"

namespace drivelab::emulators::detail {
namespace cat = results::catalogue;

using runner::LatencyFigure;
using runner::LatencyUnit;

namespace {

constexpr const char* kNoMessage = "io: a worker failed without a message";

}  // namespace

IoEmulator::~IoEmulator() { stop_workers(); }

void IoEmulator::prepare(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  const bool no_io = job_.engine == "null";
  int fd = -1;
  std::filesystem::path path;
  if (!no_io) {
    std::int64_t last_ns = 0;
    const std::int64_t start_ns = monotonic_ns();
    const io::TargetFileSpec spec{.dir = ctx.target_dir,
                                  .test_name = ctx.settings.name,
                                  .size_bytes = job_.file_size_bytes,
                                  .direct = job_.direct,
                                  .fill = true,
                                  .seed = ctx.seed};
    const std::string file_name = io::target_file_path(spec.dir, spec.test_name).filename().string();
    rec.message(fmt::format("preparing {} ({})", file_name, format_size(spec.size_bytes)));
    file_ = io::TargetFile::open(spec, [&](std::uint64_t done, std::uint64_t total) {
      const std::int64_t now = monotonic_ns();
      if (now - last_ns >= 1'000'000'000 || done == total) {
        last_ns = now;
        const double s = seconds_between(start_ns, now);
        rec.message(fmt::format("filling {}: {} of {} ({:.0f}%), {:.0f} MB/s", file_name, format_size(done),
                                format_size(total), 100.0 * static_cast<double>(done) / static_cast<double>(total),
                                s > 0 ? static_cast<double>(done) / 1e6 / s : 0.0));
      }
      return !ctx.stop_requested();
    });
    if (file_->reused()) rec.message(fmt::format("reusing filled {}", file_->path().string()));
    if (!file_->filled()) return;  // stopped during the fill
    if (job_.direct && job_.xfersize_bytes % file_->direct_alignment_bytes() != 0)
      throw ConfigError(
          fmt::format("io.xfersize: {} is not a multiple of the O_DIRECT alignment of {} ({} bytes); "
                      "use a multiple of it or set io.direct: false",
                      format_size(job_.xfersize_bytes), ctx.target_dir.string(), file_->direct_alignment_bytes()));
    fd = file_->fd();
    path = file_->path();
  }
  for (std::uint32_t j = 0; j < job_.jobs; ++j)
    workers_.push_back(std::make_unique<IoWorker>(job_, fd, path, j, ctx.seed));

  const io::IoEngine& engine = workers_.front()->engine();
  if (!engine.capabilities().has(io::Capability::async) && job_.iodepth > 1)
    rec.warning(
        fmt::format("engine {} is synchronous: iodepth {} acts as 1 per job (as in fio); "
                    "use jobs for more outstanding I/Os",
                    engine.name(), job_.iodepth));
  if (!job_.direct && !no_io)
    rec.warning(
        "direct: false — I/O goes through the page cache, so reads of a file smaller than free memory "
        "measure memory, not the drive");
  if (!job_.direct && job_.engine == "libaio")
    rec.warning(
        "engine libaio with direct: false — Linux AIO is asynchronous only with O_DIRECT: io_submit "
        "performs each buffered I/O before it returns, so each job has one I/O in flight in effect "
        "(as with fio's libaio); use direct: true, or io_uring for buffered asynchronous I/O");
}

void IoEmulator::start_workers() {
  if (started_) return;
  started_ = true;
  for (auto& w : workers_) w->start();
}

void IoEmulator::stop_workers() noexcept {
  for (auto& w : workers_) w->request_stop();
  for (auto& w : workers_) w->join();
}

bool IoEmulator::stop_or_failed(const runner::TestContext& ctx) const noexcept {
  return ctx.stop_requested() || any_worker_failed(workers_);
}

void IoEmulator::warmup(runner::TestContext& ctx) {
  // No warm-up (fio's ramp_time=0): run() starts the workers, so every I/O is measured.
  if (workers_.empty() || ctx.settings.warmup.count() <= 0) return;
  const std::int64_t start = monotonic_ns();
  start_phase(workers_, "warm-up", start);
  start_workers();
  const bool reached = wait_until(start + ctx.settings.warmup.count(), [&] { return stop_or_failed(ctx); });
  warmup_s_ = seconds_between(start, monotonic_ns());
  if (!reached && any_worker_failed(workers_)) {
    stop_workers();
    throw_worker_error(workers_, kNoMessage);
  }
  // Workers keep running: run() continues the same workload without a gap.
}

void IoEmulator::run(runner::TestContext& ctx) {
  if (workers_.empty()) return;
  auto& rec = *ctx.recorder;
  IoSample sample;
  const std::int64_t t0 = monotonic_ns();
  start_phase(workers_, "measured phase", t0);
  if (started_) {
    // Whatever completed during warm-up is dropped here: the measured phase starts now.
    for (auto& w : workers_) {
      w->take(sample);
      w->mark_cpu();
    }
  } else {
    start_workers();  // no warm-up: the workers start inside the measured phase, nothing is dropped
  }
  const CpuTimes cpu0 = process_cpu_times();

  std::int64_t prev = t0;
  LatencyHistogram total;
  std::uint64_t total_bytes = 0;
  // An interval that cannot be recorded (the results disk filled: the journal's append fails)
  // ends the phase, but not before the headline of what was measured is put in the record; the
  // error is rethrown at the end, and the test fails with it.
  std::exception_ptr recording_failed;
  const auto aborted = [&] { return recording_failed != nullptr || stop_or_failed(ctx); };
  for_each_interval(t0, t0 + ctx.settings.duration.count(), ctx.settings.interval.count(), aborted, [&](bool last) {
    if (last) stop_workers();  // in-flight I/Os are reaped and land in this last interval
    const std::int64_t now = monotonic_ns();
    IoSample interval;
    for (auto& w : workers_) {
      w->take(sample);
      interval.latency.merge(sample.latency);
      interval.ios += sample.ios;
      interval.bytes += sample.bytes;
    }
    const double d = seconds_between(prev, now);
    if (d > 0 && (interval.ios > 0 || d >= 0.001)) {
      try {
        rec.interval({.t_s = seconds_between(t0, now),
                      .duration_s = d,
                      .values = {results::interval_value(cat::iops, static_cast<double>(interval.ios) / d),
                                 results::interval_value(cat::mb_s, static_cast<double>(interval.bytes) / 1e6 / d),
                                 results::interval_value(cat::latency_avg_us, interval.latency.mean() / 1e3),
                                 results::interval_value(cat::latency_p99_us,
                                                         static_cast<double>(interval.latency.percentile(99)) / 1e3),
                                 results::interval_value(cat::ios, static_cast<double>(interval.ios))},
                      .histograms = {{"latency", interval.latency}}});
      } catch (...) {
        if (!recording_failed) recording_failed = std::current_exception();
      }
      ios_.interval_sum += interval.ios;
    }
    total.merge(interval.latency);
    total_bytes += interval.bytes;
    prev = now;
  });
  const CpuTimes cpu = process_cpu_times() - cpu0;
  CpuTimes jobs_cpu;  // the workers have been joined: their thread figures are final
  for (const auto& w : workers_) jobs_cpu = jobs_cpu + w->thread_cpu();
  const double measured_s = seconds_between(t0, prev);
  rec.set_phase_times(warmup_s_, measured_s);

  ios_.measured = total.count();
  const double iops = measured_s > 0 ? static_cast<double>(ios_.measured) / measured_s : 0.0;
  rec.metric(cat::iops, iops, "I/Os completed per second in the measured phase");
  rec.metric(cat::throughput_mb_s, measured_s > 0 ? static_cast<double>(total_bytes) / 1e6 / measured_s : 0.0,
             "bytes transferred per second, MB = 10^6 bytes");
  runner::record_latency(rec, total, "latency", cat::latency, LatencyUnit::us,
                         {LatencyFigure::avg("mean completion latency (queue to reap, fio: lat)"),
                          LatencyFigure::p(99, "99th percentile completion latency"),
                          LatencyFigure::p(99.9, "99.9th percentile completion latency"),
                          LatencyFigure::p(50, "median completion latency"), LatencyFigure::max("slowest I/O")});
  rec.metric(cat::ios, static_cast<double>(ios_.measured), "I/Os completed in the measured phase");
  rec.metric(cat::bytes, static_cast<double>(total_bytes), "bytes transferred in the measured phase");
  // fio's usr_cpu / sys_cpu: CPU time over the phase as a percent of one core (whole process:
  // every job thread, plus io_uring's SQPOLL and io-wq kernel threads, which belong to it).
  rec.metric(cat::cpu_usr_pct, cpu.user_pct(measured_s), "user CPU time / measured time, percent of one core");
  rec.metric(cat::cpu_sys_pct, cpu.system_pct(measured_s), "system CPU time / measured time, percent of one core");
  rec.metric(cat::iops_per_cpu_s, cpu.total_s() > 0 ? static_cast<double>(ios_.measured) / cpu.total_s() : 0.0,
             "I/Os completed per CPU-second (user + system): IOPS per fully busy core");
  // fio reads RUSAGE_THREAD for each job: the job threads alone, without io-wq / SQPOLL threads.
  rec.metric(cat::cpu_jobs_usr_pct, jobs_cpu.user_pct(measured_s),
             "user CPU of the job threads only (RUSAGE_THREAD, summed), percent of one core: fio's usr_cpu x jobs");
  rec.metric(cat::cpu_jobs_sys_pct, jobs_cpu.system_pct(measured_s),
             "system CPU of the job threads only (RUSAGE_THREAD, summed), percent of one core: fio's sys_cpu x jobs");
  rec.histogram("latency", total);

  // Little's law: mean outstanding I/Os = throughput x mean time in the system.
  achieved_qd_ = iops * total.mean() / 1e9;
  // I/Os issued before the phase began count with their whole latency: at most one latency
  // (the max) of excess per outstanding slot over the phase.
  qd_window_slack_ = measured_s > 0 ? static_cast<double>(total.max()) / 1e9 / measured_s : 0.0;
  const io::IoEngine& engine = workers_.front()->engine();
  rec.detail("engine", std::string(engine.name()));
  rec.detail("engine_capabilities", engine.capabilities().names());
  rec.detail("iodepth_per_job", workers_.front()->depth());
  rec.detail("jobs", job_.jobs);
  rec.detail("achieved_queue_depth", achieved_qd_);
  rec.detail("engine_features_in_use", engine.features_in_use());
  rec.detail("iodepth_batch", results::Json{{"submit", job_.iodepth_batch_submit},
                                            {"complete_min", job_.iodepth_batch_complete_min},
                                            {"complete_max", job_.complete_max()}});
  rec.detail("cpu_usr_s", cpu.user_s());
  rec.detail("cpu_sys_s", cpu.system_s());
  rec.detail("cpu_measured",
             "cpu_usr/sys_pct: getrusage(RUSAGE_SELF) over the measured phase, all threads of the "
             "process incl. io_uring io-wq/SQPOLL threads; cpu_jobs_*: RUSAGE_THREAD of the job "
             "threads (fio's definition)");
  rec.detail("latency_measured", "from just before the I/O is queued to the reap that returned it (fio: lat)");
  if (file_)
    rec.detail("file", results::Json{{"path", file_->path().string()},
                                     {"size_bytes", file_->size_bytes()},
                                     {"reused", file_->reused()},
                                     {"direct", file_->direct()},
                                     {"direct_alignment_bytes", file_->direct_alignment_bytes()}});
  if (recording_failed) std::rethrow_exception(recording_failed);
  if (any_worker_failed(workers_)) throw_worker_error(workers_, kNoMessage);
}

void IoEmulator::verify(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  const auto [issued, completed] = issued_and_completed(workers_);
  rec.check("every issued I/O completed", issued == completed,
            fmt::format("{} issued, {} completed (warm-up included)", issued, completed));
  ios_.check(rec, "ios", "ios");
  if (ios_.measured > 0 && !workers_.empty()) {
    // Latency runs from submission to reap, a part of each slot's cycle, so by Little's law the
    // achieved depth cannot exceed the configured one; more would mean mis-measured latency.
    const double configured = static_cast<double>(workers_.front()->depth()) * static_cast<double>(job_.jobs);
    rec.check("Little's law: achieved queue depth <= configured",
              achieved_qd_ <= configured * (1.0 + qd_window_slack_) * 1.001 + 0.01,
              fmt::format("iops x mean latency = {:.2f}, configured {:.0f}", achieved_qd_, configured));
  }
}

void IoEmulator::cleanup(runner::TestContext&) noexcept {
  stop_workers();
  workers_.clear();
  io::release_test_file(file_, job_.keep_file);
}

}  // namespace drivelab::emulators::detail
