#pragma once
// The `tpcc` emulator: phases of runner::Emulator over the TPC-C pieces of this component.
//   prepare  database file <target>/drivelab-<test>-tpcc.db: rebuilt and loaded (or reused when
//            `reuse: true` finds a complete one of the same scale); C-Load/C-Run chosen
//   warmup   starts the terminals, unrecorded
//   run      records from now on without stopping them; one interval per settings.interval;
//            then headline metrics, per-type groups and histograms
//   verify   consistency conditions 1-4 (clause 3.3.2)
//   cleanup  stops terminals, removes the database unless keep_database or reuse
#include <memory>

#include "drivelab/oltp/backend.hpp"
#include "drivelab/oltp/tpcc_config.hpp"
#include "drivelab/oltp/tpcc_driver.hpp"
#include "drivelab/runner/emulator.hpp"

namespace drivelab::oltp::detail {

class TpccEmulator final : public runner::Emulator {
 public:
  TpccEmulator(tpcc::TpccConfig config, runner::TestSettings settings);
  ~TpccEmulator() override;

  results::Json effective_config() const override;
  void prepare(runner::TestContext& ctx) override;
  void warmup(runner::TestContext& ctx) override;
  void run(runner::TestContext& ctx) override;
  void verify(runner::TestContext& ctx) override;
  void cleanup(runner::TestContext& ctx) noexcept override;

 private:
  void start_driver(runner::TestContext& ctx);
  /// Sleeps until `deadline_ns`; false if a stop was requested or the terminals failed first.
  bool wait_until(const runner::TestContext& ctx, std::int64_t deadline_ns) const;
  void record_results(runner::TestContext& ctx, const tpcc::DriverTotals& totals);

  tpcc::TpccConfig config_;
  runner::TestSettings settings_;
  tpcc::Scale scale_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<tpcc::Driver> driver_;
  tpcc::CConstants c_load_;
  tpcc::CConstants c_run_;
  bool prepared_ = false;
  double warmup_s_ = 0;
};

}  // namespace drivelab::oltp::detail
