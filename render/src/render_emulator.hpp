#pragma once
// The `render` emulator: RenderConfig -> prepare (stale cleanup, pre-flight checks, scene file,
// swap file + memory cgroup in mode swap) -> run (the pipeline in-process, or in a child process
// inside the cgroup for mode swap) -> verify (checksums) -> cleanup (every resource, every path).
#include <memory>
#include <optional>

#include "drivelab/render/pipeline.hpp"
#include "drivelab/render/render.hpp"

namespace drivelab::render::detail {

class RenderEmulator final : public runner::Emulator {
 public:
  explicit RenderEmulator(RenderConfig config) : config_(std::move(config)) {}
  ~RenderEmulator() override;

  results::Json effective_config() const override { return to_json(config_); }
  std::string schedule(const runner::TestSettings&) const override {
    return "runs to completion (the score is its seconds; duration does not apply)";
  }
  void prepare(runner::TestContext& ctx) override;
  void warmup(runner::TestContext&) override {}
  void run(runner::TestContext& ctx) override;
  void verify(runner::TestContext& ctx) override;
  void cleanup(runner::TestContext& ctx) noexcept override;

 private:
  PipelineOptions options(runner::TestContext& ctx, MemoryMode mode) const;
  /// Runs the pipeline in a child process inside the cgroup; SIGKILLs it on stop.
  PipelineResult run_in_cgroup(runner::TestContext& ctx);
  void record(runner::TestContext& ctx, const PipelineResult& r);
  void run_baseline(runner::TestContext& ctx);

  RenderConfig config_;
  unsigned threads_ = 1;
  std::uint64_t points_per_block_ = 0;
  std::filesystem::path scene_path_, array_path_, output_path_, marker_;
  std::filesystem::path device_stat_;
  std::optional<SceneInfo> scene_;
  std::unique_ptr<SwapFile> swap_;
  std::unique_ptr<MemoryCgroup> cgroup_;
  std::optional<PipelineResult> result_;
  std::uint64_t cgroup_limit_hits_ = 0;
};

}  // namespace drivelab::render::detail
