#include "drivelab/oltp/tpcc/tpcc_random.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace drivelab::oltp::tpcc {
namespace {

constexpr std::string_view kAlnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
static_assert(kAlnum.size() == 62);

__extension__ using u128 = unsigned __int128;

/// Fills `out[0..len)` with characters of `alphabet` (n characters). One 64-bit draw x, read as
/// a fraction in [0, 1), gives six characters as its first six base-n digits: each is the integer
/// part of x * n, and x keeps the fractional part. After six digits of base 62 the fraction still
/// holds 64 - 6 x 5.95 = 28 random bits, so no character is biased by more than n / 2^28 (2e-7).
/// Three times fewer draws than one per character keeps the ~55 MB of random text per warehouse
/// of the load cheap, even in Debug/ASan builds.
void fill_random(Rng& rng, std::string_view alphabet, std::size_t len, std::string& out) {
  out.resize(len);
  char* p = out.data();
  const char* a = alphabet.data();
  const auto n = static_cast<std::uint64_t>(alphabet.size());
  std::size_t i = 0;
  while (i < len) {
    std::uint64_t x = rng();
    for (int k = 0; k < 6 && i < len; ++k) {
      const u128 m = static_cast<u128>(x) * n;
      p[i++] = a[static_cast<std::size_t>(m >> 64)];
      x = static_cast<std::uint64_t>(m);
    }
  }
}

}  // namespace

std::int64_t nurand(Rng& rng, int a, std::int64_t x, std::int64_t y, int c) noexcept {
  const std::int64_t r = rng.uniform(0, a) | rng.uniform(x, y);
  return ((r + c) % (y - x + 1)) + x;
}

CConstants make_c_load(Rng& rng, Profile profile) noexcept {
  CConstants c;
  c.c_last = static_cast<int>(rng.uniform(0, 255));
  c.c_id = static_cast<int>(rng.uniform(0, 1023));
  c.ol_i_id = static_cast<int>(rng.uniform(0, 8191));
  if (profile == Profile::hammerdb) c.c_last = kHammerDbCLast;
  return c;
}

bool c_last_run_is_valid(int c_load, int c_run) noexcept {
  const int delta = std::abs(c_run - c_load);
  return delta >= 65 && delta <= 119 && delta != 96 && delta != 112;
}

CConstants make_c_run(Rng& rng, const CConstants& c_load, Profile profile) noexcept {
  CConstants c;
  if (profile == Profile::hammerdb) {
    c.c_last = kHammerDbCLast;
    c.c_id = static_cast<int>(rng.uniform(0, 1023));
    c.ol_i_id = static_cast<int>(rng.uniform(0, 8191));
    return c;
  }
  // Every C_Load in [0, 255] has valid C_Run values in [0, 255] (e.g. C_Load +- 65), so
  // rejection sampling ends quickly (about 1 in 5 draws is accepted on average).
  do {
    c.c_last = static_cast<int>(rng.uniform(0, 255));
  } while (!c_last_run_is_valid(c_load.c_last, c.c_last));
  c.c_id = static_cast<int>(rng.uniform(0, 1023));
  c.ol_i_id = static_cast<int>(rng.uniform(0, 8191));
  return c;
}

const std::array<std::string_view, 10>& last_name_syllables() noexcept {
  static constexpr std::array<std::string_view, 10> kSyllables{"BAR", "OUGHT", "ABLE",  "PRI",   "PRES",
                                                               "ESE", "ANTI",  "CALLY", "ATION", "EING"};
  return kSyllables;
}

std::string last_name(int number) {
  const auto& s = last_name_syllables();
  std::string out;
  out.reserve(16);
  out += s[static_cast<std::size_t>((number / 100) % 10)];
  out += s[static_cast<std::size_t>((number / 10) % 10)];
  out += s[static_cast<std::size_t>(number % 10)];
  return out;
}

void a_string(Rng& rng, int min_len, int max_len, std::string& out) {
  fill_random(rng, kAlnum, static_cast<std::size_t>(rng.uniform(min_len, max_len)), out);
}

