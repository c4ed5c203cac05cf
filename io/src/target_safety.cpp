#include "drivelab/io/target_safety.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>

#include <blkid/blkid.h>
#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/core/sysfs.hpp"
#include "drivelab/core/units.hpp"

namespace drivelab::io {
namespace {

namespace fs = std::filesystem;

/// A device or partition that a hazard check covers.
struct Covered {
  std::string name;
  fs::path dir;  ///< canonical /sys/devices/.../<name>
  dev_t dev = 0;
};

/// The device itself and, for a whole disk, its partitions: the members of its storage set that
/// the checks name "it" and "its partition X".
std::vector<Covered> device_and_partitions(const StorageSet& set) {
  std::vector<Covered> out;
  for (const StorageMember& m : set.members)
    if (m.link == StorageLink::self || (m.link == StorageLink::partition && m.from == 0))
      out.push_back({m.block.name, m.block.dir, m.block.dev});
  return out;
}

/// `dir` and everything below it through slaves/ links (dm-0 -> vda2 -> ...), by kernel name.
void add_with_slaves(const fs::path& dir, std::set<std::string>& out, int depth = 0) {
  if (depth > 16 || !out.insert(dir.filename().string()).second) return;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir / "slaves", ec)) {
    const fs::path slave = fs::canonical(e.path(), ec);
    if (!ec) add_with_slaves(slave, out, depth + 1);
  }
}

/// "dm-0 (device-mapper 'vg0-data')", "md0 (md RAID)".
std::string describe_holder(const fs::path& holder_dir) {
  const std::string name = holder_dir.filename().string();
  if (const auto dm = read_sysfs_text(holder_dir / "dm" / "name"))
    return fmt::format("{} (device-mapper '{}')", name, *dm);
  if (fs::exists(holder_dir / "md")) return fmt::format("{} (md RAID)", name);
  return name;
}

/// "/dev/loop1", or the target as given for members[0].
std::string node_of(const BlockDevice& dev, const StorageSet& set, std::size_t i) {
  return i == 0 ? dev.path.string() : "/dev/" + set.members[i].block.name;
}

/// How member `i` relates to the one it was reached from: "shares its backing file with /dev/loop1".
std::string link_phrase(const StorageSet& set, std::size_t i) {
  const StorageMember& m = set.members[i];
  const std::string node = "/dev/" + m.block.name;
  switch (m.link) {
    case StorageLink::self: return "is the target";
    case StorageLink::partition: return "has the partition " + node;
    case StorageLink::whole_disk: return "is a partition of " + node;
    case StorageLink::holder: return "is held by " + describe_holder(m.block.dir);
    case StorageLink::slave: return "is stacked on " + node;
    case StorageLink::same_backing_file: return "shares its backing file with " + node;
    case StorageLink::backing_file_on:
      return fmt::format("holds the backing file of {} ({})", node, m.backing ? m.backing->file : "?");
    case StorageLink::backing_device: return "is a loop device over " + node;
    case StorageLink::loop_over: return "is the backing device of the loop device " + node;
  }
  return "?";
}

/// The path from the target to member `i`: "/dev/loop5 shares its backing file with /dev/loop4,
/// which is held by dm-0 (device-mapper 'x')".
std::string path_phrase(const BlockDevice& dev, const StorageSet& set, std::size_t i) {
  const std::vector<std::size_t> path = set.path_to(i);
  std::string text = node_of(dev, set, 0);
  for (std::size_t k = 1; k < path.size(); ++k) text += (k == 1 ? " " : ", which ") + link_phrase(set, path[k]);
  return text;
}

/// The kind of a finding on the path to member `i`: loop_backing if the path goes through a loop
/// device's backing file on a filesystem, else shared_storage.
Hazard path_hazard(const StorageSet& set, std::size_t i) {
  for (const std::size_t k : set.path_to(i))
    if (set.members[k].link == StorageLink::backing_file_on) return Hazard::loop_backing;
  return Hazard::shared_storage;
}

