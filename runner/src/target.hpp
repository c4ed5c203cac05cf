#pragma once
// The target of a run: a directory or a block device, checked and locked for the whole run.
//
// Directory: must exist and be writable; `<dir>/drivelab-run.lock` is flock'ed (and removed at
// the end), so two runs never share a drive under test.
//
// Block device (docs/targets.md):
//  1. every test must be able to run on a device (Emulator::device_access); tests that need a
//     filesystem are named in the error;
//  2. if any test writes, io::inspect_device + io::authorize_device (target_safety.hpp) decide,
//     with the consent of `destroy_data_on:` and `--destroy-data-on`; a named identity that is not
//     the device's is an error even for read-only protocols;
//  3. the lock: a run that only reads flock(2)s the device node (against another drivelab run);
//     a run that writes holds io::StackClaim for the run: every device its writes reach (the
//     target, loop devices over the same backing, loops stacked below or above it) flock'ed and
//     opened with O_EXCL (the kernel then refuses to mount or claim any of them until the run
//     ends; it also fails now if something already has), then inspects and authorizes again.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "drivelab/runner/emulator.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"

namespace drivelab::runner::detail {

/// The run lock of a directory target: `<target>/drivelab-run.lock` (flock(2); it names the run).
inline constexpr const char* kRunLockFile = "drivelab-run.lock";

class RunTarget {
 public:
  /// Checks and locks (see the file comment). Throws EnvironmentError with the reason.
  static RunTarget acquire(const Protocol& protocol, const RunOptions& options, const std::string& run_id);

  RunTarget(RunTarget&&) noexcept;
  RunTarget& operator=(RunTarget&&) noexcept;
  ~RunTarget();

  /// Set for a block-device target.
  const std::optional<TargetDevice>& device() const noexcept { return device_; }
  /// Warnings for the record (e.g. "this run destroys the data on ...").
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }
  /// "block device loop0, 4 GiB" or "" for a directory (the filesystem is named elsewhere).
  std::string describe() const;

  class Lock;

 private:
  RunTarget();

  std::optional<TargetDevice> device_;
  std::vector<std::string> warnings_;
  std::unique_ptr<Lock> lock_;
};

}  // namespace drivelab::runner::detail
