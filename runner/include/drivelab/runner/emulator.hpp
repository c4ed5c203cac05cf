#pragma once
/// \file emulator.hpp
/// The Emulator interface: one small interface for every application-test emulator (OLTP, render,
/// VDI replay, synthetic I/O), and the explicit Registry that lists them (no static
/// self-registration: apps/registry.cpp adds each type by hand).
///
/// Life cycle, driven by the protocol runner (runner/run.hpp) for each test of a protocol:
///
///   decode (no I/O) -> prepare -> warmup -> run -> verify -> cleanup
///
/// decode touches nothing in the target and writes nothing; it may read an input file the
/// protocol names, so that validate reports a bad one at its key (replay/vdi: the trace file's
/// type, permissions and format, docs/vdi.md "Trace paths").
///
/// cleanup() is called on every path once prepare() was entered (normal end, exception, stop).
/// A stop request (SIGINT) makes the current phase return early; the runner then skips the
/// remaining phases except verify/cleanup and marks the test `interrupted`. An exception from any
/// phase marks the test `failed` with the exception's message as reason; what was recorded before
/// is kept.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "drivelab/config/document.hpp"
#include "drivelab/results/recorder.hpp"
#include "drivelab/runner/cohort.hpp"
#include "drivelab/runner/stop.hpp"

namespace drivelab::runner {

/// Keys common to every test of a protocol (decoded by the runner, not by emulators).
/// The most reporting intervals one test's measured phase may have (duration / interval): a
/// million, e.g. 27 h at the shortest interval (100 ms) or 57 days at the default 5 s. More is
/// refused when the protocol is decoded (`drivelab validate`), naming the key.
inline constexpr std::uint64_t kMaxIntervals = 1'000'000;

struct TestSettings {
  std::string name;                    ///< unique within the protocol; used in file names and reports
  std::string kind;                    ///< the EmulatorType::kind
  std::chrono::nanoseconds warmup{0};  ///< `warmup:` (not measured)
  std::chrono::nanoseconds duration{std::chrono::seconds(60)};  ///< `duration:` measured phase
  std::chrono::nanoseconds interval{std::chrono::seconds(5)};   ///< `interval:` reporting period
};

/// A block device given as the target (`--target /dev/sdX`), after the runner's checks
/// (io/target_safety.hpp, docs/targets.md).
struct TargetDevice {
  std::filesystem::path path;  ///< the device as given
  std::string name;            ///< kernel name ("sdb", "loop3")
  std::string identity;        ///< serial number (loop: backing file), as destroy_data_on names it
  std::uint64_t capacity_bytes = 0;
  std::uint32_t logical_block_bytes = 512;
  /// The run may write to it: no hazard was found, or the device was named by destroy_data_on.
  /// False when every test of the protocol only reads.
  bool writes_allowed = false;
};

/// What a test does with a block-device target. Kinds that only work on a filesystem (a database
/// in the target directory) keep the default, and the runner refuses to run them on a device
/// with an error naming the test; kinds that use io::TargetFile can run on a device.
enum class DeviceAccess {
  unsupported,  ///< needs a directory (tpcc, sysbench)
  read_only,    ///< reads only: allowed on any device, no consent needed (as fio and vdbench)
  read_write,   ///< writes: the device passes the safety checks or is named by destroy_data_on
};

/// Everything an emulator may use while it runs.
struct TestContext {
  std::filesystem::path target_dir;    ///< the drive under test; create files only inside it,
                                       ///< named "drivelab-<test name>..." so users can spot them.
                                       ///< For a block-device target: the device path, so that
                                       ///< io::TargetFile::open({.dir = target_dir, ...}) opens it.
  std::optional<TargetDevice> device;  ///< set when the target is a block device
  std::string run_id;
  std::uint64_t seed = 0;  ///< this test's seed (derived from the run seed and index)
  TestSettings settings;
  const StopFlag* stop = nullptr;
  results::TestRecorder* recorder = nullptr;
  /// The ranks of a multi-host run (docs/multihost.md); nullptr on one host.
  Cohort* cohort = nullptr;
  std::chrono::nanoseconds cohort_timeout{std::chrono::minutes(10)};  ///< --barrier-timeout

