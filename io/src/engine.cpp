#include "drivelab/io/engine.hpp"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/sysfs.hpp"
#include "engines.hpp"

namespace drivelab::io {

std::string_view to_string(Op op) noexcept { return op == Op::read ? "read" : "write"; }

std::vector<std::string> Capabilities::names() const {
  static constexpr std::pair<Capability, const char*> kNames[] = {
      {Capability::async, "async"},
      {Capability::batched, "batched"},
      {Capability::supports_direct, "supports_direct"},
      {Capability::registered_files, "registered_files"},
      {Capability::registered_buffers, "registered_buffers"},
      {Capability::no_io, "no_io"},
  };
  std::vector<std::string> out;
  for (const auto& [cap, name] : kNames)
    if (has(cap)) out.emplace_back(name);
  return out;
}

std::vector<std::string_view> engine_names() { return {"io_uring", "libaio", "psync", "null"}; }

namespace detail {
namespace {

// The first line of a /proc file, "" if it cannot be read (absent on older kernels).
/// A /proc/sys value ("" if unreadable).
std::string read_proc_line(const char* path) { return read_sysfs_text(path).value_or(""); }

std::string memlock_text() {
  rlimit rl{};
  if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return "unlimited";
  return fmt::format("{} KiB", rl.rlim_cur / 1024);
}

}  // namespace

std::string uring_unavailable_message(int errnum) {
  std::string msg =
      fmt::format("io_uring is disabled on this kernel or container: io_uring_setup failed: {}", errno_text(errnum));
  switch (errnum) {
    case EPERM: {
      // Linux 6.6+: 0 = enabled, 1 = only for members of kernel.io_uring_group (and root),
      // 2 = disabled for everyone. Container runtimes block it with seccomp (Docker >= 25).
      const std::string disabled = read_proc_line("/proc/sys/kernel/io_uring_disabled");
      if (!disabled.empty() && disabled != "0")
        msg +=
            fmt::format("; /proc/sys/kernel/io_uring_disabled is {} ({})", disabled,
                        disabled == "1" ? "only members of kernel.io_uring_group may use it" : "disabled for everyone");
      else
        msg +=
            "; kernel.io_uring_disabled does not forbid it here, so a seccomp profile (a container's) "
            "or an LSM policy probably blocks io_uring_setup";
      break;
    }
    case ENOSYS:
      msg +=
          "; the kernel was built without io_uring (CONFIG_IO_URING) or a seccomp profile hides the "
          "system call";
      break;
    case ENOMEM:
      msg += fmt::format(
          "; on kernels before 5.12 ring memory counts against the locked-memory limit "
          "(ulimit -l, here {})",
          memlock_text());
      break;
    default: break;
  }
  return msg + "; use engine libaio or psync";
}

std::string uring_sqpoll_refused_message(int errnum, const EngineOptions& options) {
  std::string msg = fmt::format(
      "io_uring refused sqthread_poll: io_uring_setup with IORING_SETUP_SQPOLL failed: "
      "{}, while a ring without it works",
      errno_text(errnum));
  if (errnum == EPERM)
    msg +=
        "; Linux before 5.11 allows the SQ polling thread only with CAP_SYS_ADMIN (run as root), and "
        "a container's seccomp or capability set may forbid it";
  else if (errnum == EINVAL && options.sqthread_poll_cpu >= 0)
    msg += fmt::format("; sqthread_poll_cpu {} is not an online CPU this process may use", options.sqthread_poll_cpu);
  return msg + "; drop sqthread_poll";
}

std::string aio_unavailable_message(int errnum, std::uint32_t nr_events) {
  std::string msg = fmt::format("libaio: io_setup({}) failed: {}", nr_events, errno_text(errnum));
  switch (errnum) {
    case EAGAIN: {
      const std::string nr = read_proc_line("/proc/sys/fs/aio-nr");
      const std::string max = read_proc_line("/proc/sys/fs/aio-max-nr");
      msg += fmt::format(
          "; the system-wide AIO event limit is reached (fs.aio-nr {} of fs.aio-max-nr {}): "
          "raise fs.aio-max-nr or lower iodepth x jobs",
          nr.empty() ? "?" : nr, max.empty() ? "?" : max);
      break;
    }
    case ENOSYS:
    case EPERM:
      msg +=
          "; the kernel was built without AIO (CONFIG_AIO) or a seccomp profile (a container's) blocks "
          "io_setup; use engine io_uring or psync";
      break;
    default: break;
  }
  return msg;
}

}  // namespace detail

std::unique_ptr<IoEngine> make_engine(std::string_view name, const EngineOptions& options) {
  if (options.queue_depth < 1 || options.queue_depth > 65536)
    throw ConfigError(fmt::format("I/O engine queue depth {} is out of range 1..65536", options.queue_depth));
  if (name == "psync") return detail::make_psync_engine(options);
  if (name == "null") return detail::make_null_engine(options);
  // The optional engines: compiled in (DRIVELAB_WITH_URING / DRIVELAB_WITH_LIBAIO, CMakeLists.txt)
  // or not, and then NotCompiledIn naming the option, the library and the alternatives.
  struct Optional {
    std::string_view name, option, library, instead;
    std::unique_ptr<IoEngine> (*make)(const EngineOptions&);
  };
  for (const Optional& e : {
#ifdef DRIVELAB_HAVE_URING
           Optional{"io_uring", "", "", "", &detail::make_uring_engine},
#else
           Optional{"io_uring", "DRIVELAB_WITH_URING", "liburing", "libaio or psync", nullptr},
#endif
#ifdef DRIVELAB_HAVE_LIBAIO
           Optional{"libaio", "", "", "", &detail::make_libaio_engine},
#else
           Optional{"libaio", "DRIVELAB_WITH_LIBAIO", "libaio-dev", "io_uring or psync", nullptr},
#endif
       }) {
    if (name != e.name) continue;
    if (e.make != nullptr) return e.make(options);
    throw NotCompiledIn(fmt::format(
        "the {} engine is not compiled into this build of drivelab (configured with {}=OFF or without {}); use "
        "engine {}",
        e.name, e.option, e.library, e.instead));
  }
  throw ConfigError(fmt::format("unknown I/O engine '{}' (choices: {})", name, fmt::join(engine_names(), ", ")));
}

EngineAvailability probe_engine(std::string_view name) {
  EngineAvailability a;
  for (auto n : engine_names())
    if (n == name) a.known = true;
  if (!a.known) {
    a.reason = fmt::format("unknown I/O engine '{}'", name);
    return a;
  }
  if (name == "libaio")
    a.note = "asynchronous only with direct: true (buffered io_submit performs the I/O before returning)";
  if (name == "psync") a.note = "synchronous: one I/O in flight per job whatever iodepth says; use jobs";
  try {
    EngineOptions small;
    small.queue_depth = 2;
    a.capabilities = make_engine(name, small)->capabilities();
    a.compiled_in = true;
    a.usable = true;
  } catch (const NotCompiledIn& e) {
    a.reason = e.what();
  } catch (const Error& e) {
    a.compiled_in = true;
    a.reason = e.what();
  }
  if (!a.usable) {
    // What it would declare: fixed per engine, so say it even when the kernel refuses it.
    if (name == "io_uring")
      a.capabilities = {Capability::async, Capability::batched, Capability::supports_direct,
                        Capability::registered_files, Capability::registered_buffers};
    else if (name == "libaio")
      a.capabilities = {Capability::async, Capability::batched, Capability::supports_direct};
  }
#ifdef DRIVELAB_HAVE_URING
  if (a.usable && name == "io_uring") a.features = detail::probe_uring_features();
#endif
  return a;
}

}  // namespace drivelab::io
