#include "drivelab/telemetry/device_stack.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>
#include <deque>

#include <fmt/format.h>

namespace drivelab::telemetry {
namespace fs = std::filesystem;

const char* role_name(StackRole role) noexcept {
  switch (role) {
    case StackRole::headline: return "headline";
    case StackRole::whole_disk: return "whole_disk";
    case StackRole::slave: return "slave";
    case StackRole::backing_device: return "backing_device";
    case StackRole::backing_file_device: return "backing_file_device";
  }
  return "?";
}

namespace {

/// The downward links of a storage set (core/sysfs.hpp): the others go up (holders, a disk's
/// partitions, loop devices over a member) or sideways (another loop device over the same file).
std::optional<StackRole> downward(StorageLink link) noexcept {
  switch (link) {
    case StorageLink::whole_disk: return StackRole::whole_disk;
    case StorageLink::slave: return StackRole::slave;
    case StorageLink::backing_device: return StackRole::backing_device;
    default: return std::nullopt;
  }
}

std::string relation(const DeviceStack& s, const StackDevice& d) {
  const std::string& of = s.devices[d.below_of].block.name;
  switch (d.role) {
    case StackRole::whole_disk: return "whole disk of " + of;
    case StackRole::slave: return "slave of " + of;
    case StackRole::backing_device: return "backing device of " + of;
    case StackRole::backing_file_device: return "holds the backing file of " + of;
    case StackRole::headline: break;
  }
  return "holds the target";
}

}  // namespace

std::string DeviceStack::describe() const {
  if (devices.empty()) return "";
  std::string out = devices.front().block.name;
  for (std::size_t i = 1; i < devices.size(); ++i)
    out += fmt::format("{}{} ({})", i == 1 ? "; below: " : ", ", devices[i].block.name, relation(*this, devices[i]));
  return out;
}

DeviceStack device_stack(const SysBlock& device, const std::vector<MountEntry>& mounts, const fs::path& sys_root) {
  constexpr std::size_t kMaxDevices = 256;  // a bound against a sysfs that links in circles
  DeviceStack out;
  const auto known = [&](dev_t dev) {
    for (const StackDevice& d : out.devices)
      if (d.block.dev == dev) return true;
    return false;
  };
  // Each entry: a device to add with everything below it, reached from devices[from].
  struct Pending {
    SysBlock block;
    StackRole role;
    std::size_t from;
  };
  std::deque<Pending> queue{{device, StackRole::headline, 0}};
  while (!queue.empty() && out.devices.size() < kMaxDevices) {
    Pending p = std::move(queue.front());
    queue.pop_front();
    if (known(p.block.dev)) continue;
    const StorageSet set = storage_set(p.block, mounts, sys_root);
    // set.members[k] -> index in out.devices, for the members kept (those reached downward only).
    std::vector<std::optional<std::size_t>> index(set.members.size());
    for (std::size_t k = 0; k < set.members.size() && out.devices.size() < kMaxDevices; ++k) {
      const StorageMember& m = set.members[k];
      std::optional<StackRole> role;
      std::size_t from = p.from;
      if (k == 0) {
        role = p.role;
      } else if (index[m.from]) {
        role = downward(m.link);
        from = *index[m.from];
      }
      if (!role || known(m.block.dev)) continue;
      out.devices.push_back({m.block, *role, from});
      index[k] = out.devices.size() - 1;
      // A loop device over a file: the device of the filesystem that holds the file is below it
      // (storage_set goes from that device up to the loop device, not down).
      if (m.backing && m.backing->fs_device && !m.backing->backing_device)
        if (auto fs_dev = sys_block(*m.backing->fs_device, sys_root))
          queue.push_back({std::move(*fs_dev), StackRole::backing_file_device, *index[k]});
    }
  }
  return out;
}

TargetStack device_stack_of(const fs::path& target, const fs::path& sys_root) {
  struct stat st{};
  if (::stat(target.c_str(), &st) != 0)
    return {std::nullopt, fmt::format("'{}' cannot be examined: {}", target.string(), std::strerror(errno))};
  const std::vector<MountEntry> mounts = read_mountinfo();
  std::optional<dev_t> dev;
  std::string where;
  if (S_ISBLK(st.st_mode)) {
    dev = st.st_rdev;
    where = target.string();
  } else {
    std::error_code ec;
    fs::path abs = fs::canonical(target, ec);
    if (ec) abs = fs::absolute(target).lexically_normal();
    const auto m = mount_containing(mounts, abs.string(), st.st_dev);
    if (major(st.st_dev) != 0) {
      dev = st.st_dev;
    } else if (m) {
      dev = block_device_number(m->source);  // btrfs and others: anonymous numbers
    }
    if (!dev) {
      if (m) return {std::nullopt, fmt::format("{} at {} has no block device", m->fstype, m->mount_point)};
      return {std::nullopt, fmt::format("'{}' is on no block device (device number {}:{})", abs.string(),
                                        major(st.st_dev), minor(st.st_dev))};
    }
    where = abs.string();
  }
  const auto block = sys_block(*dev, sys_root);
  if (!block)
    return {std::nullopt, fmt::format("the device {}:{} of '{}' is not in {}/dev/block", major(*dev), minor(*dev),
                                      where, sys_root.string())};
  return {device_stack(*block, mounts, sys_root), ""};
}

}  // namespace drivelab::telemetry
