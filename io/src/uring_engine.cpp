// io_uring (liburing): requests are staged as SQEs by queue() and handed to the kernel all at once
// by submit(); reap() drains the CQ ring and enters the kernel only when fewer than min_events are
// ready. Optional registered files (IOSQE_FIXED_FILE), registered buffers (READ_FIXED /
// WRITE_FIXED) and a kernel SQ polling thread (SQPOLL), as fio's io_uring engine offers with
// registerfiles / fixedbufs / sqthread_poll.
//
// The ring is set up the way fio 3.33 sets up its own (checked with strace): CQ size = SQ size,
// COOP_TASKRUN (no IPI to run completion task work), SINGLE_ISSUER | DEFER_TASKRUN (completion
// work runs when the submitting thread enters the kernel with GETEVENTS), each flag dropped when
// the kernel answers EINVAL. Because of DEFER_TASKRUN, submit() is io_uring_enter(n, 0,
// GETEVENTS) — what fio's commit does — so the completions of earlier I/Os are posted in the same
// system call and the next reap() usually finds them in the CQ ring without a second one.
//
// SINGLE_ISSUER binds the ring to one thread, normally its creator. Jobs often create their engine
// on one thread and run it on another, so the ring is created disabled (IORING_SETUP_R_DISABLED)
// and enabled by the first submit() or reap(): the thread that does the I/O becomes the issuer.
// Files and buffers can be registered before that, from any thread.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef DRIVELAB_HAVE_URING
#include <liburing.h>
#endif
#include <sys/resource.h>

#include <algorithm>
#include <limits>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/core/sysfs.hpp"
#include "engines.hpp"

