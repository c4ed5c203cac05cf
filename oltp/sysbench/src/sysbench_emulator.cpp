#include "sysbench_emulator.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/phase.hpp"
#include "drivelab/oltp/sysbench/sysbench_preflight.hpp"
#include "drivelab/oltp/sysbench/sysbench_schema.hpp"
#include "drivelab/runner/curve.hpp"
#include "drivelab/runner/latency_metrics.hpp"

namespace drivelab::oltp::sysbench::detail {
namespace cat = results::catalogue;

using runner::LatencyFigure;
using runner::LatencyUnit;
using runner::ns_to_ms;

namespace {

// Seeds of the independent random streams of one test.
enum Stream : std::uint64_t { kStreamLoad = 1, kStreamWorkers = 2 };

/// `s` as one shell word: as is when it is plain, else in single quotes.
std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char ch) {
    return std::isalnum(ch) != 0 || std::strchr("-_./:+@%=,", ch) != nullptr;
  });
  if (plain) return s;
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

/// Whether the server takes a password from the configuration (password_env, password_file, or
/// a libpq `password=` / ODBC `PWD=` inside `connection`).
bool uses_password(const DatabaseConfig& d) {
  if (!d.password_env.empty() || !d.password_file.empty()) return true;
  if (d.managed) return false;
  std::string text = d.connection;
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  for (const std::string_view key : {"password", "pwd"}) {
    for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
      const bool starts_word =
          at == 0 || std::isspace(static_cast<unsigned char>(text[at - 1])) != 0 || text[at - 1] == ';';
      auto end = at + key.size();
      while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end])) != 0) ++end;
      if (starts_word && end < text.size() && text[end] == '=') return true;
    }
  }
  return false;
}

/// sysbench 1.0.20's connection options (`sysbench --help`, "mysql options" / "pgsql options")
/// for the server `backend` (Backend::describe()) names: socket or host and port, user,
/// database; a password as kSysbenchPasswordPlaceholder.
std::string connection_options(const results::Json& backend, std::string_view driver, bool password) {
  const std::string_view prefix = driver;  // sysbench's option prefix is its driver's name
  std::string out;
  const auto add = [&](std::string_view option, const results::Json& value) {
    const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    out += fmt::format(" --{}-{}={}", prefix, option, shell_word(text));
  };
  if (backend.contains("socket")) {  // a MySQL socket file (--mysql-socket)
    add("socket", backend["socket"]);
    if (backend.contains("host")) add("host", backend["host"]);
  } else if (backend.contains("socket_dir")) {
    add("host", backend["socket_dir"]);  // libpq takes a socket directory as the host
  } else if (backend.contains("host")) {
    add("host", backend["host"]);
  }
  if (backend.contains("port")) add("port", backend["port"]);
  if (backend.contains("user") && backend["user"].is_string() && !backend["user"].get<std::string>().empty())
    add("user", backend["user"]);
  if (backend.contains("database")) add("db", backend["database"]);
  if (password) out += fmt::format(" --{}-password={}", prefix, shell_word(std::string(kSysbenchPasswordPlaceholder)));
  return out;
}

