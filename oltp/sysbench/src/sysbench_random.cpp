#include "drivelab/oltp/sysbench/sysbench_random.hpp"

#include <cmath>

namespace drivelab::oltp::sysbench {

SbRandom::SbRandom(const RandOptions& options, Rng rng) noexcept
    : opt_(options),
      rng_(rng),
      iter_mult_(1.0 / options.spec_iter),
      pct_mult_(options.spec_pct / 100.0),
      pct_2_mult_(options.spec_pct / 200.0),
      res_mult_(100.0 / (100.0 - options.spec_res)),
      pareto_power_(std::log(options.pareto_h) / std::log(1.0 - options.pareto_h)) {}

// Each function below is the C function of sb_rand.c named in the header, with the same
// operations in the same order; the double -> uint32_t conversions truncate as C does.

std::uint32_t SbRandom::uniform(std::uint32_t a, std::uint32_t b) noexcept {
  return static_cast<std::uint32_t>(a + u() * (static_cast<double>(b - a) + 1.0));
}

std::uint32_t SbRandom::gaussian(std::uint32_t a, std::uint32_t b) noexcept {
  const double t = static_cast<double>(b - a) + 1.0;
  double sum = 0;
  for (int i = 0; i < opt_.spec_iter; ++i) sum += u() * t;
  return a + static_cast<std::uint32_t>(sum * iter_mult_);
}

std::uint32_t SbRandom::special(std::uint32_t a, std::uint32_t b) noexcept {
  const double t = static_cast<double>(b - a);
  const double range_size = t * res_mult_;
  const double rnd = u();
  double res = rnd * range_size;
  if (res < t) {
    // The bell: (100 - res)% of the picks.
    double sum = 0;
    for (int i = 0; i < opt_.spec_iter; ++i) sum += u();
    return static_cast<std::uint32_t>(a + sum * t * iter_mult_);
  }
  // The hot band: the same `rnd` (now >= (100 - res) / 100) placed in pct% of the range, moved
  // to its middle.
  const double d = t * pct_mult_;
  res = rnd * (d + 1);
  res += t / 2 - t * pct_2_mult_;
  return a + static_cast<std::uint32_t>(res);
}

std::uint32_t SbRandom::pareto(std::uint32_t a, std::uint32_t b) noexcept {
  return a + static_cast<std::uint32_t>((static_cast<double>(b - a) + 1.0) * std::pow(u(), pareto_power_));
}

std::uint32_t SbRandom::pick(std::uint32_t a, std::uint32_t b) noexcept {
  switch (opt_.type) {
    case RandType::uniform: return uniform(a, b);
    case RandType::gaussian: return gaussian(a, b);
    case RandType::special: return special(a, b);
    case RandType::pareto: return pareto(a, b);
  }
  return uniform(a, b);
}

void SbRandom::fill(std::string& out, std::string_view tmpl) noexcept {
  out.resize(tmpl.size());
  // Digits from one 64-bit draw: the integer part of x * 10 is a digit, the fraction (the low
  // 64 bits) feeds the next one. Each step uses up log2(10) bits; after 10 digits 30 bits of
  // precision remain, so every digit is uniform to within 2^-30.
  __extension__ typedef unsigned __int128 U128;
  std::uint64_t x = 0;
  int left = 0;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    const char c = tmpl[i];
    if (c == '#' || c == '@') {
      if (left == 0) {
        x = rng_();
        left = 10;
      }
      --left;
      const U128 m = static_cast<U128>(x) * (c == '#' ? 10u : 26u);
      x = static_cast<std::uint64_t>(m);
      const auto v = static_cast<char>(m >> 64);
      out[i] = static_cast<char>(c == '#' ? '0' + v : 'a' + v);
      if (c == '@') left = left > 0 ? left - 1 : 0;  // a letter uses ~4.7 bits
    } else {
      out[i] = c;
    }
  }
}

}  // namespace drivelab::oltp::sysbench
