#include "drivelab/core/sysfs.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cctype>
#include <charconv>
#include <deque>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

namespace drivelab {
namespace fs = std::filesystem;

namespace {

std::string_view trimmed(std::string_view s) {
  const auto blank = [](char c) { return c == '\0' || std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

std::optional<std::string> non_empty(std::string_view s) {
  s = trimmed(s);
  if (s.empty()) return std::nullopt;
  return std::string(s);
}

std::optional<std::string> read_whole(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

/// Fields separated by single spaces, as the kernel writes /proc/self/mountinfo.
std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> f;
  for (;;) {
    const auto sp = line.find(' ');
    f.push_back(line.substr(0, sp));
    if (sp == std::string_view::npos) return f;
    line.remove_prefix(sp + 1);
  }
}

bool is_under(const std::string& path, const std::string& mount_point) {
  if (mount_point == "/") return true;
  return path.compare(0, mount_point.size(), mount_point) == 0 &&
         (path.size() == mount_point.size() || path[mount_point.size()] == '/');
}

/// The device of sysfs directory `dir` with number `dev`, and its whole disk if it is a partition.
SysBlock block_in(const fs::path& dir, dev_t dev) {
  SysBlock b;
  std::error_code ec;
  b.name = b.disk = dir.filename().string();
  b.dir = b.disk_dir = dir;
  b.dev = b.disk_dev = dev;
  b.is_partition = fs::exists(dir / "partition", ec);
  if (b.is_partition) {
    b.disk_dir = dir.parent_path();
    b.disk = b.disk_dir.filename().string();
    const auto text = read_sysfs_text(b.disk_dir / "dev");
    b.disk_dev = text ? parse_dev_numbers(*text).value_or(dev) : dev;
  }
  return b;
}

}  // namespace

// ---- attributes -----------------------------------------------------------------------------

std::optional<std::string> read_sysfs_text(const fs::path& file) {
  const auto text = read_whole(file);
  return text ? non_empty(*text) : std::nullopt;
}

std::optional<std::uint64_t> read_sysfs_u64(const fs::path& file) {
  const auto t = read_sysfs_text(file);
  if (!t) return std::nullopt;
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
  if (ec != std::errc() || ptr != t->data() + t->size()) return std::nullopt;
  return v;
}

std::optional<dev_t> parse_dev_numbers(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  unsigned maj = 0, min = 0;
  const char* end = text.data() + text.size();
  // NOLINTNEXTLINE(bugprone-suspicious-stringview-data-usage): from_chars reads [data, data + colon)
  const auto a = std::from_chars(text.data(), text.data() + colon, maj);
  const auto b = std::from_chars(text.data() + colon + 1, end, min);
  if (a.ec != std::errc() || a.ptr != text.data() + colon || colon == 0 || b.ec != std::errc() || b.ptr != end)
    return std::nullopt;
  return makedev(maj, min);
}

// ---- mounts and swap ------------------------------------------------------------------------

std::string unescape_octal(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() &&
        s.substr(i + 1, 3).find_first_not_of("01234567") == std::string_view::npos) {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::optional<MountEntry> parse_mountinfo_line(std::string_view line) {
  const std::vector<std::string_view> f = split_spaces(line);
  std::size_t dash = 6;  // optional fields (zero or more) start at 7 and end at "-"
  while (dash < f.size() && f[dash] != "-") ++dash;
  if (dash + 2 >= f.size()) return std::nullopt;
  const auto dev = parse_dev_numbers(f[2]);
  if (!dev) return std::nullopt;
  MountEntry m;
  m.dev = *dev;
  m.root = unescape_octal(f[3]);
  m.mount_point = unescape_octal(f[4]);
  m.options = std::string(f[5]);
  m.fstype = std::string(f[dash + 1]);
  m.source = unescape_octal(f[dash + 2]);
  if (dash + 3 < f.size()) m.super_options = std::string(f[dash + 3]);
  return m;
}

std::vector<MountEntry> read_mountinfo(const fs::path& file) {
  std::vector<MountEntry> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (auto m = parse_mountinfo_line(line)) out.push_back(std::move(*m));
  return out;
}

std::optional<MountEntry> mount_containing(const std::vector<MountEntry>& mounts, const std::string& path,
                                           std::optional<dev_t> dev) {
  const MountEntry* best = nullptr;
  bool best_dev_match = false;
  for (const MountEntry& m : mounts) {
    if (!is_under(path, m.mount_point)) continue;
    const bool dev_match = dev && m.dev == *dev;
    // ">=": a later mount on the same point hides the earlier one.
    const bool better = best == nullptr || (dev_match && !best_dev_match) ||
                        (dev_match == best_dev_match && m.mount_point.size() >= best->mount_point.size());
    if (better) {
      best_dev_match = dev_match;
      best = &m;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

std::vector<SwapArea> read_swaps(const fs::path& file) {
  std::vector<SwapArea> out;
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);  // "Filename Type Size Used Priority"
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    SwapArea a;
    if (ss >> a.path) {
      ss >> a.type;
      a.path = unescape_octal(a.path);
      out.push_back(std::move(a));
    }
  }
  return out;
}

// ---- block devices --------------------------------------------------------------------------

std::optional<SysBlock> sys_block(dev_t dev, const fs::path& sys_root) {
  std::error_code ec;
  const fs::path dir = fs::canonical(sys_root / fmt::format("dev/block/{}:{}", major(dev), minor(dev)), ec);
  if (ec) return std::nullopt;
  return block_in(dir, dev);
}

std::optional<SysBlock> sys_block_at(const fs::path& dir) {
  const auto text = read_sysfs_text(dir / "dev");
  const auto dev = text ? parse_dev_numbers(*text) : std::nullopt;
  if (!dev) return std::nullopt;
  return block_in(dir, *dev);
}

std::optional<dev_t> block_device_number(const std::string& path) {
  struct stat st{};
  if (path.rfind('/', 0) != 0 || ::stat(path.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) return std::nullopt;
  return st.st_rdev;
}

std::optional<std::string> scsi_unit_serial(const fs::path& vpd_pg80) {
  const auto page = read_whole(vpd_pg80);
  if (!page || page->size() < 4 || static_cast<unsigned char>((*page)[1]) != 0x80) return std::nullopt;
  const std::size_t len =
      static_cast<std::size_t>(static_cast<unsigned char>((*page)[2])) << 8 | static_cast<unsigned char>((*page)[3]);
  return non_empty(std::string_view(*page).substr(4, len));
}

std::optional<std::string> udev_property(dev_t dev, std::string_view key, const fs::path& udev_data_dir) {
  std::ifstream in(udev_data_dir / fmt::format("b{}:{}", major(dev), minor(dev)));
  const std::string prefix = fmt::format("E:{}=", key);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0)
      if (auto v = non_empty(std::string_view(line).substr(prefix.size()))) return v;
  return std::nullopt;
}

// ---- the device stack -----------------------------------------------------------------------

std::optional<LoopBacking> loop_backing(const SysBlock& device, const std::vector<MountEntry>& mounts,
                                        const fs::path& sys_root) {
  if (device.is_partition) return std::nullopt;
  auto file = read_sysfs_text(device.dir / "loop" / "backing_file");
  if (!file) return std::nullopt;
  LoopBacking b;
  b.file = std::move(*file);
  if (const auto dio = read_sysfs_text(device.dir / "loop" / "dio")) {
    if (*dio == "1") b.direct_io = true;
    if (*dio == "0") b.direct_io = false;
  }
  struct stat st{};
  const bool stated = ::stat(b.file.c_str(), &st) == 0;
  if (stated && S_ISBLK(st.st_mode)) {
    // A loop device over a block device: devtmpfs's st_dev/st_ino of the node say nothing about
    // the storage, its st_rdev does.
    b.backing_device = st.st_rdev;
    b.file_dev = st.st_dev;
    b.file_ino = st.st_ino;
    return b;
  }
  if (!stated && b.file.rfind("/dev/", 0) == 0) {
    // The node is not visible here (another mount namespace): its kernel name still is.
    const std::string name = fs::path(b.file).filename().string();
    if (const auto text = read_sysfs_text(sys_root / "class" / "block" / name / "dev"))
      if (const auto dev = parse_dev_numbers(*text)) b.backing_device = dev;
    if (b.backing_device) return b;
  }
  if (stated) {
    b.file_dev = st.st_dev;
    b.file_ino = st.st_ino;
    if (major(st.st_dev) != 0) {
      b.fs_device = st.st_dev;
    } else {  // an anonymous number (btrfs, overlayfs): the block device its mount names
      for (const MountEntry& m : mounts)
        if (m.dev == st.st_dev)
          if (const auto rdev = block_device_number(m.source)) b.fs_device = rdev;
    }
  }
  return b;
}

bool same_backing_file(const LoopBacking& a, const LoopBacking& b) noexcept {
  if (a.backing_device || b.backing_device) return a.backing_device == b.backing_device;
  if (a.file_dev && a.file_ino && b.file_dev && b.file_ino)
    return *a.file_dev == *b.file_dev && *a.file_ino == *b.file_ino;
  return a.file == b.file;
}

std::optional<std::size_t> StorageSet::find(dev_t dev) const noexcept {
  for (std::size_t i = 0; i < members.size(); ++i)
    if (members[i].block.dev == dev) return i;
  return std::nullopt;
}

std::vector<std::size_t> StorageSet::path_to(std::size_t i) const {
  std::vector<std::size_t> path{i};
  while (i != 0 && i < members.size() && path.size() <= members.size()) path.push_back(i = members[i].from);
  return {path.rbegin(), path.rend()};
}

namespace {

/// Which links are followed from a member, by the link it was reached by (docs/targets.md):
/// upward and sideways from the device and what is stacked on it, downward from what it is on.
/// Loop devices over block devices are followed like holders and slaves: upward (`loops_over`,
/// the loop devices over a member) wherever holders are, downward (`backing_device`, the device a
/// loop member is over) from the device itself and from anything below it or beside it. Below a
/// loop device the holders of its backing device are followed too: unlike an LVM volume, which
/// maps some extents of its physical volume, a loop device covers the whole device it is over.
struct Follow {
  bool holders, partitions, whole_disk, slaves, same_backing, backing_on;
  bool loops_over, backing_device;
};
Follow follow(StorageLink link) noexcept {
  switch (link) {
    case StorageLink::self: return {true, true, true, true, true, true, true, true};
    case StorageLink::partition: return {true, false, false, false, false, true, true, false};
    case StorageLink::holder: return {true, true, false, false, false, true, true, false};
    case StorageLink::backing_file_on:
    case StorageLink::same_backing_file: return {true, true, false, false, true, true, true, true};
    case StorageLink::loop_over: return {true, true, false, false, true, true, true, false};
    case StorageLink::slave: return {false, true, true, true, true, false, false, true};
    case StorageLink::backing_device: return {true, true, true, true, true, false, true, true};
    case StorageLink::whole_disk: return {true, false, false, true, true, true, true, true};
  }
  return {};
}

/// The devices that <dir>/<sub>/ links to (holders/, slaves/).
std::vector<SysBlock> linked_devices(const fs::path& dir, const char* sub) {
  std::vector<SysBlock> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir / sub, ec)) {
    std::error_code cec;
    const fs::path target = fs::canonical(e.path(), cec);
    if (!cec)
      if (auto b = sys_block_at(target)) out.push_back(std::move(*b));
  }
  return out;
}

/// The partitions of the whole disk in `dir`.
std::vector<SysBlock> partitions_of(const fs::path& dir) {
  std::vector<SysBlock> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::error_code pec;
    if (fs::exists(e.path() / "partition", pec))
      if (auto b = sys_block_at(e.path())) out.push_back(std::move(*b));
  }
  return out;
}

struct AttachedLoop {
  SysBlock block;
  LoopBacking backing;
};

/// Every attached loop device (<sys_root>/block/loop*).
std::vector<AttachedLoop> attached_loops(const fs::path& sys_root, const std::vector<MountEntry>& mounts) {
  std::vector<AttachedLoop> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(sys_root / "block", ec)) {
    if (e.path().filename().string().rfind("loop", 0) != 0) continue;
    std::error_code cec;
    const fs::path dir = fs::canonical(e.path(), cec);
    if (cec) continue;
    if (auto b = sys_block_at(dir))
      if (auto backing = loop_backing(*b, mounts, sys_root)) out.push_back({std::move(*b), std::move(*backing)});
  }
  return out;
}

}  // namespace

StorageSet storage_set(const SysBlock& device, const std::vector<MountEntry>& mounts, const fs::path& sys_root) {
  constexpr std::size_t kMaxMembers = 1024;  // a bound against a sysfs that links in circles
  StorageSet set;
  const std::vector<AttachedLoop> loops = attached_loops(sys_root, mounts);
  const auto backing_of = [&](const SysBlock& b) -> std::optional<LoopBacking> {
    for (const AttachedLoop& l : loops)
      if (l.block.dev == b.dev) return l.backing;
    return loop_backing(b, mounts, sys_root);
  };
  std::deque<std::size_t> queue;
  const auto add = [&](SysBlock b, StorageLink link, std::size_t from) {
    if (set.find(b.dev) || set.members.size() >= kMaxMembers) return;
    auto backing = backing_of(b);
    set.members.push_back({std::move(b), link, from, std::move(backing)});
    queue.push_back(set.members.size() - 1);
  };
  add(device, StorageLink::self, 0);
  while (!queue.empty()) {
    const std::size_t i = queue.front();
    queue.pop_front();
    const SysBlock block = set.members[i].block;  // copies: `add` may reallocate members
    const std::optional<LoopBacking> backing = set.members[i].backing;
    const Follow f = follow(set.members[i].link);
    if (f.holders)
      for (SysBlock& h : linked_devices(block.dir, "holders")) add(std::move(h), StorageLink::holder, i);
    if (f.slaves)
      for (SysBlock& s : linked_devices(block.dir, "slaves")) add(std::move(s), StorageLink::slave, i);
    if (f.partitions && !block.is_partition)
      for (SysBlock& p : partitions_of(block.dir)) add(std::move(p), StorageLink::partition, i);
    if (f.whole_disk && block.is_partition)
      if (auto disk = sys_block_at(block.disk_dir)) add(std::move(*disk), StorageLink::whole_disk, i);
    if (f.backing_device && backing && backing->backing_device)
      if (auto below = sys_block(*backing->backing_device, sys_root))
        add(std::move(*below), StorageLink::backing_device, i);
    for (const AttachedLoop& l : loops) {
      if (f.loops_over && l.backing.backing_device == block.dev) add(l.block, StorageLink::loop_over, i);
      if (f.same_backing && backing && l.block.dev != block.dev && same_backing_file(l.backing, *backing))
        add(l.block, StorageLink::same_backing_file, i);
      if (f.backing_on && l.backing.fs_device == block.dev) {
        const auto known = set.find(l.block.dev);
        if (!known)
          add(l.block, StorageLink::backing_file_on, i);
        else if (set.members[*known].link != StorageLink::backing_file_on || set.members[*known].from != i)
          set.loops_on_themselves.emplace_back(*known, i);
      }
    }
  }
  return set;
}

DeviceSerial device_serial(const SysBlock& device, const fs::path& udev_data_dir) {
  const fs::path& d = device.disk_dir;
  const std::string base = "/sys/block/" + device.disk;
  if (device.disk.rfind("loop", 0) == 0)
    if (auto v = read_sysfs_text(d / "loop" / "backing_file"))
      return {*v, base + "/loop/backing_file; a loop device has no serial, so its backing file names it"};
  for (const char* rel : {"serial", "device/serial"})
    if (auto v = read_sysfs_text(d / rel)) return {*v, fmt::format("{}/{}", base, rel)};
  if (auto v = scsi_unit_serial(d / "device" / "vpd_pg80")) return {*v, base + "/device/vpd_pg80"};
  for (const char* rel : {"device/wwid", "wwid"})
    if (auto v = read_sysfs_text(d / rel)) return {*v, fmt::format("{}/{}", base, rel)};
  if (auto v = udev_property(device.disk_dev, "ID_SERIAL", udev_data_dir))
    return {*v, fmt::format("ID_SERIAL in {}/b{}:{}", udev_data_dir.string(), major(device.disk_dev),
                            minor(device.disk_dev))};
  if (auto v = read_sysfs_text(d / "dm" / "uuid")) return {*v, base + "/dm/uuid"};
  return {device.disk, "the kernel name (this device reports no serial number)"};
}

}  // namespace drivelab
