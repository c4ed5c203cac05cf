#pragma once
/// \file sysbench_random.hpp
/// The key distributions and random strings of sysbench 1.0.20 (src/sb_rand.c), reproduced
/// formula by formula so that our `oltp_*` workloads touch the same rows with the same skew.
///
///   uniform   a + u * (b - a + 1)                                  (sb_rand_uniform)
///   gaussian  a + (sum of `iter` draws of u * (b - a + 1)) / iter  (sb_rand_gaussian)
///   special   t = b - a; r = u * t * 100 / (100 - res):
///               r < t:  a + (sum of `iter` draws of u) * t / iter  (a bell around the middle)
///               else:   a + u * (t * pct / 100 + 1) + t / 2 - t * pct / 200
///                       (the hot band near the middle; `u` is the SAME draw as in r)
///                                                                  (sb_rand_special)
///   pareto    a + (b - a + 1) * u ^ (ln h / ln(1 - h))             (sb_rand_pareto)
///
/// with u uniform in [0, 1) and every result truncated to an unsigned 32-bit integer as the C
/// code does. sysbench's defaults: --rand-type=special, --rand-spec-iter=12, --rand-spec-pct=1,
/// --rand-spec-res=75, --rand-pareto-h=0.2. With them, `special` puts about 75% of the picks in
/// about 1% of the keys near the middle of the range. Exactly: 75% land uniformly in the band
/// [middle - 0.25%, middle + 0.5%) of the range (0.75% wide, not 1%, because the draw that chose
/// the hot branch, u >= 0.25, is reused to place the key), and the bell adds about 1% more.
///
/// Difference from sysbench, on purpose: the 64-bit generator. sysbench uses xoroshiro128+ per
/// thread seeded from libc random(); we use drivelab::Rng (xoshiro256**) split from the test's
/// seed, so runs repeat for a given seed and thread count. u is built the same way (53 bits vs
/// sysbench's 52), so the distributions are the same; the individual numbers are not.
///
/// Random strings (sb_rand_str): every '#' of a template becomes a decimal digit, every '@' a
/// lower-case letter, anything else is copied. sysbench draws one double per character; we draw
/// several digits from one 64-bit number (multiply-by-10, taking the integer part each time:
/// every digit is uniform to within 2^-30), which keeps string generation off the profile.
#include <cstdint>
#include <string>
#include <string_view>

#include "drivelab/core/names.hpp"
#include "drivelab/core/rng.hpp"

namespace drivelab::oltp::sysbench {

/// `--rand-type`.
enum class RandType { uniform, gaussian, special, pareto };
/// sysbench's --rand-type words, in the order its help lists them (special is the default).
inline constexpr EnumNames<RandType, 4> kRandTypeNames{{{"special", RandType::special},
                                                        {"uniform", RandType::uniform},
                                                        {"gaussian", RandType::gaussian},
                                                        {"pareto", RandType::pareto}}};
inline std::string_view to_string(RandType t) noexcept { return name_of(kRandTypeNames, t); }

/// sysbench's random options with its defaults.
struct RandOptions {
  RandType type = RandType::special;
  int spec_iter = 12;     ///< --rand-spec-iter: draws summed by gaussian and special, >= 1
  int spec_pct = 1;       ///< --rand-spec-pct: width of the hot band, % of the range (0..100)
  int spec_res = 75;      ///< --rand-spec-res: % of picks that go to the hot band (0..99)
  double pareto_h = 0.2;  ///< --rand-pareto-h: in (0, 1); smaller is more skewed (0.5 is uniform)
};

/// sysbench's c and pad templates (oltp_common.lua: c_value_template, pad_value_template):
/// groups of 11 '#' separated by '-': 10 groups (119 characters) and 5 groups (59 characters).
inline constexpr std::string_view kCTemplate =
    "###########-###########-###########-###########-###########-###########-###########-"
    "###########-###########-###########";
inline constexpr std::string_view kPadTemplate = "###########-###########-###########-###########-###########";

/// One thread's random numbers (not thread-safe; one per worker thread, as sysbench's TLS state).
class SbRandom {
 public:
  SbRandom(const RandOptions& options, Rng rng) noexcept;

  /// sysbench.rand.uniform(a, b) / sb_rand_uniform. Requires a <= b.
  std::uint32_t uniform(std::uint32_t a, std::uint32_t b) noexcept;
  std::uint32_t gaussian(std::uint32_t a, std::uint32_t b) noexcept;
  std::uint32_t special(std::uint32_t a, std::uint32_t b) noexcept;
  std::uint32_t pareto(std::uint32_t a, std::uint32_t b) noexcept;
  /// sysbench.rand.default(a, b) / sb_rand_default: the distribution chosen by `type`.
  std::uint32_t pick(std::uint32_t a, std::uint32_t b) noexcept;

  /// sysbench.rand.string(template) into `out` (resized to the template's length).
  void fill(std::string& out, std::string_view tmpl) noexcept;

  const RandOptions& options() const noexcept { return opt_; }

 private:
  double u() noexcept { return rng_.uniform01(); }

  RandOptions opt_;
  Rng rng_;
  // Precomputed as sb_rand_init() does.
  double iter_mult_;
  double pct_mult_;
  double pct_2_mult_;
  double res_mult_;
  double pareto_power_;
};

}  // namespace drivelab::oltp::sysbench
