#pragma once
/// \file steady_state.hpp
/// Steady-state detection over a rolling window, with fio's definitions (fio HOWTO,
/// "steadystate=str:float, ss=str:float", "ss_dur", "ss_ramp"; fio steadystate.c):
///
///  - samples are taken once per second (fio: "Data will be collected once per second"), after a
///    ramp of `ss_ramp` seconds; the window holds the last `ss_dur` seconds of samples;
///  - `iops:L` / `bw:L` (range): attained when every sample of the full window lies within L of the
///    window's mean, i.e. max |y_i - mean| < L;
///  - `iops_slope:L` / `bw_slope:L`: attained when the absolute least-squares regression slope of
///    the window's samples (per second) is below L;
///  - a limit written with '%' is relative to the window's mean: the criterion value is then
///    100 x deviation / mean (range) or 100 x |slope| / mean (slope), e.g. `iops_slope:0.1%`.
///  - `lat:L` / `lat_slope:L` apply the same rules to the mean latency of each second (µs). fio 3.33
///    has only iops and bw; the latency forms are drivelab's, for open-loop points where IOPS is
///    fixed by the schedule and latency is what settles.
/// Nothing is judged before the window is full. Thread-safety: none.
#include <cstddef>
#include <deque>
#include <span>
#include <string>
#include <string_view>

namespace drivelab {

enum class SteadyMetric { iops, bw, lat };

struct SteadyStateCriterion {
  SteadyMetric metric = SteadyMetric::iops;
  bool slope = true;     ///< slope (true) or range (false)
  double limit = 0;      ///< > 0
  bool percent = false;  ///< limit relative to the mean, in %
  /// Parses fio's form "iops_slope:0.1%", "bw:2", "lat_slope:1%". Throws std::invalid_argument
  /// with the reason ("unknown steady-state metric 'x' (use iops, iops_slope, bw, bw_slope, lat,
  /// lat_slope)", "the limit must be a positive number").
  static SteadyStateCriterion parse(std::string_view text);
  /// The same text form ("iops_slope:0.1%").
  std::string to_string() const;
};

/// The judgement of one window.
struct SteadyStateEval {
  bool attained = false;
  double value = 0;  ///< the criterion value compared with the limit (see file comment)
  double mean = 0;
  double slope = 0;      ///< least-squares slope per sample (signed)
  double deviation = 0;  ///< max |y_i - mean|
};

/// Evaluates `criterion` on `window` (oldest first); empty windows are not attained.
SteadyStateEval evaluate_steady_state(const SteadyStateCriterion& criterion, std::span<const double> window);

class SteadyStateDetector {
 public:
  /// `window_samples` >= 2 (ss_dur in seconds), `ramp_samples` samples are ignored first (ss_ramp).
  SteadyStateDetector(SteadyStateCriterion criterion, std::size_t window_samples, std::size_t ramp_samples = 0);

  /// Adds one per-second sample of the criterion's metric and re-evaluates when the window is full.
  void add(double value);
  bool window_full() const noexcept { return window_.size() == window_samples_; }
  /// The latest evaluation (not attained while the window is not full).
  const SteadyStateEval& last() const noexcept { return last_; }
  /// Whether any full window so far was steady, and how many samples had been added (ramp
  /// included) when that first happened (0 if never).
  bool attained_ever() const noexcept { return first_attained_at_ > 0; }
  std::size_t first_attained_at() const noexcept { return first_attained_at_; }
  std::size_t samples() const noexcept { return samples_; }
  const SteadyStateCriterion& criterion() const noexcept { return criterion_; }

 private:
  SteadyStateCriterion criterion_;
  std::size_t window_samples_;
  std::size_t ramp_samples_;
  std::size_t samples_ = 0;
  std::size_t first_attained_at_ = 0;
  std::deque<double> window_;
  SteadyStateEval last_;
};

}  // namespace drivelab
