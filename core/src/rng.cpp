#include "drivelab/core/rng.hpp"

#include <limits>

namespace drivelab {
namespace {

__extension__ typedef unsigned __int128 Uint128;  // GCC/Clang; __extension__ for -Wpedantic

std::uint64_t splitmix64(std::uint64_t& x) noexcept {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng::Rng(std::uint64_t seed) noexcept : seed_(seed) {
  std::uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
}

Rng::result_type Rng::operator()() noexcept {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::int64_t Rng::uniform(std::int64_t lo, std::int64_t hi) noexcept {
  // Unsigned arithmetic: hi - lo overflows int64 when the range spans more than half of it.
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  if (span == std::numeric_limits<std::uint64_t>::max()) {
    return static_cast<std::int64_t>((*this)());  // the full 64-bit range
  }
  const std::uint64_t range = span + 1;
  // Lemire's nearly divisionless method (2019): unbiased.
  Uint128 m = static_cast<Uint128>((*this)()) * range;
  std::uint64_t low = static_cast<std::uint64_t>(m);
  if (low < range) {
    const std::uint64_t threshold = (0 - range) % range;
    while (low < threshold) {
      m = static_cast<Uint128>((*this)()) * range;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + static_cast<std::uint64_t>(m >> 64));
}

double Rng::uniform01() noexcept { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }

Rng Rng::split(std::uint64_t stream_id) const noexcept {
  std::uint64_t x = seed_ ^ (stream_id * 0xD1B54A32D192ED03ull);
  return Rng(splitmix64(x));
}

}  // namespace drivelab
