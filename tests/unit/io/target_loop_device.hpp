#pragma once
// Test helper: a real loop device on a sparse file, always detached and removed (RAII); a second
// loop device over the same file (alias), a loop device stacked on another block device (over),
// partitions (partscan), and an ext4 mount of any node.
// With `tmpfs_bytes` the sparse file lives on a tmpfs of that size of its own: writes past that
// much data fail on the device (a full disk for real, issue 15). TmpfsMount alone is a full
// filesystem for real.
//
// The device is attached with LO_FLAGS_AUTOCLEAR and this object keeps a descriptor open, so the
// kernel detaches it when the last user closes it — also when the test process dies. The backing
// file lives in its own mkdtemp directory under the system temp dir, which the destructor removes.
// Needs root (CAP_SYS_ADMIN); create() returns nullopt with the reason otherwise, for GTEST_SKIP.
#include <fcntl.h>
#include <linux/blkpg.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace drivelab::testing {

/// A tmpfs of `size_bytes` mounted on an existing directory, unmounted (lazily) on destruction:
/// a filesystem that is full after that much data (ENOSPC for real). Needs root.
class TmpfsMount {
 public:
  static std::optional<TmpfsMount> on(const std::filesystem::path& dir, std::uint64_t size_bytes, std::string& why) {
    const std::string opts = "size=" + std::to_string(size_bytes);
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, opts.c_str()) != 0) {
      why = "mount a tmpfs on " + dir.string() + ": " + std::strerror(errno);
      return std::nullopt;
    }
    TmpfsMount m;
    m.dir_ = dir;
    return m;
  }
  TmpfsMount(TmpfsMount&& o) noexcept : dir_(std::move(o.dir_)) { o.dir_.clear(); }
  TmpfsMount& operator=(TmpfsMount&&) = delete;
  TmpfsMount(const TmpfsMount&) = delete;
  ~TmpfsMount() {
    if (!dir_.empty()) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  const std::filesystem::path& dir() const noexcept { return dir_; }

 private:
  TmpfsMount() = default;
  std::filesystem::path dir_;
};

