#include "replay_emulator.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/runner/curve.hpp"
#include "drivelab/runner/latency_metrics.hpp"

namespace drivelab::vdi::detail {
namespace cat = results::catalogue;

using runner::LatencyFigure;
using runner::LatencyUnit;
using runner::ns_to_us;

namespace {

std::string point_group(double pct) {
  if (std::abs(pct - std::round(pct)) < 1e-9) return fmt::format("point_{:03}", static_cast<long>(std::lround(pct)));
  std::string s = fmt::format("point_{}", pct);
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

}  // namespace

void ReplayEmulator::prepare(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  seed_ = ctx.seed;
  {
    auto source = make_source_(seed_);
    summary_ = summarize(*source);
  }
  rec.message(fmt::format("trace {}: {} I/Os ({} reads, {} writes, {} other), {} devices, {:.3f} s, {:.0f} IOPS",
                          summary_.description, summary_.ios, summary_.reads, summary_.writes, summary_.other,
                          summary_.devices.size(), summary_.duration_s(), summary_.iops()));
  if (summary_.out_of_order > 0)
    rec.message(
        fmt::format("trace {}: {} requests are stamped before their predecessor, at most {:.6f} s before it: "
                    "each is due with its predecessor (it cannot be issued sooner), and its latency and "
                    "lateness count from then (docs/vdi.md \"Replay\")",
                    summary_.description, summary_.out_of_order, static_cast<double>(summary_.max_backward_ns) / 1e9));
  if (summary_.reads + summary_.writes == 0)
    throw ConfigError(fmt::format("trace {} has no read or write", summary_.description));

  // Before any file is filled: a file_size too small for the trace is a mistake, not a 256 MiB
  // file left behind (the constructor checks again with the files' O_DIRECT alignment).
  (void)slot_geometry(cfg_.file_size_bytes, cfg_.targets, std::max<std::uint32_t>(512, cfg_.align_bytes), summary_);
  std::vector<ReplayTarget> targets;
  std::uint32_t alignment = 512;
  if (cfg_.engine == "null") {
    for (std::uint32_t t = 0; t < cfg_.targets; ++t) targets.push_back({-1, 0, cfg_.file_size_bytes, {}});
  } else {
    for (std::uint32_t t = 0; t < cfg_.targets; ++t) {
      const std::string name = cfg_.targets == 1 ? ctx.settings.name : fmt::format("{}-{}", ctx.settings.name, t);
      const io::TargetFileSpec spec{.dir = ctx.target_dir,
                                    .test_name = name,
                                    .size_bytes = cfg_.file_size_bytes,
                                    .direct = cfg_.direct,
                                    .fill = true,
                                    .seed = ctx.seed + t};
      rec.message(fmt::format("preparing {} ({})", io::target_file_path(spec.dir, name).filename().string(),
                              format_size(spec.size_bytes)));
      files_.push_back(io::TargetFile::open(spec, [&](std::uint64_t, std::uint64_t) { return !ctx.stop_requested(); }));
      if (!files_.back().filled()) return;  // stopped during the fill
      alignment = std::max(alignment, files_.back().direct() ? files_.back().direct_alignment_bytes() : 512u);
      targets.push_back({files_.back().fd(), files_.back().region_offset(), files_.back().region_length(),
                         files_.back().path().string()});
    }
  }
  ReplayOptions o{.engine = cfg_.engine,
                  .queue_depth = cfg_.queue_depth,
                  .time_scale = cfg_.time_scale,
                  .no_stall = cfg_.no_stall,
                  .align_bytes = cfg_.align_bytes != 0 ? cfg_.align_bytes : alignment,
                  .offset_shift_bytes = cfg_.offset_shift_bytes,
                  .verify = cfg_.verify,
                  .seed = ctx.seed,
                  .max_duration_ns = ctx.settings.duration.count(),
                  .interval_ns = ctx.settings.interval.count(),
                  .flushes = cfg_.flushes,
                  .discards = cfg_.discards};
  if (o.align_bytes < alignment)
    throw ConfigError(
        fmt::format("align {} is smaller than the target's O_DIRECT alignment {}", o.align_bytes, alignment));
  replayer_ = std::make_unique<Replayer>(o, std::move(targets), summary_);
  if (!cfg_.direct)
    rec.warning("direct: false — I/O goes through the page cache; reads may measure memory, not the drive");
}

void ReplayEmulator::warmup(runner::TestContext&) {
  // A replay has no warm-up of its own: the trace's first I/Os are part of what it measures.
}

ReplayEmulator::Point ReplayEmulator::replay_once(runner::TestContext& ctx, std::string group, double pct,
                                                  double target_iops, bool no_stall) {
  auto& rec = *ctx.recorder;
  Point p;
  p.group = std::move(group);
  p.requested_pct = pct;
  double scale = cfg_.time_scale;
  if (target_iops > 0 && summary_.iops() > 0) scale = summary_.iops() / target_iops;
  p.requested_iops = no_stall ? 0.0 : (summary_.iops() > 0 ? summary_.iops() / scale : 0.0);
  auto source = make_source_(seed_);
  // Each interval's real length (the last one of a replay is shorter than `interval`).
  std::int64_t prev_ns = monotonic_ns();
  p.result = replayer_->replay(*source, scale, no_stall, [&](ReplaySample& s, std::int64_t now) {
    const double d = std::max(seconds_between(prev_ns, now), 1e-9);
    prev_ns = now;
    rec.interval(
        {.t_s = seconds_between(run_start_ns_, now),
         .duration_s = d,
         .values = {results::interval_value(cat::iops, static_cast<double>(s.ios) / d),
                    results::interval_value(cat::mb_s, static_cast<double>(s.read_bytes + s.write_bytes) / 1e6 / d),
                    results::interval_value(cat::latency_avg_us, ns_to_us(s.latency.mean())),
                    results::interval_value(cat::latency_p99_us, ns_to_us(s.latency.percentile(99))),
                    results::interval_value(cat::lateness_p99_us, ns_to_us(s.lateness.percentile(99))),
                    results::interval_value(cat::requested_iops, p.requested_iops),
                    results::interval_value(cat::ios, static_cast<double>(s.ios))},
         .histograms = {{"latency", s.latency}}});
    return !ctx.stop_requested();
  });
  if (!p.result.complete)
    rec.warning(fmt::format(
        "{}: replay ended before the end of the trace ({} of {} I/Os issued): stop request or "
        "duration {} reached",
        p.group, p.result.issued, summary_.reads + summary_.writes, format_duration(ctx.settings.duration)));
  const auto& r = p.result;
  if (r.flushes_skipped + r.fua_skipped > 0)
    rec.warning(
        fmt::format("{}: {} flushes and {} FUA writes' syncs of the trace skipped (flushes: skip): the "
                    "drive's cache was never flushed for them",
                    p.group, r.flushes_skipped, r.fua_skipped));
  if (r.discards_skipped > 0)
    rec.warning(fmt::format("{}: {} discards of the trace skipped ({})", p.group, r.discards_skipped,
                            r.discard_note.empty() ? "discards: skip" : r.discard_note));
  if (!no_stall && r.total.lateness.percentile(99) > kLatenessBoundNs)
    rec.warning(
        fmt::format("{}: lateness p99 {:.3f} ms exceeds the {} ms bound (docs/vdi.md \"Replay\"): the "
                    "target did not keep up with the trace's schedule (backlog max {} I/Os, mean {:.1f})",
                    p.group, static_cast<double>(r.total.lateness.percentile(99)) / 1e6, kLatenessBoundNs / 1'000'000,
                    r.max_backlog, r.mean_backlog));
  return p;
}

void ReplayEmulator::record_point(runner::TestContext& ctx, const Point& p) {
  auto& rec = *ctx.recorder;
  const auto& r = p.result;
  const auto m = [&](const results::MetricDef& def, double v, std::string what = {}) {
    rec.group_metric(p.group, def, v, std::move(what));
  };
  m(cat::requested_iops, p.requested_iops, "the replay's rate (trace IOPS / time scale); 0 = no_stall");
  m(cat::requested_pct, p.requested_pct, "curve points: of the max run (curve_of max) or of the trace's rate");
  m(cat::time_scale, r.time_scale, "trace times were multiplied by this");
  m(cat::achieved_iops, r.iops(), "I/Os completed per second, first submission to last completion");
  m(cat::throughput_mb_s,
    r.elapsed_s > 0 ? static_cast<double>(r.total.read_bytes + r.total.write_bytes) / 1e6 / r.elapsed_s : 0.0,
    "MB = 10^6 bytes");
  runner::record_group_latency(rec, p.group, r.total.latency, "latency_" + p.group, cat::latency, LatencyUnit::us,
                               {LatencyFigure::avg("from the intended start to completion"), LatencyFigure::p(50),
                                LatencyFigure::p(99), LatencyFigure::p(99.9), LatencyFigure::max()});
  runner::record_group_latency(rec, p.group, r.total.service, "service_latency_" + p.group, cat::service_latency,
                               LatencyUnit::us,
                               {LatencyFigure::avg("from submission to completion (fio: lat)"), LatencyFigure::p(99)});
  runner::record_group_latency(
      rec, p.group, r.total.lateness, "lateness_" + p.group, cat::lateness, LatencyUnit::us,
      {LatencyFigure::p(50, "submission minus intended start"), LatencyFigure::p(99), LatencyFigure::max()});
  m(cat::overflow_ios, static_cast<double>(r.overflow_ios), "I/Os that found every slot busy at their intended start");
  m(cat::max_backlog_ios, static_cast<double>(r.max_backlog),
    "most requests past their intended start but not yet issued at once (0 for no_stall)");
  m(cat::mean_backlog_ios, r.mean_backlog, "time average of that backlog over the replay (sum of lateness / span)");
  m(cat::flushes_replayed, static_cast<double>(r.flushes_replayed), "flush requests and preflushes done as fdatasync");
  m(cat::flushes_skipped, static_cast<double>(r.flushes_skipped), "flushes: skip");
  m(cat::fua_replayed, static_cast<double>(r.fua_replayed), "FUA writes followed by an fdatasync");
  m(cat::fua_skipped, static_cast<double>(r.fua_skipped), "flushes: skip");
  m(cat::discards_replayed, static_cast<double>(r.discards_replayed), "discards punched as holes");
  m(cat::discards_skipped, static_cast<double>(r.discards_skipped), "discards: skip, or holes not supported");
  m(cat::ios, static_cast<double>(r.total.ios));
  m(cat::read_ios, static_cast<double>(r.total.reads));
  m(cat::write_ios, static_cast<double>(r.total.writes));
  m(cat::read_bytes, static_cast<double>(r.total.read_bytes));
  m(cat::write_bytes, static_cast<double>(r.total.write_bytes));
  m(cat::rounded_ios, static_cast<double>(r.rounded_ios), "offset or length changed by align");
  m(cat::errors, static_cast<double>(r.total.errors), "failed or short I/Os");
  m(cat::elapsed_s, r.elapsed_s);
  m(cat::complete, r.complete ? 1.0 : 0.0, "the whole trace was replayed");
  rec.histogram("latency_" + p.group, r.total.latency);
  rec.histogram("service_latency_" + p.group, r.total.service);
  rec.histogram("lateness_" + p.group, r.total.lateness);
}

void ReplayEmulator::run(runner::TestContext& ctx) {
  if (!replayer_) return;
  auto& rec = *ctx.recorder;
  run_start_ns_ = monotonic_ns();
  const bool curve = !cfg_.curve.empty();
  Point first = replay_once(ctx, curve ? "max" : "replay", 0, curve ? 0.0 : cfg_.target_iops, curve || cfg_.no_stall);
  points_.push_back(first);
  record_point(ctx, first);
  // Failing storage ends the test failed (issue 15), with what was measured up to it recorded.
  if (!first.result.first_error.empty()) throw EnvironmentError(first.result.first_error);
  if (curve) {
    const double max_iops = first.result.iops();
    for (double pct : cfg_.curve) {
      if (ctx.stop_requested()) break;
      const double target = cfg_.curve_of == CurveOf::max ? static_cast<double>(runner::curve_rate(max_iops, pct))
                                                          : summary_.iops() * pct / 100.0;
      if (!(target > 0)) {
        rec.warning(fmt::format("curve point {}%: no rate to replay at (max run {:.0f} IOPS, trace {:.0f} IOPS)", pct,
                                max_iops, summary_.iops()));
        break;
      }
      rec.message(fmt::format("curve point {}%: {:.0f} IOPS", pct, target));
      Point p = replay_once(ctx, point_group(pct), pct, target, false);
      points_.push_back(p);
      record_point(ctx, p);
      if (!p.result.first_error.empty()) throw EnvironmentError(p.result.first_error);
    }
  }
  const auto& r = first.result;
  rec.metric(cat::iops, r.iops(),
             curve ? "I/Os per second of the max (no_stall) run" : "I/Os per second of the replay");
  rec.metric(cat::throughput_mb_s,
             r.elapsed_s > 0 ? static_cast<double>(r.total.read_bytes + r.total.write_bytes) / 1e6 / r.elapsed_s : 0.0,
             "MB = 10^6 bytes");
  runner::record_latency(rec, r.total.latency, "latency", cat::latency, LatencyUnit::us,
                         {LatencyFigure::avg("mean latency from the intended start"),
                          LatencyFigure::p(99, "99th percentile latency from the intended start")});
  runner::record_latency(rec, r.total.lateness, "lateness", cat::lateness, LatencyUnit::us,
                         {LatencyFigure::p(99, "99th percentile of submission minus intended start")});
  rec.metric(cat::overflow_ios, static_cast<double>(r.overflow_ios), "I/Os that found the queue full when due");
  rec.metric(cat::max_backlog_ios, static_cast<double>(r.max_backlog),
             "most requests past their intended start but not yet issued at once");
  rec.metric(cat::ios, static_cast<double>(r.total.ios), "I/Os completed in the first replay");
  rec.histogram("latency", r.total.latency);
  rec.histogram("lateness", r.total.lateness);
  if (curve) {
    double peak = 0;
    for (const auto& p : points_) peak = std::max(peak, p.result.iops());
    rec.group_metric("curve", cat::max_run_iops, first.result.iops(),
                     "the rate curve_of max points are percentages of");
    rec.group_metric("curve", cat::trace_iops, summary_.iops(), "the trace's own rate (curve_of recorded)");
    rec.group_metric("curve", cat::points_run, static_cast<double>(points_.size() - 1), "curve points measured");
    rec.group_metric("curve", cat::peak_iops, peak, "highest achieved IOPS of any replay");
  }
  results::Json pts = results::Json::array();
  for (const auto& p : points_)
    pts.push_back({{"group", p.group},
                   {"requested_pct", p.requested_pct},
                   {"requested_iops", p.requested_iops},
                   {"achieved_iops", p.result.iops()},
                   {"latency_avg_us", ns_to_us(p.result.total.latency.mean())},
                   {"latency_p99_us", ns_to_us(p.result.total.latency.percentile(99))},
                   {"lateness_p99_us", ns_to_us(p.result.total.lateness.percentile(99))},
                   {"overflow_ios", p.result.overflow_ios},
                   {"max_backlog_ios", p.result.max_backlog},
                   {"mean_backlog_ios", p.result.mean_backlog},
                   {"complete", p.result.complete}});
  rec.detail("points", std::move(pts));
  rec.detail("trace", results::Json{{"description", summary_.description},
                                    {"ios", summary_.ios},
                                    {"reads", summary_.reads},
                                    {"writes", summary_.writes},
                                    {"other", summary_.other},
                                    {"read_bytes", summary_.read_bytes},
                                    {"write_bytes", summary_.write_bytes},
                                    {"duration_s", summary_.duration_s()},
                                    {"out_of_order", summary_.out_of_order},
                                    {"max_backward_s", static_cast<double>(summary_.max_backward_ns) / 1e9},
                                    {"iops", summary_.iops()},
                                    {"devices", summary_.devices.size()},
                                    {"tick_ns", summary_.tick_ns}});
  rec.detail("mapping", results::Json{{"targets", cfg_.targets},
                                      {"slots_per_target", replayer_->slots_per_target()},
                                      {"slot_bytes", replayer_->slot_length_bytes()}});
  rec.detail("engine", std::string(replayer_->engine().name()));
  rec.detail("latency_measured",
             "latency: from the intended start (trace time x time scale) to the reap; service latency: "
             "from submission; lateness: submission minus intended start");
  double measured = 0;
  for (const auto& p : points_) measured += p.result.elapsed_s;
  rec.set_phase_times(0, measured);
}

void ReplayEmulator::verify(runner::TestContext& ctx) {
  if (!replayer_) return;
  auto& rec = *ctx.recorder;
  if (summary_check_) summary_check_(rec, summary_);
  for (auto& p : points_) {
    const auto& r = p.result;
    if (!r.complete) continue;  // cut short (stop request or duration): replay_once warned; nothing to compare
    const std::uint64_t flushes = r.flushes_replayed + r.flushes_skipped;
    const std::uint64_t discards = r.discards_replayed + r.discards_skipped;
    rec.check(
        p.group + ": I/O counts equal the trace's",
        r.total.reads == summary_.reads && r.total.writes == summary_.writes && flushes == summary_.flushes &&
            discards == summary_.discards,
        fmt::format("reads {} (trace {}), writes {} (trace {}), flushes {} replayed + {} skipped (trace {}), "
                    "discards {} replayed + {} skipped (trace {})",
                    r.total.reads, summary_.reads, r.total.writes, summary_.writes, r.flushes_replayed,
                    r.flushes_skipped, summary_.flushes, r.discards_replayed, r.discards_skipped, summary_.discards));
    rec.check(
        p.group + ": bytes per operation equal the trace's",
        r.total.read_bytes == summary_.read_bytes && r.total.write_bytes == summary_.write_bytes,
        fmt::format("read {} B (trace {} B), written {} B (trace {} B), {} I/Os rounded to the alignment",
                    r.total.read_bytes, summary_.read_bytes, r.total.write_bytes, summary_.write_bytes, r.rounded_ios));
    rec.check(p.group + ": no I/O errors", r.total.errors == 0, r.first_error);
  }
  if (cfg_.verify) {
    ReplayResult v;
    replayer_->verify_written(v);
    std::uint64_t during = 0, checked = 0;
    std::string errors;
    for (const auto& p : points_) {
      during += p.result.verify_mismatches;
      checked += p.result.verify_checked_units;
      for (const auto& e : p.result.verify_errors) errors += (errors.empty() ? "" : "; ") + e;
    }
    for (const auto& e : v.verify_errors) errors += (errors.empty() ? "" : "; ") + e;
    rec.check("verify: reads during the replay found their headers", during == 0,
              fmt::format("{} units checked, {} mismatches{}{}", checked, during, errors.empty() ? "" : ": ", errors));
    rec.check("verify: every written unit reads back with its header", v.verify_mismatches == 0,
              fmt::format("{} units read back, {} mismatches{}{}", v.verify_checked_units, v.verify_mismatches,
                          v.verify_errors.empty() ? "" : ": ", v.verify_errors.empty() ? "" : v.verify_errors.front()));
  }
}

void ReplayEmulator::cleanup(runner::TestContext&) noexcept {
  replayer_.reset();
  for (auto& f : files_)
    if (!cfg_.keep_file) f.remove();
  files_.clear();
}

}  // namespace drivelab::vdi::detail
