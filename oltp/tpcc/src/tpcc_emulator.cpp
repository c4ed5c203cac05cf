#include "tpcc_emulator.hpp"

#include <sys/statvfs.h>

#include <algorithm>
#include <array>
#include <functional>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/phase.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/oltp/backend/server_limits.hpp"
#include "drivelab/oltp/tpcc/tpcc_checks.hpp"
#include "drivelab/oltp/tpcc/tpcc_growth.hpp"
#include "drivelab/oltp/tpcc/tpcc_procedures.hpp"
#include "drivelab/oltp/tpcc/tpcc_schema.hpp"
#include "tpcc_report.hpp"

namespace drivelab::oltp::tpcc::detail {
namespace {

results::Json to_json(const tpcc::CConstants& c) {
  return {{"c_last", c.c_last}, {"c_id", c.c_id}, {"ol_i_id", c.ol_i_id}};
}

// How often the warm-up reports the users logged in so far (dedicated terminals with a login rate).
constexpr std::int64_t kLoginReportNs = 5'000'000'000;

// Seeds of the independent random streams of one test.
enum Stream : std::uint64_t { kStreamCLoad = 1, kStreamLoad = 2, kStreamCRun = 3, kStreamTerminals = 4 };

}  // namespace

TpccEmulator::TpccEmulator(tpcc::TpccConfig config, runner::TestSettings settings)
    : config_(std::move(config)), settings_(std::move(settings)) {
  scale_.warehouses = config_.warehouses;
  scale_.items = config_.scale_items;
}

TpccEmulator::~TpccEmulator() = default;

results::Json TpccEmulator::effective_config() const { return tpcc::to_json(config_); }

int TpccEmulator::sessions_needed() const noexcept {
  // The pool (pooled) or the users (dedicated): the terminals' sessions. A shared database
  // holds every rank's, each with its drivelab session (the last is counted by sessions_needed).
  const Capabilities can = capabilities_of(config_.database.backend);
  const int workers = shared_ ? share_.hosts * (share_.connections + 1) - 1 : share_.connections;
  return oltp::sessions_needed(workers, tpcc::load_threads_used(config_.load_threads, scale_, can), can);
}

void TpccEmulator::warn_about_configuration(runner::TestContext& ctx) const {
  auto& rec = *ctx.recorder;
  for (const std::string& w : config_.warnings) rec.warning(w);
  if (scale_.items != tpcc::kItems)
    rec.warning(
        fmt::format("scale_items = {}: not TPC-C (a testing knob; TPC-C has 100,000 items), "
                    "results are not comparable",
                    scale_.items));
  if (config_.think == tpcc::ThinkMode::tpcc && config_.think_scale != 1.0)
    rec.warning(
        fmt::format("think_scale = {}: keying and think times are not TPC-C's (a testing knob), "
                    "results are not comparable",
                    config_.think_scale));
  if (config_.think == tpcc::ThinkMode::tpcc && config_.users > 10 * config_.warehouses)
    rec.warning(
        fmt::format("users = {} is more than 10 x warehouses = {}: TPC-C has 10 terminals per warehouse "
                    "(clause 4.2.2); the extra terminals push tpm_c past 12.86 per warehouse, so efficiency_pct "
                    "exceeds 100%",
                    config_.users, 10 * config_.warehouses));
}

void TpccEmulator::check_max_connections() const {
  if (backend_->capabilities().embedded) return;
  std::optional<ServerLimits> limits;
  try {
    limits = read_server_limits(*backend_);
  } catch (const std::exception&) {
    return;  // the logins themselves will then say what is wrong
  }
  if (!limits) return;
  // A managed server's sessions are the superuser's: PostgreSQL's reserved slots are theirs too.
  const std::int64_t reserved = config_.database.managed ? 0 : limits->reserved_connections;
  const std::int64_t others = limits->sessions_open - 1;  // the reading session is closed again
  const std::int64_t available = limits->max_connections - reserved - others;
  const int need = sessions_needed();
  if (need <= available) return;
  const bool dedicated = config_.terminals == tpcc::TerminalMode::dedicated;
  throw EnvironmentError(fmt::format(
      "max_connections is {} ({}{} other sessions open), but this test needs {} sessions at once "
      "({}{} {} + 1 drivelab session{}, or {} load thread(s)); raise the server's max_connections ({}){}",
      limits->max_connections, reserved > 0 ? fmt::format("{} reserved for superusers, ", reserved) : std::string(),
      others, need, shared_ ? fmt::format("{} ranks x ", share_.hosts) : std::string(), share_.connections,
      dedicated ? "dedicated terminals" : "pooled connections", shared_ ? " each" : "",
      tpcc::load_threads_used(config_.load_threads, scale_, backend_->capabilities()),
      config_.database.managed ? "server.max_connections" : "a setting of the existing server",
      dedicated ? " or use terminals: pooled" : " or fewer connections"));
}

std::uint64_t TpccEmulator::free_bytes(const runner::TestContext& ctx) {
  struct statvfs vfs{};
  if (::statvfs(ctx.target_dir.c_str(), &vfs) != 0) return UINT64_MAX;  // unknown: no refusal
  return static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
}

WalSettings TpccEmulator::wal_settings() const {
  // The managed server's log bounds as running; WalSettings{} elsewhere (unused: no WAL term).
  const ManagedServer* server = managed_server();
  return server != nullptr ? server->wal_settings() : WalSettings{};
}

void TpccEmulator::check_free_space(const runner::TestContext& ctx, const tpcc::GrowthEstimate& estimate,
                                    const std::string& what) const {
  const std::string refusal = tpcc::growth_refusal(estimate, free_bytes(ctx), ctx.target_dir.string(), what);
  if (!refusal.empty()) throw EnvironmentError(refusal);
}

void TpccEmulator::check_free_space_before_load(const runner::TestContext& ctx) const {
  // Only where the database lands in the target: SQLite's file or a managed server's cluster.
  const auto growth = tpcc::growth_constants(*backend_, managed_server());
  if (!growth) return;
  // Paced terminals offer a known New-Order rate: the whole run is checked now. A closed loop
  // is checked again after the warm-up, at the rate it measured (check_growth_after_warmup).
  const double rate = tpcc::offered_new_order_rate(config_).value_or(0.0);
  const double seconds = std::chrono::duration<double>(settings_.warmup + settings_.duration).count();
  const auto est = tpcc::estimate_growth(*growth, tpcc::estimated_database_bytes(scale_, backend_->capabilities()),
                                         false, rate, seconds, wal_settings());
  check_free_space(ctx, est, "estimated load");
}

std::optional<std::int64_t> TpccEmulator::new_orders_so_far() const {
  // Every committed New-Order takes one D_NEXT_O_ID (clause 2.4.2.2): the count in any dialect.
  try {
    auto conn = backend_->connect();
    auto q = conn->prepare("SELECT SUM(d_next_o_id) FROM district");
    DbStatus st = q->execute();
    if (!st.ok() || !q->next(st)) return std::nullopt;
    return q->column_int64(0);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void TpccEmulator::check_growth_after_warmup(runner::TestContext& ctx, std::optional<std::int64_t> new_orders_before) {
  const auto growth = tpcc::growth_constants(*backend_, managed_server());
  if (!growth || tpcc::offered_new_order_rate(config_)) return;  // not in the target, or paced: checked at load
  const auto after = new_orders_so_far();
  // A warm-up of 0 s still takes a few milliseconds, whose handful of New-Orders says nothing of
  // the rate: extrapolated over the duration it refused runs that fit (a 4 ms window read as
  // 1,150 New-Orders/s). At least a second, as the warning asks for more.
  constexpr double kMinWarmupForRateS = 1.0;
  if (!new_orders_before || !after || settings_.warmup.count() <= 0 || warmup_s_ < kMinWarmupForRateS) {
    ctx.recorder->warning(
        "the run's growth was not checked against the free space: a closed loop's New-Order rate is measured "
        "in the warm-up, and this one has none or less than a second (set warmup, e.g. 30s)");
    return;
  }
  double rate = static_cast<double>(*after - *new_orders_before) / warmup_s_;
  double seconds = std::chrono::duration<double>(settings_.duration).count();
  if (config_.rate_curve) {
    // The curve's points offer up to their largest percentage of the max run's rate, each for
    // its warm-up and duration.
    rate *= std::max(1.0, *std::max_element(config_.curve.begin(), config_.curve.end()) / 100.0);
    seconds += static_cast<double>(config_.curve.size()) *
               std::chrono::duration<double>(settings_.warmup + settings_.duration).count();
  }
  const tpcc::GrowthEstimate est =
      tpcc::estimate_growth(*growth, backend_->size_bytes().value_or(0), true, rate, seconds, wal_settings());
  ctx.recorder->detail("growth_estimate", {{"new_orders_per_s_in_warmup", rate},
                                           {"seconds", seconds},
                                           {"growth_bytes", est.growth_bytes},
                                           {"log_allowance_bytes", est.log_bytes},
                                           {"free_bytes", free_bytes(ctx)}});
  try {
    check_free_space(ctx, est, "loaded size");
  } catch (...) {
    driver_->finish();
    throw;
  }
}

bool TpccEmulator::try_reuse(runner::TestContext& ctx) {
  if (!config_.reuse || !backend_->exists()) return false;
  std::optional<tpcc::LoadMeta> meta;
  std::string problem;
  try {
    auto conn = backend_->connect();
    problem = tpcc::reuse_problem(*conn, scale_, meta);
  } catch (const BackendError& ex) {
    problem = ex.what();
  }
  if (!problem.empty()) {
    ctx.recorder->message(fmt::format("the existing database is not reusable ({}); rebuilding", problem));
    return false;
  }
  c_load_ = meta->c_load;
  ctx.recorder->message(fmt::format("reusing the database ({} warehouses)", scale_.warehouses));
  return true;
}

bool TpccEmulator::load(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  const Rng rng(ctx.seed);
  backend_->destroy();
  check_free_space_before_load(ctx);
  Rng c_rng = rng.split(kStreamCLoad);
  c_load_ = tpcc::make_c_load(c_rng, config_.profile);
  tpcc::LoadOptions lo;
  lo.threads = config_.load_threads;
  lo.progress = [&](const tpcc::LoadProgress& p) {
    rec.message(fmt::format("loaded warehouse {}/{}, ETA {:.0f}s", p.warehouses_done, p.warehouses_total, p.eta_s));
  };
  lo.stop = [&] { return ctx.stop_requested(); };
  const tpcc::LoadStats stats = tpcc::load_database(*backend_, scale_, c_load_, rng.split(kStreamLoad), lo);
  if (!stats.complete) return false;  // stopped: the runner skips the other phases
  const double bytes = static_cast<double>(backend_->size_bytes().value_or(0));
  const double rate_mb_s = stats.seconds > 0 ? bytes / 1e6 / stats.seconds : 0.0;
  rec.message(fmt::format("loaded {} warehouse(s), {} rows, {:.1f} MB in {:.1f}s ({:.1f} MB/s, {} thread(s))",
                          scale_.warehouses, stats.rows, bytes / 1e6, stats.seconds, rate_mb_s, stats.threads));
  rec.detail("load", {{"seconds", stats.seconds},
                      {"rows", stats.rows},
                      {"threads", stats.threads},
                      {"rate_mb_s", rate_mb_s},
                      {"rate_rows_s", stats.seconds > 0 ? static_cast<double>(stats.rows) / stats.seconds : 0.0}});
  return true;
}

void TpccEmulator::prepare_phase(runner::TestContext& ctx) {
  share_.hosts = config_.shared_database ? ctx.hosts() : 1;
  share_.rank = share_.hosts > 1 ? ctx.cohort->rank() : 0;
  shared_ = share_.hosts > 1;
  // Terminal i runs on rank i mod hosts; the rate and the terminals are the job's.
  share_.users = (config_.users - share_.rank + share_.hosts - 1) / share_.hosts;
  share_.connections = config_.terminals == tpcc::TerminalMode::dedicated || config_.rate_per_s == 0
                           ? std::min(config_.connections, share_.users)
                           : config_.connections;
  if (config_.terminals == tpcc::TerminalMode::dedicated) share_.connections = share_.users;
  share_.rate_per_s = config_.rate_per_s / share_.hosts;
  warn_about_configuration(ctx);
  if (shared_) {
    prepare_shared(ctx);
    return;
  }
  prepare_database(ctx);
}

void TpccEmulator::prepare_shared(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  rec.detail("shared_database", {{"rank", share_.rank},
                                 {"ranks", share_.hosts},
                                 {"users_here", share_.users},
                                 {"terminals", fmt::format("{} + k x {}", share_.rank, share_.hosts)}});
  std::exception_ptr error;
  try {
    if (share_.users < 1)
      throw ConfigError(
          fmt::format("shared_database: users ({}) are fewer than the ranks ({}): rank {} has no terminal",
                      config_.users, share_.hosts, share_.rank));
    if (share_.rank == 0)
      prepare_database(ctx);
    else
      open_for_test(ctx);
  } catch (...) {
    error = std::current_exception();
  }
  // Every rank arrives here once, failed or not, so rank 0's load is complete (or failed, or
  // stopped) for all: {ranks that failed, ranks that stopped}.
  double outcome[2] = {error ? 1.0 : 0.0, !error && ctx.stop_requested() ? 1.0 : 0.0};
  ctx.sum_over_hosts(outcome, "the shared database's load");
  if (error) std::rethrow_exception(error);
  if (outcome[0] > 0)
    throw EnvironmentError(
        "shared_database: another rank failed to prepare (rank 0 loads the database; its record "
        "has the cause)");
  if (outcome[1] > 0) return;  // a stop: the runner ends the test on every rank at its next barrier
  if (share_.rank != 0) join_shared_database(ctx);
}

void TpccEmulator::open_for_test(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  prepared_ = true;  // from here on cleanup() owns what was created
  database_ = open_database(config_.database, open_request(ctx, settings_.name, "tpcc", sessions_needed()));
  backend_ = &database_->backend();
  rec.detail("database", database_->describe());
  check_max_connections();
}

void TpccEmulator::prepare_database(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  open_for_test(ctx);
  reused_ = try_reuse(ctx);
  if (!reused_) {
    rec.detail("load", results::Json::object());
    if (!load(ctx)) return;
  }
  if (config_.transactions == tpcc::TxProtocol::procedures) {
    // On a fresh or a reused schema alike: CREATE OR REPLACE is idempotent and takes milliseconds.
    auto conn = backend_->connect();
    tpcc::create_procedures(*conn, backend_->dialect());
  }
  rec.detail("database_reused", reused_);
  record_database_facts(ctx);
}

void TpccEmulator::record_database_facts(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  rec.detail("transactions", tpcc::to_string(config_.transactions));
  const Rng rng(ctx.seed);
  Rng c_rng = rng.split(kStreamCRun);
  c_run_ = tpcc::make_c_run(c_rng, c_load_, config_.profile);
  if (config_.profile == tpcc::Profile::hammerdb && c_load_.c_last != tpcc::kHammerDbCLast)
    rec.warning(
        fmt::format("profile: hammerdb on a database loaded with C_LAST constant {} (HammerDB loads with {}): "
                    "the last names the terminals ask for are not the ones HammerDB's would find",
                    c_load_.c_last, tpcc::kHammerDbCLast));
  rec.detail("database_size_bytes_after_load", backend_->size_bytes().value_or(0));
  rec.detail("nurand_c_load", to_json(c_load_));
  rec.detail("nurand_c_run", to_json(c_run_));
  rec.detail("scale", {{"warehouses", scale_.warehouses},
                       {"items", scale_.items},
                       {"tpcc_conformant_scale", scale_.items == tpcc::kItems}});
}

void TpccEmulator::join_shared_database(runner::TestContext& ctx) {
  std::optional<tpcc::LoadMeta> meta;
  auto conn = backend_->connect();
  if (const std::string problem = tpcc::reuse_problem(*conn, scale_, meta); !problem.empty())
    throw EnvironmentError(
        fmt::format("shared_database: the database rank 0 prepared is not usable here ({})", problem));
  c_load_ = meta->c_load;
  ctx.recorder->detail("database_reused", true);
  record_database_facts(ctx);
}

void TpccEmulator::start_driver(runner::TestContext& ctx, double rate_per_s, std::uint64_t point) {
  // Each curve point's terminals draw from their own stream (point 0: the test's, as before).
  Rng terminals_rng = Rng(ctx.seed).split(kStreamTerminals);
  if (point > 0) terminals_rng = terminals_rng.split(point);
  driver_ = std::make_unique<tpcc::Driver>(*backend_, tpcc::DriverOptions{
                                                          .scale = scale_,
                                                          .c_run = c_run_,
                                                          .users = share_.users,
                                                          .think = config_.think,
                                                          .terminals = config_.terminals,
                                                          .connections = share_.connections,
                                                          .rate_per_s = rate_per_s,
                                                          .login_rate_per_s = config_.login_rate_per_s,
                                                          .think_scale = config_.think_scale,
                                                          .reconnect_timeout = config_.reconnect_timeout,
                                                          .failure_bound = config_.failure_bound,
                                                          .protocol = config_.transactions,
                                                          .seed = terminals_rng(),
                                                          .profile = config_.profile,
                                                          .hammerdb_script = backend_->hammerdb_script(),
                                                          .all_warehouses = config_.all_warehouses,
                                                          .job_users = config_.users,
                                                          .terminal_first = share_.rank,
                                                          .terminal_step = share_.hosts,
                                                      });
  driver_->start();
  if (point > 0) return;  // a curve point: its rate is in details["points"]
  const bool dedicated = config_.terminals == tpcc::TerminalMode::dedicated;
  results::Json t{{"mode", tpcc::to_string(config_.terminals)},
                  {"users", share_.users},
                  {"per_warehouse", static_cast<double>(config_.users) / scale_.warehouses},
                  {"think", tpcc::to_string(config_.think)},
                  {"connections", share_.connections}};
  if (config_.think == tpcc::ThinkMode::tpcc) {
    t["think_scale"] = config_.think_scale;
    t["tpcc_conformant_think"] = config_.think_scale == 1.0;
  }
  if (config_.rate_per_s > 0) t["rate"] = share_.rate_per_s;
  if (config_.rate_curve) t["rate"] = "curve";
  if (dedicated) t["login_rate"] = config_.login_rate_per_s;
  if (config_.profile != tpcc::Profile::tpcc) t["profile"] = tpcc::to_string(config_.profile);
  ctx.recorder->detail("terminals", t);
}

bool TpccEmulator::stop_or_failed(const runner::TestContext& ctx) const noexcept {
  return ctx.stop_requested() || (driver_ && driver_->failed());
}

void TpccEmulator::warmup_phase(runner::TestContext& ctx) {
  // A closed loop in the target: count the New-Orders of the warm-up (check_growth_after_warmup).
  const bool count =
      tpcc::growth_constants(*backend_, managed_server()).has_value() && !tpcc::offered_new_order_rate(config_);
  const std::optional<std::int64_t> new_orders_before = count ? new_orders_so_far() : std::nullopt;
  const std::int64_t t0 = monotonic_ns();
  start_driver(ctx, share_.rate_per_s, 0);
  const bool ramp = config_.terminals == tpcc::TerminalMode::dedicated && config_.login_rate_per_s > 0;
  int reported = 0;
  const auto aborted = [&] { return stop_or_failed(ctx); };
  for_each_interval(t0, t0 + settings_.warmup.count(), kLoginReportNs, aborted, [&](bool) {
    if (ramp && driver_->users_logged_in() > reported) {
      reported = driver_->users_logged_in();
      ctx.recorder->message(fmt::format("users logged in: {}/{}", reported, share_.users));
    }
  });
  warmup_s_ = seconds_between(t0, monotonic_ns());
  if (driver_->failed()) {
    driver_->finish();
    throw BackendError(driver_->fatal_error().value_or("a terminal failed"));
  }
  if (!ctx.stop_requested()) check_growth_after_warmup(ctx, new_orders_before);
}

results::Json TpccEmulator::counters_or_warn(runner::TestContext& ctx, const char* when) {
  try {
    return backend_->server_counters();
  } catch (const std::exception& ex) {
    ctx.recorder->warning(fmt::format("server counters {} the measured phase unavailable: {}", when, ex.what()));
    return nullptr;
  }
}

std::string TpccEmulator::schedule(const runner::TestSettings& settings) const {
  return config_.rate_curve ? runner::rate_curve_schedule(config_.curve.size(), settings) : std::string();
}

std::vector<std::string> TpccEmulator::config_warnings() const { return config_.warnings; }

void TpccEmulator::measure_intervals(runner::TestContext& ctx) {
  const std::int64_t t0 = monotonic_ns();
  const auto aborted = [&] { return stop_or_failed(ctx); };
  for_each_interval(t0, t0 + settings_.duration.count(), settings_.interval.count(), aborted, [&](bool) {
    const tpcc::IntervalStats iv = driver_->take_interval();
    if (iv.duration_s > 0.001) ctx.recorder->interval(to_interval(iv, seconds_between(run_start_ns_, monotonic_ns())));
  });
}

void TpccEmulator::run_phase(runner::TestContext& ctx) {
  if (!driver_) start_driver(ctx, share_.rate_per_s, 0);
  RunFacts facts;
  facts.config = &config_;
  facts.counters_before = counters_or_warn(ctx, "before");
  // HammerDB's NOPM (pgoltp.tcl 2922, 2961; mariaoltp.tcl 2287, 2311): SUM(d_next_o_id) read while the
  // terminals run, at the start and the end of the measured time. One rank of a shared database
  // would count every rank's New-Orders, so not there.
  const bool db_nopm = config_.profile == tpcc::Profile::hammerdb && !shared_;
  const std::optional<std::int64_t> nopm_before = db_nopm ? new_orders_so_far() : std::nullopt;
  const std::int64_t nopm_t0 = monotonic_ns();
  const CpuTimes cpu0 = process_cpu_times();
  driver_->begin_measurement();
  const int logged_in = driver_->users_logged_in();
  if (config_.terminals == tpcc::TerminalMode::dedicated && logged_in < share_.users)
    ctx.recorder->warning(login_lag_warning(logged_in, share_.users, config_.login_rate_per_s, warmup_s_));
  run_start_ns_ = monotonic_ns();
  measure_intervals(ctx);
  if (nopm_before && !driver_->failed()) {
    const std::optional<std::int64_t> nopm_after = new_orders_so_far();
    const double minutes = seconds_between(nopm_t0, monotonic_ns()) / 60.0;
    if (nopm_after && minutes > 0) facts.nopm_db = static_cast<double>(*nopm_after - *nopm_before) / minutes;
  }
  if (db_nopm && !facts.nopm_db && !driver_->failed())
    ctx.recorder->warning(
        "nopm: SUM(d_next_o_id) could not be read before and after the measured phase; nopm is "
        "the terminals' count (tpm_c)");
  driver_->finish();
  facts.cpu = process_cpu_times() - cpu0;
  facts.peak_rss_bytes = peak_rss_bytes();
  if (!driver_->failed()) facts.counters_after = counters_or_warn(ctx, "after");
  const tpcc::DriverTotals totals = driver_->totals();
  facts.terminals = share_.users;
  std::vector<CurveRun> runs{CurveRun{.group = "max", .totals = totals}};
  std::string cut_after;
  if (config_.rate_curve) cut_after = run_curve(ctx, runs);
  // Nothing committed in the measured phase (a curve's max run): no figure to report (its
  // latencies would read 0 ms). Checked after the curve, whose collectives every rank runs; a
  // stopped run stays interrupted, with what it has.
  if (runs.front().commits() == 0 && !stop_or_failed(ctx))
    throw Error(runner::nothing_completed(share_.rate_per_s, totals.measured_s));
  const auto answers = [&] { record_slo_answers(*ctx.recorder, runs, config_.slo, cut_after); };
  const std::optional<std::string> mix_missed =
      record_tpcc_results(*ctx.recorder, totals, facts, config_.rate_curve ? answers : std::function<void()>{});
  double measured = 0;
  for (const CurveRun& r : runs) measured += r.totals.measured_s;
  ctx.recorder->set_phase_times(warmup_s_, measured);
  if (auto err = driver_->fatal_error()) throw BackendError(*err);
  if (mix_missed) {
    // A stopped run stays interrupted: what it measured is kept, with the miss said.
    if (ctx.stop_requested())
      ctx.recorder->warning(*mix_missed);
    else
      throw Error(*mix_missed);
  }
}

std::string TpccEmulator::run_curve(runner::TestContext& ctx, std::vector<CurveRun>& runs) {
  std::string cut_after =
      run_curve_points(ctx, settings_, config_.curve, runs, driver_, record_curve_point, "committed");
  ctx.recorder->detail("points", curve_points_json(runs));
  return cut_after;
}

void TpccEmulator::verify_phase(runner::TestContext& ctx) {
  if (!backend_ || (driver_ && driver_->failed())) return;  // a dead server cannot be checked
  if (shared_ && share_.rank != 0) {
    // The runner's verify barrier: every rank's terminals have stopped; rank 0 checks them all.
    ctx.recorder->detail("consistency_checked_by", "rank 0 (shared_database)");
    return;
  }
  auto conn = backend_->connect();
  results::Json not_run = results::Json::array();
  for (const auto& c : tpcc::check_consistency(*conn)) {
    if (c.status == tpcc::CheckStatus::not_run)
      not_run.push_back({{"name", c.name}, {"reason", c.detail}});
    else
      ctx.recorder->check(c.name, c.passed, c.detail);
  }
  if (!not_run.empty()) ctx.recorder->detail("consistency_not_run", not_run);
  ctx.recorder->detail("database_size_bytes_after_run", backend_->size_bytes().value_or(0));
}

const ManagedServer* TpccEmulator::managed_server() const noexcept { return database_ ? database_->server() : nullptr; }

void TpccEmulator::cleanup(runner::TestContext& ctx) noexcept {
  const auto warn = [&](const std::string& what) {
    try {
      ctx.recorder->warning(fmt::format("cleanup: {}", what));
    } catch (...) {  // NOLINT(bugprone-empty-catch): noexcept cleanup: the warning is best effort
    }
  };
  try {
    driver_.reset();  // stops and joins the terminals
  } catch (const std::exception& ex) {
    warn(ex.what());
  }
  try {
    // A managed server's tables go with its directory: dropping them first only costs time, and
    // on a full disk MariaDB's DROP DATABASE waits for space forever ("Disk full ... waiting for
    // someone to free some space"), hanging the cleanup of a test that failed for that reason.
    const bool removed_with_server = config_.database.managed && !config_.database.keep_server;
    const bool owner = !shared_ || share_.rank == 0;  // a shared database is rank 0's to drop
    if (prepared_ && backend_ && owner && !config_.keep_database && !config_.reuse && !removed_with_server)
      backend_->destroy();
  } catch (const std::exception& ex) {
    warn(ex.what());
  }
  try {
    backend_ = nullptr;
    database_.reset();  // stops a managed server (removed unless server.keep)
  } catch (const std::exception& ex) {
    warn(ex.what());
  }
}

}  // namespace drivelab::oltp::tpcc::detail

namespace drivelab::oltp::tpcc {

std::unique_ptr<runner::Emulator> make_tpcc_emulator(TpccConfig config, runner::TestSettings settings) {
  return std::make_unique<detail::TpccEmulator>(std::move(config), std::move(settings));
}

}  // namespace drivelab::oltp::tpcc
