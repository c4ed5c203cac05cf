#pragma once
/// \file rng.hpp
/// Seeded, reproducible pseudo-random numbers. A run's seed (result record: `seed`) is split into
/// independent streams per worker/terminal with `Rng::split`, so results repeat for the same seed
/// and thread count.
///
/// Generator: xoshiro256** (Blackman & Vigna, 2018), seeded through splitmix64. Not cryptographic.
/// Satisfies std::uniform_random_bit_generator, so <random> distributions accept it.
#include <cstdint>
#include <limits>

namespace drivelab {

class Rng {
 public:
  using result_type = std::uint64_t;
  explicit Rng(std::uint64_t seed = 0x9E3779B97F4A7C15ull) noexcept;

  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }
  result_type operator()() noexcept;

  /// Uniform integer in [lo, hi], both inclusive (TPC-C's "random(x, y)", clause 2.1.5). lo <= hi;
  /// any int64 range, the full one included. Unbiased (Lemire 2019, multiply and reject).
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) noexcept;
  /// Uniform double in [0, 1).
  double uniform01() noexcept;
  /// Bernoulli draw with probability p in [0, 1].
  bool chance(double p) noexcept { return uniform01() < p; }
  /// A new independent generator for stream `stream_id` (derived from this generator's seed).
  Rng split(std::uint64_t stream_id) const noexcept;
  std::uint64_t seed() const noexcept { return seed_; }

 private:
  std::uint64_t seed_;
  std::uint64_t s_[4];
};

}  // namespace drivelab