  bool stop_requested() const noexcept { return stop->requested(); }
  /// Hosts (ranks) running this test together: 1 on one host.
  int hosts() const noexcept { return cohort != nullptr ? cohort->size() : 1; }
  /// Sums `values` over the ranks in place; a no-op on one host. Collective: every rank calls
  /// it at the same point of the test, whatever happened on it (bring NaN or a flag rather than
  /// skip the call). Throws CohortError when a rank does not arrive within cohort_timeout (the
  /// test fails; the run then ends on every host: docs/multihost.md "When a host dies").
  void sum_over_hosts(std::span<double> values, std::string_view what) const;
};

class Emulator {
 public:
  virtual ~Emulator() = default;
  /// The test's effective configuration after defaults (goes to the record as `config`).
  virtual results::Json effective_config() const = 0;
  /// Creates files, schemas, data; may take long (report progress with recorder->message()) and
  /// should return early on stop. Throws EnvironmentError / BackendError on failure.
  virtual void prepare(TestContext& ctx) = 0;
  /// Runs the workload for settings.warmup without recording samples. May leave the workload
  /// running so that run() continues it without a gap.
  virtual void warmup(TestContext& ctx) = 0;
  /// The measured phase: settings.duration long, one recorder->interval() per settings.interval,
  /// then headline metrics and histograms. On stop, records what was measured and returns.
  virtual void run(TestContext& ctx) = 0;
  /// Verifies the outcome (TPC-C consistency conditions, issued counts); recorder->check() each.
  virtual void verify(TestContext& ctx) = 0;
  /// Removes what prepare() created (unless configured to keep it). Must not throw.
  virtual void cleanup(TestContext& ctx) noexcept = 0;
  /// What this test (with its configuration) would do to a block-device target; asked before
  /// the run starts, so a protocol that cannot run on a device fails before anything is written.
  virtual DeviceAccess device_access() const { return DeviceAccess::unsupported; }
  /// On a directory target, whether this test reads and writes a data file of its own,
  /// `drivelab-<test>.dat` (io, vdbench, video, a one-target replay): what a preconditioning's
  /// `for_test` may name.
  virtual bool owns_data_file() const { return false; }
  /// On a directory target, the other test whose data file this test writes (a preconditioning's
  /// `for_test`), as {configuration key, test name}; {"", ""} for none. decode_protocol() checks
  /// that the test comes later in the protocol and owns_data_file(): a name that matches none
  /// would fill a file no test reads.
  virtual std::pair<std::string, std::string> data_file_for() const { return {}; }
  /// How long the test runs when that is not simply `warmup:` + `duration:` (`drivelab validate`
  /// prints it): a curve runs the max run and each point with its own warm-up and duration; a
  /// render or a preconditioning runs to completion. Empty: warm-up + duration.
  virtual std::string schedule(const TestSettings& settings) const {
    (void)settings;
    return {};
  }
  /// Problems of the test's configuration that do not stop it (a key that is ignored as
  /// configured), each as "file:line:col: key: text" (config::Diagnostic); `drivelab validate`
  /// prints them, and the emulator records them as warnings when it runs.
  virtual std::vector<std::string> config_warnings() const { return {}; }
};

/// One kind of test a protocol can name (`kind: tpcc`).
struct EmulatorType {
  std::string kind;     ///< also the name of the test's configuration section (`tpcc:`)
  std::string summary;  ///< one line for `drivelab list` / --help
  /// Decodes the `<kind>:` section (an undefined Node when absent: all defaults) into a ready
  /// Emulator. Problems go to section.diagnostics() (decoders keep going to report them all);
  /// may return nullptr only if diagnostics were recorded.
  std::function<std::unique_ptr<Emulator>(const config::Node& section, const TestSettings& settings)> decode;
};

class Registry {
 public:
  /// Throws InternalError on a duplicate kind.
  void add(EmulatorType type);
  const EmulatorType* find(std::string_view kind) const noexcept;
  std::vector<std::string> kinds() const;
  const std::vector<EmulatorType>& types() const noexcept { return types_; }

 private:
  std::vector<EmulatorType> types_;
};

}  // namespace drivelab::runner
