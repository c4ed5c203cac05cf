#include "drivelab/render/pressure.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/core/process.hpp"
#include "drivelab/core/units.hpp"

namespace drivelab::render {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kPrefix = "drivelab-render.";

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool write_text(const fs::path& p, const std::string& text) noexcept {
  const int fd = ::open(p.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int err = errno;
  ::close(fd);
  errno = err;
  return n == static_cast<ssize_t>(text.size());
}

bool pid_alive(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

/// The pid in "drivelab-render.<pid>[.suffix]", or 0.
int pid_in_name(std::string_view name) {
  if (name.substr(0, kPrefix.size()) != kPrefix) return 0;
  name.remove_prefix(kPrefix.size());
  int pid = 0;
  for (char c : name) {
    if (c < '0' || c > '9') break;
    pid = pid * 10 + (c - '0');
    if (pid > 1 << 24) return 0;
  }
  return pid;
}

fs::path v2_root() {
  for (const MountEntry& m : read_mountinfo())
    if (m.fstype == "cgroup2") return m.mount_point;
  return {};
}
bool v2_has_memory(const fs::path& root) {
  if (root.empty()) return false;
  std::istringstream s(read_text(root / "cgroup.controllers"));
  std::string w;
  while (s >> w)
    if (w == "memory") return true;
  return false;
}
/// The v1 memory hierarchy's mount and this process's cgroup in it.
fs::path v1_own() {
  fs::path root;
  // The controllers of a v1 hierarchy are superblock options ("rw,memory").
  for (const MountEntry& m : read_mountinfo())
    if (m.fstype == "cgroup" &&
        (m.super_options.find(",memory") != std::string::npos || m.super_options.rfind("memory", 0) == 0))
      root = m.mount_point;
  if (root.empty()) return {};
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::istringstream ctl(line.substr(a + 1, b - a - 1));
    std::string c;
    while (std::getline(ctl, c, ','))
      if (c == "memory") return root / fs::path(line.substr(b + 1)).relative_path();
  }
  return root;
}

void kill_and_remove_cgroup(const fs::path& dir) noexcept {
  for (int round = 0; round < 100; ++round) {
    std::istringstream procs(read_text(dir / "cgroup.procs"));
    int pid = 0;
    bool any = false;
    while (procs >> pid) {
      ::kill(pid, SIGKILL);
      any = true;
    }
    if (!any) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (int round = 0; round < 50 && ::rmdir(dir.c_str()) != 0 && errno == EBUSY; ++round)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

bool swapoff_and_unlink(const fs::path& p, std::vector<std::string>& log) noexcept {
  bool ok = true;
  for (const SwapEntry& e : active_swaps())
    if (e.path == p.string()) {
      if (::swapoff(p.c_str()) != 0) {
        log.push_back(fmt::format("swapoff {} failed: {}", p.string(), std::strerror(errno)));
        ok = false;
      } else {
        log.push_back("swapoff " + p.string());
      }
    }
  std::error_code ec;
  if (ok && fs::remove(p, ec)) log.push_back("removed " + p.string());
  return ok;
}

}  // namespace

PagingCounters PagingCounters::sample(const fs::path& device_stat) noexcept {
  PagingCounters c;
  try {
    std::ifstream vm("/proc/vmstat");
    std::string k;
    std::uint64_t v = 0;
    while (vm >> k >> v) {
      if (k == "pswpin")
        c.pswpin_pages = v;
      else if (k == "pswpout")
        c.pswpout_pages = v;
      else if (k == "pgmajfault")
        c.pgmajfault = v;
    }
    rusage ru{};
    if (::getrusage(RUSAGE_SELF, &ru) == 0) c.process_major_faults = static_cast<std::uint64_t>(ru.ru_majflt);
    if (!device_stat.empty()) {
      // Documentation/block/stat.rst: field 3 = sectors read, field 7 = sectors written (512 B).
      std::istringstream s(read_text(device_stat));
      std::uint64_t f[8] = {};
      for (auto& x : f) s >> x;
      c.device_read_bytes = f[2] * 512;
      c.device_write_bytes = f[6] * 512;
    }
  } catch (...) {  // NOLINT(bugprone-empty-catch): an unreadable counter file: what was read stands
  }
  return c;
}

PagingCounters PagingCounters::operator-(const PagingCounters& e) const noexcept {
  const auto d = [](std::uint64_t a, std::uint64_t b) { return a >= b ? a - b : 0; };
  return {d(pswpin_pages, e.pswpin_pages),
          d(pswpout_pages, e.pswpout_pages),
          d(pgmajfault, e.pgmajfault),
          d(process_major_faults, e.process_major_faults),
          d(device_read_bytes, e.device_read_bytes),
          d(device_write_bytes, e.device_write_bytes)};
}

PagingCounters& PagingCounters::operator+=(const PagingCounters& o) noexcept {
  pswpin_pages += o.pswpin_pages;
  pswpout_pages += o.pswpout_pages;
  pgmajfault += o.pgmajfault;
  process_major_faults += o.process_major_faults;
  device_read_bytes += o.device_read_bytes;
  device_write_bytes += o.device_write_bytes;
  return *this;
}

fs::path device_stat_path(const fs::path& dir) {
  struct stat st{};
  if (::stat(dir.c_str(), &st) != 0 || major(st.st_dev) == 0) return {};
  fs::path p = fmt::format("/sys/dev/block/{}:{}/stat", major(st.st_dev), minor(st.st_dev));
  std::error_code ec;
  return fs::exists(p, ec) ? p : fs::path{};
}

std::vector<SwapEntry> active_swaps() { return read_swaps(); }

int memory_cgroup_version() {
  if (v2_has_memory(v2_root())) return 2;
  return v1_own().empty() ? 0 : 1;
}

fs::path cgroup_path_for(const std::string& name) {
  if (const fs::path r = v2_root(); v2_has_memory(r)) return r / name;
  const fs::path own = v1_own();
  return own.empty() ? fs::path{} : own / name;
}

void check_swap_mode(const fs::path& target_dir) {
  std::vector<std::string> why;
  if (::geteuid() != 0) why.push_back("mode swap needs root (swapon and a memory cgroup); use mode: mmap without root");
  for (const SwapEntry& e : active_swaps())
    why.push_back(
        fmt::format("another swap {} is active ({}): pages would go there, not to the target; "
                    "swapoff it first{}",
                    e.type, e.path, e.path.find("zram") != std::string::npos ? " (zram: compressed RAM)" : ""));
  if (const std::string z = read_text("/sys/module/zswap/parameters/enabled");
      !z.empty() && (z[0] == 'Y' || z[0] == '1'))
    why.push_back(
        "zswap is enabled (/sys/module/zswap/parameters/enabled = Y): swapped pages would be compressed "
        "in RAM instead of written to the target; echo N > /sys/module/zswap/parameters/enabled");
  struct statfs sf{};
  if (::statfs(target_dir.c_str(), &sf) != 0) {
    why.push_back(fmt::format("cannot statfs {}: {}", target_dir.string(), std::strerror(errno)));
  } else {
    const auto t = static_cast<unsigned long>(sf.f_type);
    // linux/magic.h: filesystems that cannot hold a plain swap file.
    const char* bad = t == 0x01021994ul   ? "tmpfs (memory, not a drive)"
                      : t == 0x9123683Eul ? "btrfs (a swap file needs a NOCOW file on a single device)"
                      : t == 0x794C7630ul ? "overlayfs"
                      : t == 0x6969ul     ? "NFS"
                      : t == 0x65735546ul ? "FUSE"
                      : t == 0x858458f6ul ? "ramfs"
                                          : nullptr;
    if (bad) why.push_back(fmt::format("{} is on {}: swapon cannot use a swap file there", target_dir.string(), bad));
  }
  if (memory_cgroup_version() == 0)
    why.push_back(
        "no memory cgroup: neither cgroup v2 with the memory controller nor a v1 memory hierarchy is mounted");
  if (!why.empty()) {
    std::string msg = "render: mode swap cannot run here:";
    for (const auto& w : why) msg += "\n  - " + w;
    throw EnvironmentError(msg);
  }
}

fs::path marker_path(const fs::path& target_dir, int pid) {
  return target_dir / fmt::format("{}{}.marker", kPrefix, pid);
}

std::vector<std::string> clean_stale(const fs::path& target_dir) {
  std::vector<std::string> log;
  try {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(target_dir, ec)) {
      const std::string name = e.path().filename().string();
      const int pid = pid_in_name(name);
      if (pid == 0 || pid_alive(pid)) continue;
      if (name.ends_with(".marker")) {
        std::istringstream s(read_text(e.path()));
        std::string key, value;
        while (s >> key && std::getline(s >> std::ws, value)) {
          if (key == "swap") swapoff_and_unlink(value, log);
          if (key == "cgroup" && fs::exists(value, ec)) {
            kill_and_remove_cgroup(value);
            log.push_back("removed cgroup " + value);
          }
        }
        fs::remove(e.path(), ec);
        log.push_back("removed marker " + e.path().string());
      } else if (name.ends_with(".swap")) {
        swapoff_and_unlink(e.path(), log);
      }
    }
    for (const SwapEntry& s : active_swaps()) {
      const fs::path p = s.path;
      if (const int pid = pid_in_name(p.filename().string()); pid != 0 && !pid_alive(pid)) swapoff_and_unlink(p, log);
    }
    if (const fs::path parent = cgroup_path_for("x").parent_path(); !parent.empty()) {
      for (const auto& e : fs::directory_iterator(parent, ec)) {
        const int pid = pid_in_name(e.path().filename().string());
        if (pid == 0 || pid_alive(pid) || !e.is_directory(ec)) continue;
        kill_and_remove_cgroup(e.path());
        log.push_back("removed cgroup " + e.path().string());
      }
    }
  } catch (const std::exception& e) {
    log.push_back(std::string("stale cleanup stopped: ") + e.what());
  }
  return log;
}

SwapFile::SwapFile(fs::path path, std::uint64_t size_bytes, const std::function<bool()>& stop)
    : path_(std::move(path)), size_bytes_(size_bytes / 4096 * 4096) {
  try {
    UniqueFd fd = open_no_follow(path_, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (!fd) throw_errno("render: create swap file " + path_.string(), errno);
    const std::vector<char> zeros(8 << 20, 0);
    for (std::uint64_t off = 0; off < size_bytes_;) {
      if (stop()) throw EnvironmentError("render: stopped while writing the swap file");
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(zeros.size(), size_bytes_ - off));
      const ssize_t w = ::pwrite(fd.get(), zeros.data(), n, static_cast<off_t>(off));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)  // a full filesystem: ENOSPC here, at set-up, before any phase runs
        throw EnvironmentError(fmt::format("render: writing the {} swap file {} failed at offset {}: {}",
                                           format_size(size_bytes_), path_.string(), off,
                                           w < 0 ? errno_text(errno) : std::string("no byte written")));
      off += static_cast<std::uint64_t>(w);
    }
    if (::fsync(fd.get()) != 0) throw_errno("render: fsync " + path_.string(), errno);
    fd.reset();
    // mkswap(8) from util-linux writes the swap header (the format swapon(2) checks).
    const auto mkswap = find_program("mkswap", {"/sbin"});
    const int exit_code =
        mkswap ? run_command({mkswap->string(), path_.string()}, std::chrono::minutes(10)).exit_code : 127;
    if (exit_code != 0)
      throw EnvironmentError(fmt::format("render: mkswap {} failed (exit status {}; is util-linux installed?)",
                                         path_.string(), exit_code));
    if (::swapon(path_.c_str(), 0) != 0)
      throw EnvironmentError(fmt::format("render: swapon {}: {} (the filesystem must support swap files)",
                                         path_.string(), std::strerror(errno)));
    active_ = true;
  } catch (...) {
    std::error_code ec;
    fs::remove(path_, ec);
    throw;
  }
}

bool SwapFile::remove() noexcept {
  if (path_.empty()) return true;
  if (active_) {
    for (int i = 0; i < 3 && ::swapoff(path_.c_str()) != 0; ++i)
      if (errno == EINVAL) break;  // not active (someone else turned it off)
    active_ = false;
    for (const SwapEntry& e : active_swaps())
      if (e.path == path_.string()) active_ = true;
    if (active_) return false;
  }
  std::error_code ec;
  fs::remove(path_, ec);
  path_.clear();
  return true;
}

SwapFile::~SwapFile() { remove(); }

MemoryCgroup::MemoryCgroup(const std::string& name, std::uint64_t limit_bytes) {
  version_ = memory_cgroup_version();
  path_ = cgroup_path_for(name);
  if (version_ == 0 || path_.empty()) throw EnvironmentError("render: no memory cgroup hierarchy is mounted");
  if (version_ == 2) {
    const fs::path parent = path_.parent_path();
    if (read_text(parent / "cgroup.subtree_control").find("memory") == std::string::npos &&
        !write_text(parent / "cgroup.subtree_control", "+memory"))
      throw_errno("render: enable the memory controller in " + (parent / "cgroup.subtree_control").string(), errno);
  }
  if (::mkdir(path_.c_str(), 0755) != 0) throw_errno("render: create cgroup " + path_.string(), errno);
  exists_ = true;
  const std::string limit = std::to_string(limit_bytes);
  const auto set = [&](const char* file, const std::string& value) {
    if (!write_text(path_ / file, value)) {
      const int err = errno;
      remove();
      throw_errno(fmt::format("render: write {} to {}", value, (path_ / file).string()), err);
    }
  };
  if (version_ == 2) {
    set("memory.max", limit);
    set("memory.swap.max", "max");
  } else {
    set("memory.limit_in_bytes", limit);
    set("memory.swappiness", "60");  // the kernel default; the parent's value may be 0
  }
}

void MemoryCgroup::add(int pid) {
  if (!write_text(path_ / "cgroup.procs", std::to_string(pid)))
    throw_errno(fmt::format("render: move process {} into {}", pid, path_.string()), errno);
}

std::uint64_t MemoryCgroup::limit_hits() const {
  if (version_ == 1) return std::strtoull(read_text(path_ / "memory.failcnt").c_str(), nullptr, 10);
  std::istringstream s(read_text(path_ / "memory.events"));
  std::string k;
  std::uint64_t v = 0;
  while (s >> k >> v)
    if (k == "max") return v;
  return 0;
}

std::uint64_t MemoryCgroup::oom_kills() const {
  std::istringstream s(read_text(path_ / (version_ == 1 ? "memory.oom_control" : "memory.events")));
  std::string k;
  std::uint64_t v = 0;
  while (s >> k >> v)
    if (k == "oom_kill") return v;
  return 0;
}

bool MemoryCgroup::remove() noexcept {
  if (!exists_) return true;
  kill_and_remove_cgroup(path_);
  std::error_code ec;
  exists_ = fs::exists(path_, ec);
  return !exists_;
}

MemoryCgroup::~MemoryCgroup() { remove(); }

}  // namespace drivelab::render
