#include "tpcc_report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <numeric>
#include <initializer_list>
#include <string>

#include <fmt/format.h>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/runner/curve.hpp"
#include "drivelab/runner/latency_metrics.hpp"

namespace drivelab::oltp::tpcc::detail {
namespace cat = results::catalogue;
namespace {

using tpcc::TxType;

double ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }
double ms(double ns) { return ns / 1e6; }

/// Server counters worth a headline metric, where the backend reports them.
struct HeadlineCounter {
  const char* key;
  const results::MetricDef* metric;  ///< its declaration (results/catalogue.hpp)
  const char* description;
};
constexpr HeadlineCounter kHeadlineCounters[] = {
    {"blks_read", &cat::server_blks_read, "PostgreSQL: blocks read from outside shared buffers (pg_stat_database)"},
    {"blks_hit", &cat::server_blks_hit, "PostgreSQL: blocks found in shared buffers (pg_stat_database)"},
    {"xact_commit", &cat::server_commits, "PostgreSQL: committed transactions (pg_stat_database)"},
    {"wal_bytes", &cat::server_wal_bytes, "PostgreSQL: WAL written (pg_stat_wal)"},
    {"Innodb_data_reads", &cat::server_innodb_data_reads, "InnoDB: data file reads (SHOW GLOBAL STATUS)"},
    {"Innodb_data_writes", &cat::server_innodb_data_writes, "InnoDB: data file writes"},
    {"Innodb_data_read", &cat::server_innodb_data_read_bytes, "InnoDB: bytes read from data files"},
    {"Innodb_data_written", &cat::server_innodb_data_written_bytes, "InnoDB: bytes written to data files"},
    {"Innodb_data_fsyncs", &cat::server_innodb_data_fsyncs, "InnoDB: fsync() calls"},
    {"Com_commit", &cat::server_commits, "MySQL/MariaDB: COMMIT statements"},
};

/// Clause 5.2.4.2 on the completed transactions (record_tpcc_results).
std::optional<std::string> check_mix(results::TestRecorder& rec, const tpcc::DriverTotals& totals,
                                     const RunFacts& facts) {
  std::array<std::uint64_t, tpcc::kTxTypes> completed{};
  for (std::size_t k = 0; k < completed.size(); ++k)
    completed[k] = totals.by_type[k].commits + totals.by_type[k].rollbacks;
  const bool deck = facts.config->profile == tpcc::Profile::tpcc;
  // profile: hammerdb's independent draws miss a minimum by chance alone in about one run of
  // four: only a shortfall beyond chance is warned (tpcc_random.hpp).
  const auto misses =
      deck ? tpcc::mix_shortfalls(completed, facts.terminals) : tpcc::mix_shortfalls_beyond_chance(completed);
  if (misses.empty()) return std::nullopt;
  std::string what;
  for (const auto& m : misses) {
    const auto& a = totals.attempts[static_cast<std::size_t>(m.type)];
    what += fmt::format("{}{} {:.1f}% (at least {:g}%; {} completed, {} failed attempts)", what.empty() ? "" : ", ",
                        tpcc::to_string(m.type), m.pct, m.min_pct, m.count, a.failed);
  }
  const std::uint64_t total = std::accumulate(completed.begin(), completed.end(), std::uint64_t{0});
  if (deck)
    return fmt::format(
        "the completed transactions miss clause 5.2.4.2's minimum mix: {} of {} completed; more than "
        "{} terminals' partial decks explain, so transactions of that type failed or never ran",
        what, total, facts.terminals);
  rec.warning(
      fmt::format("the completed transactions miss clause 5.2.4.2's minimum mix by more than chance "
                  "explains: {} of {} completed (profile: hammerdb draws each transaction independently and "
                  "promises no minimum; this far below its odds, transactions of that type failed or never ran)",
                  what, total));
  return std::nullopt;
}

}  // namespace