/// The hazards of the device stack (issue 15): every member of the storage set beyond the device
/// and its partitions that is mounted or active swap, every device stacked on the set that is in
/// use only by being there (a holder, a loop device over a file on it), and every loop device over
/// its own storage. Never liftable: the message names the path by which the device is in use.
void stack_findings(const BlockDevice& dev, const StorageSet& set, const std::vector<MountEntry>& mounts,
                    const std::vector<SwapArea>& swaps, std::vector<HazardFinding>& out) {
  const auto covered = [&](std::size_t i) {
    return i == 0 || (set.members[i].link == StorageLink::partition && set.members[i].from == 0);
  };
  std::vector<bool> in_use(set.members.size(), false);  // a finding at or above the member
  const auto found = [&](std::size_t i, std::string detail) {
    out.push_back({path_hazard(set, i), std::move(detail)});
    for (const std::size_t k : set.path_to(i)) in_use[k] = true;
  };
  for (std::size_t i = 0; i < set.members.size(); ++i) {
    if (covered(i)) continue;  // "it ..." and "its partition ..." (inspect_device)
    const dev_t d = set.members[i].block.dev;
    for (const MountEntry& m : mounts)
      if (m.dev == d || block_device_number(m.source) == d)
        found(i, fmt::format("{}, mounted at {} ({})", path_phrase(dev, set, i), m.mount_point, m.fstype));
    for (const SwapArea& s : swaps)
      if (block_device_number(s.path) == d)
        found(i, fmt::format("{}, active swap ({} in /proc/swaps)", path_phrase(dev, set, i), s.path));
  }
  // The tops of the stacks above the set that nothing above them shows in use: dm, md, a loop
  // device over a file on it. A direct holder of the device or a partition is inspect_device's.
  const auto stacked = [&](std::size_t i) {
    const StorageLink l = set.members[i].link;
    return l == StorageLink::holder || l == StorageLink::backing_file_on;
  };
  for (std::size_t i = 1; i < set.members.size(); ++i) {
    if (!stacked(i) || in_use[i]) continue;
    bool top = true;
    for (std::size_t j = i + 1; j < set.members.size() && top; ++j) {
      const std::vector<std::size_t> path = set.path_to(j);
      top = !(stacked(j) && std::find(path.begin(), path.end(), i) != path.end());
    }
    const bool reported = set.members[i].link == StorageLink::holder && covered(set.members[i].from);
    if (top && !reported) found(i, path_phrase(dev, set, i));
  }
  for (const auto& [loop, on] : set.loops_on_themselves)
    out.push_back(
        {Hazard::loop_backing,
         fmt::format("{} has its backing file {} on a filesystem on {}, which shares its storage",
                     loop == 0 ? node_of(dev, set, 0) : path_phrase(dev, set, loop),
                     set.members[loop].backing ? set.members[loop].backing->file : "?", node_of(dev, set, on))});
}

/// SafetyReport::reach: the members a write reaches that the kernel lets us claim (see the
/// header): the target, loop devices beside, below and above it. A partition and its whole disk
/// are never both held (the claim of one excludes the other): the whole disk wins.
std::vector<StackDevice> reach_of(const BlockDevice& dev, const StorageSet& set) {
  std::vector<StackDevice> out;
  std::vector<const SysBlock*> blocks;
  for (std::size_t i = 0; i < set.members.size(); ++i) {
    const StorageLink l = set.members[i].link;
    const bool held = l == StorageLink::self || l == StorageLink::same_backing_file ||
                      l == StorageLink::backing_device || l == StorageLink::loop_over;
    if (!held) continue;
    const SysBlock& b = set.members[i].block;
    out.push_back({i == 0 ? dev.path : fs::path("/dev") / b.name, b.dev,
                   i == 0 ? std::string("the target") : path_phrase(dev, set, i)});
    blocks.push_back(&b);
  }
  std::vector<StackDevice> kept;
  for (std::size_t k = 0; k < out.size(); ++k) {
    const bool disk_held =
        blocks[k]->is_partition && k != 0 &&
        std::any_of(blocks.begin(), blocks.end(), [&](const SysBlock* o) { return o->dev == blocks[k]->disk_dev; });
    if (!disk_held) kept.push_back(std::move(out[k]));
  }
  return kept;
}

std::string blkid_value(blkid_probe pr, const char* name) {
  const char* data = nullptr;
  std::size_t len = 0;
  if (blkid_probe_lookup_value(pr, name, &data, &len) != 0 || data == nullptr) return {};
  return std::string(data, strnlen(data, len));
}

struct ProbeOwner {
  void operator()(blkid_struct_probe* pr) const noexcept { blkid_free_probe(pr); }
};
using UniqueProbe = std::unique_ptr<blkid_struct_probe, ProbeOwner>;

