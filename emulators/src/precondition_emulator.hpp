#pragma once
// The `precondition` emulator: PreconditionConfig -> prepare (open the device region or the data
// file) -> run (fill pass, then random passes, with progress and intervals) -> verify -> cleanup.
// See emulators/precondition.hpp and docs/targets.md.
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "drivelab/emulators/precondition.hpp"
#include "drivelab/io/target_file.hpp"
#include "drivelab/runner/emulator.hpp"

namespace drivelab::emulators::detail {

class PreconditionEmulator final : public runner::Emulator {
 public:
  explicit PreconditionEmulator(PreconditionConfig config) : config_(std::move(config)) {}

  results::Json effective_config() const override { return to_json(config_); }
  void prepare(runner::TestContext& ctx) override;
  void warmup(runner::TestContext&) override {}  // nothing to warm: the fill is the work
  void run(runner::TestContext& ctx) override;
  void verify(runner::TestContext& ctx) override;
  void cleanup(runner::TestContext&) noexcept override { file_.reset(); }
  runner::DeviceAccess device_access() const override { return runner::DeviceAccess::read_write; }
  std::pair<std::string, std::string> data_file_for() const override {
    return config_.for_test.empty() ? std::pair<std::string, std::string>{}
                                    : std::pair{std::string("for_test"), config_.for_test};
  }
  std::string schedule(const runner::TestSettings&) const override {
    return fmt::format("runs to completion: a sequential fill + {} random pass{} of the whole region",
                       config_.random_passes, config_.random_passes == 1 ? "" : "es");
  }

  /// One pass as recorded.
  struct PassResult {
    std::string kind;  // "fill" | "random"
    std::uint64_t bytes = 0;
    std::uint64_t ios = 0;
    double seconds = 0;
    bool complete = false;
  };

 private:
  /// Runs one pass; returns false if stopped.
  bool run_pass(runner::TestContext& ctx, std::size_t index, bool random, std::int64_t run_start_ns);

  PreconditionConfig config_;
  std::optional<io::TargetFile> file_;
  std::vector<PassResult> passes_;
  std::uint64_t issued_ = 0;
  std::uint64_t completed_ = 0;
  std::uint64_t interval_bytes_sum_ = 0;
};

}  // namespace drivelab::emulators::detail
