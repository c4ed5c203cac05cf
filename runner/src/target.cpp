#include "target.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/runner/cohort.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/io/target_safety.hpp"

namespace drivelab::runner::detail {
namespace {

namespace fs = std::filesystem;

std::string lock_holder(int fd) {
  char holder[256] = {};
  const ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
  std::string who = n > 0 ? std::string(holder, static_cast<std::size_t>(n)) : std::string("unknown");
  while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) who.pop_back();
  return who;
}

[[noreturn]] void throw_in_use_by_run(const fs::path& target, const std::string& who) {
  // Under mpirun the other run is most likely another rank of the same job on this host.
  const std::string hint = launched_by_mpi()
                               ? "; the ranks on one host each need their own target: --target DIR/{rank} "
                                 "(docs/multihost.md)"
                               : "";
  throw EnvironmentError(fmt::format(
      "target '{}' is in use by another drivelab run ({}); two runs on one target would use each other's files and "
      "measure each other{}",
      target.string(), who, hint));
}

}  // namespace

/// Holds what keeps other runs (and, for a written device, the kernel's exclusive users) away.
class RunTarget::Lock {
 public:
  virtual ~Lock() = default;
};

namespace {

/// An exclusive flock(2) on `<target>/drivelab-run.lock` for the whole run. The file names the
/// holder; it is removed when the run ends.
class DirectoryLock final : public RunTarget::Lock {
 public:
  DirectoryLock(const fs::path& target, const std::string& run_id) : path_(target / kRunLockFile) {
    fd_ = open_no_follow(path_, O_RDWR | O_CREAT);  // a link in its place is refused, never written through
    if (!fd_) throw_errno(fmt::format("cannot create the lock file {}", path_.string()), errno);
    if (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
      const std::string who = lock_holder(fd_.get());
      fd_.reset();
      throw_in_use_by_run(target, who);
    }
    // A lock file that is there but not locked was left by a run that was killed: said, not hidden
    // (its managed server, if any, is named when the test starts it again).
    if (struct stat st{}; ::fstat(fd_.get(), &st) == 0 && st.st_size > 0)
      std::cerr << fmt::format(
                       "drivelab: note: {} was left by {}, which ended without removing it (killed?); "
                       "this run takes the target over\n",
                       path_.string(), lock_holder(fd_.get()))
                << std::flush;
    const std::string me = fmt::format("pid {}, run {}\n", ::getpid(), run_id);
    if (::ftruncate(fd_.get(), 0) != 0 || ::pwrite(fd_.get(), me.data(), me.size(), 0) < 0) {
      // The lock itself holds; only the holder's description is missing.
    }
  }
  ~DirectoryLock() override {
    std::error_code ec;
    fs::remove(path_, ec);  // unlink first, then close (releases the lock)
  }

 private:
  fs::path path_;
  UniqueFd fd_;
};

/// A run that only reads: flock(2) on the device node (another drivelab run on it is refused).
class DeviceReadLock final : public RunTarget::Lock {
 public:
  explicit DeviceReadLock(const fs::path& device) {
    fd_.reset(::open(device.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd_) throw_errno(fmt::format("cannot open block device {}", device.string()), errno);
    if (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) throw_in_use_by_run(device, "it holds a lock on the device");
  }

 private:
  UniqueFd fd_;
};

/// A run that writes: io::StackClaim, every device the write reaches flock'ed and held with
/// O_EXCL (target_safety.hpp): the kernel then refuses to mount, swapon or claim any of them
/// until the run ends, and another drivelab run writing the same blocks through another device
/// is refused.
class DeviceWriteLock final : public RunTarget::Lock {
 public:
  explicit DeviceWriteLock(io::StackClaim claim) : claim_(std::move(claim)) {}

 private:
  io::StackClaim claim_;
};

}  // namespace

RunTarget::RunTarget() = default;
RunTarget::RunTarget(RunTarget&&) noexcept = default;
RunTarget& RunTarget::operator=(RunTarget&&) noexcept = default;
RunTarget::~RunTarget() = default;

std::string RunTarget::describe() const {
  if (!device_) return {};
  return fmt::format("block device {}, {}", device_->name, format_size(device_->capacity_bytes));
}

RunTarget RunTarget::acquire(const Protocol& protocol, const RunOptions& options, const std::string& run_id) {
  RunTarget t;
  const fs::path& target = options.target;
  std::vector<io::Consent> consent;
  if (!protocol.destroy_data_on.empty())
    consent.push_back({protocol.destroy_data_on, fmt::format("destroy_data_on in {}", protocol.file)});
  if (!options.destroy_data_on.empty()) consent.push_back({options.destroy_data_on, "--destroy-data-on"});

  if (!io::is_block_device(target)) {
    std::error_code ec;
    if (!fs::is_directory(target, ec))
      throw EnvironmentError(
          fmt::format("target '{}' is neither an existing directory nor a block device", target.string()));
    if (!consent.empty())
      throw EnvironmentError(fmt::format(
          "{} names a block device to destroy, but the target '{}' is a directory: drivelab only creates and removes "
          "its own drivelab-* files there. Remove it, or give the device as --target.",
          consent.front().origin, target.string()));
    if (::access(target.c_str(), W_OK) != 0)
      throw_errno(fmt::format("target '{}' is not writable", target.string()), errno);
    t.lock_ = std::make_unique<DirectoryLock>(target, run_id);
    return t;
  }

  std::string need_dir;
  bool writes = false;
  for (const PlannedTest& test : protocol.tests) {
    const DeviceAccess access = test.emulator ? test.emulator->device_access() : DeviceAccess::unsupported;
    if (access == DeviceAccess::unsupported)
      need_dir += fmt::format("{}'{}' ({})", need_dir.empty() ? "" : ", ", test.settings.name, test.settings.kind);
    writes = writes || access == DeviceAccess::read_write;
  }
  if (!need_dir.empty())
    throw EnvironmentError(fmt::format(
        "target '{}' is a block device, but {} need{} a directory on a filesystem (it creates files or a database "
        "there): run {} with --target DIR on the drive, and only device tests (io, precondition, video, vdbench) on "
        "the device",
        target.string(), need_dir, need_dir.find(',') == std::string::npos ? "s" : "", need_dir));

  io::SafetyReport report = io::inspect_device(target);
  const bool consent_used = io::authorize_device(report, consent, writes);
  if (writes) {
    // Hold the whole stack, then look again: what changed between the first look and the holds
    // (a mount, a loop device attached) is refused or held too.
    io::StackClaim claim = io::StackClaim::hold(report);
    report = io::inspect_device(target);
    io::authorize_device(report, consent, writes);
    claim.extend(report);
    t.lock_ = std::make_unique<DeviceWriteLock>(std::move(claim));
  } else {
    t.lock_ = std::make_unique<DeviceReadLock>(target);
  }
  const io::BlockDevice& dev = report.device;
  t.device_ = TargetDevice{.path = target,
                           .name = dev.name,
                           .identity = dev.identity,
                           .capacity_bytes = dev.capacity_bytes,
                           .logical_block_bytes = dev.logical_block_bytes,
                           .writes_allowed = writes};
  if (consent_used) {
    std::string found;
    for (const io::HazardFinding& f : report.findings) found += (found.empty() ? "" : "; ") + f.detail;
    t.warnings_.push_back(fmt::format("this run writes to {} ({}), named by {}; what was on it is destroyed ({})",
                                      target.string(), dev.identity, consent.front().origin, found));
  }
  return t;
}

}  // namespace drivelab::runner::detail
