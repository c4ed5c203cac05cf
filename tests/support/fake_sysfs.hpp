#pragma once
// A fake sysfs tree for tests of block-device stacks (core/sysfs.hpp: sys_block, storage_set;
// telemetry/device_stack.hpp): devices under <root>/devices/, with the block/, dev/block/ and
// class/block/ links the kernel makes, partitions under their disk, holders/ and slaves/ links.
// Every test binary has tests/support on its include path (drivelab_test in cmake/drivelab.cmake).
#include <sys/sysmacros.h>
#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "drivelab/core/sysfs.hpp"

namespace drivelab::test_support {

/// Writes `content` to `p`, creating its directories.
inline void write_file(const std::filesystem::path& p, const std::string& content) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

/// A fake sysfs: <root>/devices/<where>/<name> with `dev`, <root>/block/<name> and
/// <root>/dev/block/MAJ:MIN links to it (partitions: under their disk, no block/ link).
class FakeSysfs {
 public:
  explicit FakeSysfs(const std::filesystem::path& root) : root_(root) {}
  /// A device `name` with number `dev`: a whole disk under devices/virtual/block/ (or under
  /// `where`, a directory relative to <root>/devices, as a PCI or ATA device's disk is), or a
  /// partition of the disk directory `parent`.
  std::filesystem::path device(const std::string& name, dev_t dev, const std::filesystem::path& parent = {},
                               const std::filesystem::path& where = {}) {
    namespace fs = std::filesystem;
    const fs::path dir = !parent.empty() ? parent / name
                         : where.empty() ? root_ / "devices" / "virtual" / "block" / name
                                         : root_ / "devices" / where / name;
    write_file(dir / "dev", std::to_string(major(dev)) + ":" + std::to_string(minor(dev)) + "\n");
    if (parent.empty()) {
      fs::create_directories(root_ / "block");
      fs::create_symlink(dir, root_ / "block" / name);
    } else {
      write_file(dir / "partition", "1\n");
    }
    fs::create_directories(root_ / "dev" / "block");
    fs::create_symlink(dir, root_ / "dev" / "block" / (std::to_string(major(dev)) + ":" + std::to_string(minor(dev))));
    fs::create_directories(root_ / "class" / "block");
    fs::create_symlink(dir, root_ / "class" / "block" / name);
    return dir;
  }
  /// `upper` is stacked on `lower`: lower/holders/<upper> and upper/slaves/<lower>.
  static void stack(const std::filesystem::path& upper, const std::filesystem::path& lower) {
    namespace fs = std::filesystem;
    fs::create_directories(lower / "holders");
    fs::create_directories(upper / "slaves");
    fs::create_symlink(upper, lower / "holders" / upper.filename());
    fs::create_symlink(lower, upper / "slaves" / lower.filename());
  }
  SysBlock block(dev_t dev) const { return sys_block(dev, root_).value(); }
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

}  // namespace drivelab::test_support