/// The sysbench command line that runs the same test on the same server and database (for
/// people comparing the two); `backend` is Backend::describe().
std::string sysbench_command(const SysbenchConfig& c, const runner::TestSettings& s, const Dialect& dialect,
                             const results::Json& backend) {
  std::string cmd = fmt::format(
      "sysbench {} --tables={} --table-size={} --threads={} --time={} --report-interval={}", to_string(c.workload),
      c.tables, c.table_size, c.threads, std::chrono::duration_cast<std::chrono::seconds>(s.duration).count(),
      std::max<std::int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(s.interval).count()));
  // sysbench's --rate is an integer (src/sysbench.c: SB_OPT("rate", ..., INT)).
  if (c.rate_per_s > 0) cmd += fmt::format(" --rate={}", std::max<long long>(1, std::llround(c.rate_per_s)));
  const RandOptions dr;
  cmd += fmt::format(" --rand-type={}", to_string(c.rand.type));
  if (c.rand.spec_iter != dr.spec_iter) cmd += fmt::format(" --rand-spec-iter={}", c.rand.spec_iter);
  if (c.rand.spec_pct != dr.spec_pct) cmd += fmt::format(" --rand-spec-pct={}", c.rand.spec_pct);
  if (c.rand.spec_res != dr.spec_res) cmd += fmt::format(" --rand-spec-res={}", c.rand.spec_res);
  if (c.rand.pareto_h != dr.pareto_h) cmd += fmt::format(" --rand-pareto-h={}", c.rand.pareto_h);
  const StatementOptions d;
  const auto& o = c.statements;
  const std::tuple<const char*, std::int64_t, std::int64_t> counts[] = {
      {"point_selects", o.point_selects, d.point_selects},
      {"simple_ranges", o.simple_ranges, d.simple_ranges},
      {"sum_ranges", o.sum_ranges, d.sum_ranges},
      {"order_ranges", o.order_ranges, d.order_ranges},
      {"distinct_ranges", o.distinct_ranges, d.distinct_ranges},
      {"index_updates", o.index_updates, d.index_updates},
      {"non_index_updates", o.non_index_updates, d.non_index_updates},
      {"delete_inserts", o.delete_inserts, d.delete_inserts},
      {"range_size", o.range_size, d.range_size}};
  for (const auto& [key, value, fallback] : counts)
    if (value != fallback) cmd += fmt::format(" --{}={}", key, value);
  if (!o.range_selects) cmd += " --range_selects=off";
  if (!dialect.sysbench_driver.empty())
    cmd += " --db-driver=" + dialect.sysbench_driver +
           connection_options(backend, dialect.sysbench_driver, uses_password(c.database));
  return cmd + " run";
}

}  // namespace

SysbenchEmulator::SysbenchEmulator(SysbenchConfig config, runner::TestSettings settings)
    : config_(std::move(config)), settings_(std::move(settings)) {
  scale_.tables = config_.tables;
  scale_.table_size = config_.table_size;
}

SysbenchEmulator::~SysbenchEmulator() = default;

results::Json SysbenchEmulator::effective_config() const { return to_json(config_); }

void SysbenchEmulator::prepare_phase(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  for (const std::string& w : config_.warnings) rec.warning(w);
  const Capabilities can = capabilities_of(config_.database.backend);
  db_ = open_database(
      config_.database,
      open_request(ctx, settings_.name, "sysbench",
                   sessions_needed(config_.threads, load_threads_used(config_.threads, scale_, can), can)));
  Backend& backend = db_->backend();
  rec.detail("preflight", preflight(backend, config_));

  bool reused = false;
  if (config_.reuse && backend.exists()) {
    std::optional<std::string> why;
    {
      auto conn = backend.connect();
      why = check_reusable(*conn, scale_);
    }
    if (!why) {
      reused = true;
      rec.message(fmt::format("reusing {} table(s) of {} rows", scale_.tables, scale_.table_size));
    } else {
      rec.message(fmt::format("the tables are not reusable ({}); rebuilding", *why));
    }
  }

  results::Json load = results::Json::object();
  if (!reused) {
    loaded_by_us_ = true;
    backend.destroy();  // refuses (BackendError) to drop tables that are not drivelab's
    const LoadStats stats = load_tables(
        backend, scale_, config_.rand, Rng(ctx.seed).split(kStreamLoad), config_.threads,
        [&](const LoadProgress& p) {
          rec.message(fmt::format("loaded table {}/{} ({} rows), ETA {:.0f}s", p.tables_done, p.tables_total,
                                  p.rows_done, p.eta_s));
        },
        [&] { return ctx.stop_requested(); });
    if (!stats.complete) return;  // stopped: the runner skips the other phases
    const double bytes = static_cast<double>(backend.size_bytes().value_or(0));
    const double rate_mb_s = stats.seconds > 0 ? bytes / 1e6 / stats.seconds : 0.0;
    rec.message(fmt::format("loaded {} table(s), {} rows, {:.1f} MB in {:.1f}s ({:.1f} MB/s, {} thread(s))",
                            scale_.tables, stats.rows, bytes / 1e6, stats.seconds, rate_mb_s, stats.threads));
    load = {{"seconds", stats.seconds},
            {"rows", stats.rows},
            {"threads", stats.threads},
            {"rate_mb_s", rate_mb_s},
            {"rate_rows_s", stats.seconds > 0 ? static_cast<double>(stats.rows) / stats.seconds : 0.0}};
  }
  const results::Json described = db_->describe();
  rec.detail("database", described);
  rec.detail("database_reused", reused);
  rec.detail("database_size_bytes_after_load", backend.size_bytes().value_or(0));
  rec.detail("load", load);
  rec.detail("prepared_statements_per_connection",
             prepared_per_connection(config_.workload, config_.statements, config_.tables));
  rec.detail("sysbench_command", sysbench_command(config_, settings_, backend.dialect(),
                                                  described.value("backend", results::Json::object())));
  // Without a driver the command would fall to sysbench's default (MySQL) and fail or, worse,
  // measure some MySQL server: say why it has none.
  if (backend.dialect().sysbench_driver.empty())
    rec.detail("sysbench_command_note",
               fmt::format("sysbench has no {} driver: the command has the workload's options only; add "
                           "--db-driver=pgsql or --db-driver=mysql and the server's connection options to run it",
                           backend.dialect().name));
}

