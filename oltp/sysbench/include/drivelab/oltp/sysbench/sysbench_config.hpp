#pragma once
/// \file sysbench_config.hpp
/// The `sysbench:` section of a test (kind: sysbench): sysbench 1.0.20's OLTP options under the
/// same names (with '_' for '-'), the same defaults (sysbench --help, oltp_common.lua), plus the
/// shared database keys of database.hpp (backend, database, server, SQLite settings).
///
///   workload:          oltp_read_write  oltp_read_write | oltp_read_only | oltp_write_only
///   tables:            1                --tables, 1..100000
///   table_size:        10000            --table-size, rows per table, 1..2^31-1
///   threads:           1                --threads: worker threads, one connection each
///   rand_type:         special          --rand-type: special | uniform | gaussian | pareto
///   rand_spec_iter:    12               --rand-spec-iter, 1..1000
///   rand_spec_pct:     1                --rand-spec-pct, 0..100
///   rand_spec_res:     75               --rand-spec-res, 0..99
///   rand_pareto_h:     0.2              --rand-pareto-h, (0, 1)
///   point_selects:     10               statements per transaction, each 0..1000000
///   simple_ranges:     1
///   sum_ranges:        1
///   order_ranges:      1
///   distinct_ranges:   1
///   index_updates:     1
///   non_index_updates: 1
///   delete_inserts:    1
///   range_selects:     true             --range_selects: false drops the four range SELECTs
///   range_size:        100              --range_size, 1..1000000
///   skip_trx:          false            only false: our backends run every statement inside
///                                       BEGIN/COMMIT (true is reported as an error)
///   reuse:             false            use the tables already in the database when they are
///                                       complete for tables x table_size (e.g. loaded by
///                                       `sysbench ... prepare`); never reload them
///   keep_database:     false            leave the tables after the test
///   rate:              (closed loop)    --rate: open loop at this many transactions (events) per
///                                       second in total (> 0; sysbench takes an integer, a
///                                       fraction is kept here), arriving as a Poisson process
///                                       into one event queue that the `threads` workers take
///                                       from; latency is measured from each event's INTENDED
///                                       arrival, the queue wait recorded apart (sysbench_driver.hpp)
///   rate: curve                         a sizing curve (as vdbench's iorate=curve): the
///                                       closed-loop max run (the headline), then one open-loop
///                                       run per point of `curve` at that % of its TPS; each run
///                                       has the test's warm-up and duration
///   curve:             [10, 50, 70, 80, 90, 100, 110, 120]
///                                       rate: curve only: % of the max run's TPS (> 0, <= 1000;
///                                       runner::decode_curve)
///   slo:               (none)           rate: curve only: bounds in ms on the transaction
///                                       latency's percentiles, p90_ms, p95_ms, p99_ms, e.g.
///                                       {p99_ms: 10}: the answer max_tps_under_slo (and
///                                       max_qps_under_slo) is the highest TPS within every
///                                       bound, interpolated between the curve's runs
///                                       (runner/curve.hpp max_rate_within)
///   failure_bound: {failed: 50%, window: 5s}  the test fails when more than `failed` of the
///                                       event attempts (restarts included) fail with an error
///                                       sysbench ignores, over a window (failure_bound.hpp);
///                                       sysbench itself runs on and only reports err/s
///
/// curve and slo are kept but unused without rate: curve (one override turns a curve into a run);
/// an slo on a run that is not a curve is a warning (SysbenchConfig::warnings: `drivelab
/// validate` prints it, the run records it; no answer). rate x duration below one arrival is an
/// error at the rate key (runner::check_rate_for_duration, when the test's duration is known).
/// Errors are reported at file:line:col with the key path, all at once (config/document.hpp):
/// rate not a number, 0 or below ("rate must be above 0 ...: leave rate out for a closed loop"),
/// an slo without a bound, a curve point out of range or repeated.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/config/document.hpp"
#include "drivelab/core/names.hpp"
#include "drivelab/oltp/database/database.hpp"
#include "drivelab/oltp/sysbench/sysbench_random.hpp"
#include "drivelab/results/record.hpp"
#include "drivelab/runner/curve.hpp"
#include "drivelab/runner/emulator.hpp"

namespace drivelab::oltp::sysbench {

/// The three sysbench scripts we reproduce (/usr/share/sysbench/oltp_*.lua).
enum class Workload { oltp_read_write, oltp_read_only, oltp_write_only };
inline constexpr EnumNames<Workload, 3> kWorkloadNames{{{"oltp_read_write", Workload::oltp_read_write},
                                                        {"oltp_read_only", Workload::oltp_read_only},
                                                        {"oltp_write_only", Workload::oltp_write_only}}};
inline std::string_view to_string(Workload w) noexcept { return name_of(kWorkloadNames, w); }

/// oltp_common.lua's per-transaction statement options and their defaults.
struct StatementOptions {
  int point_selects = 10;
  int simple_ranges = 1;
  int sum_ranges = 1;
  int order_ranges = 1;
  int distinct_ranges = 1;
  int index_updates = 1;
  int non_index_updates = 1;
  int delete_inserts = 1;
  bool range_selects = true;
  std::int64_t range_size = 100;
};

/// The `slo:` keys' subject (runner::decode_slo): `p<N>_ms`, the transactions' latency.
inline constexpr std::array<runner::SloSubject, 1> kSloSubjects{{{"", "{} latency"}}};

/// The most `rate:` takes: far above any database's TPS, small enough that one gap (1 / rate)
/// stays a whole number of nanoseconds.
inline constexpr double kMaxRatePerS = 10'000'000.0;

struct SysbenchConfig {
  Workload workload = Workload::oltp_read_write;
  int tables = 1;
  std::int64_t table_size = 10000;
  int threads = 1;
  RandOptions rand;
  StatementOptions statements;
  bool reuse = false;
  bool keep_database = false;
  double rate_per_s = 0;    ///< rate: N (sysbench --rate); 0 = closed loop
  bool rate_curve = false;  ///< rate: curve (a sizing curve)
  std::vector<double> curve{runner::kDefaultSizingCurve.begin(), runner::kDefaultSizingCurve.end()};
  std::vector<runner::SloBound> slo;  ///< rate: curve only
  /// Problems that do not stop the test (an slo without rate: curve), as file:line:col: key:
  /// text; `drivelab validate` prints them, the run records them as warnings.
  std::vector<std::string> warnings;
  FailureBound failure_bound;  ///< failure_bound.hpp
  DatabaseConfig database;
};

/// What the record's `details.sysbench_command` holds in place of a password
/// (--mysql-password='<password>' / --pgsql-password='<password>') when the server takes one
/// from password_env, password_file or `connection`: the person rerunning sysbench fills it in.
/// The command names the server and database the test used: --mysql-socket or --mysql-host and
/// --mysql-port (--pgsql-host, a socket directory or host, and --pgsql-port), --*-user, --*-db.
inline constexpr std::string_view kSysbenchPasswordPlaceholder = "<password>";

/// Decodes `section` (undefined: all defaults). Problems go to section.diagnostics(); the
/// returned config holds defaults where a key was invalid.
SysbenchConfig decode_sysbench_config(const config::Node& section);

/// The `sysbench` emulator of a decoded test (sysbench_emulator.cpp); registered by register.cpp.
std::unique_ptr<runner::Emulator> make_sysbench_emulator(SysbenchConfig config, runner::TestSettings settings);

/// The effective configuration (every key, defaults resolved; no password) for the record.
results::Json to_json(const SysbenchConfig& c);

}  // namespace drivelab::oltp::sysbench
