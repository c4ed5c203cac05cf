#include "drivelab/runner/cohort.hpp"

#include <array>
#include <cstdlib>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "drivelab/runner/emulator.hpp"

namespace drivelab::runner {
namespace {

std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > std::numeric_limits<int>::max()) return std::nullopt;
  return static_cast<int>(x);
}

}  // namespace

std::optional<Launch> launched_by_mpi() {
  static constexpr std::array<std::pair<const char*, const char*>, 3> kVars{{
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMI_RANK", "PMI_SIZE"},
      {"SLURM_PROCID", "SLURM_NTASKS"},
  }};
  for (const auto& [rank_var, size_var] : kVars) {
    const auto rank = env_int(rank_var);
    const auto size = env_int(size_var);
    if (rank && size && *size > 0 && *rank < *size) return Launch{*rank, *size};
  }
  return std::nullopt;
}

std::string Cohort::describe_rank(int r) const {
  const auto& h = hosts();
  if (r >= 0 && static_cast<std::size_t>(r) < h.size())
    return fmt::format("rank {} (host {})", r, h[static_cast<std::size_t>(r)]);
  return fmt::format("rank {}", r);
}

void Cohort::stop_seen_while_waiting() noexcept {
  std::function<void()> hook = std::exchange(stop_hook_, nullptr);
  if (!hook) return;
  try {
    hook();
  } catch (...) {  // NOLINT(bugprone-empty-catch): the hook says its own errors; the collective's wait goes on
  }
}

std::string expand_rank_pattern(std::string_view pattern, int rank, std::string_view host) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size();) {
    if (pattern.substr(i).starts_with("{rank}")) {
      out += std::to_string(rank);
      i += 6;
    } else if (pattern.substr(i).starts_with("{host}")) {
      out += host;
      i += 6;
    } else {
      out += pattern[i++];
    }
  }
  return out;
}

void TestContext::sum_over_hosts(std::span<double> values, std::string_view what) const {
  if (cohort == nullptr || cohort->size() <= 1) return;
  if (cohort->broken())
    throw CohortError(fmt::format("{}: the multi-host run is broken (an earlier collective failed)", what));
  cohort->sum(values, fmt::format("test {}: {}", settings.name, what), cohort_timeout);
}

}  // namespace drivelab::runner