std::string SysbenchEmulator::schedule(const runner::TestSettings& settings) const {
  return config_.rate_curve ? runner::rate_curve_schedule(config_.curve.size(), settings) : std::string();
}

std::vector<std::string> SysbenchEmulator::config_warnings() const { return config_.warnings; }

void SysbenchEmulator::start_driver(runner::TestContext& ctx, double rate_per_s, std::uint64_t point) {
  DriverOptions opt;
  opt.workload = config_.workload;
  opt.statements = config_.statements;
  opt.rand = config_.rand;
  opt.scale = scale_;
  opt.threads = config_.threads;
  // Each curve point's workers and arrivals draw from their own stream (point 0: the test's).
  Rng workers = Rng(ctx.seed).split(kStreamWorkers);
  if (point > 0) workers = workers.split(point);
  opt.seed = workers();
  opt.failure_bound = config_.failure_bound;
  opt.rate_per_s = rate_per_s;
  driver_ = std::make_unique<Driver>(db_->backend(), opt);
  driver_->start();
  if (point == 0) ctx.recorder->detail("threads", config_.threads);
}

bool SysbenchEmulator::stop_or_failed(const runner::TestContext& ctx) const noexcept {
  return ctx.stop_requested() || (driver_ && driver_->failed());
}

void SysbenchEmulator::warmup_phase(runner::TestContext& ctx) {
  const std::int64_t t0 = monotonic_ns();
  start_driver(ctx, config_.rate_per_s, 0);
  wait_until(t0 + settings_.warmup.count(), [&] { return stop_or_failed(ctx); });
  warmup_s_ = seconds_between(t0, monotonic_ns());
  if (driver_->failed()) {
    driver_->finish();
    throw BackendError(driver_->fatal_error().value_or("a worker thread failed"));
  }
}

void SysbenchEmulator::measure_intervals(runner::TestContext& ctx) {
  const std::int64_t t0 = monotonic_ns();
  const auto aborted = [&] { return stop_or_failed(ctx); };
  for_each_interval(t0, t0 + settings_.duration.count(), settings_.interval.count(), aborted, [&](bool) {
    const IntervalStats iv = driver_->take_interval();
    if (iv.duration_s > 0.001) {
      // sysbench --report-interval: "tps: qps: (r/w/o: ) lat (ms,95%): err/s: reconn/s:"
      const Counters& c = iv.counters;
      const double s = iv.duration_s;
      const auto per_s = [s](std::uint64_t n) { return static_cast<double>(n) / s; };
      results::Interval out;
      out.t_s = seconds_between(run_start_ns_, monotonic_ns());
      out.duration_s = s;
      out.values = {results::interval_value(cat::tps, per_s(c.events)),
                    results::interval_value(cat::qps, per_s(c.queries.total())),
                    results::interval_value(cat::reads_s, per_s(c.queries.reads)),
                    results::interval_value(cat::writes_s, per_s(c.queries.writes)),
                    results::interval_value(cat::other_s, per_s(c.queries.other)),
                    results::interval_value(cat::latency_p95_ms, ns_to_ms(c.latency.percentile(95))),
                    results::interval_value(cat::err_s, per_s(c.queries.errors)),
                    results::interval_value(cat::reconn_s, per_s(c.reconnects)),
                    results::interval_value(cat::latency_avg_ms, ns_to_ms(c.latency.mean())),
                    results::interval_value(cat::latency_p99_ms, ns_to_ms(c.latency.percentile(99)))};
      out.histograms.emplace("latency", c.latency);  // latency_* above are its figures (mh-spec, issue 16)
      ctx.recorder->interval(std::move(out));
    }
  });
}