results::Interval to_interval(const tpcc::IntervalStats& iv, double t_s) {
  results::Interval out;
  out.t_s = t_s;
  out.duration_s = iv.duration_s;
  const double d = iv.duration_s > 0 ? iv.duration_s : 1e-9;
  const auto& h = iv.response_time;
  out.values = {results::interval_value(cat::tps, static_cast<double>(iv.commits) / d),
                results::interval_value(cat::tpm_c, static_cast<double>(iv.new_order_commits) * 60.0 / d),
                results::interval_value(cat::latency_avg_ms, ms(h.mean())),
                results::interval_value(cat::latency_p95_ms, ms(h.percentile(95))),
                results::interval_value(cat::latency_p99_ms, ms(h.percentile(99))),
                results::interval_value(cat::retries, static_cast<double>(iv.retries)),
                results::interval_value(cat::errors, static_cast<double>(iv.errors)),
                results::interval_value(cat::reconnects, static_cast<double>(iv.reconnects)),
                results::interval_value(cat::queue_len_avg, iv.queue_length_avg),
                results::interval_value(cat::queue_len_max, static_cast<double>(iv.queue_length_max)),
                results::interval_value(cat::pool_util_pct, iv.pool_utilisation * 100.0)};
  out.histograms.emplace("latency", h);  // latency_* above are its figures (mh-spec, issue 16)
  return out;
}

results::Json counter_delta(const results::Json& before, const results::Json& after) {
  results::Json out = results::Json::object();
  if (!before.is_object() || !after.is_object()) return out;
  for (const auto& [key, value] : after.items()) {
    const auto it = before.find(key);
    if (it == before.end() || !value.is_number() || !it->is_number()) continue;
    if (value.is_number_integer() && it->is_number_integer())
      out[key] = value.get<std::int64_t>() - it->get<std::int64_t>();
    else
      out[key] = value.get<double>() - it->get<double>();
  }
  return out;
}

std::uint64_t peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // "VmHWM:  1234 kB"
  return 0;
}

std::optional<std::string> pool_wait_warning(const tpcc::DriverTotals& totals, bool open_loop) {
  tpcc::TypeStats all;
  for (const auto& s : totals.by_type) all.merge(s);
  const double qw_p50 = ms(all.queue_wait.percentile(50));
  const double rt_p50 = ms(all.response_time.percentile(50));
  if (all.response_time.count() == 0 || rt_p50 <= 0 || qw_p50 <= kQueueWaitWarnShare * rt_p50) return std::nullopt;

  // The type whose service time has the longest tail relative to its median.
  std::string_view worst = "all types";
  double worst_ratio = 0;
  const auto consider = [&](const LatencyHistogram& h, std::string_view name) {
    const double p50 = static_cast<double>(h.percentile(50));
    const double ratio = static_cast<double>(h.percentile(99)) / std::max(p50, 1.0);
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = name;
    }
  };
  for (TxType t : tpcc::kAllTxTypes)
    if (const auto& s = totals.by_type[static_cast<std::size_t>(t)]; s.service_time.count() >= kServiceStallMinSamples)
      consider(s.service_time, tpcc::to_string(t));
  if (worst_ratio == 0) consider(all.service_time, "all types");
  const bool stalled = worst_ratio >= kServiceStallRatio;

  const std::string measured = fmt::format(
      "queue wait is {:.0f}% of the response time at p50 ({:.2f} of {:.2f} ms): transactions waited for one of the "
      "pool's {} connections ({:.0f}% busy) {} the service time on a connection {} (p50 {:.2f} ms, p99 {:.2f} ms; "
      "{}'s p99 is {:.1f}x its p50, {} {:.0f}x)",
      100.0 * qw_p50 / rt_p50, qw_p50, rt_p50, totals.workers, totals.pool_utilisation * 100.0,
      stalled ? "because" : "while", stalled ? "stalled" : "stayed steady", ms(all.service_time.percentile(50)),
      ms(all.service_time.percentile(99)), worst, worst_ratio, stalled ? "at or above" : "below", kServiceStallRatio);
  if (stalled)
    return measured +
           ": slow transactions held the connections, so the database server or its drive stalled (I/O, "
           "checkpoint or lock waits), not the pool's size; more connections would wait inside the server "
           "instead; look at the drive's latency and the server's waits over the run";
  return measured + ": the pool, not the database or the drive, shaped the response times; " +
         (open_loop ? "lower rate, or raise connections if the database has capacity left"
                    : "raise connections if the database has capacity left (service times stay flat as "
                      "connections grow), otherwise the terminals offer more than this database serves");
}

