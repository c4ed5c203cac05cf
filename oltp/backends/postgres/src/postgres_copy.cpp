#include "postgres_copy.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"

namespace drivelab::oltp::pg {
namespace {

// Type OIDs of pg_type (stable since PostgreSQL 7; src/include/catalog/pg_type.dat).
constexpr unsigned kInt8 = 20, kInt2 = 21, kInt4 = 23, kText = 25, kFloat4 = 700, kFloat8 = 701, kBpchar = 1042,
                   kVarchar = 1043, kTimestamp = 1114, kNumeric = 1700;
constexpr int kVarHdrSz = 4;
constexpr std::uint16_t kNumericPos = 0x0000, kNumericNeg = 0x4000;
constexpr std::int64_t kUsPerDay = 86'400'000'000;
// GCC/Clang's 128-bit integers: exact decimal arithmetic on up to 30 digits.
__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;

template <typename T>
void put_be(std::string& out, T v) {
  using U = std::make_unsigned_t<T>;
  auto u = static_cast<U>(v);
  std::array<char, sizeof(T)> b{};
  for (std::size_t i = sizeof(T); i-- > 0;) {
    b[i] = static_cast<char>(u & 0xff);
    u = static_cast<U>(u >> 8);
  }
  out.append(b.data(), b.size());
}

void put_len(std::string& out, std::size_t len) { put_be<std::int32_t>(out, static_cast<std::int32_t>(len)); }

[[noreturn]] void bad_value(const CopyColumn& c, std::string_view what, std::string_view value) {
  throw BackendError(fmt::format("postgres: COPY value '{}' does not fit column {} ({})", value, c.name, what),
                     "22P02");
}

/// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's
/// days_from_civil, http://howardhinnant.github.io/date_algorithms.html).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool digits(std::string_view s, std::size_t pos, std::size_t n, unsigned& out) noexcept {
  if (pos + n > s.size()) return false;
  out = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + static_cast<unsigned>(s[i] - '0');
  }
  return true;
}

/// NUMERIC binary value of `scaled` / 10^scale: base-10000 digits aligned on the decimal point.
void put_numeric(std::string& out, std::int64_t scaled, int scale) {
  const bool negative = scaled < 0;
  const int frac_groups = (scale + 3) / 4;
  u128 v = negative ? static_cast<u128>(-static_cast<i128>(scaled)) : static_cast<u128>(scaled);
  for (int i = 0; i < frac_groups * 4 - scale; ++i) v *= 10;  // align to whole base-10000 groups
  std::array<std::int16_t, 16> groups{};                      // least significant first
  int n = 0;
  while (v != 0) {
    groups[static_cast<std::size_t>(n++)] = static_cast<std::int16_t>(v % 10000);
    v /= 10000;
  }
  put_len(out, 8 + 2 * static_cast<std::size_t>(n));
  put_be<std::int16_t>(out, static_cast<std::int16_t>(n));                    // ndigits
  put_be<std::int16_t>(out, static_cast<std::int16_t>(n - frac_groups - 1));  // weight
  put_be<std::uint16_t>(out, negative ? kNumericNeg : kNumericPos);
  put_be<std::int16_t>(out, static_cast<std::int16_t>(scale));  // dscale
  for (int i = n; i-- > 0;) put_be<std::int16_t>(out, groups[static_cast<std::size_t>(i)]);
}

void put_text_bytes(std::string& out, std::string_view v) {
  put_len(out, v.size());
  out.append(v);
}

/// An IEEE 754 float as COPY BINARY sends it: the length, then its bits in network byte order
/// (float4send/float8send). Bits: std::uint32_t for float, std::uint64_t for double.
template <class Bits, class Float>
void put_float(std::string& out, Float f) {
  static_assert(sizeof(Bits) == sizeof(Float));
  Bits bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  put_len(out, sizeof bits);
  put_be<Bits>(out, bits);
}

/// v as decimal text (std::to_chars: the shortest text that reads back as v) in a text-format
/// field: what COPY's text format would send for a NUMERIC, TEXT or TIMESTAMP column.
template <class T>
void put_decimal_text(std::string& out, const CopyColumn& c, T v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  put_text(out, c, std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
}

}  // namespace

