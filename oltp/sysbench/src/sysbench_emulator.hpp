#pragma once
// The `sysbench` emulator: phases of runner::Emulator over the sysbench pieces of this component.
//   prepare  opens the database (open_database: SQLite file, existing or managed server), checks
//            the server's limits (sysbench_preflight.hpp), reuses complete tables when `reuse`
//            allows, else (re)creates and loads them (sysbench prepare)
//   warmup   starts the worker threads, unrecorded (sysbench --warmup-time)
//   run      records from now on without stopping them; one interval per settings.interval
//            (sysbench --report-interval), then sysbench's final report as metrics
//   verify   every table still holds table_size rows (each DELETE has its INSERT)
//   cleanup  stops the workers, drops the tables unless keep_database or reuse, stops a managed
//            server
#include <memory>

#include "drivelab/oltp/database/database.hpp"
#include "drivelab/oltp/database/database_emulator.hpp"
#include "drivelab/oltp/sysbench/sysbench_config.hpp"
#include "drivelab/oltp/sysbench/sysbench_driver.hpp"

namespace drivelab::oltp::sysbench::detail {

class SysbenchEmulator final : public DatabaseEmulator {
 public:
  SysbenchEmulator(SysbenchConfig config, runner::TestSettings settings);
  ~SysbenchEmulator() override;

  results::Json effective_config() const override;
  void cleanup(runner::TestContext& ctx) noexcept override;

 private:
  // The phases, run by DatabaseEmulator inside adding_server_log.
  void prepare_phase(runner::TestContext& ctx) override;
  void warmup_phase(runner::TestContext& ctx) override;
  void run_phase(runner::TestContext& ctx) override;
  void verify_phase(runner::TestContext& ctx) override;
  const ManagedServer* managed_server() const noexcept override;
  void start_driver(runner::TestContext& ctx);
  /// A stop was requested or a worker failed: what ends the phase's waits (core/phase.hpp).
  bool stop_or_failed(const runner::TestContext& ctx) const noexcept;
  void record_results(runner::TestContext& ctx, const DriverTotals& totals);

  SysbenchConfig config_;
  runner::TestSettings settings_;
  Scale scale_;
  std::unique_ptr<Database> db_;
  std::unique_ptr<Driver> driver_;
  bool loaded_by_us_ = false;
  double warmup_s_ = 0;
};

}  // namespace drivelab::oltp::sysbench::detail