std::string login_lag_warning(int logged_in, int users, double login_rate_per_s, double warmup_s) {
  const double schedule_s = login_rate_per_s > 0 ? users / login_rate_per_s : 0.0;
  const std::string due = login_rate_per_s > 0 ? fmt::format("the last login was due {:.3g} s", schedule_s)
                                               : std::string("every login was due at once");
  // `warmup: 0` still takes the driver's start-up (a fraction of a millisecond): "the 0 s warm-up",
  // not "the 0.000537 s warm-up".
  const std::string warmup = fmt::format("the {:.3g} s warm-up", warmup_s < 0.05 ? 0.0 : warmup_s);
  if (warmup_s < schedule_s + kLoginGraceS)
    return fmt::format(
        "only {} of {} users were logged in when the measured phase began (login_rate {:g}/s): {} into "
        "{}; make warmup at least users / login_rate + {:g} s = {:.3g} s",
        logged_in, users, login_rate_per_s, due, warmup, kLoginGraceS, schedule_s + kLoginGraceS);
  return fmt::format(
      "only {} of {} users were logged in when the measured phase began (login_rate {:g}/s), though {} into "
      "{}: the others were still connecting, so the server accepts sessions slowly (a connect waits "
      "up to its time-out) and a longer warm-up would not fix it; the measured phase ran with fewer users than "
      "asked: find what slows the server's logins{}",
      logged_in, users, login_rate_per_s, due, warmup,
      login_rate_per_s > 0 ? ", or lower login_rate" : ", or set login_rate to stagger them");
}