namespace drivelab::io::detail {
#ifdef DRIVELAB_HAVE_URING
namespace {

std::string memlock_text() {
  rlimit rl{};
  if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return "unlimited";
  return fmt::format("{} KiB", rl.rlim_cur / 1024);
}

/// Why io_uring_setup(2) failed, for a ring without SQPOLL: "io_uring is disabled on this kernel
/// or container: io_uring_setup failed: <errno_text>" plus the usual cause of that errno (EPERM:
/// /proc/sys/kernel/io_uring_disabled, with its current value, or a container's seccomp profile;
/// ENOSYS: kernel without CONFIG_IO_URING or seccomp; ENOMEM: RLIMIT_MEMLOCK on kernels < 5.12).
std::string uring_unavailable_message(int errnum) {
  std::string msg =
      fmt::format("io_uring is disabled on this kernel or container: io_uring_setup failed: {}", errno_text(errnum));
  switch (errnum) {
    case EPERM: {
      // Linux 6.6+: 0 = enabled, 1 = only for members of kernel.io_uring_group (and root),
      // 2 = disabled for everyone. Container runtimes block it with seccomp (Docker >= 25).
      const std::string disabled = read_sysfs_text("/proc/sys/kernel/io_uring_disabled").value_or("");
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

/// Why a ring WITH SQPOLL failed while one without works (EPERM: CAP_SYS_ADMIN before Linux 5.11;
/// EINVAL with sqthread_poll_cpu: that CPU is offline or not allowed).
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

// Owns an initialised ring; the setup flags the kernel accepted are in ring.flags.
class Ring {
 public:
  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() {
    if (live_) io_uring_queue_exit(&ring_);
  }

  /// Sets the ring up with fio's flags, dropping the optional ones the kernel does not know.
  /// Returns 0 or -errno of the last attempt.
  int init(const EngineOptions& options) {
    io_uring_params p{};
    // CLAMP: depths above the kernel maximum (32768 SQ entries) get the maximum, not EINVAL.
    p.flags = IORING_SETUP_CLAMP | IORING_SETUP_CQSIZE | IORING_SETUP_R_DISABLED;
    p.cq_entries = options.queue_depth;
    if (options.sqthread_poll) {
      // The kernel rejects the task-work flags with SQPOLL (the SQ thread submits and runs the
      // completion work); fio asks for them and is left, after its EINVAL retries, with exactly
      // CQSIZE | SQPOLL — the same ring as this one.
      p.flags |= IORING_SETUP_SQPOLL;
      p.sq_thread_idle = options.sq_thread_idle_ms;
      if (options.sqthread_poll_cpu >= 0) {
        p.flags |= IORING_SETUP_SQ_AFF;
        p.sq_thread_cpu = static_cast<std::uint32_t>(options.sqthread_poll_cpu);
      }
    } else {
      p.flags |= IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    }
    for (;;) {
      io_uring_params attempt = p;
      const int ret = io_uring_queue_init_params(options.queue_depth, &ring_, &attempt);
      if (ret == 0) {
        live_ = true;
        return 0;
      }
      // Older kernels: retry without the newest flag, in fio's order.
      if (ret != -EINVAL) return ret;
      if (p.flags & IORING_SETUP_DEFER_TASKRUN) {
        p.flags &= ~(IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER);  // both 6.1 (fio drops both)
      } else if (p.flags & IORING_SETUP_COOP_TASKRUN) {
        p.flags &= ~IORING_SETUP_COOP_TASKRUN;
      } else if (p.flags & IORING_SETUP_CQSIZE) {
        p.flags &= ~IORING_SETUP_CQSIZE;
      } else if (p.flags & IORING_SETUP_R_DISABLED) {
        p.flags &= ~IORING_SETUP_R_DISABLED;
      } else {
        return ret;
      }
    }
  }

  io_uring* get() noexcept { return &ring_; }
  unsigned flags() const noexcept { return ring_.flags; }

 private:
  io_uring ring_{};
  bool live_ = false;
};

// Creates the ring; on failure tells "io_uring disabled here" from "SQPOLL refused" by trying a
// plain ring too.
void init_or_throw(Ring& ring, const EngineOptions& options) {
  const int ret = ring.init(options);
  if (ret == 0) return;
  if (options.sqthread_poll) {
    EngineOptions plain = options;
    plain.sqthread_poll = false;
    Ring probe;
    if (probe.init(plain) == 0) throw EnvironmentError(uring_sqpoll_refused_message(-ret, options));
  }
  throw EnvironmentError(uring_unavailable_message(-ret));
}

class UringEngine final : public IoEngine {
 public:
  explicit UringEngine(const EngineOptions& options) : options_(options), cqes_(options.queue_depth) {
    // fio: "sqthread submission requires registered files".
    if (options_.sqthread_poll) options_.register_files = true;
    init_or_throw(ring_, options_);
    sqpoll_ = (ring_.flags() & IORING_SETUP_SQPOLL) != 0;
    defer_taskrun_ = (ring_.flags() & IORING_SETUP_DEFER_TASKRUN) != 0;
    enabled_ = (ring_.flags() & IORING_SETUP_R_DISABLED) == 0;
  }

  const EngineInfo& info() const noexcept override;

  std::vector<std::string> features_in_use() const override {
    std::vector<std::string> out;
    if (fixed_files_) out.emplace_back("registered_files");
    if (fixed_buffers_) out.emplace_back("registered_buffers");
    if (sqpoll_) out.emplace_back("sqthread_poll");
    if (ring_.flags() & IORING_SETUP_COOP_TASKRUN) out.emplace_back("coop_taskrun");
    if (ring_.flags() & IORING_SETUP_SINGLE_ISSUER) out.emplace_back("single_issuer");
    if (defer_taskrun_) out.emplace_back("defer_taskrun");
    return out;
  }

  void register_files(std::span<const int> fds) override {
    fds_.assign(fds.begin(), fds.end());
    if (!options_.register_files || fds_.empty()) return;
    const int ret = io_uring_register_files(ring_.get(), fds_.data(), static_cast<unsigned>(fds_.size()));
    if (ret < 0) throw EnvironmentError(fmt::format("io_uring_register_files failed: {}", errno_text(-ret)));
    fixed_files_ = true;
  }

  void register_buffers(std::span<const iovec> buffers) override {
    if (!options_.register_buffers || buffers.empty()) return;
    const int ret = io_uring_register_buffers(ring_.get(), buffers.data(), static_cast<unsigned>(buffers.size()));
    if (ret < 0)
      throw EnvironmentError(
          fmt::format("io_uring_register_buffers ({} buffers) failed: {} (registered buffers are locked memory: raise "
                      "ulimit -l; at most 16384 buffers of at most 1 GiB each; or turn fixedbufs off)",
                      buffers.size(), errno_text(-ret)));
    fixed_buffers_ = true;
  }

  QueueStatus queue(const IoRequest& r) override {
    if (in_flight_ >= options_.queue_depth) return QueueStatus::busy;
    if (r.file_index >= fds_.size())
      throw InternalError("io_uring: request names file index beyond the registered files");
    io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
    if (sqe == nullptr) return QueueStatus::busy;  // SQ full of staged entries: submit first
    const int fd = fixed_files_ ? static_cast<int>(r.file_index) : fds_[r.file_index];
    if (fixed_buffers_ && r.buffer_index >= 0) {
      if (r.op == Op::read)
        io_uring_prep_read_fixed(sqe, fd, r.buffer, r.length_bytes, r.offset_bytes, r.buffer_index);
      else
        io_uring_prep_write_fixed(sqe, fd, r.buffer, r.length_bytes, r.offset_bytes, r.buffer_index);
    } else if (r.op == Op::read) {
      io_uring_prep_read(sqe, fd, r.buffer, r.length_bytes, r.offset_bytes);
    } else {
      io_uring_prep_write(sqe, fd, r.buffer, r.length_bytes, r.offset_bytes);
    }
    if (fixed_files_) sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, r.user_data);
    ++staged_;
    ++in_flight_;
    return QueueStatus::queued;
  }

  std::size_t submit() override {
    if (staged_ == 0) return 0;
    if (!enabled_) enable();
    // SQPOLL: publishing the SQ tail is the submission (liburing enters the kernel only to wake
    // a sleeping SQ thread). Otherwise one io_uring_enter with GETEVENTS, as fio's commit.
    const int ret = sqpoll_ ? io_uring_submit(ring_.get()) : io_uring_submit_and_get_events(ring_.get());
    if (ret < 0) {
      if (ret == -EAGAIN || ret == -EBUSY || ret == -EINTR) return 0;  // retry after a reap
      throw EnvironmentError(fmt::format("io_uring_enter (submit) failed: {}", errno_text(-ret)));
    }
    const auto n = std::min(static_cast<std::size_t>(ret), staged_);
    staged_ -= n;
    return n;
  }

  std::size_t reap(std::size_t min_events, std::span<IoCompletion> out, std::chrono::nanoseconds timeout) override {
    if (!enabled_) enable();
    const std::size_t submitted = in_flight_ - staged_;
    const std::size_t want = std::min({min_events, submitted, out.size()});
    std::size_t got = drain(out);
    if (got >= want) {
      // A poll (want 0) that found nothing: with DEFER_TASKRUN finished I/Os are posted only when
      // we enter the kernel, so ask it once (fio: io_uring_enter(0, 0, GETEVENTS)).
      if (got == 0 && submitted > 0 && !out.empty() && defer_taskrun_) {
        io_uring_get_events(ring_.get());
        got = drain(out);
      }
      return got;
    }
    if (sqpoll_) return got + spin(out.subspan(got), want - got, timeout);
    const auto ns = std::max<std::int64_t>(timeout.count(), 0);
    __kernel_timespec ts{ns / 1'000'000'000, ns % 1'000'000'000};
    io_uring_cqe* cqe = nullptr;
    // Sleeps until `want - got` more CQEs are posted, the timeout passes or a signal arrives.
    const int ret = io_uring_wait_cqes(ring_.get(), &cqe, static_cast<unsigned>(want - got),
                                       timeout == kNoTimeout ? nullptr : &ts, nullptr);
    if (ret < 0 && ret != -ETIME && ret != -EINTR && ret != -EAGAIN)
      throw EnvironmentError(fmt::format("io_uring_enter (wait) failed: {}", errno_text(-ret)));
    got += drain(out.subspan(got));
    return got;
  }

  std::size_t in_flight() const noexcept override { return in_flight_; }

 private:
  // Makes the calling thread the ring's only issuer (see the file comment).
  void enable() {
    // liburing 2.3 declares io_uring_enable_rings but does not export it: the system call itself.
    if (::syscall(__NR_io_uring_register, ring_.get()->ring_fd, IORING_REGISTER_ENABLE_RINGS, nullptr, 0) < 0)
      throw EnvironmentError(fmt::format("io_uring: enabling the ring failed: {}", errno_text(errno)));
    enabled_ = true;
  }

  // Copies every ready CQE (up to out.size()) and releases them to the kernel in one advance.
  std::size_t drain(std::span<IoCompletion> out) {
    const auto max = static_cast<unsigned>(std::min(out.size(), cqes_.size()));
    if (max == 0) return 0;
    const unsigned n = io_uring_peek_batch_cqe(ring_.get(), cqes_.data(), max);
    for (unsigned i = 0; i < n; ++i) out[i] = {io_uring_cqe_get_data64(cqes_[i]), cqes_[i]->res};
    io_uring_cq_advance(ring_.get(), n);
    in_flight_ -= n;
    return n;
  }

  // SQPOLL: the kernel thread posts completions; like fio, poll the CQ ring in user space rather
  // than sleeping in the kernel (that is the point of the mode), until `want` arrive or timeout.
  std::size_t spin(std::span<IoCompletion> out, std::size_t want, std::chrono::nanoseconds timeout) {
    std::size_t got = 0;
    const std::int64_t deadline =
        timeout == kNoTimeout ? std::numeric_limits<std::int64_t>::max() : monotonic_ns() + timeout.count();
    for (unsigned i = 0; got < want; ++i) {
      got += drain(out.subspan(got));
      if ((i & 255) == 255 && monotonic_ns() >= deadline) break;
    }
    return got;
  }

  EngineOptions options_;
  Ring ring_;
  std::vector<io_uring_cqe*> cqes_;
  std::vector<int> fds_;
  bool sqpoll_ = false;
  bool defer_taskrun_ = false;
  bool enabled_ = false;  // R_DISABLED rings are enabled by the thread of the first submit/reap
  bool fixed_files_ = false;
  bool fixed_buffers_ = false;
  std::size_t staged_ = 0;     // SQEs prepared but not yet submitted
  std::size_t in_flight_ = 0;  // staged + submitted, not yet reaped
};

// Registers `what` on a fresh 2-entry ring; "" when it works, else the reason.
FeatureAvailability probe_feature(const char* name, const EngineOptions& options, bool files, bool buffers) {
  FeatureAvailability f{name, false, {}};
  try {
    UringEngine engine(options);
    UniqueFd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!null_fd) throw_errno("open /dev/null", errno);
    const int fds[] = {null_fd.get()};
    if (files) engine.register_files(fds);
    AlignedBuffer buf(4096);
    const iovec iov[] = {{buf.data(), buf.size()}};
    if (buffers) engine.register_buffers(iov);
    f.usable = true;
  } catch (const Error& e) {
    f.reason = e.what();
  }
  return f;
}

/// sqthread_poll, registered_files and registered_buffers, each tried on a small ring.
std::vector<FeatureAvailability> probe_uring_features() {
  EngineOptions base;
  base.queue_depth = 2;
  EngineOptions sqpoll = base;
  sqpoll.sqthread_poll = true;
  sqpoll.sq_thread_idle_ms = 1;  // the probe's thread should not linger
  EngineOptions files = base;
  files.register_files = true;
  EngineOptions buffers = base;
  buffers.register_buffers = true;
  return {probe_feature("sqthread_poll", sqpoll, true, false), probe_feature("registered_files", files, true, false),
          probe_feature("registered_buffers", buffers, false, true)};
}

}  // namespace
#endif  // DRIVELAB_HAVE_URING

namespace rows {
extern const EngineInfo uring{
    .name = "io_uring",
    .summary = "liburing: batched submission, registered files and buffers, optional SQPOLL (fio: io_uring)",
    .note = "",
    .capabilities = {Capability::async, Capability::batched, Capability::supports_direct, Capability::registered_files,
                     Capability::registered_buffers},
#ifdef DRIVELAB_HAVE_URING
    .make = &make_as<UringEngine>,
    .probe_features = &probe_uring_features,
#else
    .make = nullptr,
#endif
    .build_option = "DRIVELAB_WITH_URING",
    .library = "liburing",
    .instead = "libaio or psync",
};
}  // namespace rows

#ifdef DRIVELAB_HAVE_URING
const EngineInfo& UringEngine::info() const noexcept { return rows::uring; }
#endif

}  // namespace drivelab::io::detail
