#include "drivelab/emulators/vdbench_workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/units.hpp"

namespace drivelab::emulators {
namespace {

// Index of the first cumulative share above u (u in [0, 1)).
std::size_t pick(const std::vector<double>& cdf, double u) noexcept {
  const auto it = std::upper_bound(cdf.begin(), cdf.end(), u);
  return it == cdf.end() ? cdf.size() - 1 : static_cast<std::size_t>(it - cdf.begin());
}

std::uint64_t splitmix(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

constexpr std::size_t kPoolBytes = std::size_t{1} << 20;
constexpr std::uint64_t kDuplicateBase = 0xD0D0D0D000000000ull;  // identities of the shared duplicate contents

}  // namespace

WorkloadStream::WorkloadStream(const std::vector<WorkloadDef>& workloads, Region region, std::uint32_t alignment_bytes,
                               std::uint32_t stream_index, std::uint32_t streams, Rng rng)
    : rng_(rng) {
  const std::uint64_t align = std::max<std::uint32_t>(alignment_bytes, 512);
  const std::vector<double> skews = effective_skews(workloads);
  double cum = 0, total = 0;
  for (double s : skews) total += s;
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const WorkloadDef& w = workloads[i];
    if (w.xfersize.empty()) throw ConfigError(fmt::format("workloads[{}] ({}): no xfersize", i, w.name));
    Def d;
    double xc = 0, xt = 0;
    for (const auto& x : w.xfersize) xt += x.pct;
    for (const auto& x : w.xfersize) {
      if (x.size_bytes % align != 0)
        throw ConfigError(
            fmt::format("workloads[{}] ({}): xfersize {} is not a multiple of the target's O_DIRECT "
                        "alignment ({} bytes); use a multiple of it or set direct: false",
                        i, w.name, format_size(x.size_bytes), align));
      xc += x.pct / xt;
      d.xfer_cdf.push_back(xc);
      d.xfer_bytes.push_back(static_cast<std::uint32_t>(x.size_bytes));
    }
    if (!d.xfer_cdf.empty()) d.xfer_cdf.back() = 1.0;  // exactly 1: rounding never leaves a gap
    d.read_p = w.rdpct / 100.0;
    d.random_p = w.seekpct / 100.0;
    const auto pct_of = [&](double pct) {
      return static_cast<std::uint64_t>(std::floor(static_cast<double>(region.length_bytes) * pct / 100.0));
    };
    d.lo = region.offset_bytes + align_up(pct_of(w.range_lo_pct), align);
    d.hi = region.offset_bytes + align_down(std::min(pct_of(w.range_hi_pct), region.length_bytes), align);
    const std::uint32_t largest = *std::max_element(d.xfer_bytes.begin(), d.xfer_bytes.end());
    if (d.hi <= d.lo || d.hi - d.lo < largest)
      throw ConfigError(
          fmt::format("workloads[{}] ({}): its {} [{}%, {}%] of the {} region is smaller than its "
                      "largest xfersize ({}); widen it or grow file_size",
                      i, w.name, w.hotband ? "hotband" : "range", w.range_lo_pct, w.range_hi_pct,
                      format_size(region.length_bytes), format_size(largest)));
    const std::uint64_t span = d.hi - d.lo;
    d.cursor = d.lo + align_down(span * stream_index / std::max<std::uint32_t>(streams, 1), align);
    if (d.xfer_bytes.size() == 1) d.blocks_one_xfer = span / d.xfer_bytes[0];
    defs_.push_back(std::move(d));
    cum += total > 0 ? skews[i] / total : 1.0 / static_cast<double>(workloads.size());
    workload_cdf_.push_back(cum);
  }
  if (!workload_cdf_.empty()) workload_cdf_.back() = 1.0;
}

void WorkloadStream::next(IoSpec& s) noexcept {
  s.workload = defs_.size() == 1 ? 0 : static_cast<std::uint32_t>(pick(workload_cdf_, rng_.uniform01()));
  Def& d = defs_[s.workload];
  s.length_bytes = d.xfer_bytes.size() == 1 ? d.xfer_bytes[0] : d.xfer_bytes[pick(d.xfer_cdf, rng_.uniform01())];
  s.op = d.read_p >= 1.0 || rng_.uniform01() < d.read_p ? io::Op::read : io::Op::write;
  s.random = d.random_p >= 1.0 || (d.random_p > 0 && rng_.uniform01() < d.random_p);
  if (s.random) {
    const std::uint64_t blocks = d.blocks_one_xfer != 0 ? d.blocks_one_xfer : (d.hi - d.lo) / s.length_bytes;
    s.offset_bytes =
        d.lo + static_cast<std::uint64_t>(rng_.uniform(0, static_cast<std::int64_t>(blocks) - 1)) * s.length_bytes;
  } else {
    s.offset_bytes = d.cursor + s.length_bytes <= d.hi ? d.cursor : d.lo;
  }
  // vdbench: a sequential I/O continues after the previous I/O of the workload, random or not.
  d.cursor = s.offset_bytes + s.length_bytes;
}

WriteFiller::WriteFiller(double compratio, double dedupratio, std::uint32_t dedupunit_bytes, Rng rng)
    : compratio_(std::max(compratio, 1.0)),
      unique_p_(1.0 / std::max(dedupratio, 1.0)),
      unit_(std::max<std::uint32_t>(dedupunit_bytes, 512)),
      rng_(rng),
      tag_(rng_()),
      pool_(kPoolBytes + unit_) {
  for (std::size_t i = 0; i + 8 <= pool_.size(); i += 8) {
    const std::uint64_t w = rng_();
    std::memcpy(pool_.data() + i, &w, 8);
  }
  if (unique_p_ < 1.0) {
    // The duplicate contents depend on their identity only, so that every stream and workload
    // writes the same kDuplicateSets units (a deduplicating drive stores each once).
    duplicates_.resize(static_cast<std::size_t>(kDuplicateSets) * unit_);
    for (std::uint32_t k = 0; k < kDuplicateSets; ++k) {
      std::byte* dst = duplicates_.data() + static_cast<std::size_t>(k) * unit_;
      std::uint64_t x = kDuplicateBase + k;
      for (std::size_t i = 0; i + 8 <= unit_; i += 8) {
        x = splitmix(x);
        std::memcpy(dst + i, &x, 8);
      }
      const std::size_t head = head_bytes(unit_);
      std::memset(dst + head, 0, unit_ - head);
    }
  }
}

std::size_t WriteFiller::head_bytes(std::size_t len) const noexcept {
  return std::min(
      len, std::max<std::size_t>(16, static_cast<std::size_t>(std::ceil(static_cast<double>(len) / compratio_))));
}

void WriteFiller::fill_unit(std::byte* dst, std::size_t len, std::uint64_t identity) noexcept {
  // Incompressible head: identity (16 bytes) then pool bytes; compressible tail: zeros.
  const std::size_t head = head_bytes(len);
  const std::uint64_t id2 = splitmix(identity);
  if (len >= 16) {
    std::memcpy(dst, &identity, 8);
    std::memcpy(dst + 8, &id2, 8);
  }
  const std::size_t from = len >= 16 ? 16 : 0;
  if (head > from) {
    const std::size_t off = static_cast<std::size_t>(id2 % (kPoolBytes / 8)) * 8;
    std::memcpy(dst + from, pool_.data() + off, head - from);
  }
  if (len > head) std::memset(dst + head, 0, len - head);
}

void WriteFiller::fill(std::span<std::byte> buffer, bool laid_out) noexcept {
  if (laid_out && unique_p_ >= 1.0) {
    // Same layout as last time (head from the pool, zero tail): a new identity per unit.
    for (std::size_t at = 0; at < buffer.size(); at += unit_) {
      const std::size_t len = std::min<std::size_t>(unit_, buffer.size() - at);
      ++units_;
      const std::uint64_t identity = splitmix(tag_ + unique_units_);
      ++unique_units_;
      if (len < 16) {
        fill_unit(buffer.data() + at, len, identity);
        continue;
      }
      const std::uint64_t id2 = splitmix(identity);
      std::memcpy(buffer.data() + at, &identity, 8);
      std::memcpy(buffer.data() + at + 8, &id2, 8);
    }
    return;
  }
  for (std::size_t at = 0; at < buffer.size(); at += unit_) {
    const std::size_t len = std::min<std::size_t>(unit_, buffer.size() - at);
    ++units_;
    if (unique_p_ >= 1.0 || rng_.uniform01() < unique_p_) {
      fill_unit(buffer.data() + at, len, splitmix(tag_ + unique_units_));
      ++unique_units_;
    } else {
      // A short last unit (xfersize not a multiple of dedupunit) takes the start of the content.
      const auto k = static_cast<std::size_t>(rng_.uniform(0, kDuplicateSets - 1));
      std::memcpy(buffer.data() + at, duplicates_.data() + k * unit_, len);
    }
  }
}

}  // namespace drivelab::emulators