namespace {

using runner::LatencyUnit;
using Figure = runner::LatencyFigure;
constexpr Figure kP999 = Figure::p(99.9).named("p99_9");  // TPC-C's metric name for the 99.9th
// The seven figures of one latency histogram: <prefix>_{avg,p50,p90,p95,p99,p99_9,max}_ms.
constexpr std::initializer_list<Figure> kSeven = {Figure::avg(), Figure::p(50), Figure::p(90), Figure::p(95),
                                                  Figure::p(99), kP999,         Figure::max()};

tpcc::TypeStats all_types(const tpcc::DriverTotals& totals) {
  tpcc::TypeStats all;
  for (const auto& s : totals.by_type) all.merge(s);
  return all;
}

/// The headline metrics of record_tpcc_results.
void record_headline(results::TestRecorder& rec, const tpcc::DriverTotals& totals, const RunFacts& facts,
                     const std::function<void()>& after_rates) {
  const tpcc::TpccConfig& cfg = *facts.config;
  const double secs = totals.measured_s > 0 ? totals.measured_s : 1e-9;
  const tpcc::TypeStats all = all_types(totals);
  const auto& no = totals.by_type[static_cast<std::size_t>(TxType::new_order)];
  const double tpm_c = static_cast<double>(no.commits) * 60.0 / secs;
  const auto& h = all.response_time;
  const bool pooled = cfg.terminals == tpcc::TerminalMode::pooled;
  const auto metric = [&](const results::MetricDef& def, double v, const char* what = "") { rec.metric(def, v, what); };

  metric(cat::tps, static_cast<double>(all.commits) / secs,
         "committed transactions of all five types per second of the measured phase");
  metric(cat::tpm_c, tpm_c, "committed New-Order transactions per minute (tpmC-like)");
  // NOPM: a headline (the summary's first figures) under profile: hammerdb, whose users compare it.
  const auto nopm = [&] {
    if (facts.nopm_db)
      metric(cat::nopm, *facts.nopm_db,
             "HammerDB's NOPM: SUM(d_next_o_id) at the end minus at the start of the measured phase, per minute "
             "(the database's count of New-Orders, profile: hammerdb)");
    else
      metric(cat::nopm, tpm_c, "New-Orders per minute: the same count under HammerDB's name");
  };
  const bool hammerdb = cfg.profile == tpcc::Profile::hammerdb;
  if (hammerdb) nopm();
  if (after_rates) after_rates();
  runner::record_latency(rec, h, "response_time", cat::latency, LatencyUnit::ms,
                         {Figure::avg("mean response time at the terminal (queue wait + service), all types"),
                          Figure::p(95, "95th percentile response time, all types"),
                          Figure::p(99, "99th percentile response time, all types")});
  if (!hammerdb) nopm();
  // Only where it means something: with clause 5.2.5's keying and think times at full length a
  // warehouse's ten terminals cannot pass 12.86 tpmC; without them (think: none) the ratio is
  // a number like 40,000% that no reader can stand behind, so it is left out.
  if (cfg.think == tpcc::ThinkMode::tpcc && cfg.think_scale == 1.0)
    metric(cat::efficiency_pct, tpm_c / (kMaxTpmCPerWarehouse * cfg.warehouses) * 100.0,
           "tpm_c / (12.86 x warehouses)");
  // The rest of the response time's figures, and the seven of each of its two parts.
  runner::record_latency(rec, h, "response_time", cat::latency, LatencyUnit::ms,
                         {Figure::p(50), Figure::p(90), kP999, Figure::max()});
  runner::record_latency(rec, all.queue_wait, "queue_wait", cat::queue_wait, LatencyUnit::ms, kSeven);
  runner::record_latency(rec, all.service_time, "service_time", cat::service_time, LatencyUnit::ms, kSeven);
  metric(cat::transactions, static_cast<double>(all.commits), "committed transactions");
  metric(cat::new_orders, static_cast<double>(no.commits), "committed New-Orders");
  metric(cat::rollbacks, static_cast<double>(all.rollbacks),
         "New-Order business rollbacks (1% by design, clause 2.4.1.4)");
  metric(cat::retries, static_cast<double>(all.retries),
         "reruns after a retryable failure (lock timeout, busy, deadlock, serialization)");
  metric(cat::errors, static_cast<double>(all.errors),
         "transactions that failed (in doubt, fatal, or retries exhausted)");
  metric(cat::reconnects, static_cast<double>(all.reconnects), "sessions reopened after a lost connection");
  metric(cat::pool_utilisation_pct, totals.pool_utilisation * 100.0,
         pooled ? "busy time of the pool's connections / (connections x measured time)"
                : "time users spent inside a transaction / (users x measured time)");
  metric(cat::queue_length_avg, totals.queue_length_avg, "time-weighted mean of transactions waiting for a connection");
  metric(cat::queue_length_max, static_cast<double>(totals.queue_length_max), "most transactions waiting at once");
  if (totals.timer_lateness.count() > 0) {
    metric(cat::timer_lateness_p99_ms, ms(totals.timer_lateness.percentile(99)),
           "99th percentile of how late keying/think/arrival timers fired");
    metric(cat::timer_lateness_max_ms, ms(totals.timer_lateness.max()), "latest timer");
  }
  metric(cat::driver_cpu_pct, facts.cpu.total_pct(secs),
         "CPU of the drivelab process (user + system) during the measured phase, % of one core");
  metric(cat::driver_rss_peak_mib, static_cast<double>(facts.peak_rss_bytes) / (1 << 20),
         "peak resident memory of the drivelab process (VmHWM)");
  if (cfg.rate_per_s > 0) {
    metric(cat::arrival_rate, static_cast<double>(totals.arrivals) / secs,
           "open loop: transactions that arrived per second (requested: rate)");
    metric(cat::arrivals_dropped, static_cast<double>(totals.arrivals_dropped),
           "open loop: arrivals dropped because the queue was full");
  }
  const results::Json delta = counter_delta(facts.counters_before, facts.counters_after);
  for (const auto& c : kHeadlineCounters)
    if (const auto it = delta.find(c.key); it != delta.end()) metric(*c.metric, it->get<double>(), c.description);
  if (!delta.empty()) rec.detail("server_counters", delta);
}

/// The per-type groups and histograms of record_tpcc_results.
void record_type_groups(results::TestRecorder& rec, const tpcc::DriverTotals& totals) {
  const double secs = totals.measured_s > 0 ? totals.measured_s : 1e-9;
  for (TxType t : tpcc::kAllTxTypes) {
    const auto& s = totals.by_type[static_cast<std::size_t>(t)];
    const std::string g(tpcc::to_string(t));
    rec.group_metric(g, cat::count, static_cast<double>(s.commits + s.rollbacks),
                     "completed transactions (commits + business rollbacks)");
    rec.group_metric(g, cat::tps, static_cast<double>(s.commits) / secs, "commits per second");
    runner::record_group_latency(rec, g, s.response_time, "response_time." + g, cat::latency, LatencyUnit::ms, kSeven);
    runner::record_group_latency(rec, g, s.queue_wait, "queue_wait." + g, cat::queue_wait, LatencyUnit::ms, kSeven);
    runner::record_group_latency(rec, g, s.service_time, "service_time." + g, cat::service_time, LatencyUnit::ms,
                                 kSeven);
    rec.group_metric(g, cat::rollbacks, static_cast<double>(s.rollbacks));
    rec.group_metric(g, cat::retries, static_cast<double>(s.retries));
    rec.group_metric(g, cat::errors, static_cast<double>(s.errors));
    rec.group_metric(g, cat::reconnects, static_cast<double>(s.reconnects));
    const AttemptTotals& a = totals.attempts[static_cast<std::size_t>(t)];
    rec.group_metric(g, cat::attempts, static_cast<double>(a.attempts),
                     "executions of the transaction: first tries and reruns");
    rec.group_metric(g, cat::failed_attempts, static_cast<double>(a.failed),
                     "executions that ended with an error, retryable ones included (failure_bound)");
    rec.histogram("response_time." + g, s.response_time);
    rec.histogram("queue_wait." + g, s.queue_wait);
    rec.histogram("service_time." + g, s.service_time);
  }
}

/// Histograms, details and warnings of record_tpcc_results.
void record_run_details(results::TestRecorder& rec, const tpcc::DriverTotals& totals, const RunFacts& facts) {
  const tpcc::TpccConfig& cfg = *facts.config;
  const tpcc::TypeStats all = all_types(totals);
  rec.histogram("response_time", all.response_time);
  rec.histogram("queue_wait", all.queue_wait);
  rec.histogram("service_time", all.service_time);
  if (totals.timer_lateness.count() > 0) rec.histogram("timer_lateness", totals.timer_lateness);
  rec.detail("in_doubt", totals.in_doubt);
  rec.detail("delivery_skipped_districts", totals.delivery_skipped_districts);
  rec.detail("pool", {{"workers", totals.workers},
                      {"timer_thread_policy", totals.timer_thread_fifo ? "fifo" : "other"},
                      {"timer_thread_nice", totals.timer_thread_nice},
                      {"timer_thread_slice_us", totals.timer_thread_slice_us},
                      {"utilisation_pct", totals.pool_utilisation * 100.0},
                      {"queue_length_avg", totals.queue_length_avg},
                      {"queue_length_max", totals.queue_length_max}});
  const std::uint64_t completed = all.commits + all.rollbacks;
  if (completed > 0) {
    results::Json mix = results::Json::object();
    for (TxType t : tpcc::kAllTxTypes) {
      const auto& s = totals.by_type[static_cast<std::size_t>(t)];
      mix[std::string(tpcc::to_string(t))] =
          100.0 * static_cast<double>(s.commits + s.rollbacks) / static_cast<double>(completed);
    }
    rec.detail("mix_pct", mix);
  }
  results::Json failures = results::Json::object();
  for (TxType t : tpcc::kAllTxTypes) {
    const AttemptTotals& a = totals.attempts[static_cast<std::size_t>(t)];
    if (!a.first_error) continue;
    failures[std::string(tpcc::to_string(t))] = to_json(a);
  }
  if (!failures.empty()) rec.detail("failed_attempts", failures);

  // When the pool, not the database, shaped the numbers, say so in the record, and which.
  if (std::optional<std::string> w = pool_wait_warning(totals, cfg.rate_per_s > 0)) rec.warning(*w);
  if (totals.arrivals_dropped > 0)
    rec.warning(
        fmt::format("{} of {} arrivals were dropped (more than {} queued): rate {:.0f}/s is "
                    "above what this database delivers",
                    totals.arrivals_dropped, totals.arrivals, tpcc::DriverOptions{}.max_queued, cfg.rate_per_s));
  if (totals.timer_lateness.count() > 0 && totals.timer_lateness.percentile(99) > 50'000'000)
    rec.warning(
        fmt::format("timer lateness p99 is {:.1f} ms: the driver machine is too busy to keep "
                    "the keying/think/arrival schedule",
                    ms(totals.timer_lateness.percentile(99))));
}

}  // namespace