std::optional<CopyColumn> copy_column(std::string name, unsigned type_oid, int typmod) {
  CopyColumn c;
  c.name = std::move(name);
  switch (type_oid) {
    case kInt2: c.kind = CopyKind::int2; break;
    case kInt4: c.kind = CopyKind::int4; break;
    case kInt8: c.kind = CopyKind::int8; break;
    case kFloat4: c.kind = CopyKind::float4; break;
    case kFloat8: c.kind = CopyKind::float8; break;
    case kText:
    case kVarchar:
    case kBpchar: c.kind = CopyKind::text; break;  // the server pads/checks CHAR(n) and VARCHAR(n)
    case kTimestamp: c.kind = CopyKind::timestamp; break;
    case kNumeric: {
      if (typmod < kVarHdrSz) return std::nullopt;  // unconstrained NUMERIC
      // NUMERIC(p,s) typmod: ((p << 16) | (s & 0x7ff)) + VARHDRSZ, s sign-extended from 11 bits.
      const int scale = (((typmod - kVarHdrSz) & 0x7ff) ^ 1024) - 1024;
      const int precision = ((typmod - kVarHdrSz) >> 16) & 0xffff;
      if (scale < 0 || precision > 18) return std::nullopt;
      c.kind = CopyKind::numeric;
      c.scale = scale;
      break;
    }
    default: return std::nullopt;
  }
  return c;
}

std::string_view binary_copy_header() noexcept {
  static constexpr char kHeader[] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";
  return {kHeader, 19};
}

std::string_view binary_copy_trailer() noexcept {
  static constexpr char kTrailer[] = "\377\377";
  return {kTrailer, 2};
}

void put_field_count(std::string& out, int fields) { put_be<std::int16_t>(out, static_cast<std::int16_t>(fields)); }

void put_null(std::string& out) { put_be<std::int32_t>(out, -1); }

void put_int64(std::string& out, const CopyColumn& c, std::int64_t v) {
  switch (c.kind) {
    case CopyKind::int2:
      if (v < INT16_MIN || v > INT16_MAX) bad_value(c, "smallint", std::to_string(v));
      put_len(out, 2);
      put_be<std::int16_t>(out, static_cast<std::int16_t>(v));
      return;
    case CopyKind::int4:
      if (v < INT32_MIN || v > INT32_MAX) bad_value(c, "integer", std::to_string(v));
      put_len(out, 4);
      put_be<std::int32_t>(out, static_cast<std::int32_t>(v));
      return;
    case CopyKind::int8:
      put_len(out, 8);
      put_be<std::int64_t>(out, v);
      return;
    case CopyKind::float4:
    case CopyKind::float8: put_double(out, c, static_cast<double>(v)); return;
    case CopyKind::numeric:
    case CopyKind::text:
    case CopyKind::timestamp: put_decimal_text(out, c, v); return;
  }
}

void put_double(std::string& out, const CopyColumn& c, double v) {
  switch (c.kind) {
    case CopyKind::float4: put_float<std::uint32_t>(out, static_cast<float>(v)); return;
    case CopyKind::float8: put_float<std::uint64_t>(out, v); return;
    case CopyKind::int2:
    case CopyKind::int4:
    case CopyKind::int8:
      if (v != std::trunc(v) || std::fabs(v) > 9.2e18) bad_value(c, "integer", fmt::format("{}", v));
      put_int64(out, c, static_cast<std::int64_t>(v));
      return;
    case CopyKind::numeric:
    case CopyKind::text:
    case CopyKind::timestamp:
      // The shortest decimal text of v, as the text format sends it: NUMERIC then rounds the
      // decimal value (12.345 -> 12.35), not the binary double (12.3449999...).
      put_decimal_text(out, c, v);
      return;
  }
}

