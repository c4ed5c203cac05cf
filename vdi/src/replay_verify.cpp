// The replayer's verification (replay_verify.hpp; replay.hpp "Verification").
#include "replay_verify.hpp"

#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"

namespace drivelab::vdi::detail {
namespace {

/// Mismatches described in ReplayResult::verify_errors; the rest are only counted.
constexpr std::size_t kMaxVerifyErrors = 5;

struct Header {
  std::uint64_t magic;
  std::uint64_t offset;
  std::uint64_t seed;
  std::uint64_t target;
};

/// A verify header read back at `offset` of `target` is the one this replay wrote there.
bool header_matches(const Header& h, std::uint64_t offset, std::uint64_t seed, std::uint64_t target) noexcept {
  return h.magic == kVerifyMagic && h.offset == offset && h.seed == seed && h.target == target;
}
/// What ReplayResult::verify_errors says of a header that does not match.
std::string header_mismatch(const Header& h, std::uint64_t target, std::uint64_t offset, std::uint64_t seed) {
  return fmt::format("target {} offset {}: header magic {:#x} offset {} seed {}, expected offset {} seed {}", target,
                     offset, h.magic, h.offset, h.seed, offset, seed);
}

}  // namespace

VerifyMap::VerifyMap(const std::vector<ReplayTarget>& targets, std::uint32_t align_bytes, std::uint64_t seed)
    : a_(align_bytes), seed_(seed) {
  for (const auto& t : targets)
    targets_.push_back(
        {t.fd, t.region_offset_bytes, std::vector<std::uint64_t>((t.region_length_bytes / a_ + 63) / 64)});
}

void VerifyMap::stamp(std::uint32_t target, std::uint64_t offset, std::uint32_t length, std::byte* buf) const noexcept {
  for (std::uint32_t u = 0; u < length / a_; ++u) {
    const Header h{kVerifyMagic, offset + std::uint64_t{u} * a_, seed_, target};
    std::memcpy(buf + static_cast<std::size_t>(u) * a_, &h, sizeof h);
  }
}

void VerifyMap::note_read(std::uint32_t target, std::uint64_t offset, std::uint32_t length,
                          std::uint8_t* check) const noexcept {
  const Target& t = targets_[target];
  for (std::uint32_t u = 0; u < length / a_; ++u) {
    const std::uint64_t unit = (offset - t.region_offset_bytes) / a_ + u;
    check[u] = (t.written[unit / 64] >> (unit % 64)) & 1u;
  }
}

void VerifyMap::check_read(std::uint32_t target, std::uint64_t offset, std::uint32_t length, const std::uint8_t* check,
                           const std::byte* buf, ReplayResult& r) const {
  for (std::uint32_t u = 0; u < length / a_; ++u) {
    if (!check[u]) continue;
    Header h;
    std::memcpy(&h, buf + static_cast<std::size_t>(u) * a_, sizeof h);
    const std::uint64_t off = offset + std::uint64_t{u} * a_;
    ++r.verify_checked_units;
    if (!header_matches(h, off, seed_, target)) {
      ++r.verify_mismatches;
      if (r.verify_errors.size() < kMaxVerifyErrors) r.verify_errors.push_back(header_mismatch(h, target, off, seed_));
    }
  }
}

void VerifyMap::mark_written(std::uint32_t target, std::uint64_t offset, std::uint64_t length) noexcept {
  Target& t = targets_[target];
  for (std::uint64_t u = (offset - t.region_offset_bytes) / a_, e = u + length / a_; u < e; ++u)
    t.written[u / 64] |= 1ull << (u % 64);
}

void VerifyMap::forget_written(std::uint32_t target, std::uint64_t offset, std::uint64_t length) noexcept {
  Target& t = targets_[target];
  for (std::uint64_t u = (offset - t.region_offset_bytes) / a_, e = u + length / a_; u < e; ++u)
    t.written[u / 64] &= ~(1ull << (u % 64));
}

std::uint64_t VerifyMap::verify_written(ReplayResult& result) const {
  AlignedBuffer buf(a_);
  std::uint64_t found = 0;
  for (std::size_t t = 0; t < targets_.size(); ++t) {
    const auto& bits = targets_[t].written;
    for (std::size_t w = 0; w < bits.size(); ++w) {
      for (std::uint64_t word = bits[w]; word != 0; word &= word - 1) {
        const std::uint64_t unit = w * 64 + static_cast<std::uint64_t>(std::countr_zero(word));
        const std::uint64_t off = targets_[t].region_offset_bytes + unit * a_;
        const ssize_t got = ::pread(targets_[t].fd, buf.data(), a_, static_cast<off_t>(off));
        ++result.verify_checked_units;
        Header h{};
        if (got == static_cast<ssize_t>(a_)) std::memcpy(&h, buf.data(), sizeof h);
        if (got != static_cast<ssize_t>(a_) || !header_matches(h, off, seed_, t)) {
          ++found;
          if (result.verify_errors.size() < kMaxVerifyErrors)
            result.verify_errors.push_back(got != static_cast<ssize_t>(a_)
                                               ? fmt::format("target {} offset {}: read back failed ({})", t, off,
                                                             got < 0 ? errno_text(errno) : "short")
                                               : header_mismatch(h, t, off, seed_));
        }
      }
    }
  }
  result.verify_mismatches += found;
  return found;
}

}  // namespace drivelab::vdi::detail