std::optional<std::string> record_tpcc_results(results::TestRecorder& rec, const tpcc::DriverTotals& totals,
                                               const RunFacts& facts, const std::function<void()>& after_rates) {
  record_headline(rec, totals, facts, after_rates);
  record_type_groups(rec, totals);
  record_run_details(rec, totals, facts);
  return check_mix(rec, totals, facts);
}

double CurveRun::tps() const noexcept {
  const tpcc::TypeStats all = all_types(totals);
  return totals.measured_s > 0 ? static_cast<double>(all.commits) / totals.measured_s : 0.0;
}

double CurveRun::tpm_c() const noexcept {
  const auto& no = totals.by_type[static_cast<std::size_t>(TxType::new_order)];
  return totals.measured_s > 0 ? static_cast<double>(no.commits) * 60.0 / totals.measured_s : 0.0;
}

std::uint64_t CurveRun::commits() const noexcept { return all_types(totals).commits; }

std::string CurveRun::console_line() const {
  const LatencyHistogram h = all_types(totals).response_time;
  return runner::curve_run_line(group, requested_pct, requested_tps, tps(), h.count() > 0 ? ms(h.percentile(99)) : NAN,
                                totals.measured_s);
}

double slo_figure_ms(const tpcc::DriverTotals& totals, const runner::SloBound& bound) {
  LatencyHistogram h = all_types(totals).response_time;
  for (TxType t : tpcc::kAllTxTypes)
    if (bound.subject == tpcc::to_string(t)) h = totals.by_type[static_cast<std::size_t>(t)].response_time;
  // A run that completed nothing has no figure (an empty histogram's 0 ms would pass any bound).
  return h.count() > 0 ? ms(h.percentile(bound.percentile)) : NAN;
}