void n_string(Rng& rng, int min_len, int max_len, std::string& out) {
  fill_random(rng, "0123456789", static_cast<std::size_t>(rng.uniform(min_len, max_len)), out);
}

void zip_code(Rng& rng, std::string& out) {
  n_string(rng, 4, 4, out);
  out += "11111";
}

void data_with_original(Rng& rng, std::string& out) {
  a_string(rng, 26, 50, out);
  if (rng.uniform(1, 10) == 1) {
    constexpr std::string_view kOriginal = "ORIGINAL";
    const auto pos = static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(out.size() - kOriginal.size())));
    out.replace(pos, kOriginal.size(), kOriginal);
  }
}

std::vector<int> permutation(Rng& rng, int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 1);
  // Fisher-Yates with our own generator (std::shuffle's output differs between libraries).
  for (std::size_t i = v.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(i - 1)));
    std::swap(v[i - 1], v[j]);
  }
  return v;
}

double fixed_point(Rng& rng, double min, double max, int decimals) noexcept {
  const double scale = std::pow(10.0, decimals);
  const auto lo = static_cast<std::int64_t>(std::llround(min * scale));
  const auto hi = static_cast<std::int64_t>(std::llround(max * scale));
  return static_cast<double>(rng.uniform(lo, hi)) / scale;
}

std::string_view to_string(TxType t) noexcept {
  switch (t) {
    case TxType::new_order: return "new_order";
    case TxType::payment: return "payment";
    case TxType::order_status: return "order_status";
    case TxType::delivery: return "delivery";
    case TxType::stock_level: return "stock_level";
  }
  return "unknown";
}

TxType hammerdb_transaction(Rng& rng) noexcept {
  const auto choice = rng.uniform(1, 23);
  if (choice <= 10) return TxType::new_order;
  if (choice <= 20) return TxType::payment;
  if (choice == 21) return TxType::delivery;
  if (choice == 22) return TxType::stock_level;
  return TxType::order_status;
}

Deck::Deck() {
  std::size_t k = 0;
  for (std::size_t t = 0; t < kAllTxTypes.size(); ++t)
    for (int i = 0; i < kCardsPerType[t]; ++i) cards_[k++] = kAllTxTypes[t];
}

TxType Deck::draw(Rng& rng) noexcept {
  if (next_ == kCards) {
    for (std::size_t i = cards_.size(); i > 1; --i) {
      const auto j = static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(i - 1)));
      std::swap(cards_[i - 1], cards_[j]);
    }
    next_ = 0;
  }
  return cards_[static_cast<std::size_t>(next_++)];
}

std::vector<MixShortfall> mix_shortfalls(const std::array<std::uint64_t, kTxTypes>& completed, int terminals) {
  std::vector<MixShortfall> out;
  const std::uint64_t total = std::accumulate(completed.begin(), completed.end(), std::uint64_t{0});
  if (total == 0) return out;
  for (TxType t : kAllTxTypes) {
    const auto k = static_cast<std::size_t>(t);
    if (kMinMixPct[k] <= 0) continue;
    const double cards = Deck::kCardsPerType[k];
    const double slack = std::max(terminals, 0) * 2.0 * cards * (Deck::kCards - cards) / Deck::kCards;
    const double n = static_cast<double>(completed[k]);
    if (n < kMinMixPct[k] / 100.0 * static_cast<double>(total) - slack)
      out.push_back({t, completed[k], 100.0 * n / static_cast<double>(total), kMinMixPct[k]});
  }
  return out;
}

std::vector<MixShortfall> mix_shortfalls_beyond_chance(const std::array<std::uint64_t, kTxTypes>& completed) {
  std::vector<MixShortfall> out = mix_shortfalls(completed, 0);
  const double n = static_cast<double>(std::accumulate(completed.begin(), completed.end(), std::uint64_t{0}));
  std::erase_if(out, [&](const MixShortfall& m) {
    const double p = static_cast<double>(Deck::kCardsPerType[static_cast<std::size_t>(m.type)]) / Deck::kCards;
    return static_cast<double>(m.count) >= p * n - 3.0 * std::sqrt(n * p * (1.0 - p));
  });
  return out;
}

}  // namespace drivelab::oltp::tpcc
