#pragma once
/// \file engine.hpp
/// The I/O engine interface: a core that knows no engine, engines as leaves behind one small
/// batched interface (after fio's ioengines.h: `queue`, `commit`, `getevents`/`event`).
///
///     engine->register_files(fds);                 // once, before the first request
///     engine->queue(req) ...                       // stage requests (psync: does the I/O now)
///     engine->submit();                            // hand every staged request to the kernel
///     n = engine->reap(1, completions, 10ms);      // collect >= 1 completion (or time out)
///
/// Splitting queue / submit / reap is what makes batching possible: io_uring stages many SQEs and
/// submits them with one io_uring_enter(2), libaio many iocbs with one io_submit(2); psync performs
/// each I/O inside queue() and reports it through reap() like any other, so a job has a single
/// code path for every engine.
///
/// Engines (docs/io.md has each one's options and caveats): each is ONE row, an EngineInfo defined
/// in its own file (io/src/<name>_engine.cpp: name, words, caveat, capabilities, factory, probe of
/// its optional features), and io/src/engine.cpp holds the one registration list (engines());
/// engine_names(), probe_engine(), make_engine() and `drivelab list` come from it
/// (docs/contributing.md "Add an I/O engine"). Today: psync (pread/pwrite), libaio (Linux AIO),
/// io_uring (liburing) and null (no I/O: drivelab's own overhead).
///
/// Queue depth (QD) semantics, as in fio: `EngineOptions::queue_depth` is the most requests one
/// engine instance holds between queue() and reap(). A synchronous engine (no Capability::async)
/// finishes each request inside queue(), so whatever QD is configured, at most ONE I/O of that
/// engine is ever outstanding at the device: psync's effective QD is 1 per job (fio: "iodepth
/// beyond 1 will not affect synchronous ioengines"). More outstanding I/Os need more jobs.
///
/// Threading: an engine instance is used by one thread at a time, and its queue / submit / reap
/// calls by ONE thread for its whole life. It may be created and have its files and buffers
/// registered on another thread first. (io_uring rings are set up like fio's, with
/// IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN where the kernel has them: the thread of the first
/// submit() or reap() becomes the only one the kernel lets submit, and completions are posted when
/// that thread enters the kernel.)
/// Errors: per-I/O failures (-EIO, -EINVAL, -ENOSPC, short transfers) are results in IoCompletion,
/// never exceptions; setup failures throw EnvironmentError / NotCompiledIn (core/errors.hpp).
#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace drivelab::io {

enum class Op : std::uint8_t { read, write };
std::string_view to_string(Op op) noexcept;

/// One I/O. The buffer must stay valid, and must not be touched, until its completion is reaped.
/// With O_DIRECT, `buffer`, `offset_bytes` and `length_bytes` must be multiples of the file's
/// direct-I/O alignment (TargetFile::direct_alignment_bytes()).
struct IoRequest {
  Op op = Op::read;
  std::uint32_t file_index = 0;  ///< index into the fds given to register_files()
  std::uint64_t offset_bytes = 0;
  std::uint32_t length_bytes = 0;
  std::byte* buffer = nullptr;
  /// Index into the buffers given to register_buffers() when `buffer` lies inside one of them
  /// (io_uring then uses READ_FIXED / WRITE_FIXED); -1 = not a registered buffer.
  std::int32_t buffer_index = -1;
  std::uint64_t user_data = 0;  ///< returned unchanged in the IoCompletion
  /// Monotonic ns (core/clock.hpp) when the workload meant to issue the I/O (open-loop pacing,
  /// to measure without coordinated omission), 0 if unpaced. Engines do not read it.
  std::int64_t intended_ns = 0;
  /// Monotonic ns when the I/O was handed to the engine; set by the caller, engines do not read it.
  std::int64_t issue_ns = 0;
};

/// The outcome of one request: `result` is the number of bytes transferred (may be short) or a
/// negative errno (-EIO, -EINVAL, ...), exactly as pread(2) / io_uring CQE `res` report it.
struct IoCompletion {
  std::uint64_t user_data = 0;
  std::int64_t result = 0;
};

/// What an engine declares about itself (fio: FIO_SYNCIO, FIO_NOIO, ... flags in ioengines.h).
enum class Capability : std::uint32_t {
  async = 1u << 0,               ///< queue() returns before the I/O completes: QD > 1 per job
  batched = 1u << 1,             ///< submit() hands all staged requests to the kernel in one call
  supports_direct = 1u << 2,     ///< works on O_DIRECT file descriptors
  registered_files = 1u << 3,    ///< can pre-register fds (fio: registerfiles)
  registered_buffers = 1u << 4,  ///< can pre-register buffers (fio: fixedbufs)
  no_io = 1u << 5,               ///< performs no I/O at all (fio: FIO_NOIO, the null engine)
};

