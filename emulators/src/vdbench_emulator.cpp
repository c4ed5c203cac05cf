#include "vdbench_emulator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/core/clock.hpp"
#include "drivelab/core/cpu_usage.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/phase.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/io/target_safety.hpp"
#include "drivelab/runner/curve.hpp"
#include "drivelab/runner/latency_metrics.hpp"
#include "worker_failure.hpp"

namespace drivelab::emulators::detail {
namespace cat = results::catalogue;

using runner::LatencyFigure;
using runner::LatencyUnit;

namespace {

constexpr std::int64_t kSecondNs = 1'000'000'000;  // steady-state sample period (fio: 1 s)
constexpr double kLittlesLawTolerancePct = 3.0;
constexpr const char* kNoMessage = "vdbench: a job failed without a message";

double us(double ns) { return ns / 1e3; }
double us(std::int64_t ns) { return static_cast<double>(ns) / 1e3; }

// The part of the target the workloads address: the file's (or device's) region, all of the file
// when no region was asked for.
Region target_region(const io::TargetFile* file, std::uint64_t file_size_bytes) {
  if (file == nullptr) return {0, file_size_bytes};  // null engine: a virtual target
  return {file->region_offset(), file->region_length()};
}

double metric_of(const SteadyStateCriterion& c, const VdbSample& s, double dur_s) {
  switch (c.metric) {
    case SteadyMetric::iops: return static_cast<double>(s.ios) / dur_s;
    case SteadyMetric::bw: return static_cast<double>(s.bytes) / 1e6 / dur_s;
    case SteadyMetric::lat: return us(s.latency.mean());
  }
  return 0;
}

}  // namespace

VdbenchEmulator::~VdbenchEmulator() { stop_jobs(); }

runner::DeviceAccess VdbenchEmulator::device_access() const {
  const bool writes =
      std::any_of(cfg_.workloads.begin(), cfg_.workloads.end(), [](const WorkloadDef& w) { return w.rdpct < 100; });
  return writes ? runner::DeviceAccess::read_write : runner::DeviceAccess::read_only;
}

std::string VdbenchEmulator::schedule(const runner::TestSettings& settings) const {
  if (cfg_.iorate != IorateMode::curve) return {};
  const double w = std::chrono::duration<double>(settings.warmup).count();
  const double d = std::chrono::duration<double>(settings.duration).count();
  const std::size_t runs = 1 + cfg_.curve.size();
  return fmt::format(
      "curve: max run + {} points, each warm-up {:.0f} s + measured {:.0f} s: {:.0f} s at most "
      "(stopcurve or steady state may end it sooner)",
      cfg_.curve.size(), w, d, static_cast<double>(runs) * (w + d));
}

void VdbenchEmulator::prepare(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  // Is the engine synchronous (one I/O per thread, like vdbench's own threads)?
  const bool async = io::make_engine(cfg_.engine, {.queue_depth = 2})->capabilities().has(io::Capability::async);
  std::uint32_t jobs = cfg_.jobs != 0 ? cfg_.jobs : (async ? 1 : std::min<std::uint32_t>(cfg_.threads, 1024));
  jobs = std::min(jobs, cfg_.threads);
  if (!async && jobs < cfg_.threads)
    rec.warning(
        fmt::format("engine {} is synchronous: one outstanding I/O per job, so {} jobs give {} outstanding "
                    "I/Os, not threads = {}; set jobs: auto",
                    cfg_.engine, jobs, jobs, cfg_.threads));

  const bool no_io = cfg_.engine == "null";
  int fd = -1;
  std::filesystem::path path;
  std::uint32_t alignment = 512;
  if (!no_io) {
    // On a device with a region, the region is the target; otherwise the first file_size bytes
    // (of the device, or the file), or the region of that file.
    const bool sized = !(io::is_block_device(ctx.target_dir) && cfg_.region);
    const io::TargetFileSpec spec{.dir = ctx.target_dir,
                                  .test_name = ctx.settings.name,
                                  .size_bytes = sized ? cfg_.file_size_bytes : 0,
                                  .direct = cfg_.direct,
                                  .fill = true,
                                  .seed = ctx.seed,
                                  .region = cfg_.region};
    const std::string name = io::target_file_path(spec.dir, spec.test_name).filename().string();
    rec.message(fmt::format("preparing {} ({})", name, format_size(spec.size_bytes)));
    std::int64_t last_ns = 0;
    const std::int64_t start_ns = monotonic_ns();
    file_ = io::TargetFile::open(spec, [&](std::uint64_t done, std::uint64_t total) {
      const std::int64_t now = monotonic_ns();
      if (now - last_ns >= kSecondNs || done == total) {
        last_ns = now;
        const double s = seconds_between(start_ns, now);
        const double rate = s > 0 ? static_cast<double>(done) / s : 0.0;
        rec.message(fmt::format("filling {}: {} of {} ({:.0f}%), {:.0f} MB/s, ETA {:.0f}s", name, format_size(done),
                                format_size(total), 100.0 * static_cast<double>(done) / static_cast<double>(total),
                                rate / 1e6, rate > 0 ? static_cast<double>(total - done) / rate : 0.0));
      }
      return !ctx.stop_requested();
    });
    if (file_->reused()) rec.message(fmt::format("reusing filled {}", file_->path().string()));
    if (!file_->filled()) return;  // stopped during the fill
    fd = file_->fd();
    path = file_->path();
    alignment = file_->direct() ? file_->direct_alignment_bytes() : 512;
  }
  const Region region = target_region(file_ ? &*file_ : nullptr, cfg_.file_size_bytes);
  for (std::uint32_t j = 0; j < jobs; ++j) {
    const std::uint32_t depth = async ? cfg_.threads / jobs + (j < cfg_.threads % jobs ? 1 : 0) : 1;
    jobs_.push_back(std::make_unique<VdbenchJob>(cfg_, JobSetup{.fd = fd,
                                                                .file = path,
                                                                .region = region,
                                                                .alignment_bytes = alignment,
                                                                .index = j,
                                                                .jobs = jobs,
                                                                .depth = depth,
                                                                .seed = ctx.seed}));
  }
  if (!cfg_.direct && !no_io)
    rec.warning(
        "direct: false — I/O goes through the page cache, so reads of a file smaller than free memory "
        "measure memory, not the drive");
}

std::uint32_t VdbenchEmulator::threads_effective() const noexcept {
  std::uint32_t n = 0;
  for (const auto& j : jobs_) n += j->depth();
  return n;
}

void VdbenchEmulator::start_jobs(double rate_per_s, std::uint64_t point) {
  const std::uint64_t seed = Rng(0x5EED0000ull + point).split(point)();
  const double per_job = rate_per_s / static_cast<double>(jobs_.size());
  for (auto& j : jobs_) j->start(per_job, seed);
  running_ = true;
}

void VdbenchEmulator::stop_jobs() noexcept {
  // Every job is asked before any is waited for, as the io kind stops its workers: stopped one
  // after the other, the jobs not yet asked kept the CPU busy, and 32 psync jobs on a busy
  // 2-core machine took seconds to stop (one scheduling round each).
  for (auto& j : jobs_) j->request_stop();
  for (auto& j : jobs_) j->stop();
  running_ = false;
}

bool VdbenchEmulator::stop_or_failed(const runner::TestContext& ctx) const noexcept {
  return ctx.stop_requested() || any_worker_failed(jobs_);
}

void VdbenchEmulator::warmup(runner::TestContext& ctx) {
  if (jobs_.empty()) return;
  const std::int64_t start = monotonic_ns();
  start_phase(jobs_, "warm-up", start);
  start_jobs(cfg_.iorate == IorateMode::fixed ? cfg_.iorate_iops : 0.0, 0);
  const bool reached = wait_until(start + ctx.settings.warmup.count(), [&] { return stop_or_failed(ctx); });
  warmup_s_ = seconds_between(start, monotonic_ns());
  if (!reached && any_worker_failed(jobs_)) {
    stop_jobs();
    throw_worker_error(jobs_, kNoMessage);
  }
  // The jobs keep running: run() measures the same workload without a gap.
}

PointResult VdbenchEmulator::measure(runner::TestContext& ctx, PointResult p, bool may_end_when_steady) {
  auto& rec = *ctx.recorder;
  VdbSample sample, second, interval;
  const std::int64_t t0 = monotonic_ns();
  start_phase(jobs_, "measured phase", t0);
  for (auto& j : jobs_) j->take(sample);  // what completed before the measured phase is dropped
  const CpuTimes cpu0 = process_cpu_times();
  std::optional<SteadyStateDetector> ss;
  if (cfg_.ss)
    ss.emplace(*cfg_.ss, static_cast<std::size_t>(cfg_.ss_dur.count() / kSecondNs),
               static_cast<std::size_t>(cfg_.ss_ramp.count() / kSecondNs));

  const std::int64_t interval_ns = ctx.settings.interval.count();
  std::int64_t end_ns = t0 + ctx.settings.duration.count();
  // The per-second sample feeds the steady-state criterion only: without one the jobs are sampled
  // at the interval boundaries alone (fewer histogram merges on the main thread, none per second).
  std::int64_t next_second = ss ? t0 + kSecondNs : std::numeric_limits<std::int64_t>::max();
  std::int64_t next_interval = t0 + interval_ns;
  std::int64_t prev_second = t0, prev_interval = t0, now = t0;
  CpuTimes cpu_end;
  for (bool last = false; !last;) {
    const std::int64_t boundary = std::min({next_second, next_interval, end_ns});
    last = !wait_until(boundary, [&] { return stop_or_failed(ctx); }) || boundary >= end_ns;
    now = monotonic_ns();
    if (last) cpu_end = process_cpu_times();  // the window's CPU: not the drain after it, whose I/Os are not counted
    for (auto& j : jobs_) {
      j->take(sample);
      if (ss) second.merge(sample);
      interval.merge(sample);
      p.total.merge(sample);
    }
    if (last) {
      // The window ends now. The I/Os still in flight are reaped but not counted (as fio ends a
      // runtime): counting them would stretch the window over a drain with fewer than `threads`
      // outstanding, and bias IOPS x mean latency low by about max latency / duration. The I/Os
      // in flight when the window opened are counted with their whole latency; in a steady run
      // the two edges balance (Little's law holds for the window).
      stop_jobs();
      for (auto& j : jobs_) j->take(sample);
      drained_ios_ += sample.ios;
    }
    if (now >= next_second) {
      if (ss) {
        ss->add(metric_of(ss->criterion(), second, seconds_between(prev_second, now)));
        if (ss->attained_ever() && !p.ss_attained) {
          p.ss_attained = true;
          p.ss_attained_at_s = seconds_between(t0, now);
          if (may_end_when_steady && !last) {
            p.ended_by_ss = true;
            end_ns = now;  // the next pass stops the jobs and closes the interval
            next_interval = std::min(next_interval, end_ns);
          }
        }
      }
      second.clear();
      prev_second = now;
      next_second += kSecondNs;
    }
    if (now >= next_interval || last) {
      const double d = seconds_between(prev_interval, now);
      if (d > 0 && (interval.ios > 0 || d >= 0.001)) {
        rec.interval({.t_s = seconds_between(run_start_ns_, now),
                      .duration_s = d,
                      .values = {results::interval_value(cat::iops, static_cast<double>(interval.ios) / d),
                                 results::interval_value(cat::mb_s, static_cast<double>(interval.bytes) / 1e6 / d),
                                 results::interval_value(cat::latency_avg_us, us(interval.latency.mean())),
                                 results::interval_value(cat::latency_p99_us, us(interval.latency.percentile(99))),
                                 results::interval_value(cat::requested_iops, p.requested_iops),
                                 results::interval_value(cat::lateness_p99_us, us(interval.lateness.percentile(99))),
                                 results::interval_value(cat::service_avg_us, us(interval.service.mean())),
                                 results::interval_value(cat::ios, static_cast<double>(interval.ios)),
                                 results::interval_value(cat::point_pct, p.requested_pct)},
                      .histograms = {{"latency", interval.latency}}});
        ios_.interval_sum += interval.ios;
      } else {
        // A zero-length closing interval: its I/Os (if any) still count; fold them in the sum.
        ios_.interval_sum += interval.ios;
      }
      interval.clear();
      prev_interval = now;
      while (next_interval <= now) next_interval += interval_ns;
    }
  }
  const CpuTimes cpu = cpu_end - cpu0;
  p.measured_s = seconds_between(t0, now);
  p.cpu_usr_s = cpu.user_s();
  p.cpu_sys_s = cpu.system_s();
  for (const auto& j : jobs_) p.backlog += j->backlog_at_stop();
  if (ss && ss->window_full()) p.ss = ss->last();
  ios_.measured += p.total.ios;
  return p;
}

void VdbenchEmulator::record_point(runner::TestContext& ctx, const PointResult& p) {
  auto& rec = *ctx.recorder;
  const auto& g = p.group;
  const double iops = p.iops();
  const double s = p.measured_s;
  const auto m = [&](const results::MetricDef& def, double v, std::string what = {}) {
    rec.group_metric(g, def, v, std::move(what));
  };
  const double threads = static_cast<double>(threads_effective());
  const double qd = iops * p.total.service.mean() / 1e9;
  m(cat::requested_iops, p.requested_iops, "the point's arrival rate; 0 = unpaced (iorate max)");
  m(cat::requested_pct, p.requested_pct, "of the max run's average IOPS (curve points)");
  m(cat::achieved_iops, iops, "I/Os completed per second");
  if (p.requested_iops > 0)
    m(cat::achieved_pct_of_requested, 100.0 * iops / p.requested_iops, "achieved / requested IOPS");
  m(cat::throughput_mb_s, s > 0 ? static_cast<double>(p.total.bytes) / 1e6 / s : 0.0, "MB = 10^6 bytes");
  runner::record_group_latency(
      rec, g, p.total.latency, "latency_" + g, cat::latency, LatencyUnit::us,
      {LatencyFigure::avg("from the intended start (open loop) to completion"), LatencyFigure::p(50),
       LatencyFigure::p(99), LatencyFigure::p(99.9), LatencyFigure::max()});
  runner::record_group_latency(rec, g, p.total.service, "service_latency_" + g, cat::service_latency, LatencyUnit::us,
                               {LatencyFigure::avg("from submission to completion (fio: lat)"), LatencyFigure::p(50),
                                LatencyFigure::p(99), LatencyFigure::p(99.9), LatencyFigure::max()});
  runner::record_group_latency(
      rec, g, p.total.lateness, "lateness_" + g, cat::lateness, LatencyUnit::us,
      {LatencyFigure::avg("submission minus intended start"), LatencyFigure::p(99), LatencyFigure::max()});
  m(cat::backlog_ios, static_cast<double>(p.backlog), "arrivals due but not issued when the point ended");
  m(cat::achieved_qd, qd, "IOPS x mean service latency (Little's law)");
  m(cat::threads, threads, "outstanding I/O slots");
  m(cat::qd_deviation_pct, threads > 0 ? 100.0 * (qd - threads) / threads : 0.0, "(achieved_qd - threads) / threads");
  m(cat::cpu_usr_s, p.cpu_usr_s, "process user CPU during the point");
  m(cat::cpu_sys_s, p.cpu_sys_s, "process system CPU during the point");
  m(cat::cpu_usr_pct, s > 0 ? 100.0 * p.cpu_usr_s / s : 0.0, "of one CPU");
  m(cat::cpu_sys_pct, s > 0 ? 100.0 * p.cpu_sys_s / s : 0.0, "of one CPU");
  m(cat::measured_s, s);
  m(cat::ios, static_cast<double>(p.total.ios));
  m(cat::read_ios, static_cast<double>(p.total.reads));
  m(cat::write_ios, static_cast<double>(p.total.writes));
  if (cfg_.ss) {
    m(cat::ss_attained, p.ss_attained ? 1.0 : 0.0, "steady state (" + cfg_.ss->to_string() + ") reached");
    if (p.ss)
      rec.group_metric(g, cat::ss_value, p.ss->value, "criterion value of the last full window",
                       cfg_.ss->percent ? results::Unit::pct : results::Unit::none);
  }
  rec.histogram("latency_" + g, p.total.latency);
  rec.histogram("service_latency_" + g, p.total.service);
  rec.histogram("lateness_" + g, p.total.lateness);
}

void VdbenchEmulator::run(runner::TestContext& ctx) {
  if (jobs_.empty()) return;
  auto& rec = *ctx.recorder;
  run_start_ns_ = monotonic_ns();
  if (!running_) start_jobs(cfg_.iorate == IorateMode::fixed ? cfg_.iorate_iops : 0.0, 0);

  // The first run: iorate max (alone or the curve's max run) or the fixed rate.
  PointResult first;
  first.group = cfg_.iorate == IorateMode::fixed ? "fixed" : "max";
  first.requested_iops = cfg_.iorate == IorateMode::fixed ? cfg_.iorate_iops : 0.0;
  first = measure(ctx, first, cfg_.iorate != IorateMode::fixed && cfg_.ss_stop);
  points_.push_back(first);
  record_point(ctx, first);
  const double threads = static_cast<double>(threads_effective());
  if (cfg_.iorate != IorateMode::fixed && first.total.ios > 0) {
    // Little's law at iorate max: IOPS x mean service latency = mean outstanding I/Os. Latency is a
    // part of each slot's cycle, so more than `threads` (beyond the tolerance) means mis-measured
    // latency or IOPS: the check fails. Fewer means the job threads spent part of the cycle off the
    // device (a CPU-bound host, preempted refills): every number is still true, but of a shallower
    // queue than asked, so the record warns with the depth achieved (also in `achieved_qd`).
    const double qd = first.iops() * first.total.service.mean() / 1e9;
    const double dev = 100.0 * (qd - threads) / threads;
    const std::string detail = fmt::format(
        "iorate=max: IOPS {:.0f} x mean latency {:.1f} us = {:.2f} outstanding, threads {:.0f} "
        "({:+.2f}%, limit +{}%)",
        first.iops(), us(first.total.service.mean()), qd, threads, dev, kLittlesLawTolerancePct);
    rec.check("littles_law_max", dev <= kLittlesLawTolerancePct, detail);
    if (dev < -kLittlesLawTolerancePct)
      rec.warning(
          fmt::format("the max run kept {:.2f} of {:.0f} I/Os outstanding ({:+.1f}%): the job threads, not "
                      "the device, were the limit part of the time (CPU-bound host?); its IOPS and latency "
                      "are those of queue depth {:.1f}",
                      qd, threads, dev, qd));
  }
  const CurveEnd end = cfg_.iorate == IorateMode::curve ? run_curve(ctx, first) : CurveEnd{};
  cut_after_ = end.cut_after;
  stop_jobs();

  record_headline(ctx, first);
  if (cfg_.iorate == IorateMode::curve) {
    double peak = 0;
    for (const auto& p : points_) peak = std::max(peak, p.iops());
    rec.group_metric("curve", cat::max_run_iops, first.iops(), "the rate the curve points are percentages of");
    rec.group_metric("curve", cat::points_run, static_cast<double>(points_.size() - 1), "curve points measured");
    rec.group_metric("curve", cat::peak_iops, peak, "highest achieved IOPS of any run");
    rec.group_metric("curve", cat::stopped_by_stopcurve, end.stopped_by_curve ? 1.0 : 0.0);
    if (end.stopped_by_curve) rec.group_metric("curve", cat::stopcurve_at_pct, end.stop_pct);
  }
  record_details(ctx);
  double measured = 0;
  for (const auto& p : points_) measured += p.measured_s;
  rec.set_phase_times(warmup_s_, measured);
  if (any_worker_failed(jobs_)) throw_worker_error(jobs_, kNoMessage);
}

VdbenchEmulator::CurveEnd VdbenchEmulator::run_curve(runner::TestContext& ctx, const PointResult& first) {
  auto& rec = *ctx.recorder;
  CurveEnd end;
  // On N hosts (docs/multihost.md), vdbench's multi-host rule: the max run is the aggregate of
  // every host's, and each point asks each host for its even share of that percentage. Every
  // decision to go on is taken on the sums, so the hosts run the same points (on one host the
  // sums are this host's own values and nothing changes).
  std::array<double, 2> max_run{first.iops(), stop_or_failed(ctx) ? 1.0 : 0.0};
  ctx.sum_over_hosts(max_run, "curve max run");
  const double hosts = static_cast<double>(ctx.hosts());
  const double max_iops_per_host = max_run[0] / hosts;
  // (Each host's record keeps its own max_run_iops; the merged record's sum is the aggregate.)
  if (hosts > 1)
    rec.message(
        fmt::format("curve: the hosts' max runs sum to {:.0f} IOPS; each point asks this host for 1/{:.0f} of "
                    "its percentage",
                    max_run[0], hosts));
  if (max_run[1] != 0 && !cfg_.curve.empty()) end.cut_after = "max";
  for (std::size_t i = 0; i < cfg_.curve.size() && max_run[1] == 0; ++i) {
    PointResult p;
    p.requested_pct = cfg_.curve[i];
    p.group = runner::curve_point_group(p.requested_pct);
    p.requested_iops = static_cast<double>(curve_rate(max_iops_per_host, p.requested_pct));
    if (p.requested_iops <= 0) {
      rec.warning(fmt::format("curve point {}%: the max run did no I/O, nothing to pace", p.requested_pct));
      break;
    }
    // {stop or failure here, latency sum (ns), I/Os}: summed over the hosts after the point.
    std::array<double, 3> point{0, 0, 0};
    if (stop_or_failed(ctx)) {
      point[0] = 1;
    } else {
      rec.message(fmt::format("curve point {}%: {} IOPS", p.requested_pct, p.requested_iops));
      start_phase(jobs_, "warm-up", monotonic_ns());
      start_jobs(p.requested_iops, i + 1);
      if (!wait_until(monotonic_ns() + ctx.settings.warmup.count(), [&] { return stop_or_failed(ctx); })) {
        stop_jobs();
        point[0] = 1;
      } else {
        p = measure(ctx, p, false);
        if (stop_or_failed(ctx)) {
          // Cut in its measured phase: a fragment is no point of the curve (runner::cut_point_line).
          rec.message(runner::cut_point_line(p.group, p.measured_s, ctx.settings.duration));
          point[0] = 1;
        } else {
          points_.push_back(p);
          record_point(ctx, p);
          point[1] = p.total.latency.mean() * static_cast<double>(p.total.latency.count());
          point[2] = static_cast<double>(p.total.latency.count());
        }
      }
    }
    ctx.sum_over_hosts(point, "curve point");
    if (point[0] > 0) {
      end.cut_after = points_.back().group;  // stopped or failed on some host: the curve is partial
      break;
    }
    // stopcurve on the mean latency of every host's I/Os of the point
    const double mean_ms = point[2] > 0 ? point[1] / point[2] / 1e6 : 0.0;
    if (cfg_.stopcurve_ms > 0 && mean_ms > cfg_.stopcurve_ms) {
      end.stopped_by_curve = true;
      end.stop_pct = p.requested_pct;
      rec.message(fmt::format("stopcurve: mean latency {:.2f} ms > {} ms at {}%; curve ends", mean_ms,
                              cfg_.stopcurve_ms, p.requested_pct));
      break;
    }
  }
  return end;
}

void VdbenchEmulator::record_headline(runner::TestContext& ctx, const PointResult& first) {
  auto& rec = *ctx.recorder;
  // Headline metrics: the first run (the max run of a curve), the sizing answers second so the
  // summary's first columns show them.
  const double s = first.measured_s;
  rec.metric(
      cat::iops, first.iops(),
      cfg_.iorate == IorateMode::fixed ? "I/Os per second at the fixed iorate" : "I/Os per second of the max run");
  record_slo_answers(ctx);
  rec.metric(cat::throughput_mb_s, s > 0 ? static_cast<double>(first.total.bytes) / 1e6 / s : 0.0, "MB = 10^6 bytes");
  runner::record_latency(
      rec, first.total.latency, "latency", cat::latency, LatencyUnit::us,
      {LatencyFigure::avg("mean latency from the intended start"), LatencyFigure::p(99, "99th percentile latency"),
       LatencyFigure::p(99.9, "99.9th percentile latency"), LatencyFigure::p(50, "median latency"),
       LatencyFigure::max("slowest I/O")});
  rec.metric(cat::ios, static_cast<double>(first.total.ios), "I/Os completed in the first run");
  rec.histogram("latency", first.total.latency);
}

void VdbenchEmulator::record_slo_answers(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  if (!cfg_.slo_p99_ms && !cfg_.slo_mean_ms) return;
  if (cfg_.iorate != IorateMode::curve) {
    rec.warning("slo: the sizing answers are read off a curve; this run is not one (iorate: curve), so none");
    return;
  }
  results::Json answers = results::Json::array();
  const auto answer = [&](const results::MetricDef& def, const runner::SloBound& bound, auto figure_ms) {
    std::vector<runner::CurveSample> samples;
    for (const auto& p : points_)
      samples.push_back({p.group, p.iops(), figure_ms(p), runner::curve_sample_requested(p.requested_iops)});
    // A cut curve's "bound not reached" is only a lower bound (runner::qualify): no headline metric.
    const runner::SloAnswer a =
        runner::qualify(runner::max_rate_within(std::move(samples), bound.bound_ms), cut_after_);
    const std::string line = runner::describe(a, bound, "IOPS");
    if (a.is_headline()) rec.metric(def, a.rate, line);  // "none" is not 0 IOPS
    rec.message(line);
    answers.push_back(runner::to_json(a, bound, def.name, "IOPS"));
  };
  if (cfg_.slo_p99_ms)
    answer(cat::max_iops_under_p99,
           {.key = "p99_ms", .figure = "p99 latency", .bound_ms = *cfg_.slo_p99_ms, .percentile = 99, .subject = {}},
           [](const PointResult& p) { return static_cast<double>(p.total.latency.percentile(99)) / 1e6; });
  if (cfg_.slo_mean_ms)
    answer(cat::max_iops_under_mean,
           {.key = "mean_ms", .figure = "mean latency", .bound_ms = *cfg_.slo_mean_ms, .percentile = 0, .subject = {}},
           [](const PointResult& p) { return p.total.latency.mean() / 1e6; });
  rec.detail("slo", std::move(answers));
}

void VdbenchEmulator::record_details(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  // Details: the points in order, the model as run.
  results::Json pts = results::Json::array();
  for (const auto& p : points_) {
    results::Json pj{{"group", p.group},
                     {"requested_pct", p.requested_pct},
                     {"requested_iops", p.requested_iops},
                     {"achieved_iops", p.iops()},
                     {"latency_avg_us", us(p.total.latency.mean())},
                     {"latency_p99_us", us(p.total.latency.percentile(99))},
                     {"measured_s", p.measured_s}};
    if (cfg_.ss)
      pj["steady_state"] = {{"criterion", cfg_.ss->to_string()},   {"attained", p.ss_attained},
                            {"attained_at_s", p.ss_attained_at_s}, {"value", p.ss ? p.ss->value : NAN},
                            {"mean", p.ss ? p.ss->mean : NAN},     {"ended_run", p.ended_by_ss}};
    results::Json shares = results::Json::object();
    for (std::size_t w = 0; w < cfg_.workloads.size() && w < p.total.workload_ios.size(); ++w)
      shares[cfg_.workloads[w].name] =
          p.total.ios > 0 ? 100.0 * static_cast<double>(p.total.workload_ios[w]) / static_cast<double>(p.total.ios)
                          : 0.0;
    pj["workload_share_pct"] = std::move(shares);
    pts.push_back(std::move(pj));
  }
  rec.detail("points", std::move(pts));
  const io::IoEngine& engine = jobs_.front()->engine();
  rec.detail("engine", std::string(engine.name()));
  rec.detail("engine_capabilities", engine.capabilities().names());
  rec.detail("jobs", jobs_.size());
  rec.detail("threads_effective", threads_effective());
  rec.detail("workload_skew_pct", effective_skews(cfg_.workloads));
  std::uint64_t units = 0, unique = 0;
  for (const auto& j : jobs_) {
    units += j->written_units();
    unique += j->unique_units();
  }
  rec.detail("dedup_units_written", units);
  rec.detail("dedup_units_unique", unique);
  rec.detail("latency_measured",
             "latency: from the intended start (open loop; at iorate max the submission) to the reap; service "
             "latency: from submission; lateness: submission minus intended start");
  if (file_)
    rec.detail("file", results::Json{{"path", file_->path().string()},
                                     {"size_bytes", file_->size_bytes()},
                                     {"reused", file_->reused()},
                                     {"region_offset_bytes", file_->region_offset()},
                                     {"region_length_bytes", file_->region_length()},
                                     {"direct", file_->direct()},
                                     {"direct_alignment_bytes", file_->direct_alignment_bytes()}});
}

void VdbenchEmulator::verify(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  const auto [issued, completed] = issued_and_completed(jobs_);
  rec.check("every issued I/O completed", issued == completed,
            fmt::format("{} issued, {} completed (warm-ups and the {} reaped after the runs' windows included)", issued,
                        completed, drained_ios_));
  ios_.check(rec, "the points' ios", "ios of all points");
}

void VdbenchEmulator::cleanup(runner::TestContext&) noexcept {
  stop_jobs();
  jobs_.clear();
  io::release_test_file(file_, cfg_.keep_file);
}

}  // namespace drivelab::emulators::detail