/// "an ext4 filesystem signature (label 'data', UUID 5c1e...)".
std::string describe_signature(const std::string& type, const std::string& usage, const std::string& label,
                               const std::string& uuid) {
  std::string what;
  if (type == "LVM2_member")
    what = "an LVM2_member signature (LVM physical volume)";
  else if (type == "swap")
    what = "a swap signature";
  else if (usage == "raid")
    what = fmt::format("a {} RAID signature", type);
  else if (usage == "crypto")
    what = fmt::format("a {} encryption signature", type);
  else if (usage == "filesystem")
    what = fmt::format("an {} filesystem signature", type);
  else
    what = fmt::format("a {} signature", type);
  std::vector<std::string> extra;
  if (!label.empty()) extra.push_back(fmt::format("label '{}'", label));
  if (!uuid.empty()) extra.push_back("UUID " + uuid);
  if (!extra.empty()) what += " (" + (extra.size() == 2 ? extra[0] + ", " + extra[1] : extra[0]) + ")";
  return what;
}

/// Partition tables and superblocks, read-only (libblkid: blkid_do_safeprobe as wipefs and
/// mkfs use it). A partition's own signature is only added as detail for a whole disk.
void probe_signatures(const fs::path& path, const std::string& subject, std::vector<HazardFinding>& out) {
  UniqueProbe pr(blkid_new_probe_from_filename(path.c_str()));
  if (!pr) {
    out.push_back({Hazard::probe_failed,
                   fmt::format("{} could not be read to look for data signatures: {}", subject, std::strerror(errno))});
    return;
  }
  blkid_probe_enable_superblocks(pr.get(), 1);
  blkid_probe_set_superblocks_flags(pr.get(),
                                    BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE | BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID);
  blkid_probe_enable_partitions(pr.get(), 1);
  const int rc = blkid_do_safeprobe(pr.get());
  if (rc == 1) return;  // nothing found
  if (rc == -1) {
    out.push_back({Hazard::probe_failed,
                   fmt::format("{} could not be read to look for data signatures: {}", subject, std::strerror(errno))});
    return;
  }
  if (rc == 0) {
    if (const std::string pt = blkid_value(pr.get(), "PTTYPE"); !pt.empty()) {
      std::string count;
      if (blkid_partlist ls = blkid_probe_get_partitions(pr.get())) {
        const int n = blkid_partlist_numof_partitions(ls);
        if (n >= 0) count = fmt::format(" ({} partition{})", n, n == 1 ? "" : "s");
      }
      out.push_back({Hazard::partition_table, fmt::format("{} holds a {} partition table{}", subject, pt, count)});
    }
    if (const std::string type = blkid_value(pr.get(), "TYPE"); !type.empty())
      out.push_back({Hazard::signature,
                     fmt::format("{} carries {}", subject,
                                 describe_signature(type, blkid_value(pr.get(), "USAGE"),
                                                    blkid_value(pr.get(), "LABEL"), blkid_value(pr.get(), "UUID")))});
    return;
  }
  // rc == -2: several signatures that contradict each other; list them one by one, as wipefs does.
  blkid_reset_probe(pr.get());
  std::vector<std::string> found;
  while (blkid_do_probe(pr.get()) == 0) {
    if (const std::string pt = blkid_value(pr.get(), "PTTYPE"); !pt.empty())
      found.push_back(pt + " partition table");
    else if (const std::string t = blkid_value(pr.get(), "TYPE"); !t.empty())
      found.push_back(t);
  }
  std::string list;
  for (const auto& f : found) list += (list.empty() ? "" : ", ") + f;
  out.push_back({Hazard::signature, fmt::format("{} carries several conflicting signatures ({})", subject,
                                                list.empty() ? "ambivalent probe" : list)});
}

std::string shell_quote(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || std::strchr("-_./:+@%=,", c) != nullptr;
  });
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

bool is_block_device(const fs::path& path) noexcept {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode);
}

std::string_view to_string(Hazard hazard) noexcept {
  switch (hazard) {
    case Hazard::mounted: return "mounted";
    case Hazard::swap: return "swap";
    case Hazard::system: return "system";
    case Hazard::holders: return "holders";
    case Hazard::read_only: return "read_only";
    case Hazard::partition_table: return "partition_table";
    case Hazard::signature: return "signature";
    case Hazard::probe_failed: return "probe_failed";
    case Hazard::shared_storage: return "shared_storage";
    case Hazard::loop_backing: return "loop_backing";
  }
  return "?";
}

