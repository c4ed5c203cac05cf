// Tool, host and target identity, read from /proc and /sys. A value that cannot be read is null:
// a reviewer must be able to trust every non-null field of the record.
#include "drivelab/results/identity.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/sysfs.hpp"
#include "drivelab/results/version.hpp"

namespace drivelab::results {
namespace fs = std::filesystem;

namespace detail {
extern const char* const kGitDescribe;     // generated at every build: results/src/git_describe.cpp.in
extern const char* const kPackageVersion;  // from it by cmake/git_describe.cmake
}  // namespace detail

namespace {

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(first, last - first + 1));
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

template <class T>
Json or_null(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

/// The value of "key : value" lines (/proc/cpuinfo, /proc/meminfo) for the first matching key.
std::optional<std::string> field_of(const fs::path& file, std::string_view key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos || trim(std::string_view(line).substr(0, colon)) != key) continue;
    std::string v = trim(std::string_view(line).substr(colon + 1));
    if (v.empty()) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

}  // namespace

// ---- tool ------------------------------------------------------------------------------------

Json probe_tool() {
#if defined(__clang__)
  const std::string compiler = __VERSION__;  // "Debian Clang 14.0.6": names itself
#elif defined(__GNUC__)
  const std::string compiler = std::string("gcc ") + __VERSION__;  // __VERSION__ is "12.2.0"
#else
  const std::string compiler = __VERSION__;
#endif
  return Json{{"name", "drivelab"},
              {"version", DRIVELAB_VERSION},
              {"git_describe", detail::kGitDescribe},
              {"build_type", DRIVELAB_BUILD_TYPE},
              {"compiler", compiler},
              {"sanitizers", DRIVELAB_SANITIZE != 0}};
}

std::string package_version() { return detail::kPackageVersion; }

// ---- host ------------------------------------------------------------------------------------

namespace {

std::optional<std::string> os_pretty_name() {
  for (const char* file : {"/etc/os-release", "/usr/lib/os-release"}) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
      std::string v = trim(std::string_view(line).substr(12));
      if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
        v = v.substr(1, v.size() - 2);
      }
      if (!v.empty()) return v;
    }
  }
  return std::nullopt;
}

/// "vm", "bare-metal" or null. On x86 the CPUID hypervisor bit (the cpuinfo "hypervisor" flag)
/// is authoritative both ways; elsewhere only a DMI vendor that is a known hypervisor says "vm".
Json virtualization() {
  if (const auto flags = field_of("/proc/cpuinfo", "flags")) {
    std::istringstream ss(*flags);
    std::string flag;
    while (ss >> flag) {
      if (flag == "hypervisor") return "vm";
    }
    return "bare-metal";
  }
  const std::string dmi = read_sysfs_text("/sys/class/dmi/id/sys_vendor").value_or("") + " " +
                          read_sysfs_text("/sys/class/dmi/id/product_name").value_or("");
  for (const char* vm :
       {"QEMU", "KVM", "VMware", "VirtualBox", "Xen", "Bochs", "BHYVE", "Parallels", "Virtual Machine"}) {
    if (dmi.find(vm) != std::string::npos) return "vm";
  }
  return nullptr;
}

}  // namespace

Json probe_host() {
  utsname u{};
  const bool have_uname = ::uname(&u) == 0;
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  std::optional<std::uint64_t> memory_bytes;
  if (const auto mem = field_of("/proc/meminfo", "MemTotal")) {  // "16384000 kB"
    const auto space = mem->find(' ');
    if (const auto kib = parse_u64(std::string_view(*mem).substr(0, space))) memory_bytes = *kib * 1024;
  }
  return Json{{"hostname", have_uname ? Json(u.nodename) : Json(nullptr)},
              {"os", or_null(os_pretty_name())},
              {"kernel", have_uname ? Json(u.release) : Json(nullptr)},
              {"arch", have_uname ? Json(u.machine) : Json(nullptr)},
              {"cpu_model", or_null(field_of("/proc/cpuinfo", "model name"))},
              {"cpu_cores", cpus > 0 ? Json(cpus) : Json(nullptr)},
              {"memory_bytes", or_null(memory_bytes)},
              {"virtualization", virtualization()}};
}

// ---- target ----------------------------------------------------------------------------------

