#pragma once
// The `vdbench` emulator: VdbenchConfig -> prepare (target file, jobs) -> warm-up (the first run
// starts) -> run (the max or fixed-rate run, then each curve point: its own warm-up and measured
// duration, intervals, metric group) -> verify -> cleanup. docs/synthetic.md has the model.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "drivelab/core/steady_state.hpp"
#include "drivelab/emulators/vdbench_config.hpp"
#include "drivelab/io/target_file.hpp"
#include "drivelab/runner/emulator.hpp"
#include "vdbench_job.hpp"

namespace drivelab::emulators::detail {

/// What one run (the max run, a fixed rate or a curve point) measured.
struct PointResult {
  std::string group;          // "max", "fixed", "point_050"
  double requested_pct = 0;   // of the max run; 0 for max and fixed
  double requested_iops = 0;  // 0 = unpaced (max)
  VdbSample total;
  double measured_s = 0;
  std::uint64_t backlog = 0;
  double cpu_usr_s = 0;
  double cpu_sys_s = 0;
  std::optional<SteadyStateEval> ss;  // the last full window
  bool ss_attained = false;
  double ss_attained_at_s = 0;
  bool ended_by_ss = false;

  double iops() const { return measured_s > 0 ? static_cast<double>(total.ios) / measured_s : 0.0; }
};

class VdbenchEmulator final : public runner::Emulator {
 public:
  explicit VdbenchEmulator(VdbenchConfig config) : cfg_(std::move(config)) {}
  ~VdbenchEmulator() override;

  results::Json effective_config() const override { return to_json(cfg_); }
  /// Reads only when every workload has rdpct 100; otherwise writes (the runner's safety gate).
  runner::DeviceAccess device_access() const override;
  bool owns_data_file() const override { return true; }
  /// A curve: the max run + each point, every one with the test's warm-up and duration.
  std::string schedule(const runner::TestSettings& settings) const override;
  void prepare(runner::TestContext& ctx) override;
  void warmup(runner::TestContext& ctx) override;
  void run(runner::TestContext& ctx) override;
  void verify(runner::TestContext& ctx) override;
  void cleanup(runner::TestContext& ctx) noexcept override;

 private:
  void start_jobs(double rate_per_s, std::uint64_t point);
  void stop_jobs() noexcept;
  /// A stop was requested or a job failed: what ends the phase's waits (core/phase.hpp).
  bool stop_or_failed(const runner::TestContext& ctx) const noexcept;
  /// Measures the running jobs for settings.duration (or until steady, when allowed), emitting
  /// intervals; stops the jobs at the end.
  PointResult measure(runner::TestContext& ctx, PointResult point, bool may_end_when_steady);
  void record_point(runner::TestContext& ctx, const PointResult& p);
  /// How a curve ended (stopcurve, or its last point).
  struct CurveEnd {
    bool stopped_by_curve = false;
    double stop_pct = 0;
    /// Stopped (Ctrl-C, a failure, another host's) before its last point: the group of the last
    /// run measured ("max", "point_080"); "" when the curve ran all its points or stopcurve ended it.
    std::string cut_after;
  };
  /// The curve's points after the max run `first` (iorate curve), each recorded as it ends.
  CurveEnd run_curve(runner::TestContext& ctx, const PointResult& first);
  /// The headline metrics: the first run's, and the sizing answers (record_slo_answers).
  void record_headline(runner::TestContext& ctx, const PointResult& first);
  /// `slo:` on a curve: max_iops_under_p99 / max_iops_under_mean from every run measured (the
  /// max run included), details["slo"] with the bracketing points, a console line each.
  void record_slo_answers(runner::TestContext& ctx);
  /// details: the points in order (achieved IOPS, mean and p99 latency), the engine, the file.
  void record_details(runner::TestContext& ctx);
  std::uint32_t threads_effective() const noexcept;

  VdbenchConfig cfg_;
  std::optional<io::TargetFile> file_;
  std::vector<std::unique_ptr<VdbenchJob>> jobs_;
  bool running_ = false;
  double warmup_s_ = 0;
  std::int64_t run_start_ns_ = 0;
  MeasuredIos ios_;                // measured and summed over the intervals, checked at verify
  std::uint64_t drained_ios_ = 0;  // reaped after a run's window closed, not counted
  std::vector<PointResult> points_;
  std::string cut_after_;  ///< CurveEnd::cut_after of the curve run (record_slo_answers qualifies with it)
};

}  // namespace drivelab::emulators::detail
