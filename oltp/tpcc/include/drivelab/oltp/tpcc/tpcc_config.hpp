#pragma once
/// \file tpcc_config.hpp
/// The `tpcc:` section of a test (kind: tpcc). Every key, its default and its range:
///
///   backend, database, dialect, server,   where the database lives: the keys shared by every OLTP
///   journal_mode, synchronous,            workload (database.hpp). Default: SQLite in the target
///   cache_size, busy_timeout              directory (drivelab-<test>-tpcc.db).
///   warehouses:    1                      >= 1 (~86 MB per warehouse with SQLite)
///   users:         10 x warehouses        >= 1 terminals (clause 4.2.2: 10 per warehouse)
///   think:         none                   none | tpcc (clause 5.2.5 keying + think times)
///   profile:       tpcc                   tpcc | hammerdb: whose rules draw the inputs, the mix,
///                                         the home warehouses and the think times (TPC-C's, or
///                                         HammerDB v4.12 TPROC-C's where they differ;
///                                         docs/oltp-tpcc.md section 2a)
///   all_warehouses: false                 HammerDB's all-warehouses option: each terminal draws
///                                         its warehouse before every transaction from its share
///                                         of all W (needs profile: hammerdb)
///   terminals:     see below              pooled | dedicated
///                                         default: pooled with think: tpcc or rate, else dedicated
///   connections:   min(users, max(8, 4 x CPUs))
///                                         pooled: worker connections of the TP monitor (1..users;
///                                         with rate: any). Why this default: a pooled terminal
///                                         with TPC-C think times is busy ~0.1% of the time, so a
///                                         few connections serve thousands of terminals (Little's
///                                         law: connections needed = TPS x service time); 4 per CPU
///                                         keeps a managed server on the same machine busy without
///                                         queueing on its run queue. If the pool is too small the
///                                         record says so (queue wait > 10% of response at p50).
///                                         dedicated: not allowed (one connection per user).
///   rate:          (closed loop)          open loop: transactions per second in total, Poisson
///                                         arrivals, latency from the intended start (> 0; needs
///                                         terminals: pooled and think: none)
///   rate: curve                           a sizing curve (as vdbench's iorate=curve): the
///                                         closed-loop max run (the headline), then one open-loop
///                                         run per point of `curve` at that % of its TPS; each
///                                         run has the test's warm-up and duration (needs
///                                         terminals: pooled and think: none, as rate)
///   curve:         [10, 50, 70, 80, 90, 100, 110, 120]
///                                         rate: curve only: % of the max run's TPS (> 0, <= 1000)
///   slo:           (none)                 rate: curve only: bounds in ms on response time
///                                         figures, `<type>_p<N>_ms` or `p<N>_ms` (all types),
///                                         N in 90, 95, 99, e.g. {new_order_p90_ms: 5000}
///                                         (TPC-C clause 5.2.5.3's 90th percentile bounds, 5 s
///                                         for New-Order) or {new_order_p99_ms: 10}: the answer
///                                         max_tps_under_slo / max_tpmc_under_slo is the highest
///                                         TPS within every bound (runner/curve.hpp)
///   login_rate:    50 (hammerdb: 2)       dedicated: user logins per second (0 = all at once;
///                                         HammerDB starts one virtual user every 500 ms)
///   think_scale:   1                      TESTING ONLY, NOT TPC-C: multiplies keying and think
///                                         times (0 < x <= 1; needs think: tpcc); flagged in the record
///   transactions:  postgres, mysql: procedures; sqlite, odbc: statements
///                                         procedures: one server-side procedure call per
///                                         transaction (HammerDB's way, tpcc_procedures.hpp);
///                                         statements: each SQL statement of a transaction one by
///                                         one between BEGIN and COMMIT (~28 round trips)
///   reconnect_timeout: 10s                how long reconnecting after a lost connection may fail
///                                         before the test fails with "server connection lost"
///   failure_bound: {failed: 50%, window: 5s}  the test fails when more than `failed` of one
///                                         transaction type's attempts (retries included) fail
///                                         over a window (oltp/backend/failure_bound.hpp)
///   reuse:         false                  keep a complete database of the same scale from a
///                                         previous run instead of rebuilding it (checked)
///   keep_database: false                  leave the database in the target after the test
///   shared_database: false                multi-host runs (docs/multihost.md): every rank drives
///                                         ONE existing server (server.connection): rank 0 loads
///                                         (or reuses) the schema once, the others wait for it;
///                                         users, rate and the terminals' warehouses are the
///                                         job's, split among the ranks (terminal i runs on rank
///                                         i mod N); connections stays each rank's pool; the
///                                         consistency conditions are checked once, by rank 0,
///                                         after every rank's terminals stopped; only rank 0
///                                         drops the database. One rank alone: as false.
///   load_threads:  sqlite: 1; servers: min(warehouses, 2 x CPUs)
///                                         loader threads (SQLite: must be 1, one writer)
///   scale_items:   100000                 TESTING ONLY, NOT TPC-C: rows of ITEM and STOCK per
///                                         warehouse; anything but 100000 is flagged in the record
///
/// curve and slo are kept but unused without rate: curve (one override turns a curve into a run);
/// an slo without it is a warning (TpccConfig::warnings). rate x duration below one arrival is an
/// error at the rate key (runner::check_rate_for_duration, when the test's duration is known).
/// Errors, each at its key: an slo without a bound, rate: curve with think: tpcc or dedicated
/// terminals; all_warehouses without profile: hammerdb; a key that does not apply to the chosen mode
/// (connections with dedicated terminals, login_rate with pooled ones, think_scale without think: tpcc, rate with
/// think: tpcc or dedicated terminals, transactions: procedures with sqlite or odbc), connections above users in a
/// closed loop, load_threads other than 1 with SQLite, and the database keys' own errors (database.hpp).
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "drivelab/config/document.hpp"
#include "drivelab/oltp/database/database.hpp"
#include "drivelab/oltp/tpcc/tpcc_driver_options.hpp"
#include "drivelab/oltp/tpcc/tpcc_random.hpp"
#include "drivelab/results/record.hpp"
#include "drivelab/runner/curve.hpp"
#include "drivelab/runner/emulator.hpp"