class LoopDevice {
 public:
  /// A loop device over a sparse file of `size_bytes`. nullopt (and `why`) if this machine or
  /// user cannot make one. With `partscan` it can have partitions (LO_FLAGS_PARTSCAN;
  /// add_partition).
  /// `tmpfs_bytes` > 0 mounts a tmpfs of that size on the directory first and puts the backing
  /// file there (a device larger than its storage: writes fail once the tmpfs is full).
  static std::optional<LoopDevice> create(std::uint64_t size_bytes, std::string& why, bool partscan = false,
                                          std::uint64_t tmpfs_bytes = 0) {
    LoopDevice d;
    if (!d.make_dir(why)) return std::nullopt;
    if (tmpfs_bytes > 0) {
      auto tmpfs = TmpfsMount::on(d.dir_, tmpfs_bytes, why);
      if (!tmpfs) return std::nullopt;
      d.tmpfs_.emplace(std::move(*tmpfs));
    }
    d.backing_ = d.dir_ / "backing.img";
    const int bfd = ::open(d.backing_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (bfd < 0) return fail(why, "create backing file");
    if (::ftruncate(bfd, static_cast<off_t>(size_bytes)) != 0) {
      ::close(bfd);
      return fail(why, "truncate backing file");
    }
    const bool ok = d.attach(bfd, partscan, why);
    ::close(bfd);
    if (!ok) return std::nullopt;
    return d;
  }

  /// A second loop device over this one's backing file (as `losetup -f --show FILE` twice makes
  /// it): the same storage under another device number. It has a directory of its own (for
  /// mount_ext4) and leaves the backing file to this device; destroy it first.
  std::optional<LoopDevice> alias(std::string& why, bool partscan = false) const {
    return attached_to(backing_, why, partscan);
  }

  /// A loop device stacked on the block device `node` (`losetup -f --show /dev/loopN`, the usual
  /// way to reach a disk image's partitions): its backing "file" is that device node. It has a
  /// directory of its own (for mount_ext4) and removes nothing of `node`; destroy it first.
  static std::optional<LoopDevice> over(const std::string& node, std::string& why, bool partscan = false) {
    return attached_to(node, why, partscan);
  }

  LoopDevice(LoopDevice&& o) noexcept
      : dir_(std::move(o.dir_)),
        backing_(std::move(o.backing_)),
        path_(std::move(o.path_)),
        mount_dir_(std::move(o.mount_dir_)),
        fd_(std::exchange(o.fd_, -1)),
        tmpfs_(std::move(o.tmpfs_)) {
    o.tmpfs_.reset();
    o.dir_.clear();
    o.mount_dir_.clear();
  }
  LoopDevice& operator=(LoopDevice&&) = delete;
  LoopDevice(const LoopDevice&) = delete;
  ~LoopDevice() {
    unmount();
    if (fd_ >= 0) {
      int rw = 0;
      ::ioctl(fd_, BLKROSET, &rw);   // do not leave a read-only loop device to the next user
      ::ioctl(fd_, LOOP_CLR_FD, 0);  // detach now (autoclear would at the last close anyway)
      ::close(fd_);
    }
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
    if (tmpfs_) {
      tmpfs_.reset();  // unmounted: now the directory itself can go
      std::filesystem::remove(dir_, ec);
    }
  }

  const std::string& path() const noexcept { return path_; }
  /// The backing file, as /sys/block/loopN/loop/backing_file shows it (the loop's identity).
  std::string backing_file() const {
    std::error_code ec;
    return std::filesystem::canonical(backing_, ec).string();
  }
  const std::filesystem::path& dir() const noexcept { return dir_; }

  /// Runs mkfs.ext4 -q on the device; false if mkfs.ext4 is missing or fails.
  bool make_ext4() const { return run({"mkfs.ext4", "-q", "-F", path_}); }

  /// Writes a DOS/MBR partition table (one Linux partition from sector 2048) at sector 0, as
  /// fdisk would: the test needs no partitioning tool.
  bool write_mbr() const {
    unsigned char mbr[512] = {};
    unsigned char* e = mbr + 446;
    e[4] = 0x83;          // partition type: Linux
    put32(e + 8, 2048);   // first LBA
    put32(e + 12, 8192);  // sectors (4 MiB)
    e[1] = 0xFE;
    e[2] = 0xFF;
    e[3] = 0xFF;
    e[5] = 0xFE;
    e[6] = 0xFF;
    e[7] = 0xFF;  // CHS: "use LBA"
    mbr[510] = 0x55;
    mbr[511] = 0xAA;
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = ::pwrite(fd, mbr, sizeof mbr, 0) == static_cast<ssize_t>(sizeof mbr) && ::fsync(fd) == 0;
    ::close(fd);
    return ok;
  }

  /// Mounts the device (ext4), or `node` (one of its partitions), on <dir>/mnt; unmounted on
  /// destruction.
  bool mount_ext4(const std::string& node = {}) {
    mount_dir_ = dir_ / "mnt";
    std::filesystem::create_directories(mount_dir_);
    if (::mount((node.empty() ? path_ : node).c_str(), mount_dir_.c_str(), "ext4", 0, nullptr) != 0) {
      mount_dir_.clear();
      return false;
    }
    return true;
  }
  /// Runs mkfs.ext4 -q on `node` (a partition of this device, say).
  bool make_ext4_on(const std::string& node) const { return run({"mkfs.ext4", "-q", "-F", node}); }

  /// /dev/loopNpK, the node of partition `k` (devtmpfs makes it once the kernel has the partition).
  std::string partition(int k) const { return path_ + "p" + std::to_string(k); }
  /// Writes the DOS table of write_mbr and makes the kernel show its partition 1 (needs
  /// partscan): BLKRRPART where the kernel reads DOS tables, else BLKPG_ADD_PARTITION as
  /// addpart(8) does (a kernel built without CONFIG_MSDOS_PARTITION). False if neither works.
  bool add_partition() const {
    if (!write_mbr()) return false;
    if (::ioctl(fd_, BLKRRPART, 0) == 0 && wait_for_partition(100)) return true;
    blkpg_partition part{};
    part.start = 2048LL * 512;
    part.length = 8192LL * 512;
    part.pno = 1;
    blkpg_ioctl_arg arg{};
    arg.op = BLKPG_ADD_PARTITION;
    arg.datalen = sizeof part;
    arg.data = &part;
    return ::ioctl(fd_, BLKPG, &arg) == 0 && wait_for_partition(500);
  }

  /// Drops this device's page cache (BLKFLSBUF). Two loop devices over the same blocks each
  /// cache what they read: after writing through one, the other must drop its cache before it
  /// mounts what was written.
  bool drop_cache() const { return ::ioctl(fd_, BLKFLSBUF, 0) == 0; }

  void unmount() {
    if (mount_dir_.empty()) return;
    ::umount2(mount_dir_.c_str(), MNT_DETACH);
    mount_dir_.clear();
  }

 private:
  LoopDevice() = default;

  /// A loop device over `backing` (a file or a device node) that it does not own.
  static std::optional<LoopDevice> attached_to(const std::filesystem::path& backing, std::string& why, bool partscan) {
    LoopDevice d;
    if (!d.make_dir(why)) return std::nullopt;
    d.backing_ = backing;
    const int bfd = ::open(backing.c_str(), O_RDWR | O_CLOEXEC);
    if (bfd < 0) {
      why = "open " + backing.string() + ": " + std::strerror(errno);
      return std::nullopt;
    }
    const bool ok = d.attach(bfd, partscan, why);
    ::close(bfd);
    if (!ok) return std::nullopt;
    return d;
  }

  bool make_dir(std::string& why) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "drivelab-loop-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return failed(why, "mkdtemp");
    dir_ = tmpl;
    return true;
  }

