#pragma once
// Test helper: a real device-mapper linear device over another block device (a LoopDevice), with
// a UUID, always removed (RAII). Made with dmsetup(8) (Debian package dmsetup, in
// scripts/install-deps.sh) through the core process toolkit.
// Needs root and a kernel with device-mapper; create() returns nullopt with the reason
// otherwise, for GTEST_SKIP.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "drivelab/core/process.hpp"

namespace drivelab::testing {

class DmLinearDevice {
 public:
  /// /dev/mapper/<name>: sectors [0, size_bytes/512) of `below` (a block device node).
  static std::optional<DmLinearDevice> create(const std::string& below, std::uint64_t size_bytes, std::string& why) {
    const auto program = find_program("dmsetup", {"/usr/sbin", "/sbin"});
    if (!program) return fail(why, "dmsetup is not installed (Debian package dmsetup)");
    const int control = ::open("/dev/mapper/control", O_RDWR | O_CLOEXEC);
    if (control < 0)
      return fail(why, std::string("/dev/mapper/control: ") + std::strerror(errno) +
                           (errno == ENODEV || errno == ENOENT ? " (this kernel has no device-mapper)" : ""));
    ::close(control);
    static std::atomic<int> counter{0};
    DmLinearDevice d;
    d.dmsetup_ = program->string();
    d.name_ = "drivelab-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    d.uuid_ = "DRIVELAB-TEST-" + d.name_;
    // --noudevsync: no udev in containers; dmsetup then makes the node itself (mknodes below
    // makes sure).
    const std::string table = "0 " + std::to_string(size_bytes / 512) + " linear " + below + " 0";
    const CommandResult created = d.dmsetup({"create", d.name_, "--uuid", d.uuid_, "--noudevsync", "--table", table});
    if (created.exit_code != 0) return fail(why, "dmsetup create: " + created.output);
    d.created_ = true;
    d.dmsetup({"mknodes", d.name_});
    d.path_ = "/dev/mapper/" + d.name_;
    std::error_code ec;
    if (!std::filesystem::exists(d.path_, ec)) return fail(why, "dmsetup made no " + d.path_);
    return d;
  }

  DmLinearDevice(DmLinearDevice&& o) noexcept
      : dmsetup_(std::move(o.dmsetup_)),
        name_(std::move(o.name_)),
        uuid_(std::move(o.uuid_)),
        path_(std::move(o.path_)),
        created_(std::exchange(o.created_, false)) {}
  DmLinearDevice& operator=(DmLinearDevice&&) = delete;
  DmLinearDevice(const DmLinearDevice&) = delete;
  ~DmLinearDevice() {
    if (created_) dmsetup({"remove", "--retry", "--noudevsync", name_});
  }

  const std::string& path() const noexcept { return path_; }
  const std::string& name() const noexcept { return name_; }
  /// The UUID it was created with (/sys/block/dm-N/dm/uuid).
  const std::string& uuid() const noexcept { return uuid_; }

 private:
  DmLinearDevice() = default;
  static std::optional<DmLinearDevice> fail(std::string& why, std::string what) {
    why = std::move(what);
    return std::nullopt;
  }
  CommandResult dmsetup(std::vector<std::string> args) const {
    args.insert(args.begin(), dmsetup_);
    return run_command(args, std::chrono::seconds(60));
  }

  std::string dmsetup_;
  std::string name_;
  std::string uuid_;
  std::string path_;
  bool created_ = false;
};

}  // namespace drivelab::testing
