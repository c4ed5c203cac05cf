#pragma once
// A minimal emulator of the runner's own tests: it exercises the life cycle (phases, intervals,
// stop, failure) of runner::run_protocol. Real emulators are tested in their own components.
#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/core/clock.hpp"
#include "drivelab/results/catalogue.hpp"
#include "drivelab/runner/emulator.hpp"

namespace drivelab::runner::testing {

/// The ticks counted, recorded as the catalogue's `ios` (the recorder takes declared metrics only).
inline constexpr const results::MetricDef& kTicks = results::catalogue::ios;

struct PhaseLog {
  std::vector<std::string> phases;
};

class TickEmulator final : public Emulator {
 public:
  TickEmulator(std::string fail_in, PhaseLog* log, std::int64_t ticks_before_stop = -1, std::int64_t burst = 0)
      : fail_in_(std::move(fail_in)), log_(log), ticks_before_stop_(ticks_before_stop), burst_(burst) {}

  results::Json effective_config() const override { return {{"fail_in", fail_in_}}; }
  void prepare(TestContext&) override { step("prepare"); }
  void warmup(TestContext&) override { step("warmup"); }
  void run(TestContext& ctx) override {
    step("run");
    if (burst_ > 0) {
      // `burst` intervals back to back, faster than the runner's writer can put each on disk.
      for (std::int64_t n = 1; n <= burst_; ++n)
        ctx.recorder->interval(
            {static_cast<double>(n) / 1000.0, 0.001, {results::interval_value(kTicks, static_cast<double>(n))}});
      ctx.recorder->metric(kTicks, static_cast<double>(burst_));
      return;
    }
    const std::int64_t start = monotonic_ns();
    const std::int64_t period = ctx.settings.interval.count();
    const std::int64_t end = start + ctx.settings.duration.count();
    std::int64_t next = start + period;
    std::int64_t n = 0;
    while (next <= end && ctx.stop->sleep_until(next)) {
      ++n;
      ctx.recorder->interval({static_cast<double>(next - start) / 1e9,
                              static_cast<double>(period) / 1e9,
                              {results::interval_value(kTicks, static_cast<double>(n))}});
      if (ticks_before_stop_ >= 0 && n >= ticks_before_stop_) const_cast<StopFlag*>(ctx.stop)->request();
      next += period;
    }
    ctx.recorder->metric(kTicks, static_cast<double>(n));
  }
  void verify(TestContext& ctx) override {
    step("verify");
    ctx.recorder->check("always", true, "");
  }
  void cleanup(TestContext&) noexcept override { log_->phases.push_back("cleanup"); }

 private:
  void step(const std::string& phase) {
    log_->phases.push_back(phase);
    if (phase == fail_in_) throw std::runtime_error("injected failure in " + phase);
  }
  std::string fail_in_;
  PhaseLog* log_;
  std::int64_t ticks_before_stop_;
  std::int64_t burst_;
};

/// A registry with kind "tick": `tick: {fail_in: run, stop_after: 2, burst: 300}`.
inline Registry make_test_registry(PhaseLog* log) {
  Registry r;
  r.add({"tick", "test emulator", [log](const config::Node& section, const TestSettings&) {
           config::MapReader m(section);
           std::string fail_in;
           std::int64_t stop_after = -1, burst = 0;
           m.string("fail_in", fail_in);
           m.integer("stop_after", stop_after, {.min = 0});
           m.integer("burst", burst, {.min = 0});
           m.finish();
           return std::make_unique<TickEmulator>(fail_in, log, stop_after, burst);
         }});
  return r;
}

}  // namespace drivelab::runner::testing
