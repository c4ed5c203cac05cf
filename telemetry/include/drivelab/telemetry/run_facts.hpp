#pragma once
/// \file run_facts.hpp
/// What a run learns once, before its first test, for the telemetry of every test
/// (docs/telemetry.md): whether the drives under the target give health readings
/// (health_record.hpp; said once in the run's details.health, not per test), and the harness's
/// own ceiling on this host (harness_ceiling.hpp; details.harness_ceiling), unless turned off
/// (`harness_ceiling: false`, `--no-harness-ceiling`).
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "drivelab/results/record.hpp"
#include "drivelab/telemetry/harness_ceiling.hpp"
#include "drivelab/telemetry/health_record.hpp"

namespace drivelab::telemetry {

/// The longest a health tool may take in a run (before and after each test): a drive that does
/// not answer in that time gives no reading, with the reason, rather than holding the run up.
inline constexpr std::chrono::milliseconds kRunToolTimeout{5000};

struct RunFacts {
  RunHealth health;
  HealthTools tools;
  std::optional<HarnessCeiling> ceiling;
  /// When no ceiling: "turned off (harness_ceiling: false or --no-harness-ceiling)", or the
  /// measurement's error.
  std::string ceiling_reason;
  /// The run's details: {"health": RunHealth::json(), "harness_ceiling": HarnessCeiling::json()
  /// or {"measured": false, "reason": ...}}.
  results::Json details() const;
};

/// Reads the health of the drives under `target` once (its device stack, device_stack_of; the
/// tools' timeout at most kRunToolTimeout, kept in RunFacts::tools for each test's readings) and,
/// when `measure_ceiling`, measures the harness's ceiling. Never throws: a failure is its reason.
RunFacts probe_run(const std::filesystem::path& target, bool measure_ceiling,
                   const HealthTools& tools = HealthTools::found());

}  // namespace drivelab::telemetry