class Capabilities {
 public:
  constexpr Capabilities() = default;
  constexpr Capabilities(std::initializer_list<Capability> caps) {
    for (Capability c : caps) bits_ |= static_cast<std::uint32_t>(c);
  }
  constexpr bool has(Capability c) const noexcept { return (bits_ & static_cast<std::uint32_t>(c)) != 0; }
  constexpr std::uint32_t bits() const noexcept { return bits_; }
  friend constexpr bool operator==(Capabilities, Capabilities) = default;
  /// Names of the set flags ("async", "batched", ...), in declaration order.
  std::vector<std::string> names() const;

 private:
  std::uint32_t bits_ = 0;
};

/// Options common to every engine; an engine ignores what it cannot do (see capabilities()).
struct EngineOptions {
  /// Most requests held between queue() and reap() (io_uring: SQ entries, rounded up to a power
  /// of two by the kernel; libaio: io_setup's nr_events). 1..65536.
  std::uint32_t queue_depth = 32;
  /// io_uring: register the fds with the ring (IOSQE_FIXED_FILE; saves an fget/fput per I/O).
  /// fio: registerfiles (default off).
  bool register_files = false;
  /// io_uring: honour register_buffers() (READ_FIXED/WRITE_FIXED; pages pinned once instead of per
  /// I/O). fio: fixedbufs (default off).
  bool register_buffers = false;
  /// io_uring: a kernel thread polls the SQ ring and submits (IORING_SETUP_SQPOLL), so submit()
  /// makes no system call while that thread is awake, and reap() spins on the CQ ring instead of
  /// sleeping, as fio does. Implies register_files (fio: sqthread_poll, which does the same).
  /// Costs a busy kernel thread; Linux < 5.11 allows it only with CAP_SYS_ADMIN.
  bool sqthread_poll = false;
  /// io_uring with sqthread_poll: pin the SQ thread to this CPU (IORING_SETUP_SQ_AFF); -1 = no
  /// pinning. fio: sqthread_poll_cpu.
  std::int32_t sqthread_poll_cpu = -1;
  /// io_uring with sqthread_poll: idle time after which the SQ thread sleeps (it is woken by the
  /// next submit() with IORING_ENTER_SQ_WAKEUP), in ms; 0 = the kernel's default (1000 ms).
  /// io_uring_setup(2) sq_thread_idle; fio has no option for it and uses the default.
  std::uint32_t sq_thread_idle_ms = 0;
};

/// Whether one optional mechanism of an engine works here (io_uring: "sqthread_poll",
/// "registered_files", "registered_buffers").
struct FeatureAvailability {
  std::string name;
  bool usable = false;
  std::string reason;  ///< why not usable; empty when usable
};

class IoEngine;

/// One I/O engine: everything the rest of drivelab knows about it, in one place. Defined in the
/// engine's own file and registered once in io/src/engine.cpp (engines()); every field is required
/// except the four at the end. tests/unit/io/engine_rows_test.cpp checks each row (and that every
/// io/src/*_engine.cpp has one).
struct EngineInfo {
  std::string_view name;     ///< what `engine:` / `--engine` and make_engine() accept ("io_uring")
  std::string_view summary;  ///< words for `drivelab list` and help: what it calls, fio's equivalent
  std::string_view note;     ///< a caveat that always applies (libaio: O_DIRECT only), or empty
  /// What it declares: the ONE copy, returned by every instance's capabilities() and by
  /// probe_engine() even where the kernel refuses it.
  Capabilities capabilities;
  /// Creates one (throws as make_engine says); nullptr when not compiled into this build.
  std::unique_ptr<IoEngine> (*make)(const EngineOptions& options);
  /// Its optional mechanisms, each tried here (probe_engine, when usable); nullptr if none.
  std::vector<FeatureAvailability> (*probe_features)() = nullptr;
  /// When `make` is nullptr: the CMake option and library that build it and the engines to use
  /// instead, for NotCompiledIn ("DRIVELAB_WITH_URING", "liburing", "libaio or psync").
  std::string_view build_option = {};
  std::string_view library = {};
  std::string_view instead = {};
};

/// Every registered engine, in the order of engine_names() (io/src/engine.cpp).
std::span<const EngineInfo* const> engines() noexcept;

/// What queue() did with a request.
enum class QueueStatus {
  queued,     ///< staged; the kernel sees it at the next submit()
  completed,  ///< already performed (synchronous engine); its completion comes from reap()
  busy,       ///< no room (queue_depth requests outstanding): reap first, then queue again
};

class IoEngine {
 public:
  virtual ~IoEngine() = default;
  IoEngine() = default;
  IoEngine(const IoEngine&) = delete;
  IoEngine& operator=(const IoEngine&) = delete;

  /// The engine's row (its name, capabilities, ...).
  virtual const EngineInfo& info() const noexcept = 0;
  /// "io_uring", "libaio", "psync", "null" — the name make_engine() accepts (the row's).
  std::string_view name() const noexcept { return info().name; }
  /// The row's capabilities.
  Capabilities capabilities() const noexcept { return info().capabilities; }
  /// The optional mechanisms this instance really uses, for the result record and for tests:
  /// io_uring: "registered_files", "registered_buffers" (after registration succeeded),
  /// "sqthread_poll", "coop_taskrun", "single_issuer", "defer_taskrun" (ring setup flags the
  /// kernel accepted). Empty for engines without options.
  virtual std::vector<std::string> features_in_use() const { return {}; }

