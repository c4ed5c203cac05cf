// What a run learns once before its first test (run_facts.hpp).
#include "drivelab/telemetry/run_facts.hpp"

#include <algorithm>
#include <exception>

#include <fmt/format.h>

namespace drivelab::telemetry {

results::Json RunFacts::details() const {
  results::Json ceiling_json =
      ceiling ? ceiling->json() : results::Json{{"measured", false}, {"reason", ceiling_reason}};
  return {{"health", health.json()}, {"harness_ceiling", std::move(ceiling_json)}};
}

RunFacts probe_run(const std::filesystem::path& target, bool measure_ceiling, const HealthTools& tools) {
  RunFacts f;
  f.tools = tools;
  f.tools.timeout = std::min(tools.timeout, kRunToolTimeout);
  try {
    f.health = run_health(read_drive_health_of(target, f.tools));
  } catch (const std::exception& ex) {
    f.health = run_health({{}, fmt::format("drive health not read: {}", ex.what())});
  }
  if (!measure_ceiling) {
    f.ceiling_reason = "turned off (harness_ceiling: false or --no-harness-ceiling)";
    return f;
  }
  try {
    f.ceiling = measure_harness_ceiling();
  } catch (const std::exception& ex) {
    f.ceiling_reason = fmt::format("not measured: {}", ex.what());
  }
  return f;
}

}  // namespace drivelab::telemetry
