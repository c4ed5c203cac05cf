#include "sysbench_curve.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/summary.hpp"
#include "drivelab/runner/curve.hpp"
#include "drivelab/runner/latency_metrics.hpp"

namespace drivelab::oltp::sysbench::detail {
namespace cat = results::catalogue;

using runner::LatencyUnit;
using runner::ns_to_ms;
using Figure = runner::LatencyFigure;

namespace {

double per_s(std::uint64_t n, double secs) { return secs > 0 ? static_cast<double>(n) / secs : 0.0; }

}  // namespace

double CurveRun::tps() const noexcept { return per_s(totals.counters.events, totals.measured_s); }

double CurveRun::qps() const noexcept { return per_s(totals.counters.queries.total(), totals.measured_s); }

std::string CurveRun::console_line() const {
  const LatencyHistogram& h = totals.counters.latency;
  return runner::curve_run_line(group, requested_pct, requested_tps, tps(),
                                h.count() > 0 ? ns_to_ms(h.percentile(99)) : NAN, totals.measured_s);
}

std::optional<std::string> rate_not_held(const DriverTotals& t, int threads) {
  if (t.rate_per_s <= 0 || t.measured_s <= 0) return std::nullopt;
  const Counters& c = t.counters;
  const double tps = per_s(c.events, t.measured_s);
  const double tolerance = runner::rate_tolerance(t.rate_per_s, t.measured_s);
  if (t.arrivals_dropped == 0 && runner::rate_held(t.rate_per_s, tps, t.measured_s)) return std::nullopt;
  const double service_s = c.service.mean() / 1e9;
  const double capacity = service_s > 0 ? threads / service_s : 0.0;
  std::string dropped;
  if (t.arrivals_dropped > 0)
    dropped = fmt::format(
        ", {} arrivals dropped with {} events queued (sysbench 1.0 ends the run there: \"The event queue is "
        "full\")",
        t.arrivals_dropped, kMaxQueueLen);
  const std::string why =
      capacity > 0 && capacity < t.rate_per_s * (1.0 - tolerance)
          ? fmt::format(
                "{} threads at a mean execution time of {} serve at most about {:.0f} TPS (Little's law): "
                "raise threads, or lower rate",
                threads, results::format_latency(service_s * 1e3, "ms"), capacity)
          : fmt::format(
                "{} threads at a mean execution time of {} could serve about {:.0f} TPS, so the database "
                "(or its drive) did not keep up: lower rate",
                threads, results::format_latency(service_s * 1e3, "ms"), capacity);
  return fmt::format(
      "rate {:g}/s not held: {:.1f} TPS completed ({:.0f}% of it), {} events still queued at the end{}; queue "
      "wait p99 {}. {}",
      t.rate_per_s, tps, 100.0 * tps / t.rate_per_s, t.queued_at_end, dropped,
      results::format_latency(ns_to_ms(c.lateness.percentile(99)), "ms"), why);
}

void record_open_loop(results::TestRecorder& rec, const DriverTotals& t, int threads) {
  const Counters& c = t.counters;
  rec.metric(cat::arrival_rate, per_s(t.arrivals, t.measured_s),
             fmt::format("events that arrived per second (requested {:g}, Poisson arrivals)", t.rate_per_s));
  rec.metric(cat::arrivals_dropped, static_cast<double>(t.arrivals_dropped),
             fmt::format("arrivals dropped: {} events were queued (sysbench's MAX_QUEUE_LEN)", kMaxQueueLen));
  const std::initializer_list<Figure> figures = {Figure::avg(), Figure::p(50), Figure::p(95), Figure::p(99),
                                                 Figure::max()};
  runner::record_latency(rec, c.lateness, "queue_wait", cat::queue_wait, LatencyUnit::ms, figures);
  runner::record_latency(rec, c.service, "service_time", cat::service_time, LatencyUnit::ms, figures);
  rec.histogram("queue_wait", c.lateness);
  rec.histogram("service_time", c.service);
  rec.detail("rate", t.rate_per_s);
  rec.detail("queued_at_end", t.queued_at_end);
  if (std::optional<std::string> w = rate_not_held(t, threads)) rec.warning(*w);
}

void record_curve_point(results::TestRecorder& rec, const CurveRun& run) {
  const std::string& g = run.group;
  const DriverTotals& t = run.totals;
  const Counters& c = t.counters;
  const bool open = t.rate_per_s > 0;
  runner::record_curve_run_rates(rec, g, run.requested_pct, run.requested_tps, t.arrivals, t.measured_s, run.tps(),
                                 "transactions (events) per second");
  rec.group_metric(g, cat::qps, run.qps(), "queries per second");
  runner::record_curve_run_latency(rec, g, c.latency, "latency." + g);
  rec.histogram("latency." + g, c.latency);
  if (open) {
    runner::record_group_latency(rec, g, c.lateness, "queue_wait." + g, cat::queue_wait, LatencyUnit::ms,
                                 {Figure::p(99)});
    runner::record_group_latency(rec, g, c.service, "service_time." + g, cat::service_time, LatencyUnit::ms,
                                 {Figure::p(99)});
    rec.histogram("queue_wait." + g, c.lateness);
    rec.histogram("service_time." + g, c.service);
  }
  rec.group_metric(g, cat::ignored_errors, static_cast<double>(c.queries.errors));
  if (open) rec.group_metric(g, cat::arrivals_dropped, static_cast<double>(t.arrivals_dropped));
  rec.group_metric(g, cat::measured_s, t.measured_s);
}

results::Json curve_points_json(const std::vector<CurveRun>& runs, int threads) {
  results::Json pts = results::Json::array();
  for (const CurveRun& r : runs) {
    const Counters& c = r.totals.counters;
    results::Json p{{"group", r.group},
                    {"requested_pct", r.requested_pct},
                    {"requested_tps", r.requested_tps},
                    {"achieved_tps", r.tps()},
                    {"qps", r.qps()},
                    {"latency_avg_ms", ns_to_ms(c.latency.mean())},
                    {"latency_p90_ms", ns_to_ms(c.latency.percentile(90))},
                    {"latency_p95_ms", ns_to_ms(c.latency.percentile(95))},
                    {"latency_p99_ms", ns_to_ms(c.latency.percentile(99))},
                    {"measured_s", r.totals.measured_s}};
    if (r.totals.rate_per_s > 0) {
      p["queue_wait_p99_ms"] = ns_to_ms(c.lateness.percentile(99));
      p["arrivals_dropped"] = r.totals.arrivals_dropped;
      p["held"] = !rate_not_held(r.totals, threads).has_value();
    }
    pts.push_back(std::move(p));
  }
  return pts;
}

void warn_points_not_held(results::TestRecorder& rec, const std::vector<CurveRun>& runs, int threads) {
  for (const CurveRun& r : runs) {
    if (r.requested_pct <= 0 || r.requested_pct > 100) continue;
    if (std::optional<std::string> w = rate_not_held(r.totals, threads))
      rec.warning(fmt::format("rate: curve: point {} ({:g}% of the max run): {}", r.group, r.requested_pct, *w));
  }
}

void record_slo_answers(results::TestRecorder& rec, const std::vector<CurveRun>& runs,
                        const std::vector<runner::SloBound>& slo, const std::string& cut_after) {
  const auto figure_ms = [](const CurveRun& r, const runner::SloBound& b) {
    // A run that completed nothing has no figure (an empty histogram's 0 ms would pass any bound).
    const LatencyHistogram& h = r.totals.counters.latency;
    return h.count() > 0 ? ns_to_ms(h.percentile(b.percentile)) : NAN;
  };
  runner::record_oltp_slo_answers(
      rec, runs, slo, figure_ms, cat::max_qps_under_slo, "qps", [](const CurveRun& r) { return r.qps(); }, cut_after);
}

}  // namespace drivelab::oltp::sysbench::detail
