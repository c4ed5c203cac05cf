#pragma once
// The `tpcc` emulator: phases of runner::Emulator over the TPC-C pieces of this component.
//   prepare  opens the database (database.hpp: SQLite file in the target, a managed server
//            created in the target, or an existing server); unless `reuse` finds a complete one
//            of the same scale: free-space check, then a fresh load with load_threads;
//            C-Load/C-Run chosen
//   warmup   starts the terminals (tpcc_driver.hpp), unrecorded
//   run      server counters and CPU before; records from now on without stopping the
//            terminals; one interval per settings.interval; then metrics, groups, histograms,
//            server counter differences (tpcc_report.cpp)
//   verify   consistency conditions (tpcc_checks.hpp)
//   cleanup  stops terminals, removes the database unless keep_database or reuse, stops a
//            managed server (removed unless server.keep)
#include <memory>

#include "drivelab/core/cpu_usage.hpp"
#include "drivelab/oltp/database/database.hpp"
#include "drivelab/oltp/database/database_emulator.hpp"
#include "drivelab/oltp/tpcc/tpcc_config.hpp"
#include "drivelab/oltp/tpcc/tpcc_driver.hpp"
#include "drivelab/oltp/tpcc/tpcc_growth.hpp"
#include "tpcc_report.hpp"

namespace drivelab::oltp::tpcc::detail {

class TpccEmulator final : public DriverEmulator<tpcc::Driver> {
 public:
  TpccEmulator(tpcc::TpccConfig config, runner::TestSettings settings);
  ~TpccEmulator() override;

  results::Json effective_config() const override;
  /// rate: curve: the max run + each point, every one with the test's warm-up and duration.
  std::string schedule(const runner::TestSettings& settings) const override;
  /// TpccConfig::warnings (an slo without rate: curve).
  std::vector<std::string> config_warnings() const override;
  void cleanup(runner::TestContext& ctx) noexcept override;

 private:
  // The phases, run by DatabaseEmulator inside adding_server_log.
  void prepare_phase(runner::TestContext& ctx) override;
  void warmup_phase(runner::TestContext& ctx) override;
  void run_phase(runner::TestContext& ctx) override;
  void verify_phase(runner::TestContext& ctx) override;
  const ManagedServer* managed_server() const noexcept override;
  /// Sessions this test has open at once (oltp::sessions_needed of the terminals and loaders).
  int sessions_needed() const noexcept;
  void warn_about_configuration(runner::TestContext& ctx) const;
  /// On a server: its max_connections (less PostgreSQL's superuser slots on an existing server
  /// and the other sessions open) against sessions_needed(); EnvironmentError if too few.
  void check_max_connections() const;
  /// Free bytes of the target's filesystem (UINT64_MAX when statvfs fails).
  static std::uint64_t free_bytes(const runner::TestContext& ctx);
  /// The managed server's WAL settings as running (ManagedServer::wal_settings()); the defaults
  /// without a managed server.
  WalSettings wal_settings() const;
  /// EnvironmentError with every term of `estimate` if it does not fit in the free space.
  void check_free_space(const runner::TestContext& ctx, const tpcc::GrowthEstimate& estimate,
                        const std::string& what) const;
  /// Before a load into the target: the estimated load + the growth at the offered New-Order
  /// rate over warm-up + duration (0 in a closed loop) + the log allowance (tpcc_growth.hpp).
  void check_free_space_before_load(const runner::TestContext& ctx) const;
  /// SUM(D_NEXT_O_ID): New-Orders committed since the load, plus a constant; nullopt on error.
  std::optional<std::int64_t> new_orders_so_far() const;
  /// Closed loop in the target: the growth at the warm-up's New-Order rate over the duration +
  /// the log allowance against the free space now; stops the terminals and throws
  /// EnvironmentError if it does not fit.
  void check_growth_after_warmup(runner::TestContext& ctx, std::optional<std::int64_t> new_orders_before);
  bool try_reuse(runner::TestContext& ctx);
  bool load(runner::TestContext& ctx);
  /// Opens the database (starting a managed server) and checks its max_connections.
  void open_for_test(runner::TestContext& ctx);
  /// open_for_test, then loads or reuses the database, creates the procedures, draws C-Run (one
  /// host, or rank 0 of a shared database).
  void prepare_database(runner::TestContext& ctx);
  /// Draws C-Run from C-Load and records the database's facts (transactions, size, NURand, scale).
  void record_database_facts(runner::TestContext& ctx);
  /// A shared database on a rank > 0, after rank 0 loaded it: its C-Load from the load's
  /// metadata (tpcc_schema.hpp LoadMeta), then record_database_facts.
  void join_shared_database(runner::TestContext& ctx);
  /// shared_database on several ranks: each rank prepares its part, then all meet (a collective)
  /// so no rank goes on before rank 0's load is there or after another rank failed.
  void prepare_shared(runner::TestContext& ctx);
  // The terminals (DriverEmulator): started at `rate_per_s` (0: closed loop); `point` > 0 is a
  // curve point's (its own terminal stream, details["terminals"] written by point 0 only).
  void start_driver(runner::TestContext& ctx, double rate_per_s, std::uint64_t point) override;
  void measure_intervals(runner::TestContext& ctx) override;
  bool stop_or_failed(const runner::TestContext& ctx) const noexcept override;
  /// rate: curve, after the max run (runs[0]): each point of config.curve as an open-loop run at
  /// that % of the max run's TPS with its own warm-up and duration (run_curve_points), the runs
  /// appended; details["points"]. Returns the group of the last run when the curve did not run
  /// all its points, else "".
  std::string run_curve(runner::TestContext& ctx, std::vector<CurveRun>& runs);
  results::Json counters_or_warn(runner::TestContext& ctx, const char* when);

  tpcc::TpccConfig config_;
  runner::TestSettings settings_;
  tpcc::Scale scale_;
  std::unique_ptr<Database> database_;
  Backend* backend_ = nullptr;
  std::unique_ptr<tpcc::Driver> driver_;
  tpcc::CConstants c_load_;
  /// This rank's part of the job's terminals (shared_database on several ranks; else all of them).
  struct Share {
    int rank = 0;
    int hosts = 1;
    int users = 0;        ///< terminals rank, rank + hosts, ... below config users
    int connections = 0;  ///< dedicated: its users; pooled: the pool, at most its users
    double rate_per_s = 0;
  };
  Share share_;
  bool shared_ = false;  ///< shared_database on more than one rank
  tpcc::CConstants c_run_;
  bool prepared_ = false;
  bool reused_ = false;
  double warmup_s_ = 0;
  std::int64_t run_start_ns_ = 0;  ///< the measured phase's start (intervals' t_s)
};

}  // namespace drivelab::oltp::tpcc::detail
