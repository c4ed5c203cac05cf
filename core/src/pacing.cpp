#include "drivelab/core/pacing.hpp"

#include <cmath>

#include "drivelab/core/errors.hpp"

namespace drivelab {

ArrivalSchedule::ArrivalSchedule(double rate_per_s, ArrivalDistribution distribution, Rng rng, std::int64_t start_ns,
                                 double phase)
    : rate_per_s_(rate_per_s), distribution_(distribution), rng_(rng), start_ns_(start_ns) {
  if (!(rate_per_s > 0) || !std::isfinite(rate_per_s))
    throw InternalError("ArrivalSchedule: the rate must be positive and finite");
  mean_gap_ns_ = 1e9 / rate_per_s;
  phase_ = phase > 0 && phase < 1 ? phase : 1.0;
  offset_ns_ = distribution == ArrivalDistribution::deterministic ? phase_ * mean_gap_ns_ : gap_ns();
  next_ = start_ns_ + static_cast<std::int64_t>(std::llround(offset_ns_));
}

double ArrivalSchedule::gap_ns() noexcept {
  switch (distribution_) {
    case ArrivalDistribution::exponential:
      // 1 - U lies in (0, 1]: the logarithm is finite.
      return -std::log(1.0 - rng_.uniform01()) * mean_gap_ns_;
    case ArrivalDistribution::uniform: return 2.0 * rng_.uniform01() * mean_gap_ns_;
    case ArrivalDistribution::deterministic: return mean_gap_ns_;
  }
  return mean_gap_ns_;
}

std::int64_t ArrivalSchedule::next_ns() noexcept {
  const std::int64_t now = next_;
  ++count_;
  // Deterministic: multiply instead of adding, so that 1/rate's rounding error never accumulates.
  if (distribution_ == ArrivalDistribution::deterministic)
    offset_ns_ = (phase_ + static_cast<double>(count_)) * mean_gap_ns_;
  else
    offset_ns_ += gap_ns();
  next_ = start_ns_ + static_cast<std::int64_t>(std::llround(offset_ns_));
  return now;
}

}  // namespace drivelab
