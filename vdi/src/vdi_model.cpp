#include "drivelab/results/catalogue.hpp"
#include "drivelab/vdi/vdi_model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/results/recorder.hpp"
#include "drivelab/vdi/replay.hpp"

namespace drivelab::vdi {
namespace cat = results::catalogue;
namespace {

// Every number below is explained, with its source, in docs/vdi.md "## VDI models".
// Boot: block sizes average ~19 KB, most reads small (hIOmon boot study: 20,000 bytes average).
const std::vector<SizeShare> kBootSizes{{4096, 50}, {8192, 10}, {16384, 10}, {32768, 15}, {65536, 15}};
// Initial login: reads average 23 KB, writes 5 KB (Dell BP1018 table 7, login storm; KB = 1,024 bytes);
// the mixes are fitted to those means: 16K x 56.25% + 32K x 43.75% = 23,552 B, 4K/8K/16K = 5,120 B.
const std::vector<SizeShare> kInitialLoginReadSizes{{16384, 56.25}, {32768, 43.75}};
const std::vector<SizeShare> kInitialLoginWriteSizes{{4096, 85}, {8192, 10}, {16384, 5}};
// Monday login: reads average 36 KB, writes 10 KB (Dell EqualLogic sizing paper for VMware View 4.5,
// section 5.4, login storm); fitted: 32K x 87.5% + 64K x 12.5% = 36,864 B, 8K x 75% + 16K x 25% = 10,240 B.
const std::vector<SizeShare> kMondayLoginReadSizes{{32768, 87.5}, {65536, 12.5}};
const std::vector<SizeShare> kMondayLoginWriteSizes{{8192, 75}, {16384, 25}};

// [phase][clones]
const PhaseProfile kProfiles[3][2] = {
    // boot: full clones = personal desktops (Citrix CTX135986: 400-450 IOPS; Klein 2013: 84% reads),
    //       linked clones = pooled desktops (CTX135986: ~150 IOPS, 60-70% reads). 300 s (Seaman 2011).
    {{84, 400, 300, kBootSizes, kBootSizes}, {65, 150, 300, kBootSizes, kBootSizes}},
    // initial login (first logon: the profile is created): Dell BP1018 table 7, login storm measured on
    //       1,270 Windows 7 desktops (Login VSI): 11-13 IOPS per desktop (12, the middle), 3% reads /
    //       97% writes. 60 s: drivelab's choice.
    {{3, 12, 60, kInitialLoginReadSizes, kInitialLoginWriteSizes},
     {3, 12, 60, kInitialLoginReadSizes, kInitialLoginWriteSizes}},
    // Monday login (non-persistent desktops: the profile is loaded from the network share): Dell's
    //       EqualLogic sizing paper for VMware View 4.5, section 5.4, login storm: 8-13 IOPS per
    //       desktop (10.5, the middle), 50% reads / 50% writes. 45 s: drivelab's choice.
    {{50, 10.5, 45, kMondayLoginReadSizes, kMondayLoginWriteSizes},
     {50, 10.5, 45, kMondayLoginReadSizes, kMondayLoginWriteSizes}},
};

}  // namespace

double PhaseProfile::mean_size_bytes() const noexcept {
  const auto mean = [](const std::vector<SizeShare>& mix) {
    double m = 0;
    for (const auto& s : mix) m += s.pct / 100.0 * s.size_bytes;
    return m;
  };
  return read_pct / 100.0 * mean(read_sizes) + (100.0 - read_pct) / 100.0 * mean(write_sizes);
}

const PhaseProfile& phase_profile(VdiPhase phase, CloneKind clones) noexcept {
  return kProfiles[static_cast<int>(phase)][clones == CloneKind::full ? 0 : 1];
}

void check_against_profile(results::TestRecorder& rec, const VdiModelParams& model, const TraceSummary& s) {
  const PhaseProfile& prof = phase_profile(model.phase, model.clones);
  const double rw = static_cast<double>(s.reads + s.writes);
  if (rw <= 0) return;
  const double phase_s = model.phase_s > 0 ? model.phase_s : prof.phase_s;
  const double read_pct = 100.0 * static_cast<double>(s.reads) / rw;
  const double mean_size = static_cast<double>(s.read_bytes + s.write_bytes) / rw;
  const double iops_per_desktop = rw / static_cast<double>(model.desktops) / phase_s;
  const auto within = [](double measured, double target) { return std::abs(measured - target) <= 0.05 * target; };
  // A desktop issues round(IOPS x phase) requests: below 100 the rounding alone can exceed 5%, and
  // the ratios have too few requests to settle; the numbers are recorded, the check is not made.
  const double per_desktop = std::round(prof.iops_per_desktop * phase_s);
  rec.group_metric("model", cat::read_pct, read_pct, fmt::format("generated; profile {:g}%", prof.read_pct));
  rec.group_metric("model", cat::mean_size_bytes, mean_size,
                   fmt::format("generated; profile {:.0f}", prof.mean_size_bytes()));
  rec.group_metric("model", cat::iops_per_desktop, iops_per_desktop,
                   fmt::format("generated; profile {:g}", prof.iops_per_desktop));
  if (per_desktop < 100) return;
  rec.check(
      "model: the generated workload matches its documented profile within 5%",
      within(read_pct, prof.read_pct) && within(mean_size, prof.mean_size_bytes()) &&
          within(iops_per_desktop, prof.iops_per_desktop),
      fmt::format("reads {:.2f}% (profile {:g}%), mean size {:.0f} B (profile {:.0f} B), {:.2f} IOPS per desktop "
                  "(profile {:g})",
                  read_pct, prof.read_pct, mean_size, prof.mean_size_bytes(), iops_per_desktop, prof.iops_per_desktop));
}

VdiModelSource::VdiModelSource(const VdiModelParams& params)
    : params_(params), profile_(&phase_profile(params.phase, params.clones)) {
  if (params_.desktops < 1) throw ConfigError("desktops must be at least 1");
  std::uint32_t largest = 0;
  for (const auto* mix : {&profile_->read_sizes, &profile_->write_sizes})
    for (const auto& s : *mix) largest = std::max(largest, s.size_bytes);
  if (params_.image_bytes < 2 * std::uint64_t{largest})
    throw ConfigError(fmt::format("image_size must be at least {}", format_size(2 * std::uint64_t{largest})));
  phase_s_ = params_.phase_s > 0 ? params_.phase_s : profile_->phase_s;
  per_desktop_ = static_cast<std::uint64_t>(std::llround(profile_->iops_per_desktop * phase_s_));
  if (params_.clones == CloneKind::linked) devices_.push_back("replica");
  for (std::uint32_t i = 0; i < params_.desktops; ++i)
    devices_.push_back(fmt::format("{}-{}", params_.clones == CloneKind::linked ? "delta" : "desktop", i));
  const Rng root(params_.seed);
  desktops_.resize(params_.desktops);
  for (std::uint32_t i = 0; i < params_.desktops; ++i) {
    desktops_[i].rng = root.split(i);
    desktops_[i].op_phase = desktops_[i].rng.uniform01();
    desktops_[i].size_phase = desktops_[i].rng.uniform01();
    if (per_desktop_ > 0) heap_.emplace_back(arrival(desktops_[i], i), i);
  }
  std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
}

std::int64_t VdiModelSource::arrival(Desktop& d, std::uint32_t index) {
  // Request k of desktop i: at start_i + (k + U) x phase / n, one per equal sub-interval.
  const double start_ns = static_cast<double>(index) * params_.stagger_s * 1e9;
  const double gap_ns = phase_s_ * 1e9 / static_cast<double>(per_desktop_);
  return static_cast<std::int64_t>(start_ns + (static_cast<double>(d.done) + d.rng.uniform01()) * gap_ns);
}

bool VdiModelSource::next(trace::TraceIo& io) {
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
  const auto [t, i] = heap_.back();
  heap_.pop_back();
  Desktop& d = desktops_[i];
  io.time_ns = t;
  // Weyl sequences (see the header): the ratios hold over any stretch of a desktop's requests.
  constexpr double kGolden = 0.61803398874989484820;
  constexpr double kSilver = 0.41421356237309504880;
  const double k = static_cast<double>(d.done);
  const double u_op = d.op_phase + k * kGolden;
  const double u_size = d.size_phase + k * kSilver;
  const bool read = (u_op - std::floor(u_op)) * 100.0 < profile_->read_pct;
  io.op = read ? trace::TraceOp::read : trace::TraceOp::write;
  double pick = (u_size - std::floor(u_size)) * 100.0;
  const std::vector<SizeShare>& mix = read ? profile_->read_sizes : profile_->write_sizes;
  io.size_bytes = mix.back().size_bytes;
  for (const auto& s : mix) {
    if (pick < s.pct) {
      io.size_bytes = s.size_bytes;
      break;
    }
    pick -= s.pct;
  }
  const std::uint64_t unit = std::max<std::uint64_t>(io.size_bytes, 4096);
  const std::uint64_t units = params_.image_bytes / unit;
  io.offset_bytes = static_cast<std::uint64_t>(d.rng.uniform(0, static_cast<std::int64_t>(units) - 1)) * unit;
  if (params_.clones == CloneKind::linked)
    io.device = read ? 0 : i + 1;  // the shared replica, or this desktop's delta disk
  else
    io.device = i;
  ++d.done;
  if (d.done < per_desktop_) {
    heap_.emplace_back(arrival(d, i), i);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  }
  return true;
}

std::string VdiModelSource::describe() const {
  return fmt::format("{}, {} clones, {} desktops, {:g} s each, stagger {:g} s, seed {}", to_string(params_.phase),
                     to_string(params_.clones), params_.desktops, phase_s_, params_.stagger_s, params_.seed);
}

}  // namespace drivelab::vdi
