#include "drivelab/telemetry/block_stats.hpp"

#include <array>
#include <charconv>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"

namespace drivelab::telemetry {

BlockStat parse_block_stat(std::string_view text, const std::string& source) {
  std::array<std::uint64_t, 17> v{};
  int n = 0;
  std::size_t i = 0;
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (true) {
    while (i < text.size() && blank(text[i])) ++i;
    if (i >= text.size()) break;
    std::size_t j = i;
    while (j < text.size() && !blank(text[j])) ++j;
    const std::string_view word = text.substr(i, j - i);
    if (n >= 17) throw EnvironmentError(fmt::format("{}: more than 17 fields (iostats.rst has 11, 15 or 17)", source));
    std::uint64_t x = 0;
    const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), x);
    if (ec != std::errc() || ptr != word.data() + word.size())
      throw EnvironmentError(fmt::format("{}: field {} is '{}', not an unsigned number", source, n + 1, word));
    v[static_cast<std::size_t>(n++)] = x;
    i = j;
  }
  if (n != 11 && n != 15 && n != 17)
    throw EnvironmentError(fmt::format(
        "{}: {} fields; the kernel writes 11, 15 or 17 (Documentation/admin-guide/iostats.rst)", source, n));
  BlockStat s;
  s.fields = n;
  s.read_ios = v[0];
  s.read_merges = v[1];
  s.read_sectors = v[2];
  s.read_ms = v[3];
  s.write_ios = v[4];
  s.write_merges = v[5];
  s.write_sectors = v[6];
  s.write_ms = v[7];
  s.in_flight = v[8];
  s.io_ticks_ms = v[9];
  s.time_in_queue_ms = v[10];
  s.discard_ios = v[11];
  s.discard_merges = v[12];
  s.discard_sectors = v[13];
  s.discard_ms = v[14];
  s.flush_ios = v[15];
  s.flush_ms = v[16];
  return s;
}

std::optional<BlockStat> read_block_stat(const std::filesystem::path& stat_file) {
  std::ifstream in(stat_file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return parse_block_stat(ss.str(), stat_file.string());
}

std::uint64_t counter_delta(std::uint64_t before, std::uint64_t after, int width) noexcept {
  constexpr std::uint64_t k32 = 0xffffffffULL;
  if (width <= 32) return (after - before) & k32;
  // A 64-bit count that went down from a value that fits in 32 bits: a 32-bit kernel's unsigned
  // long wrapped (iostat masks the difference with 0xffffffff in that case).
  if (after < before && before <= k32) return (after - before) & k32;
  return after - before;  // unsigned: modulo 2^64
}

BlockRates block_rates(const BlockStat& a, const BlockStat& b, double seconds) noexcept {
  BlockRates r;
  r.seconds = seconds;
  r.has_discards = a.has_discards() && b.has_discards();
  r.has_flushes = a.has_flushes() && b.has_flushes();
  const auto d64 = [](std::uint64_t x, std::uint64_t y) { return counter_delta(x, y, 64); };
  const auto d32 = [](std::uint64_t x, std::uint64_t y) { return counter_delta(x, y, 32); };
  r.reads = d64(a.read_ios, b.read_ios);
  r.writes = d64(a.write_ios, b.write_ios);
  r.discards = r.has_discards ? d64(a.discard_ios, b.discard_ios) : 0;
  r.flushes = r.has_flushes ? d64(a.flush_ios, b.flush_ios) : 0;
  const std::uint64_t rsec = d64(a.read_sectors, b.read_sectors);
  const std::uint64_t wsec = d64(a.write_sectors, b.write_sectors);
  const std::uint64_t dsec = r.has_discards ? d64(a.discard_sectors, b.discard_sectors) : 0;
  r.read_bytes = rsec * 512;
  r.write_bytes = wsec * 512;
  r.discard_bytes = dsec * 512;
  r.read_merges = d64(a.read_merges, b.read_merges);
  r.write_merges = d64(a.write_merges, b.write_merges);
  r.discard_merges = r.has_discards ? d64(a.discard_merges, b.discard_merges) : 0;
  const std::uint64_t rms = d32(a.read_ms, b.read_ms), wms = d32(a.write_ms, b.write_ms);
  const std::uint64_t dms = r.has_discards ? d32(a.discard_ms, b.discard_ms) : 0;
  const std::uint64_t fms = r.has_flushes ? d32(a.flush_ms, b.flush_ms) : 0;
  const auto per = [](std::uint64_t num, std::uint64_t den) {
    return den ? static_cast<double>(num) / static_cast<double>(den) : 0.0;
  };
  const auto pct = [](std::uint64_t merges, std::uint64_t ios) {
    return merges + ios ? static_cast<double>(merges) / static_cast<double>(merges + ios) * 100.0 : 0.0;
  };
  r.r_await = per(rms, r.reads);
  r.w_await = per(wms, r.writes);
  r.d_await = per(dms, r.discards);
  r.f_await = per(fms, r.flushes);
  r.rareq_sz = per(rsec, r.reads) / 2.0;
  r.wareq_sz = per(wsec, r.writes) / 2.0;
  r.dareq_sz = per(dsec, r.discards) / 2.0;
  r.pct_rrqm = pct(r.read_merges, r.reads);
  r.pct_wrqm = pct(r.write_merges, r.writes);
  r.pct_drqm = pct(r.discard_merges, r.discards);
  if (seconds <= 0) return r;
  const auto rate = [seconds](std::uint64_t n) { return static_cast<double>(n) / seconds; };
  r.r_s = rate(r.reads);
  r.w_s = rate(r.writes);
  r.d_s = rate(r.discards);
  r.f_s = rate(r.flushes);
  r.rMB_s = rate(rsec) / 2048.0;
  r.wMB_s = rate(wsec) / 2048.0;
  r.dMB_s = rate(dsec) / 2048.0;
  r.rrqm_s = rate(r.read_merges);
  r.wrqm_s = rate(r.write_merges);
  r.drqm_s = rate(r.discard_merges);
  r.aqu_sz = rate(d32(a.time_in_queue_ms, b.time_in_queue_ms)) / 1000.0;
  r.util_pct = rate(d32(a.io_ticks_ms, b.io_ticks_ms)) / 10.0;
  return r;
}

}  // namespace drivelab::telemetry