void put_text(std::string& out, const CopyColumn& c, std::string_view v) {
  switch (c.kind) {
    case CopyKind::text: put_text_bytes(out, v); return;
    case CopyKind::timestamp: {
      const auto us = parse_timestamp_us(v);
      if (!us) bad_value(c, "timestamp YYYY-MM-DD HH:MM:SS", v);
      put_len(out, 8);
      put_be<std::int64_t>(out, *us);
      return;
    }
    case CopyKind::numeric: {
      const auto scaled = scaled_decimal(v, c.scale);
      if (!scaled) bad_value(c, "numeric", v);
      put_numeric(out, *scaled, c.scale);
      return;
    }
    case CopyKind::int2:
    case CopyKind::int4:
    case CopyKind::int8: {
      std::int64_t i = 0;
      const auto r = std::from_chars(v.data(), v.data() + v.size(), i);
      if (r.ec != std::errc() || r.ptr != v.data() + v.size()) bad_value(c, "integer", v);
      put_int64(out, c, i);
      return;
    }
    case CopyKind::float4:
    case CopyKind::float8: {
      double d = 0;
      const auto r = std::from_chars(v.data(), v.data() + v.size(), d);
      if (r.ec != std::errc() || r.ptr != v.data() + v.size()) bad_value(c, "float", v);
      put_double(out, c, d);
      return;
    }
  }
}

std::optional<std::int64_t> parse_timestamp_us(std::string_view s) {
  unsigned y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  if (!digits(s, 0, 4, y) || !digits(s, 5, 2, mo) || !digits(s, 8, 2, d) || !digits(s, 11, 2, h) ||
      !digits(s, 14, 2, mi) || !digits(s, 17, 2, se))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return std::nullopt;
  std::int64_t frac_us = 0;
  if (s.size() > 19) {
    if (s[19] != '.' || s.size() == 20 || s.size() > 26) return std::nullopt;
    unsigned f = 0;
    if (!digits(s, 20, s.size() - 20, f)) return std::nullopt;
    frac_us = f;
    for (std::size_t n = s.size() - 20; n < 6; ++n) frac_us *= 10;
  }
  const std::int64_t days = days_from_civil(y, mo, d) - days_from_civil(2000, 1, 1);
  return days * kUsPerDay + ((static_cast<std::int64_t>(h) * 60 + mi) * 60 + se) * 1'000'000 + frac_us;
}

std::optional<std::int64_t> scaled_decimal(std::string_view s, int scale) {
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  // Mantissa digits (without the point) and the power of ten of its last digit.
  u128 mantissa = 0;
  int exp10 = 0;
  int significant = 0;
  bool any = false, point = false;
  for (; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '.' && !point) {
      point = true;
      continue;
    }
    if (ch < '0' || ch > '9') break;
    any = true;
    if (mantissa != 0 || ch != '0') ++significant;
    if (significant > 30) return std::nullopt;
    mantissa = mantissa * 10 + static_cast<unsigned>(ch - '0');
    if (point) --exp10;
  }
  if (!any) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    int e = 0;
    const auto r =
        std::from_chars(s.data() + i + 1 + (i + 1 < s.size() && s[i + 1] == '+' ? 1 : 0), s.data() + s.size(), e);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() || e > 60 || e < -60) return std::nullopt;
    exp10 += e;
    i = s.size();
  }
  if (i != s.size()) return std::nullopt;
  int shift = exp10 + scale;  // value * 10^scale = mantissa * 10^shift
  if (shift >= 0) {
    for (; shift > 0; --shift) {
      mantissa *= 10;
      if (mantissa > static_cast<u128>(999'999'999'999'999'999ULL)) return std::nullopt;
    }
  } else if (-shift > 38) {
    mantissa = 0;  // the mantissa has at most 30 digits: far below half a unit of the last place
  } else {
    u128 divisor = 1;
    for (int k = 0; k < -shift; ++k) divisor *= 10;
    const u128 q = mantissa / divisor;
    const u128 r = mantissa % divisor;
    mantissa = q + (2 * r >= divisor ? 1 : 0);  // half away from zero, as numeric rounds
  }
  if (mantissa > static_cast<u128>(999'999'999'999'999'999ULL)) return std::nullopt;
  const auto v = static_cast<std::int64_t>(mantissa);
  return negative ? -v : v;
}

}  // namespace drivelab::oltp::pg
