#include "drivelab/telemetry/device_stack.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
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

std::string DeviceStack::page_cache_loops() const {
  std::string out;
  for (const StackDevice& d : devices)
    if (d.loop && d.loop->direct_io == false)
      out += fmt::format("{}{} (backing file {}, loop/dio 0)", out.empty() ? "" : ", ", d.block.name, d.loop->file);
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
      out.devices.push_back({m.block, *role, from, m.backing});
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

namespace {

/// The block device a mount is on: its device number, or its source for btrfs-like anonymous numbers.
std::optional<dev_t> block_of(const MountEntry& m) {
  if (major(m.dev) != 0) return m.dev;
  return block_device_number(m.source);
}

/// The block device of an active swap area: a partition's node (or /sys/class/block/<name>/dev
/// when the node is not here), a swap file's filesystem.
std::optional<dev_t> block_of(const SwapArea& s, const std::vector<MountEntry>& mounts, const fs::path& sys_root) {
  if (s.type != "file") {
    if (const auto d = block_device_number(s.path)) return d;
    if (const auto text = read_sysfs_text(sys_root / "class" / "block" / fs::path(s.path).filename() / "dev"))
      return parse_dev_numbers(*text);
    return std::nullopt;
  }
  struct stat st{};
  if (::stat(s.path.c_str(), &st) != 0) return std::nullopt;
  if (major(st.st_dev) != 0) return st.st_dev;
  const auto m = mount_containing(mounts, s.path, st.st_dev);
  return m ? block_of(*m) : std::nullopt;
}

}  // namespace

std::vector<SharedUse> shared_uses(const DeviceStack& stack, const std::vector<MountEntry>& mounts,
                                   const std::vector<SwapArea>& swaps, std::optional<dev_t> own_filesystem,
                                   const fs::path& sys_root) {
  std::vector<SharedUse> out;
  // One entry per filesystem, whatever its bind mounts: its device and its entry in `out`, if any.
  std::vector<std::pair<dev_t, std::optional<std::size_t>>> seen;
  // The first device of `stack` that the stack of `dev` reaches, and the name of `dev`.
  const auto place = [&](dev_t dev) -> std::optional<std::pair<std::string, std::string>> {
    const auto block = sys_block(dev, sys_root);
    if (!block) return std::nullopt;
    const DeviceStack theirs = device_stack(*block, mounts, sys_root);
    for (const StackDevice& ours : stack.devices)
      for (const StackDevice& d : theirs.devices)
        if (d.block.dev == ours.block.dev) return std::pair{ours.block.name, block->name};
    return std::nullopt;
  };
  for (const MountEntry& m : mounts) {
    const auto dev = block_of(m);
    if (!dev || dev == own_filesystem) continue;
    const auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& e) { return e.first == *dev; });
    if (it != seen.end()) {
      // A bind mount of a filesystem already listed: the mount of the filesystem's root names it.
      if (it->second && m.root == "/") out[*it->second].what = m.mount_point;
      continue;
    }
    const auto p = place(*dev);
    seen.emplace_back(*dev, p ? std::optional<std::size_t>(out.size()) : std::nullopt);
    if (p) out.push_back({m.mount_point, false, m.fstype, p->second, p->first});
  }
  for (const SwapArea& s : swaps)
    if (const auto dev = block_of(s, mounts, sys_root))
      if (const auto p = place(*dev)) out.push_back({s.path, true, s.type, p->second, p->first});
  return out;
}

std::string shared_text(const DeviceStack& stack, const std::vector<SharedUse>& uses) {
  std::string out;
  for (const StackDevice& d : stack.devices) {
    std::string items;
    std::size_t n = 0;
    for (const SharedUse& u : uses) {
      if (u.counted_in != d.block.name) continue;
      items += fmt::format("{}{}{}{}", n++ == 0 ? "" : ", ", u.swap ? "swap " : "", u.what,
                           u.on == d.block.name ? "" : " (on " + u.on + ")");
    }
    if (n == 0) continue;
    const bool headline = d.block.dev == stack.headline().block.dev;
    out += fmt::format("{}{} {} also on {}{}: {} I/O is counted", out.empty() ? "" : "; ", items, n == 1 ? "is" : "are",
                       d.block.name, headline ? "" : " (below " + stack.headline().block.name + ")",
                       n == 1 ? "its" : "their");
  }
  return out;
}

namespace {

/// No stack, and why.
TargetStack no_stack(std::string reason) { return {std::nullopt, std::move(reason), {}}; }

}  // namespace

TargetStack device_stack_of(const fs::path& target, const fs::path& sys_root) {
  struct stat st{};
  if (::stat(target.c_str(), &st) != 0)
    return no_stack(fmt::format("'{}' cannot be examined: {}", target.string(), std::strerror(errno)));
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
      if (m) return no_stack(fmt::format("{} at {} has no block device", m->fstype, m->mount_point));
      return no_stack(fmt::format("'{}' is on no block device (device number {}:{})", abs.string(), major(st.st_dev),
                                  minor(st.st_dev)));
    }
    where = abs.string();
  }
  const auto block = sys_block(*dev, sys_root);
  if (!block)
    return no_stack(fmt::format("the device {}:{} of '{}' is not in {}/dev/block", major(*dev), minor(*dev), where,
                                sys_root.string()));
  TargetStack out{device_stack(*block, mounts, sys_root), "", {}};
  // A directory's own filesystem is the test's, unless it is the running system's root.
  std::optional<dev_t> own;
  if (!S_ISBLK(st.st_mode)) {
    const auto m = mount_containing(mounts, where, st.st_dev);
    if (!m || m->mount_point != "/") own = dev;
  }
  out.shared = shared_uses(*out.stack, mounts, read_swaps(), own, sys_root);
  return out;
}

}  // namespace drivelab::telemetry
