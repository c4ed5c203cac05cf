#include "tpcc_emulator.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/register.hpp"
#include "drivelab/oltp/sqlite_backend.hpp"
#include "drivelab/oltp/tpcc_checks.hpp"
#include "drivelab/oltp/tpcc_schema.hpp"

namespace drivelab::oltp::detail {
namespace {

using tpcc::TxType;

/// TPC-C's ceiling: with the clause 5.2.5 keying and think times, 10 terminals per warehouse
/// cannot produce more than about 12.86 New-Orders per minute per warehouse.
constexpr double kMaxTpmCPerWarehouse = 12.86;

double ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }
double ms(double ns) { return ns / 1e6; }

results::Json to_json(const tpcc::CConstants& c) {
  return {{"c_last", c.c_last}, {"c_id", c.c_id}, {"ol_i_id", c.ol_i_id}};
}

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

void TpccEmulator::prepare(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  SqliteOptions opt;
  opt.path = ctx.target_dir / fmt::format("drivelab-{}-tpcc.db", settings_.name);
  opt.journal_mode = config_.journal_mode;
  opt.synchronous = config_.synchronous;
  opt.cache_size_bytes = config_.cache_size_bytes;
  opt.busy_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(config_.busy_timeout);
  backend_ = make_sqlite_backend(opt);
  prepared_ = true;

  if (scale_.items != tpcc::kItems)
    rec.warning(fmt::format("scale_items = {}: not TPC-C (a testing knob; TPC-C has 100,000 items), "
                            "results are not comparable", scale_.items));

  const Rng rng(ctx.seed);
  bool reused = false;
  if (config_.reuse && backend_->exists()) {
    std::optional<tpcc::LoadMeta> meta;
    try {
      auto conn = backend_->connect();
      meta = tpcc::read_meta(*conn);
    } catch (const BackendError&) {
      meta.reset();
    }
    if (meta && meta->complete && meta->scale.warehouses == scale_.warehouses &&
        meta->scale.items == scale_.items) {
      reused = true;
      c_load_ = meta->c_load;
      rec.message(fmt::format("reusing {} ({} warehouses)", opt.path.string(), scale_.warehouses));
    } else {
      rec.message(fmt::format("{} is not reusable ({}); rebuilding", opt.path.string(),
                              !meta ? "not a complete drivelab database"
                              : !meta->complete ? "its load did not finish"
                                                : fmt::format("it has {} warehouses and {} items",
                                                              meta->scale.warehouses, meta->scale.items)));
    }
  }

  results::Json load = results::Json::object();
  if (!reused) {
    backend_->destroy();
    Rng c_rng = rng.split(kStreamCLoad);
    c_load_ = tpcc::make_c_load(c_rng);
    const auto stats = tpcc::load_database(
        *backend_, scale_, c_load_, rng.split(kStreamLoad),
        [&](const tpcc::LoadProgress& p) {
          rec.message(fmt::format("loaded warehouse {}/{}, ETA {:.0f}s", p.warehouses_done,
                                  p.warehouses_total, p.eta_s));
        },
        [&] { return ctx.stop_requested(); });
    if (!stats.complete) return;  // stopped: the runner skips the other phases
    const double bytes = static_cast<double>(backend_->size_bytes().value_or(0));
    const double rate_mb_s = stats.seconds > 0 ? bytes / 1e6 / stats.seconds : 0.0;
    rec.message(fmt::format("loaded {} warehouse(s), {} rows, {:.1f} MB in {:.1f}s ({:.1f} MB/s)",
                            scale_.warehouses, stats.rows, bytes / 1e6, stats.seconds, rate_mb_s));
    load = {{"seconds", stats.seconds}, {"rows", stats.rows}, {"rate_mb_s", rate_mb_s},
            {"rate_rows_s", stats.seconds > 0 ? static_cast<double>(stats.rows) / stats.seconds : 0.0}};
  }
  Rng c_rng = rng.split(kStreamCRun);
  c_run_ = tpcc::make_c_run(c_rng, c_load_);

  rec.detail("backend", backend_->describe());
  rec.detail("database_path", opt.path.string());
  rec.detail("database_reused", reused);
  rec.detail("database_size_bytes_after_load", backend_->size_bytes().value_or(0));
  rec.detail("load", load);
  rec.detail("nurand_c_load", to_json(c_load_));
  rec.detail("nurand_c_run", to_json(c_run_));
  rec.detail("scale", {{"warehouses", scale_.warehouses}, {"items", scale_.items}, {"tpcc_conformant_scale", scale_.items == tpcc::kItems}});
}

void TpccEmulator::start_driver(runner::TestContext& ctx) {
  tpcc::DriverOptions opt;
  opt.scale = scale_;
  opt.c_run = c_run_;
  opt.users = config_.users;
  opt.think = config_.think;
  opt.seed = Rng(ctx.seed).split(kStreamTerminals)();
  driver_ = std::make_unique<tpcc::Driver>(*backend_, opt);
  driver_->start();
  ctx.recorder->detail("terminals", {{"users", config_.users},
                                     {"per_warehouse", static_cast<double>(config_.users) / scale_.warehouses},
                                     {"think", config_.think == tpcc::ThinkMode::tpcc ? "tpcc" : "none"}});
}

bool TpccEmulator::wait_until(const runner::TestContext& ctx, std::int64_t deadline_ns) const {
  for (;;) {
    if (ctx.stop_requested() || (driver_ && driver_->failed())) return false;
    const std::int64_t now = monotonic_ns();
    if (now >= deadline_ns) return true;
    sleep_until_ns(std::min(deadline_ns, now + runner::StopFlag::kPollSliceNs));
  }
}

void TpccEmulator::warmup(runner::TestContext& ctx) {
  const std::int64_t t0 = monotonic_ns();
  start_driver(ctx);
  wait_until(ctx, t0 + settings_.warmup.count());
  warmup_s_ = static_cast<double>(monotonic_ns() - t0) / 1e9;
  if (driver_->failed()) {
    driver_->finish();
    throw BackendError(driver_->fatal_error().value_or("a terminal failed"));
  }
}

void TpccEmulator::run(runner::TestContext& ctx) {
  if (!driver_) start_driver(ctx);
  driver_->begin_measurement();
  const std::int64_t t0 = monotonic_ns();
  const std::int64_t end = t0 + settings_.duration.count();
  const std::int64_t step = std::max<std::int64_t>(settings_.interval.count(), 1'000'000);
  for (std::int64_t next = t0 + step;; next += step) {
    const std::int64_t deadline = std::min(next, end);
    const bool reached = wait_until(ctx, deadline);
    const tpcc::IntervalStats iv = driver_->take_interval();
    if (iv.duration_s > 0.001) {
      results::Interval out;
      out.t_s = static_cast<double>(monotonic_ns() - t0) / 1e9;
      out.duration_s = iv.duration_s;
      const auto& h = iv.response_time;
      out.values = {{"tps", static_cast<double>(iv.commits) / iv.duration_s},
                    {"tpm_c", static_cast<double>(iv.new_order_commits) * 60.0 / iv.duration_s},
                    {"lat_avg_ms", ms(h.mean())},
                    {"lat_p95_ms", ms(h.percentile(95))},
                    {"lat_p99_ms", ms(h.percentile(99))},
                    {"retries", static_cast<double>(iv.retries)}};
      ctx.recorder->interval(std::move(out));
    }
    if (!reached || deadline == end) break;
  }
  driver_->finish();
  const tpcc::DriverTotals totals = driver_->totals();
  record_results(ctx, totals);
  ctx.recorder->set_phase_times(warmup_s_, totals.measured_s);
  if (auto err = driver_->fatal_error()) throw BackendError(*err);
}

void TpccEmulator::record_results(runner::TestContext& ctx, const tpcc::DriverTotals& totals) {
  auto& rec = *ctx.recorder;
  const double secs = totals.measured_s > 0 ? totals.measured_s : 1e-9;
  tpcc::TypeStats all;
  for (const auto& s : totals.by_type) all.merge(s);
  const auto& no = totals.by_type[static_cast<std::size_t>(TxType::new_order)];
  const double tpm_c = static_cast<double>(no.commits) * 60.0 / secs;
  const auto& h = all.response_time;

  rec.metric("tps", static_cast<double>(all.commits) / secs, "1/s",
             "committed transactions of all five types per second of the measured phase");
  rec.metric("tpm_c", tpm_c, "1/min", "committed New-Order transactions per minute (tpmC-like)");
  rec.metric("latency_avg_ms", ms(h.mean()), "ms", "mean response time at the terminal, all types");
  rec.metric("latency_p95_ms", ms(h.percentile(95)), "ms", "95th percentile response time, all types");
  rec.metric("latency_p99_ms", ms(h.percentile(99)), "ms", "99th percentile response time, all types");
  rec.metric("nopm", tpm_c, "1/min", "New-Orders per minute: the same count under HammerDB's name");
  rec.metric("latency_p50_ms", ms(h.percentile(50)), "ms", "median response time, all types");
  rec.metric("latency_max_ms", ms(h.max()), "ms", "largest response time, all types");
  rec.metric("transactions", static_cast<double>(all.commits), "count", "committed transactions");
  rec.metric("new_orders", static_cast<double>(no.commits), "count", "committed New-Orders");
  rec.metric("rollbacks", static_cast<double>(all.rollbacks), "count",
             "New-Order business rollbacks (1% by design, clause 2.4.1.4)");
  rec.metric("retries", static_cast<double>(all.retries), "count",
             "reruns after a retryable failure (lock timeout, busy, deadlock, serialization)");
  rec.metric("errors", static_cast<double>(all.errors), "count",
             "transactions that failed (in doubt, fatal, or retries exhausted)");
  rec.metric("efficiency_pct", tpm_c / (kMaxTpmCPerWarehouse * scale_.warehouses) * 100.0, "%",
             "tpm_c / (12.86 x warehouses); meaningful only with think: tpcc");

  for (TxType t : tpcc::kAllTxTypes) {
    const auto& s = totals.by_type[static_cast<std::size_t>(t)];
    const std::string g(tpcc::to_string(t));
    const auto& th = s.response_time;
    rec.group_metric(g, "count", static_cast<double>(s.commits + s.rollbacks), "count",
                     "completed transactions (commits + business rollbacks)");
    rec.group_metric(g, "tps", static_cast<double>(s.commits) / secs, "1/s", "commits per second");
    rec.group_metric(g, "latency_avg_ms", ms(th.mean()), "ms");
    rec.group_metric(g, "latency_p50_ms", ms(th.percentile(50)), "ms");
    rec.group_metric(g, "latency_p95_ms", ms(th.percentile(95)), "ms");
    rec.group_metric(g, "latency_p99_ms", ms(th.percentile(99)), "ms");
    rec.group_metric(g, "latency_max_ms", ms(th.max()), "ms");
    rec.group_metric(g, "rollbacks", static_cast<double>(s.rollbacks), "count");
    rec.group_metric(g, "retries", static_cast<double>(s.retries), "count");
    rec.group_metric(g, "errors", static_cast<double>(s.errors), "count");
    rec.histogram("response_time." + g, th);
  }
  rec.histogram("response_time", h);
  rec.detail("in_doubt", totals.in_doubt);
  rec.detail("delivery_skipped_districts", totals.delivery_skipped_districts);
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
}

void TpccEmulator::verify(runner::TestContext& ctx) {
  if (!backend_) return;
  auto conn = backend_->connect();
  for (const auto& c : tpcc::check_consistency(*conn)) ctx.recorder->check(c.name, c.passed, c.detail);
  ctx.recorder->detail("database_size_bytes_after_run", backend_->size_bytes().value_or(0));
}

void TpccEmulator::cleanup(runner::TestContext& ctx) noexcept {
  try {
    driver_.reset();  // stops and joins the terminals
    if (prepared_ && backend_ && !config_.keep_database && !config_.reuse) backend_->destroy();
  } catch (const std::exception& ex) {
    try {
      ctx.recorder->warning(fmt::format("cleanup: {}", ex.what()));
    } catch (...) {
    }
  }
}

}  // namespace drivelab::oltp::detail

namespace drivelab::oltp {

void register_emulators(runner::Registry& registry) {
  registry.add({.kind = "tpcc",
                .summary = "TPC-C-like OLTP (New-Order, Payment, Order-Status, Delivery, Stock-Level) "
                           "on SQLite in the target: tpmC/NOPM, TPS, response times",
                .decode = [](const config::Node& section,
                             const runner::TestSettings& settings) -> std::unique_ptr<runner::Emulator> {
                  return std::make_unique<detail::TpccEmulator>(tpcc::decode_tpcc_config(section),
                                                                settings);
                }});
}

}  // namespace drivelab::oltp
