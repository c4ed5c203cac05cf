#pragma once
// Kinds `replay` and `vdi`: a TraceSource factory + ReplaySettings -> prepare (summary pass,
// target files, replayer) -> run (one replay, or the max run and the curve points) -> verify
// (counts and bytes equal the trace's; written headers) -> cleanup. docs/vdi.md has the model.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "drivelab/io/target_file.hpp"
#include "drivelab/runner/emulator.hpp"
#include "drivelab/vdi/replay.hpp"
#include "drivelab/vdi/replay_config.hpp"

namespace drivelab::vdi::detail {

class ReplayEmulator final : public runner::Emulator {
 public:
  /// `make_source(seed)` opens the trace (or builds the model with the test's seed) from its start.
  ReplayEmulator(ReplaySettings settings, results::Json effective,
                 std::function<std::unique_ptr<trace::TraceSource>(std::uint64_t seed)> make_source)
      : cfg_(std::move(settings)), effective_(std::move(effective)), make_source_(std::move(make_source)) {}

  results::Json effective_config() const override { return effective_; }
  runner::DeviceAccess device_access() const override { return runner::DeviceAccess::unsupported; }
  /// One target file is `drivelab-<test>.dat`; several are `drivelab-<test>-<k>.dat`.
  bool owns_data_file() const override { return cfg_.targets == 1 && cfg_.engine != "null"; }
  /// The whole trace once, or the max run + one replay per curve point; `duration:` caps each.
  std::string schedule(const runner::TestSettings& settings) const override {
    const double cap = std::chrono::duration<double>(settings.duration).count();
    if (cfg_.curve.empty()) return fmt::format("replays the whole trace once (at most {:.0f} s)", cap);
    return fmt::format("curve: max run + {} points, each a whole replay of the trace (at most {:.0f} s each)",
                       cfg_.curve.size(), cap);
  }
  void prepare(runner::TestContext& ctx) override;
  void warmup(runner::TestContext& ctx) override;
  void run(runner::TestContext& ctx) override;
  void verify(runner::TestContext& ctx) override;
  void cleanup(runner::TestContext& ctx) noexcept override;

  /// Called in verify() with the summary of the stream that was replayed: kind `vdi` compares the
  /// generated workload with its documented profile there (check_against_profile, vdi_model.hpp).
  using SummaryCheck = std::function<void(results::TestRecorder&, const TraceSummary&)>;
  void set_summary_check(SummaryCheck check) { summary_check_ = std::move(check); }

 private:
  struct Point {
    std::string group;
    double requested_pct = 0;
    double requested_iops = 0;  // 0 = no_stall
    ReplayResult result;
  };
  Point replay_once(runner::TestContext& ctx, std::string group, double pct, double target_iops, bool no_stall);
  void record_point(runner::TestContext& ctx, const Point& p);

  ReplaySettings cfg_;
  results::Json effective_;
  std::function<std::unique_ptr<trace::TraceSource>(std::uint64_t)> make_source_;
  std::uint64_t seed_ = 1;
  TraceSummary summary_;
  std::vector<io::TargetFile> files_;
  std::unique_ptr<Replayer> replayer_;
  std::vector<Point> points_;
  std::int64_t run_start_ns_ = 0;
  SummaryCheck summary_check_;
};

}  // namespace drivelab::vdi::detail
