#pragma once
// The `sysbench` emulator: phases of runner::Emulator over the sysbench pieces of this component.
//   prepare  opens the database (open_database: SQLite file, existing or managed server), checks
//            the server's limits (sysbench_preflight.hpp), reuses complete tables when `reuse`
//            allows, else (re)creates and loads them (sysbench prepare)
//   warmup   starts the worker threads, unrecorded (sysbench --warmup-time)
//   run      records from now on without stopping them; one interval per settings.interval
//            (sysbench --report-interval), then sysbench's final report as metrics; with
//            `rate: curve` the closed-loop run is the curve's max run, followed by one open-loop
//            run (warm-up + measured time) per curve point (sysbench_curve.hpp)
//   verify   every table still holds table_size rows (each DELETE has its INSERT)
//   cleanup  stops the workers, drops the tables unless keep_database or reuse, stops a managed
//            server
#include <memory>
#include <string>
#include <vector>

#include "drivelab/oltp/database/database.hpp"
#include "drivelab/oltp/database/database_emulator.hpp"
#include "drivelab/oltp/sysbench/sysbench_config.hpp"
#include "drivelab/oltp/sysbench/sysbench_driver.hpp"
#include "sysbench_curve.hpp"

namespace drivelab::oltp::sysbench::detail {

class SysbenchEmulator final : public DriverEmulator<Driver> {
 public:
  SysbenchEmulator(SysbenchConfig config, runner::TestSettings settings);
  ~SysbenchEmulator() override;

  results::Json effective_config() const override;
  std::string schedule(const runner::TestSettings& settings) const override;
  /// SysbenchConfig::warnings (an slo without rate: curve).
  std::vector<std::string> config_warnings() const override;
  void cleanup(runner::TestContext& ctx) noexcept override;

 private:
  // The phases, run by DatabaseEmulator inside adding_server_log.
  void prepare_phase(runner::TestContext& ctx) override;
  void warmup_phase(runner::TestContext& ctx) override;
  void run_phase(runner::TestContext& ctx) override;
  void verify_phase(runner::TestContext& ctx) override;
  const ManagedServer* managed_server() const noexcept override;
  // The workers (DriverEmulator): a closed loop (rate_per_s 0) or an open loop; `point` > 0 is a
  // curve point, whose workers draw from a stream of their own.
  void start_driver(runner::TestContext& ctx, double rate_per_s, std::uint64_t point) override;
  void measure_intervals(runner::TestContext& ctx) override;
  bool stop_or_failed(const runner::TestContext& ctx) const noexcept override;
  /// `runs`: the curve's (rate: curve), else empty; `cut_after` as run_curve_points returned it.
  void record_results(runner::TestContext& ctx, const DriverTotals& totals, const std::vector<CurveRun>& runs,
                      const std::string& cut_after);

  SysbenchConfig config_;
  runner::TestSettings settings_;
  Scale scale_;
  std::unique_ptr<Database> db_;
  std::unique_ptr<Driver> driver_;
  bool loaded_by_us_ = false;
  double warmup_s_ = 0;
  std::int64_t run_start_ns_ = 0;  ///< the measured phase's start: the intervals' time axis
};

}  // namespace drivelab::oltp::sysbench::detail
