#pragma once
/// \file pacing.hpp
/// Open-loop arrival schedules: the intended start time of every I/O of a paced run
/// (`iorate: N`), decided by the clock alone, never by how fast earlier I/Os completed. A
/// workload that falls behind keeps its schedule, so every late I/O shows its lateness (issue
/// time minus intended start) and its latency measured from the intended start: no coordinated
/// omission (G. Tene, "How NOT to measure latency", 2013; docs/protocol.md §2).
///
/// Inter-arrival distributions, after vdbench's `distribution=` run parameter (vdbench 5.04 user
/// guide, "distribution=": exponential is the default, uniform and deterministic the others):
///  - exponential:   gaps are exponential with mean 1/rate (a Poisson arrival process, as
///                   independent users issuing I/O produce). Drawn by inversion, -ln(1 - U) / rate.
///  - uniform:       gaps uniform on [0, 2/rate] (mean 1/rate).
///  - deterministic: every gap exactly 1/rate.
/// Times are kept as a double offset from the start (ns) and rounded once per arrival; the
/// deterministic schedule computes the k-th arrival as k x gap, so it never drifts. Thread-safety: none; one schedule
/// per thread.
#include <cstdint>
#include <string_view>

#include "drivelab/core/histogram.hpp"
#include "drivelab/core/names.hpp"
#include "drivelab/core/rng.hpp"

namespace drivelab {

enum class ArrivalDistribution { exponential, uniform, deterministic };
inline constexpr EnumNames<ArrivalDistribution, 3> kArrivalDistributionNames{
    {{"exponential", ArrivalDistribution::exponential},
     {"uniform", ArrivalDistribution::uniform},
     {"deterministic", ArrivalDistribution::deterministic}}};
inline std::string_view to_string(ArrivalDistribution d) noexcept { return name_of(kArrivalDistributionNames, d); }

class ArrivalSchedule {
 public:
  /// `rate_per_s` > 0 arrivals per second starting after `start_ns` (monotonic ns). The first
  /// arrival is one gap after the start (a deterministic schedule with `phase` in [0, 1) starts
  /// phase x gap after the start instead, so that several schedules of one rate interleave).
  /// Throws InternalError if rate_per_s is not positive and finite.
  ArrivalSchedule(double rate_per_s, ArrivalDistribution distribution, Rng rng, std::int64_t start_ns,
                  double phase = 0.0);

  /// The intended start of the next arrival (monotonic ns); non-decreasing.
  std::int64_t next_ns() noexcept;
  /// The arrival next_ns() will return, without consuming it.
  std::int64_t peek_ns() const noexcept { return next_; }
  /// Arrivals returned so far.
  std::uint64_t count() const noexcept { return count_; }
  double rate_per_s() const noexcept { return rate_per_s_; }
  ArrivalDistribution distribution() const noexcept { return distribution_; }

 private:
  double gap_ns() noexcept;

  double rate_per_s_;
  double mean_gap_ns_;
  ArrivalDistribution distribution_;
  Rng rng_;
  std::int64_t start_ns_;
  double phase_ = 1.0;    ///< deterministic: first arrival at phase_ x gap
  double offset_ns_ = 0;  ///< of the arrival held in next_
  std::int64_t next_ = 0;
  std::uint64_t count_ = 0;
};

/// The three latencies of paced (open-loop) operations, each a LatencyHistogram in ns, as the
/// vdbench emulator and the trace replayer keep them per interval (TPC-C's response time, queue
/// wait and service time are the same three: tpcc_driver.hpp):
///  - latency:  completion - intended start, what the user of a paced workload sees (docs/protocol.md §2:
///              measured from the intended start, no coordinated omission);
///  - service:  completion - submission (fio's lat);
///  - lateness: submission - intended start (how far the issuer fell behind its schedule).
/// So latency = lateness + service for every operation. A closed-loop operation has its intended
/// start at its submission: lateness 0, latency = service. Thread-safety: none (one per thread,
/// merged by the collector).
struct OpenLoopLatency {
  LatencyHistogram latency;
  LatencyHistogram service;
  LatencyHistogram lateness;

  /// Records one operation from its three instants (monotonic ns, intended <= issue <= done).
  void record(std::int64_t intended_ns, std::int64_t issue_ns, std::int64_t done_ns) noexcept {
    latency.record(done_ns - intended_ns);
    service.record(done_ns - issue_ns);
    lateness.record(issue_ns - intended_ns);
  }
  /// Adds `o`'s samples to each of the three (exact: LatencyHistogram::merge).
  void merge(const OpenLoopLatency& o) noexcept {
    latency.merge(o.latency);
    service.merge(o.service);
    lateness.merge(o.lateness);
  }
  /// Empties the three histograms.
  void reset() noexcept {
    latency.reset();
    service.reset();
    lateness.reset();
  }
};

/// OpenLoopLatency with the counts both open-loop issuers (vdbench's jobs, the replayer) keep
/// beside it: operations completed, of them reads and writes.
struct OpenLoopSample : OpenLoopLatency {
  std::uint64_t ios = 0;
  std::uint64_t reads = 0;
  std::uint64_t writes = 0;

  /// Adds `o`'s samples and counts.
  void merge(const OpenLoopSample& o) noexcept {
    OpenLoopLatency::merge(o);
    ios += o.ios;
    reads += o.reads;
    writes += o.writes;
  }
  /// Empties the histograms and zeroes the counts.
  void reset() noexcept {
    OpenLoopLatency::reset();
    ios = reads = writes = 0;
  }
};

}  // namespace drivelab