  /// Declares the files that IoRequest::file_index refers to. Call once, before the first
  /// queue(); the fds must outlive the engine. Throws EnvironmentError if registration fails.
  virtual void register_files(std::span<const int> fds) = 0;
  /// Declares buffers that requests may name by IoRequest::buffer_index. Only engines with
  /// Capability::registered_buffers (and EngineOptions::register_buffers) use them; the others
  /// accept and ignore the call. Throws EnvironmentError (e.g. RLIMIT_MEMLOCK too low).
  virtual void register_buffers(std::span<const iovec> buffers) { (void)buffers; }

  /// Stages one request (see QueueStatus). Never throws for an I/O error: that is a completion.
  virtual QueueStatus queue(const IoRequest& request) = 0;
  /// Hands every staged request to the kernel in as few calls as the engine can (io_uring: one
  /// io_uring_submit). Returns the number of requests submitted now (synchronous engines: the
  /// number completed by queue() since the previous submit). Throws EnvironmentError on a fatal
  /// submission error; a full kernel queue (EAGAIN/EBUSY) returns 0 and leaves them staged.
  virtual std::size_t submit() = 0;
  /// The `timeout` of reap() that means "no timer": wait for the completions themselves.
  static constexpr std::chrono::nanoseconds kNoTimeout = std::chrono::nanoseconds::max();
  /// Moves up to out.size() completions into `out` and returns how many (out.size() is fio's
  /// iodepth_batch_complete_max). Waits until at least min(min_events, submitted I/Os)
  /// completions are available or `timeout` has passed (then returns what there is, possibly 0);
  /// min_events = 0 polls: whatever has completed by now, without sleeping (fio:
  /// iodepth_batch_complete_min=0). A signal (EINTR) also returns early.
  /// timeout == kNoTimeout waits without a timer, as fio does (io_uring_enter / io_getevents
  /// without a timeout): arming and cancelling an hrtimer on every wait costs microseconds per
  /// I/O at QD 1 on a VM (each timer programming can exit to the hypervisor). Use it only with
  /// I/Os in flight: the wait then ends at the next completion.
  virtual std::size_t reap(std::size_t min_events, std::span<IoCompletion> out, std::chrono::nanoseconds timeout) = 0;
  /// Requests queued (or completed by queue()) and not yet reaped.
  virtual std::size_t in_flight() const noexcept = 0;
};

/// Names make_engine() accepts, compiled in or not, in registration order: {"io_uring", "libaio",
/// "psync", "null"}.
std::vector<std::string_view> engine_names();

/// Whether an engine can be used here, without throwing (for `drivelab list` and test skips).
/// The three outcomes are different problems with different fixes, as in seastar's backend
/// selector: not known (a typo), not compiled in (rebuild), compiled in but refused by this
/// kernel or container (change the machine or use another engine).
struct EngineAvailability {
  bool known = false;         ///< one of engine_names()
  bool compiled_in = false;   ///< false: this binary was built without it (DRIVELAB_WITH_URING=OFF)
  bool usable = false;        ///< compiled in and the kernel lets us create one
  std::string reason;         ///< why not usable (the exception text make_engine gives); empty when usable
  Capabilities capabilities;  ///< what the engine declares (known engines, even when not usable)
  std::vector<FeatureAvailability> features;  ///< optional mechanisms, probed only when usable
  std::string note;                           ///< the row's caveat (libaio: O_DIRECT only), or empty
  std::string summary;                        ///< the row's words
};
/// Probes by creating (and destroying) small instances: io_uring a 2-entry ring (and one with
/// SQPOLL, one with a registered file and a registered 4 KiB buffer), libaio a 2-event context.
/// Never throws for an unusable engine.
EngineAvailability probe_engine(std::string_view name);

/// Creates an engine (see Threading above). Throws:
///  - ConfigError for an unknown name ("unknown I/O engine 'x' (choices: io_uring, libaio, psync,
///    null)") or a queue depth outside 1..65536;
///  - NotCompiledIn for an engine this binary was built without (DRIVELAB_WITH_URING=OFF,
///    DRIVELAB_WITH_LIBAIO=OFF): "the io_uring engine is not compiled into this build ...";
///  - EnvironmentError when this kernel or container refuses it, naming the errno and its usual
///    cause: "io_uring is disabled on this kernel or container: io_uring_setup failed: Operation
///    not permitted (EPERM); /proc/sys/kernel/io_uring_disabled is 2 ...", "io_uring refused
///    sqthread_poll ...", "libaio: io_setup(32) failed: Resource temporarily unavailable (EAGAIN):
///    the system-wide AIO limit is reached (fs.aio-nr / fs.aio-max-nr) ...".
std::unique_ptr<IoEngine> make_engine(std::string_view name, const EngineOptions& options = {});

}  // namespace drivelab::io