namespace drivelab::oltp::tpcc {

/// The `slo:` keys' subjects (runner::decode_slo): `p<N>_ms` for all types together, and
/// `<type>_p<N>_ms` per transaction type (the subject is the type's name, tpcc::to_string).
inline constexpr std::array<runner::SloSubject, 1 + kTxTypes> kSloSubjects{{{"", "{} of all types"},
                                                                            {"new_order", "New-Order {}"},
                                                                            {"payment", "Payment {}"},
                                                                            {"order_status", "Order-Status {}"},
                                                                            {"delivery", "Delivery {}"},
                                                                            {"stock_level", "Stock-Level {}"}}};

struct TpccConfig {
  DatabaseConfig database;
  int warehouses = 1;
  int users = 0;  ///< resolved by decode (10 x warehouses when absent)
  ThinkMode think = ThinkMode::none;
  Profile profile = Profile::tpcc;
  bool all_warehouses = false;                       ///< profile: hammerdb only
  TerminalMode terminals = TerminalMode::dedicated;  ///< resolved by decode
  int connections = 0;                               ///< resolved by decode (pooled: pool size; dedicated: users)
  double rate_per_s = 0;                             ///< 0 = closed loop
  bool rate_curve = false;                           ///< rate: curve (a sizing curve)
  std::vector<double> curve{runner::kDefaultSizingCurve.begin(), runner::kDefaultSizingCurve.end()};
  std::vector<runner::SloBound> slo;  ///< rate: curve only; subject: kSloSubjects
  /// Problems that do not stop the test (an slo without rate: curve), as file:line:col: key:
  /// text; `drivelab validate` prints them, the run records them as warnings.
  std::vector<std::string> warnings;
  double login_rate_per_s = 50;
  double think_scale = 1.0;
  TxProtocol transactions = TxProtocol::statements;  ///< resolved by decode
  std::chrono::nanoseconds reconnect_timeout = std::chrono::seconds(10);
  FailureBound failure_bound;  ///< failure_bound.hpp
  bool reuse = false;
  bool keep_database = false;
  bool shared_database = false;  ///< several ranks on one server (above)
  int load_threads = 0;          ///< resolved by decode
  int scale_items = kItems;
};

/// profile: hammerdb's default login_rate: HammerDB's 500 ms between virtual users.
inline constexpr double kHammerDbLoginRatePerS = 2.0;

/// The default pool size for `users` terminals on a machine with `cpus` CPUs (see above).
int default_connections(int users, int cpus) noexcept;

/// Decodes `section` (undefined: all defaults). Problems go to section.diagnostics(); the
/// returned config holds defaults where a key was invalid. `cpus` (default: this machine's)
/// resolves the defaults that depend on it.
TpccConfig decode_tpcc_config(const config::Node& section, int cpus = 0);

/// The `tpcc` emulator of a decoded test (tpcc_emulator.cpp); registered by register.cpp.
std::unique_ptr<runner::Emulator> make_tpcc_emulator(TpccConfig config, runner::TestSettings settings);

/// The effective configuration (every key, defaults resolved) for the result record.
results::Json to_json(const TpccConfig& c);

}  // namespace drivelab::oltp::tpcc