void record_curve_point(results::TestRecorder& rec, const CurveRun& run) {
  const std::string& g = run.group;
  const tpcc::DriverTotals& t = run.totals;
  const double secs = t.measured_s > 0 ? t.measured_s : 1e-9;
  const tpcc::TypeStats all = all_types(t);
  runner::record_curve_run_rates(rec, g, run.requested_pct, run.requested_tps, t.arrivals, t.measured_s, run.tps(),
                                 "committed transactions of all types per second");
  rec.group_metric(g, cat::tpm_c, run.tpm_c(), "committed New-Orders per minute");
  runner::record_curve_run_latency(rec, g, all.response_time, "response_time." + g);
  runner::record_group_latency(rec, g, all.queue_wait, "queue_wait." + g, cat::queue_wait, LatencyUnit::ms,
                               {Figure::p(99)});
  runner::record_group_latency(rec, g, all.service_time, "service_time." + g, cat::service_time, LatencyUnit::ms,
                               {Figure::p(99)});
  rec.group_metric(g, cat::errors, static_cast<double>(all.errors));
  rec.group_metric(g, cat::measured_s, t.measured_s);
  rec.histogram("response_time." + g, all.response_time);
  rec.histogram("queue_wait." + g, all.queue_wait);
  rec.histogram("service_time." + g, all.service_time);
  for (TxType type : tpcc::kAllTxTypes) {
    const auto& s = t.by_type[static_cast<std::size_t>(type)];
    const std::string tg = g + "." + std::string(tpcc::to_string(type));
    rec.group_metric(tg, cat::tps, static_cast<double>(s.commits) / secs, "commits per second");
    runner::record_group_latency(rec, tg, s.response_time, "response_time." + tg, cat::latency, LatencyUnit::ms,
                                 {Figure::avg(), Figure::p(50), Figure::p(90), Figure::p(99), Figure::max()});
    rec.histogram("response_time." + tg, s.response_time);
  }
}

results::Json curve_points_json(const std::vector<CurveRun>& runs) {
  results::Json pts = results::Json::array();
  for (const CurveRun& r : runs) {
    const LatencyHistogram h = all_types(r.totals).response_time;
    results::Json p{{"group", r.group},
                    {"requested_pct", r.requested_pct},
                    {"requested_tps", r.requested_tps},
                    {"achieved_tps", r.tps()},
                    {"tpm_c", r.tpm_c()},
                    {"latency_avg_ms", ms(h.mean())},
                    {"latency_p99_ms", ms(h.percentile(99))},
                    {"measured_s", r.totals.measured_s}};
    for (TxType t : tpcc::kAllTxTypes) {
      const auto& rt = r.totals.by_type[static_cast<std::size_t>(t)].response_time;
      const std::string name(tpcc::to_string(t));
      p[name + "_p90_ms"] = ms(rt.percentile(90));
      p[name + "_p99_ms"] = ms(rt.percentile(99));
    }
    pts.push_back(std::move(p));
  }
  return pts;
}

void record_slo_answers(results::TestRecorder& rec, const std::vector<CurveRun>& runs,
                        const std::vector<runner::SloBound>& slo, const std::string& cut_after) {
  runner::record_oltp_slo_answers(
      rec, runs, slo, [](const CurveRun& r, const runner::SloBound& b) { return slo_figure_ms(r.totals, b); },
      cat::max_tpmc_under_slo, "tpm_c", [](const CurveRun& r) { return r.tpm_c(); }, cut_after);
}

}  // namespace drivelab::oltp::tpcc::detail