bool consent_lifts(Hazard hazard) noexcept {
  return hazard == Hazard::partition_table || hazard == Hazard::signature || hazard == Hazard::probe_failed;
}

bool SafetyReport::has(Hazard h) const noexcept {
  return std::any_of(findings.begin(), findings.end(), [h](const HazardFinding& f) { return f.hazard == h; });
}

BlockDevice probe_block_device(const fs::path& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) throw_errno(fmt::format("target '{}' cannot be examined", path.string()), errno);
  if (!S_ISBLK(st.st_mode)) throw EnvironmentError(fmt::format("'{}' is not a block device", path.string()));
  BlockDevice d;
  d.path = path;
  d.major = major(st.st_rdev);
  d.minor = minor(st.st_rdev);
  const auto self = sys_block(st.st_rdev);
  if (!self)
    throw EnvironmentError(
        fmt::format("block device {} ({}:{}) is not in /sys/dev/block", path.string(), d.major, d.minor));
  d.name = self->name;
  d.is_partition = self->is_partition;
  d.disk = self->disk;
  DeviceSerial serial = device_serial(*self);
  d.identity = std::move(serial.value);
  d.identity_source = std::move(serial.source);

  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) throw_errno(fmt::format("cannot open block device {}", path.string()), errno);
  std::uint64_t bytes = 0;
  if (::ioctl(fd.get(), BLKGETSIZE64, &bytes) == 0) d.capacity_bytes = bytes;
  int lbs = 0, ro = 0;
  unsigned pbs = 0;
  if (::ioctl(fd.get(), BLKSSZGET, &lbs) == 0 && lbs >= 512) d.logical_block_bytes = static_cast<std::uint32_t>(lbs);
  if (::ioctl(fd.get(), BLKPBSZGET, &pbs) == 0 && pbs >= 512) d.physical_block_bytes = pbs;
  if (const auto text = read_sysfs_text(self->dir / "ro"))
    d.read_only = *text == "1";
  else if (::ioctl(fd.get(), BLKROGET, &ro) == 0)
    d.read_only = ro != 0;
  return d;
}

