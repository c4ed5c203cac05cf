#pragma once
/// \file protocol.hpp
/// A protocol file: an ordered list of tests run against one target.
///
///     protocol: quick                 # name (required)
///     description: ...                # optional
///     seed: 42                        # optional; default: fixed 1 (reproducible); "random" = from time
///     repeat: 5                       # optional, 1..1000 (default 1): every test 5 times (below)
///     repeat_between: as-is           # optional: as-is (default) or discard-first (below)
///     destroy_data_on: S3EVNX0M123    # optional; consent to write to the block device with this
///                                     # serial (loop device: backing file); docs/targets.md
///     harness_ceiling: false          # optional (default true): do not measure the harness's own
///                                     # ceiling before the first test (docs/telemetry.md)
///     defaults: {warmup: 10s, duration: 60s, interval: 5s}   # optional, applied to every test
///     hosts: [...]                    # optional: per-host targets and overrides (hosts.hpp)
///     tests:
///       - name: oltp                  # required, unique, [A-Za-z0-9_-]
///         kind: tpcc                  # required, a registered EmulatorType::kind
///         warmup: 10s
///         duration: 60s
///         interval: 5s
///         tpcc: {warehouses: 2, ...}  # the kind's own section (see that emulator's docs)
///
/// Repetitions (issue 32; docs/results.md "Repetitions"): with `repeat: N` every test runs N times
/// in a row before the next test runs (test 1 N times, then test 2 N times: fio's `loops=`), so
/// each repetition finds the drive as the test itself leaves it, not as another workload did.
/// Each repetition is the whole test (prepare, warm-up, measured phase, verify, cleanup) with
/// its own seed: the run seed + (repetition - 1), from which the test's stream derives as usual.
/// `repeat_between` states the drive's state between them: `as-is` (each repetition on the
/// drive as the previous one left it) or `discard-first` (one more repetition runs first and is
/// marked discarded: it brings the drive to the test's state and is left out of the statistics).
///
/// decode_protocol() reports every problem of the whole file at once (file:line:column: path: why).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "drivelab/config/document.hpp"
#include "drivelab/core/names.hpp"
#include "drivelab/runner/emulator.hpp"
#include "drivelab/runner/hosts.hpp"

namespace drivelab::runner {

/// `repeat_between:` (above).
enum class RepeatBetween { as_is, discard_first };
inline constexpr EnumNames<RepeatBetween, 2> kRepeatBetweenNames{
    {{"as-is", RepeatBetween::as_is}, {"discard-first", RepeatBetween::discard_first}}};
inline std::string_view to_string(RepeatBetween b) noexcept { return name_of(kRepeatBetweenNames, b); }
/// The most repetitions `repeat:` and `--repeat` take.
inline constexpr std::uint32_t kMaxRepeat = 1000;

struct PlannedTest {
  TestSettings settings;
  std::unique_ptr<Emulator> emulator;
  /// A new emulator decoded from the same section (a repeated run gives each repetition its own:
  /// an emulator runs its life cycle once). Empty when the test's kind did not decode.
  std::function<std::unique_ptr<Emulator>()> fresh;
};

struct Protocol {
  std::string name;
  std::string description;
  std::string file;
  std::uint64_t seed = 1;
  std::uint32_t repeat = 1;  ///< `repeat:` 1..kMaxRepeat (above)
  RepeatBetween repeat_between = RepeatBetween::as_is;
  /// `destroy_data_on:` the identity of the block device this protocol may destroy ("" = none).
  std::string destroy_data_on;
  /// `harness_ceiling:` measure the null engine's I/Os per CPU-second once before the first test
  /// (telemetry/harness_ceiling.hpp, about 0.1 s of CPU); false: not measured, and no test is
  /// checked against it (RunOptions::harness_ceiling turns it off too).
  bool harness_ceiling = true;
  std::vector<PlannedTest> tests;
  /// `hosts:` (hosts.hpp); the entry of this process is applied before decoding (apps/).
  std::vector<HostEntry> hosts;
  /// The effective protocol (defaults applied, each test's effective config), for the record.
  results::Json effective() const;
};

/// Decodes a loaded document. Problems go to `diags`; the returned Protocol is only meaningful
/// when diags is empty afterwards.
Protocol decode_protocol(const config::Document& doc, const Registry& registry, config::Diagnostics& diags);

}  // namespace drivelab::runner
