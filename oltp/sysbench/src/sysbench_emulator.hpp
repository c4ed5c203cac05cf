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
#include "drivelab/oltp/sysbench/sysbench_config.hpp"
#include "drivelab/oltp/sysbench/sysbench_driver.hpp"
#include "drivelab/runner/emulator.hpp"

namespace drivelab::oltp::sysbench::detail {

class SysbenchEmulator final : public runner::Emulator {
 public:
  SysbenchEmulator(SysbenchConfig config, runner::TestSettings settings);
  ~SysbenchEmulator() override;

  results::Json effective_config() const override;
  void prepare(runner::TestContext& ctx) override;
  void warmup(runner::TestContext& ctx) override;
  void run(runner::TestContext& ctx) override;
  void verify(runner::TestContext& ctx) override;
  void cleanup(runner::TestContext& ctx) noexcept override;

 private:
  // The phases; the public ones run them inside adding_server_log (server.hpp), so a failure's
  // reason quotes a managed server's log before cleanup removes it.
  void prepare_phase(runner::TestContext& ctx);
  void warmup_phase(runner::TestContext& ctx);
  void run_phase(runner::TestContext& ctx);
  void verify_phase(runner::TestContext& ctx);
  /// The managed server behind the database, nullptr for none (yet).
  const ManagedServer* managed_server() const noexcept;
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