namespace {

template <class... Paths>
std::optional<std::string> first_text(const Paths&... paths) {
  std::optional<std::string> v;
  ((v = v ? v : read_sysfs_text(paths)), ...);
  return v;
}

/// "none [mq-deadline] kyber" -> "mq-deadline"; a single word ("none") is the scheduler itself.
std::optional<std::string> selected_scheduler(const fs::path& p) {
  const auto t = read_sysfs_text(p);
  if (!t) return std::nullopt;
  const auto open = t->find('['), close = t->find(']');
  if (open != std::string::npos && close != std::string::npos && close > open) {
    return t->substr(open + 1, close - open - 1);
  }
  if (t->find(' ') == std::string::npos) return t;
  return std::nullopt;
}

/// Fills the block-device fields from /sys/dev/block/MAJ:MIN (left null if it does not exist).
void probe_block(dev_t dev, Json& t) {
  const auto block = sys_block(dev);
  if (!block) return;
  if (block->is_partition) t["partition"] = block->name;
  t["block_device"] = block->disk;
  const fs::path& disk = block->disk_dir;
  const fs::path device = disk / "device";
  t["model"] = or_null(read_sysfs_text(device / "model"));
  // The identity --destroy-data-on accepts for this disk (one chain: core/sysfs.hpp).
  t["serial"] = device_serial(*block).value;
  t["firmware"] = or_null(first_text(device / "firmware_rev", device / "rev"));
  t["vendor"] = or_null(read_sysfs_text(device / "vendor"));
  if (const auto rot = read_sysfs_text(disk / "queue" / "rotational")) {
    t["rotational"] = *rot == "1";
  }
  t["logical_block_bytes"] = or_null(read_sysfs_u64(disk / "queue" / "logical_block_size"));
  t["physical_block_bytes"] = or_null(read_sysfs_u64(disk / "queue" / "physical_block_size"));
  // <disk>/size counts 512-byte sectors whatever the logical block size (block/genhd.c).
  if (const auto sectors = read_sysfs_u64(disk / "size")) t["capacity_bytes"] = *sectors * 512;
  t["scheduler"] = or_null(selected_scheduler(disk / "queue" / "scheduler"));
}

}  // namespace

Json probe_target(const fs::path& target) {
  struct stat st{};
  if (::stat(target.c_str(), &st) != 0) {
    throw_errno("target '" + target.string() + "' cannot be examined", errno);
  }
  std::error_code ec;
  fs::path abs = fs::canonical(target, ec);
  if (ec) abs = fs::absolute(target).lexically_normal();
  const char* kind = S_ISDIR(st.st_mode)   ? "directory"
                     : S_ISBLK(st.st_mode) ? "block_device"
                     : S_ISREG(st.st_mode) ? "file"
                                           : "other";
  Json t{{"path", abs.string()},
         {"kind", kind},
         {"filesystem", nullptr},
         {"mount_point", nullptr},
         {"mount_source", nullptr},
         {"block_device", nullptr},
         {"partition", nullptr},
         {"model", nullptr},
         {"serial", nullptr},
         {"firmware", nullptr},
         {"vendor", nullptr},
         {"rotational", nullptr},
         {"logical_block_bytes", nullptr},
         {"physical_block_bytes", nullptr},
         {"capacity_bytes", nullptr},
         {"filesystem_size_bytes", nullptr},
         {"filesystem_free_bytes", nullptr},
         {"scheduler", nullptr}};

  if (S_ISBLK(st.st_mode)) {
    // A raw device: the filesystem fields stay null (the test owns the whole device).
    probe_block(st.st_rdev, t);
    return t;
  }
  if (const auto m = mount_containing(read_mountinfo(), abs.string(), st.st_dev)) {
    t["filesystem"] = m->fstype;
    t["mount_point"] = m->mount_point;
    t["mount_source"] = m->source;
  }
  struct statvfs vfs{};
  if (::statvfs(abs.c_str(), &vfs) == 0) {
    t["filesystem_size_bytes"] = static_cast<std::uint64_t>(vfs.f_blocks) * vfs.f_frsize;
    // f_bavail: what an unprivileged writer can still use (excludes the root reserve).
    t["filesystem_free_bytes"] = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  }
  if (major(st.st_dev) != 0) {
    probe_block(st.st_dev, t);
  } else if (t["mount_source"].is_string()) {
    // Anonymous device numbers (btrfs subvolumes): the mount source may still name the device.
    const std::string source = t["mount_source"].get<std::string>();
    struct stat src{};
    if (source.rfind("/dev/", 0) == 0 && ::stat(source.c_str(), &src) == 0 && S_ISBLK(src.st_mode)) {
      probe_block(src.st_rdev, t);
    }
  }
  return t;
}

}  // namespace drivelab::results
