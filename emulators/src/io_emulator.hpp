#pragma once
// The `io` emulator: IoJobConfig -> prepare (target file, engines) -> warm-up (workers start) ->
// run (collector: intervals, then headline metrics) -> verify -> cleanup. See docs/io.md.
#include <memory>
#include <optional>
#include <vector>

#include "drivelab/emulators/io_job.hpp"
#include "drivelab/io/target_file.hpp"
#include "drivelab/runner/emulator.hpp"
#include "io_worker.hpp"

namespace drivelab::emulators::detail {

class IoEmulator final : public runner::Emulator {
 public:
  explicit IoEmulator(IoJobConfig job) : job_(std::move(job)) {}
  ~IoEmulator() override;

  results::Json effective_config() const override { return to_json(job_); }
  void prepare(runner::TestContext& ctx) override;
  void warmup(runner::TestContext& ctx) override;
  void run(runner::TestContext& ctx) override;
  void verify(runner::TestContext& ctx) override;
  void cleanup(runner::TestContext& ctx) noexcept override;
  /// On a block device (docs/targets.md): the first file_size bytes, as fio's size=; reads need no consent.
  runner::DeviceAccess device_access() const override {
    return is_write(job_.rw) ? runner::DeviceAccess::read_write : runner::DeviceAccess::read_only;
  }
  bool owns_data_file() const override { return true; }

 private:
  void start_workers();
  void stop_workers() noexcept;
  /// A stop was requested or a worker failed: what ends the phase's waits (core/phase.hpp).
  bool stop_or_failed(const runner::TestContext& ctx) const noexcept;

  IoJobConfig job_;
  std::optional<io::TargetFile> file_;
  std::vector<std::unique_ptr<IoWorker>> workers_;
  bool started_ = false;
  double warmup_s_ = 0;
  MeasuredIos ios_;  // measured and summed over the intervals, checked at verify
  double achieved_qd_ = 0;
  double qd_window_slack_ = 0;  // max latency / measured time: the window-edge allowance
};

}  // namespace drivelab::emulators::detail
