#include "drivelab/runner/curve.hpp"

#include <cmath>

namespace drivelab::runner {

std::uint64_t curve_rate(double max_iops, double pct) noexcept {
  if (!(max_iops > 0) || !(pct > 0)) return 0;
  // vdbench: newrate = (int) max * (int) pct / 100 in integer arithmetic; fractional percentages
  // (which vdbench truncates) keep their fraction here.
  const double raw = std::floor(std::floor(max_iops) * pct / 100.0 + 1e-9);
  auto r = static_cast<std::uint64_t>(raw);
  if (r > 1000)
    r = (r + 99) / 100 * 100;
  else
    r = (r + 9) / 10 * 10;
  return r;
}

}  // namespace drivelab::runner