  /// Attaches a free loop device to the open backing file `bfd` (autoclear: the kernel detaches
  /// it when the last user closes it, also when the test process dies).
  bool attach(int bfd, bool partscan, std::string& why) {
    const int ctl = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (ctl < 0) return failed(why, "open /dev/loop-control (needs root)");
    // Other processes may take the same free device between GET_FREE and SET_FD: retry.
    for (int attempt = 0; attempt < 20 && fd_ < 0; ++attempt) {
      const int n = ::ioctl(ctl, LOOP_CTL_GET_FREE);
      if (n < 0) break;
      const std::string path = "/dev/loop" + std::to_string(n);
      const int lfd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
      if (lfd < 0) continue;
      loop_config cfg{};
      cfg.fd = static_cast<__u32>(bfd);
      cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR | (partscan ? LO_FLAGS_PARTSCAN : 0);
      if (::ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0) {
        int rw = 0;
        ::ioctl(lfd, BLKROSET, &rw);  // the read-only flag outlives a detach: start writable
        fd_ = lfd;
        path_ = path;
      } else {
        ::close(lfd);
      }
    }
    ::close(ctl);
    if (fd_ < 0) return failed(why, "attach a loop device");
    return true;
  }

  /// Waits up to `tries` x 10 ms for the node of partition 1.
  bool wait_for_partition(int tries) const {
    for (int i = 0; i < tries; ++i) {
      std::error_code ec;
      if (std::filesystem::exists(partition(1), ec)) return true;
      ::usleep(10000);
    }
    return false;
  }
  static bool failed(std::string& why, const char* what) {
    why = std::string(what) + ": " + std::strerror(errno);
    return false;
  }
  static std::optional<LoopDevice> fail(std::string& why, const char* what) {
    failed(why, what);
    return std::nullopt;
  }
  static void put32(unsigned char* p, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
  }
  static bool run(std::initializer_list<std::string> args) {
    const pid_t pid = ::fork();
    if (pid < 0) return false;
    if (pid == 0) {
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      ::execvp(argv[0], argv.data());
      ::_exit(127);
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
  }

  std::filesystem::path dir_;
  std::filesystem::path backing_;
  std::string path_;
  std::filesystem::path mount_dir_;
  int fd_ = -1;
  std::optional<TmpfsMount> tmpfs_;  // on dir_, with `tmpfs_bytes`
};

/// An ext4 mount of any block device node (a device-mapper device, say) on a fresh directory
/// under the system temp dir; unmounted and the directory removed on destruction. Declare it
/// after the device it mounts, so that it goes first.
class Ext4Mount {
 public:
  static std::optional<Ext4Mount> create(const std::string& node) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "drivelab-mnt-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return std::nullopt;
    Ext4Mount m;
    m.dir_ = tmpl;
    if (::mount(node.c_str(), m.dir_.c_str(), "ext4", 0, nullptr) != 0) {
      std::error_code ec;
      std::filesystem::remove(m.dir_, ec);
      m.dir_.clear();
      return std::nullopt;
    }
    return m;
  }
  Ext4Mount(Ext4Mount&& o) noexcept : dir_(std::move(o.dir_)) { o.dir_.clear(); }
  Ext4Mount& operator=(Ext4Mount&&) = delete;
  Ext4Mount(const Ext4Mount&) = delete;
  ~Ext4Mount() {
    if (dir_.empty()) return;
    ::umount2(dir_.c_str(), MNT_DETACH);
    std::error_code ec;
    std::filesystem::remove(dir_, ec);  // rmdir: only once nothing is mounted on it
  }
  const std::filesystem::path& dir() const noexcept { return dir_; }

 private:
  Ext4Mount() = default;
  std::filesystem::path dir_;
};

}  // namespace drivelab::testing
