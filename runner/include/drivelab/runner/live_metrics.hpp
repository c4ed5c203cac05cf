#pragma once
/// \file live_metrics.hpp
/// The run's live figures for an observer outside the process (`--metrics-listen`: the Prometheus
/// exporter of metrics/prometheus.hpp serves them). run_protocol calls it from the places every
/// kind goes through, so no emulator knows about it:
///  - interval(): on the runner's writer thread, for each interval the emulator handed to its
///    TestRecorder, right after the journal append and before the interval line is printed
///    (never on the emulator's thread: no cost on the hot path);
///  - the other calls: on the run's thread, at each phase, at each test's end and the run's.
/// The two threads call concurrently: an implementation is thread-safe and does not throw.
#include <cstddef>
#include <string_view>

#include "drivelab/results/record.hpp"

namespace drivelab::runner {

/// The test an event is about.
struct LiveTest {
  std::string_view name;  ///< `name:` of the test
  std::string_view kind;  ///< `kind:` of the test
  std::size_t index = 0;  ///< 0-based position in the protocol (after --only)
  double duration_s = 0;  ///< the planned measured phase (`duration:`), seconds
};

class LiveMetrics {
 public:
  virtual ~LiveMetrics() = default;
  /// Before the first test: the record's run id, the protocol's name, the number of tests.
  virtual void run_started(std::string_view run_id, std::string_view protocol, std::size_t tests) noexcept = 0;
  /// `phase` of `test` begins: "prepare", "warmup", "run" or "verify" (run_one's phases).
  virtual void phase_started(const LiveTest& test, std::string_view phase) noexcept = 0;
  /// An interval of `test` closed during `phase`; `iv` is what the journal holds and the interval
  /// line prints (results::Interval: values with units in their names, the "latency" histogram).
  virtual void interval(const LiveTest& test, std::string_view phase, const results::Interval& iv) noexcept = 0;
  /// The test's record as it ends (before test_ended; not for a skipped test): what the record
  /// says beyond its intervals (drive health, the physics checks). Does nothing by default.
  virtual void test_recorded(const LiveTest& /*test*/, const results::TestRecord& /*record*/) noexcept {}
  /// The test ended with `status` (also called for a test that was skipped).
  virtual void test_ended(const LiveTest& test, results::Status status) noexcept = 0;
  /// The run ended with `status` (before the final record is written).
  virtual void run_ended(results::Status status) noexcept = 0;
};

}  // namespace drivelab::runner