void SysbenchEmulator::run_phase(runner::TestContext& ctx) {
  if (!driver_) start_driver(ctx, config_.rate_per_s, 0);
  driver_->begin_measurement();
  run_start_ns_ = monotonic_ns();
  measure_intervals(ctx);
  driver_->finish();
  const DriverTotals totals = driver_->totals();
  std::vector<CurveRun> runs;
  std::string cut_after;
  if (config_.rate_curve) {
    runs.push_back(CurveRun{.group = "max", .totals = totals});
    cut_after = run_curve_points(ctx, settings_, config_.curve, runs, driver_, record_curve_point, "completed");
  }
  // Nothing completed in the measured phase (a curve's max run): no figure to report (its
  // latencies would read 0 ms). Checked after the curve, whose collectives every rank runs; a
  // stopped run stays interrupted, with what it has.
  if (totals.counters.events == 0 && !stop_or_failed(ctx))
    throw Error(runner::nothing_completed(config_.rate_per_s, totals.measured_s));
  record_results(ctx, totals, runs, cut_after);
  double measured = 0;
  for (const CurveRun& r : runs) measured += r.totals.measured_s;
  ctx.recorder->set_phase_times(warmup_s_, runs.empty() ? totals.measured_s : measured);
  if (auto err = driver_->fatal_error()) throw BackendError(*err);
}

void SysbenchEmulator::record_results(runner::TestContext& ctx, const DriverTotals& totals,
                                      const std::vector<CurveRun>& runs, const std::string& cut_after) {
  auto& rec = *ctx.recorder;
  const Counters& c = totals.counters;
  const double secs = totals.measured_s > 0 ? totals.measured_s : 1e-9;
  const auto per_s = [secs](std::uint64_t n) { return static_cast<double>(n) / secs; };
  const auto& h = c.latency;
  const auto n = [](std::uint64_t v) { return static_cast<double>(v); };

  // sysbench's final report, field by field (src/sysbench.c sb_report_cumulative and the
  // "SQL statistics" of db_driver.c), headline first.
  rec.metric(cat::tps, per_s(c.events), "transactions (events) per second: sysbench's \"transactions\"");
  rec.metric(cat::qps, per_s(c.queries.total()), "queries per second (read + write + other): sysbench's \"queries\"");
  // The sizing answers among the summary's first columns, as kind tpcc records them.
  if (config_.rate_curve) record_slo_answers(rec, runs, config_.slo, cut_after);
  runner::record_latency(rec, h, "latency", cat::latency, LatencyUnit::ms,
                         {LatencyFigure::avg("mean transaction latency, restarts included"),
                          LatencyFigure::p(95, "95th percentile (sysbench's default --percentile=95)"),
                          LatencyFigure::p(99, "99th percentile")});
  rec.metric(cat::errors_s, per_s(c.queries.errors),
             "ignored errors per second (deadlocks, lock timeouts...; the transaction was restarted)");
  rec.metric(cat::reconnects_s, per_s(c.reconnects), "reconnects per second after a lost connection");
  rec.metric(cat::reads_s, per_s(c.queries.reads), "read queries per second (statements returning rows)");
  rec.metric(cat::writes_s, per_s(c.queries.writes), "write queries per second (statements that changed rows)");
  rec.metric(cat::other_s, per_s(c.queries.other),
             "other queries per second (BEGIN, COMMIT, writes that changed no row)");
  rec.metric(cat::transactions, n(c.events), "transactions (events) completed in the measured phase");
  rec.metric(cat::queries, n(c.queries.total()), "queries completed (read + write + other)");
  rec.metric(cat::reads, n(c.queries.reads));
  rec.metric(cat::writes, n(c.queries.writes));
  rec.metric(cat::other, n(c.queries.other));
  rec.metric(cat::ignored_errors, n(c.queries.errors), "failed queries whose transaction was restarted");
  rec.metric(cat::reconnects, n(c.reconnects));
  rec.metric(cat::attempts, n(totals.attempts.attempts),
             "executions of an event: first tries and restarts (failure_bound counts these)");
  rec.metric(cat::failed_attempts, n(totals.attempts.failed),
             "executions that ended with an error sysbench ignores and restarts (failure_bound)");
  runner::record_latency(rec, h, "latency", cat::latency, LatencyUnit::ms,
                         {LatencyFigure::min(), LatencyFigure::max(),
                          LatencyFigure::sum("sum of all transaction latencies (sysbench's \"sum\")")});
  rec.metric(cat::total_time_s, totals.measured_s, "measured time (sysbench's \"total time\")");
  rec.metric(cat::events, n(c.events), "sysbench's \"total number of events\"");
  rec.histogram("latency", h);

  // Threads fairness (sb_report_cumulative): population stddev over threads.
  const double nthreads = static_cast<double>(std::max<std::size_t>(1, totals.threads.size()));
  const double events_avg = n(c.events) / nthreads;
  const double time_avg = ns_to_ms(h.sum_ns()) / 1e3 / nthreads;
  double events_var = 0, time_var = 0;
  for (const ThreadShare& t : totals.threads) {
    events_var += (n(t.events) - events_avg) * (n(t.events) - events_avg);
    time_var += (t.execution_time_s - time_avg) * (t.execution_time_s - time_avg);
  }
  rec.group_metric("threads_fairness", cat::events_avg, events_avg);
  rec.group_metric("threads_fairness", cat::events_stddev, std::sqrt(events_var / nthreads));
  rec.group_metric("threads_fairness", cat::execution_time_avg_s, time_avg);
  rec.group_metric("threads_fairness", cat::execution_time_stddev_s, std::sqrt(time_var / nthreads));
  rec.detail("in_doubt", totals.in_doubt);
  if (const AttemptTotals& a = totals.attempts; a.first_error)
    rec.detail("failed_attempts", {{to_string(config_.workload), to_json(a)}});
  if (c.events > 0) rec.detail("queries_per_transaction", n(c.queries.total()) / n(c.events));
  if (totals.rate_per_s > 0) record_open_loop(rec, totals, config_.threads);
  if (config_.rate_curve) {
    rec.detail("points", curve_points_json(runs, config_.threads));
    warn_points_not_held(rec, runs, config_.threads);
  }
}

