#include "drivelab/oltp/sysbench/sysbench_config.hpp"

#include <fmt/format.h>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/oltp/sysbench/sysbench_schema.hpp"

namespace drivelab::oltp::sysbench {
namespace {

// `rate: N` (sysbench --rate) or `rate: curve`.
void decode_rate(config::MapReader& r, const config::Node& section, SysbenchConfig& c) {
  const config::Node rate = section.defined() ? section.child("rate") : section;
  if (rate.defined() && rate.is_scalar() && rate.scalar() == "curve") {
    r.accept("rate");
    c.rate_curve = true;
    return;
  }
  double v = 0;
  if (!r.number("rate", v, {.max = kMaxRatePerS})) return;
  if (v > 0) {
    c.rate_per_s = v;
    return;
  }
  rate.error(fmt::format(
      "rate must be above 0 transactions per second, found {:g} (sysbench's --rate=0 means no limit: leave rate "
      "out for a closed loop), or `curve` for a sizing curve",
      v));
}

}  // namespace

SysbenchConfig decode_sysbench_config(const config::Node& section) {
  SysbenchConfig c;
  config::MapReader r(section);
  r.choice("workload", c.workload, kWorkloadNames);
  r.integer("tables", c.tables, {.min = 1, .max = 100'000});
  // Keys are sysbench's uint32 ids, bound as SQL INTEGER (signed 32-bit on every server).
  r.integer("table_size", c.table_size, {.min = 1, .max = 2'147'483'647});
  r.integer("threads", c.threads, {.min = 1, .max = 100'000});
  r.choice("rand_type", c.rand.type, kRandTypeNames);
  r.integer("rand_spec_iter", c.rand.spec_iter, {.min = 1, .max = 1000});
  r.integer("rand_spec_pct", c.rand.spec_pct, {.min = 0, .max = 100});
  // 100 would divide by zero in sb_rand_special (100 / (100 - res)).
  r.integer("rand_spec_res", c.rand.spec_res, {.min = 0, .max = 99});
  r.number("rand_pareto_h", c.rand.pareto_h, {.min = 0.0001, .max = 0.9999});

  auto& s = c.statements;
  const config::Range<std::int64_t> per_trx{.min = 0, .max = 1'000'000};
  r.integer("point_selects", s.point_selects, per_trx);
  r.integer("simple_ranges", s.simple_ranges, per_trx);
  r.integer("sum_ranges", s.sum_ranges, per_trx);
  r.integer("order_ranges", s.order_ranges, per_trx);
  r.integer("distinct_ranges", s.distinct_ranges, per_trx);
  r.integer("index_updates", s.index_updates, per_trx);
  r.integer("non_index_updates", s.non_index_updates, per_trx);
  r.integer("delete_inserts", s.delete_inserts, per_trx);
  r.boolean("range_selects", s.range_selects);
  r.integer("range_size", s.range_size, {.min = 1, .max = 1'000'000});
  bool skip_trx = false;
  if (r.boolean("skip_trx", skip_trx) && skip_trx) {
    section.child("skip_trx")
        .error(
            "skip_trx: true is not supported: drivelab's backends run every statement inside "
            "BEGIN/COMMIT (sysbench's default, skip_trx: false)");
  }
  r.boolean("reuse", c.reuse);
  r.boolean("keep_database", c.keep_database);
  decode_rate(r, section, c);
  if (const config::Node curve = r.section("curve"); curve.defined()) {
    if (std::vector<double> pts = runner::decode_curve(curve); !pts.empty()) c.curve = std::move(pts);
  }
  // `slo: {p99_ms: 10, p95_ms: 5}`: p<N>_ms.
  const config::Node slo = r.section("slo");
  c.slo =
      runner::decode_slo(slo, kSloSubjects, " on the transaction latency: p90_ms, p95_ms or p99_ms; e.g. {p99_ms: 10}");
  if (std::string w = runner::slo_without_curve_warning(slo, c.rate_curve); !w.empty()) c.warnings.push_back(w);
  decode_failure_bound(r, c.failure_bound);
  decode_database(r, section, c.database);
  r.finish();
  // A managed server's max_connections must hold every session the run opens at once.
  check_max_connections_key(section, c.database, c.threads,
                            load_threads_used(c.threads, {.tables = c.tables, .table_size = c.table_size},
                                              capabilities_of(c.database.backend)),
                            "threads");
  return c;
}

results::Json to_json(const SysbenchConfig& c) {
  const auto& s = c.statements;
  results::Json j{
      {"workload", to_string(c.workload)},
      {"tables", c.tables},
      {"table_size", c.table_size},
      {"threads", c.threads},
      {"rand_type", to_string(c.rand.type)},
      {"rand_spec_iter", c.rand.spec_iter},
      {"rand_spec_pct", c.rand.spec_pct},
      {"rand_spec_res", c.rand.spec_res},
      {"rand_pareto_h", c.rand.pareto_h},
      {"point_selects", s.point_selects},
      {"simple_ranges", s.simple_ranges},
      {"sum_ranges", s.sum_ranges},
      {"order_ranges", s.order_ranges},
      {"distinct_ranges", s.distinct_ranges},
      {"index_updates", s.index_updates},
      {"non_index_updates", s.non_index_updates},
      {"delete_inserts", s.delete_inserts},
      {"range_selects", s.range_selects},
      {"range_size", s.range_size},
      {"skip_trx", false},
      {"reuse", c.reuse},
      {"keep_database", c.keep_database},
      {"failure_bound", to_json(c.failure_bound)},
      {"database", to_json(c.database)},
  };
  // Only when given, so the records of closed-loop runs keep their keys.
  runner::rate_to_json(j, c.rate_per_s, c.rate_curve, c.curve, c.slo);
  return j;
}

}  // namespace drivelab::oltp::sysbench