SafetyReport inspect_device(const fs::path& path) {
  SafetyReport report;
  report.device = probe_block_device(path);
  const BlockDevice& dev = report.device;
  auto& out = report.findings;
  const auto self = sys_block(makedev(dev.major, dev.minor));
  if (!self) return report;  // probe_block_device checked it; gone since
  const std::vector<MountEntry> mounts = read_mountinfo();
  const std::vector<SwapArea> swaps = read_swaps();
  const StorageSet set = storage_set(*self, mounts);
  const std::vector<Covered> covered = device_and_partitions(set);
  const auto covered_name = [&](dev_t d) -> const std::string* {
    for (const auto& c : covered)
      if (c.dev == d) return &c.name;
    return nullptr;
  };
  const auto subject = [&](const std::string& name) {
    return name == dev.name ? std::string("it") : fmt::format("its partition {}", name);
  };

  // Mounted: by device number, or by the mount source (btrfs and others use anonymous numbers).
  for (const MountEntry& m : mounts) {
    const std::string* hit = covered_name(m.dev);
    if (hit == nullptr)
      if (const auto rdev = block_device_number(m.source)) hit = covered_name(*rdev);
    if (hit != nullptr)
      out.push_back({Hazard::mounted, fmt::format("{} is mounted on {} ({})", subject(*hit), m.mount_point, m.fstype)});
  }
  // Swap directly on the device or a partition.
  std::vector<dev_t> swap_devs;
  for (const SwapArea& s : swaps)
    if (const auto rdev = block_device_number(s.path)) {
      swap_devs.push_back(*rdev);
      if (const std::string* hit = covered_name(*rdev))
        out.push_back(
            {Hazard::swap, fmt::format("{} is an active swap device ({} in /proc/swaps)", subject(*hit), s.path)});
    }
  // Backs the running system: the root filesystem's device, or swap, through any stack of
  // dm/md devices above this one.
  std::vector<std::pair<dev_t, std::string>> system_roots;
  struct stat root{};
  if (::stat("/", &root) == 0 && major(root.st_dev) != 0)
    system_roots.emplace_back(root.st_dev, "the root filesystem /");
  for (const MountEntry& m : mounts)
    if (m.mount_point == "/")
      if (const auto rdev = block_device_number(m.source)) system_roots.emplace_back(*rdev, "the root filesystem /");
  for (dev_t s : swap_devs)
    if (covered_name(s) == nullptr) system_roots.emplace_back(s, "active swap");
  std::set<std::string> reported;
  for (const auto& [root_dev, what] : system_roots) {
    const auto top = sys_block(root_dev);
    if (!top) continue;
    std::set<std::string> below;
    add_with_slaves(top->dir, below);
    for (const auto& c : covered) {
      const bool via_disk = dev.is_partition && below.count(dev.disk) > 0;
      if ((below.count(c.name) > 0 || via_disk) && reported.insert(what).second)
        out.push_back({Hazard::system, fmt::format("{} backs the running system: {} is on {}{}", subject(c.name), what,
                                                   top->name, top->name == c.name ? "" : " (stacked on it)")});
    }
  }
  // Claimed by dm (LVM), md or another stacking driver.
  for (const auto& c : covered) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(c.dir / "holders", ec)) {
      const fs::path holder = fs::canonical(e.path(), ec);
      out.push_back({Hazard::holders,
                     fmt::format("{} is in use by {}", subject(c.name), describe_holder(ec ? e.path() : holder))});
    }
  }
  stack_findings(dev, set, mounts, swaps, out);
  report.reach = reach_of(dev, set);
  // Each block device caches what it read: a loop device over another one, or a second loop
  // device over the same file, can still hold blocks written since through another device of the
  // stack (a filesystem made on the device below). The probe below would then see the old, blank
  // blocks and call the target blank. BLKFLSBUF (blockdev --flushbufs: sync, then drop the clean
  // cached blocks) on every device the write reaches, the lowest first, makes it read what the
  // storage holds. Without the capability the caches stay, and the signatures of every device of
  // the stack are probed as well (below).
  for (auto it = report.reach.rbegin(); it != report.reach.rend(); ++it) {
    UniqueFd fd(::open(it->node.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (fd) ::ioctl(fd.get(), BLKFLSBUF, 0);
  }
  if (dev.read_only)
    out.push_back({Hazard::read_only, fmt::format("it is read-only (/sys/class/block/{}/ro = 1)", dev.name)});

  probe_signatures(path, "it", out);
  // The same blocks seen through the other devices of the stack (a stale cache of the target's
  // own, where BLKFLSBUF was refused): a signature there is on the target's blocks too.
  for (std::size_t k = 1; k < report.reach.size(); ++k) {
    const StackDevice& d = report.reach[k];
    if (block_device_number(d.node.string()) != d.dev) continue;
    std::vector<HazardFinding> seen;
    probe_signatures(d.node, fmt::format("it (seen through {})", d.node.string()), seen);
    for (HazardFinding& f : seen)
      if (f.hazard != Hazard::probe_failed &&
          std::none_of(out.begin(), out.end(), [&](const HazardFinding& o) { return o.hazard == f.hazard; }))
        out.push_back(std::move(f));
  }
  if (!dev.is_partition)
    for (std::size_t i = 1; i < covered.size(); ++i) {
      const fs::path node = fs::path("/dev") / covered[i].name;
      if (block_device_number(node.string()) == covered[i].dev) probe_signatures(node, subject(covered[i].name), out);
    }
  return report;
}

bool authorize_device(const SafetyReport& report, std::span<const Consent> consent, bool writes) {
  const BlockDevice& dev = report.device;
  const std::string what = fmt::format("{} ({}, {})", dev.path.string(), dev.name, format_size(dev.capacity_bytes));
  std::string mismatches;
  for (const Consent& c : consent)
    if (c.identity != dev.identity) mismatches += fmt::format("\n  - {} names '{}'", c.origin, c.identity);
  if (!mismatches.empty())
    throw EnvironmentError(
        fmt::format("the device named for destruction is not the target:{}\nbut {} is '{}' (from {}).\n"
                    "Check the target; drivelab will not touch a device the protocol or command line did not name.",
                    mismatches, what, dev.identity, dev.identity_source));
  if (!writes) return false;

  bool blocking = false, liftable = false;
  for (const HazardFinding& f : report.findings) (consent_lifts(f.hazard) ? liftable : blocking) = true;
  if (!blocking && (!liftable || !consent.empty())) return liftable;

  std::string msg = fmt::format("refusing to write to {}:", what);
  for (const HazardFinding& f : report.findings)
    msg +=
        fmt::format("\n  - {}{}", f.detail, consent_lifts(f.hazard) ? "" : " [naming the device does not lift this]");
  if (blocking)
    msg +=
        "\nIt is in use by the running system: unmount it, swapoff it or deactivate its holders "
        "(vgchange -an, mdadm --stop) first; drivelab never writes to a device in use.";
  if (report.has(Hazard::shared_storage) || report.has(Hazard::loop_backing))
    msg +=
        "\nA device that shares its storage (named above: the same backing file, a device stacked on or under "
        "it, its whole disk) counts as the device itself: unmount, swapoff, deactivate or detach (losetup -d) "
        "that one.";
  if (liftable) {
    const std::string id = shell_quote(dev.identity);
    msg += fmt::format(
        "\n{}Everything on it would be destroyed. To allow that, name the device:\n"
        "  --destroy-data-on {}   (or `destroy_data_on: {}` in the protocol)\n"
        "  (identity from {})",
        blocking ? "Then: " : "", id, id, dev.identity_source);
  }
  throw EnvironmentError(msg);
}

// ---- StackClaim ----------------------------------------------------------------------------

struct StackClaim::Held {
  dev_t dev = 0;
  UniqueFd fd;
};

StackClaim::StackClaim(StackClaim&&) noexcept = default;
StackClaim& StackClaim::operator=(StackClaim&&) noexcept = default;
StackClaim::~StackClaim() = default;

std::vector<dev_t> StackClaim::held() const {
  std::vector<dev_t> out;
  for (const Held& h : held_) out.push_back(h.dev);
  return out;
}

StackClaim StackClaim::hold(const SafetyReport& report) {
  StackClaim claim;
  claim.extend(report);
  return claim;
}

void StackClaim::extend(const SafetyReport& report) {
  for (const StackDevice& d : report.reach) {
    if (std::any_of(held_.begin(), held_.end(), [&](const Held& h) { return h.dev == d.dev; })) continue;
    const std::string via =
        d.path == "the target" ? std::string() : fmt::format(" ({}: writing the target writes it)", d.path);
    // One descriptor for both: flock against another drivelab run, O_EXCL against the kernel's
    // exclusive users. The node is checked to be the device the inspection saw.
    UniqueFd fd(::open(d.node.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC));
    if (!fd) {
      const int err = errno;
      if (err == EBUSY) {
        // Is it another drivelab run? Its flock says so (a plain open sees it), on this device or,
        // for a partition, on its whole disk (whose exclusive claim excludes the partition's).
        std::vector<fs::path> nodes{d.node};
        if (const auto b = sys_block(d.dev); b && b->is_partition) nodes.push_back(fs::path("/dev") / b->disk);
        for (const fs::path& node : nodes) {
          UniqueFd probe(::open(node.c_str(), O_RDONLY | O_CLOEXEC));
          if (probe && ::flock(probe.get(), LOCK_EX | LOCK_NB) != 0)
            throw EnvironmentError(fmt::format(
                "block device {}{} is in use by another drivelab run{}: two runs on the same blocks through "
                "different devices would destroy each other's data or measure each other",
                d.node.string(), via, node == d.node ? "" : fmt::format(" (on its whole disk {})", node.string())));
        }
        throw EnvironmentError(fmt::format(
            "block device {}{} is in use: the kernel refused an exclusive open (it is mounted, active swap, claimed "
            "by device-mapper/md, or opened exclusively by another program); drivelab never writes to a device in use",
            d.node.string(), via));
      }
      throw_errno(fmt::format("cannot hold block device {}{} for the run", d.node.string(), via), err);
    }
    struct stat st{};
    if (::fstat(fd.get(), &st) != 0 || !S_ISBLK(st.st_mode) || st.st_rdev != d.dev)
      throw EnvironmentError(fmt::format("{}{} is not the block device {}:{} that sysfs shows; not writing",
                                         d.node.string(), via, major(d.dev), minor(d.dev)));
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0)
      throw EnvironmentError(fmt::format(
          "block device {}{} is in use by another drivelab run: two runs on the same blocks through different "
          "devices would destroy each other's data or measure each other",
          d.node.string(), via));
    held_.push_back({d.dev, std::move(fd)});
  }
}

}  // namespace drivelab::io