void SysbenchEmulator::verify_phase(runner::TestContext& ctx) {
  if (!db_) return;
  // Each DELETE is followed by the INSERT of the same id in the same transaction, so every table
  // keeps exactly table_size rows. COUNT(*) scans the table: skipped for very large databases.
  constexpr std::int64_t kMaxRowsToCount = 10'000'000;
  Backend& backend = db_->backend();
  if (static_cast<std::int64_t>(scale_.tables) * scale_.table_size > kMaxRowsToCount) {
    ctx.recorder->detail("verify", fmt::format("row counts not checked: more than {} rows", kMaxRowsToCount));
  } else {
    auto conn = backend.connect();
    for (int t = 1; t <= scale_.tables; ++t) {
      auto q = conn->prepare(fmt::format("SELECT COUNT(*) FROM {}", table_name(t)));
      if (DbStatus s = conn->begin(TxMode::read_only); !s.ok()) throw_status("verify", s);
      std::int64_t rows = -1;
      DbStatus st = q->execute();
      if (st.ok() && q->next(st)) rows = q->column_int64(0);
      while (st.ok() && q->next(st)) {
      }
      conn->rollback();
      ctx.recorder->check(fmt::format("{} rows", table_name(t)), rows == scale_.table_size,
                          fmt::format("{} rows, expected table_size = {}", rows, scale_.table_size));
    }
  }
  ctx.recorder->detail("database_size_bytes_after_run", backend.size_bytes().value_or(0));
}

const ManagedServer* SysbenchEmulator::managed_server() const noexcept { return db_ ? db_->server() : nullptr; }

void SysbenchEmulator::cleanup(runner::TestContext& ctx) noexcept {
  try {
    driver_.reset();  // stops and joins the workers, closes their sessions
    // A managed server's tables go with its directory: dropping them first only costs time, and
    // on a full disk MariaDB's DROP DATABASE waits for space forever ("Disk full ... waiting for
    // someone to free some space"), hanging the cleanup of a test that failed for that reason.
    const bool removed_with_server = config_.database.managed && !config_.database.keep_server;
    if (db_ && loaded_by_us_ && !config_.keep_database && !config_.reuse && !removed_with_server)
      db_->backend().destroy();
  } catch (const std::exception& ex) {
    try {
      ctx.recorder->warning(fmt::format("cleanup: {}", ex.what()));
    } catch (...) {  // NOLINT(bugprone-empty-catch): noexcept cleanup: the warning is best effort
    }
  }
  db_.reset();  // stops a managed server
}

}  // namespace drivelab::oltp::sysbench::detail

namespace drivelab::oltp::sysbench {

std::unique_ptr<runner::Emulator> make_sysbench_emulator(SysbenchConfig config, runner::TestSettings settings) {
  return std::make_unique<detail::SysbenchEmulator>(std::move(config), std::move(settings));
}

}  // namespace drivelab::oltp::sysbench
