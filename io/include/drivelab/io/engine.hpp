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
/// submits them with one io_uring_enter(2); psync performs each I/O inside queue() and reports it
/// through reap() like any other, so a job has a single code path for every engine.
///
/// Queue depth (QD) semantics, as in fio: `EngineOptions::queue_depth` is the most requests one
/// engine instance holds between queue() and reap(). A synchronous engine (no Capability::async)
/// finishes each request inside queue(), so whatever QD is configured, at most ONE I/O of that
/// engine is ever outstanding at the device: psync's effective QD is 1 per job (fio: "iodepth
/// beyond 1 will not affect synchronous ioengines"). More outstanding I/Os need more jobs.
///
/// Threading: an engine instance belongs to one thread (one job); create one per job.
/// Errors: per-I/O failures (-EIO, -ENOSPC, short transfers) are results in IoCompletion, never
/// exceptions; setup failures throw EnvironmentError / NotCompiledIn (core/errors.hpp).
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
  std::uint32_t file_index = 0;     ///< index into the fds given to register_files()
  std::uint64_t offset_bytes = 0;
  std::uint32_t length_bytes = 0;
  std::byte* buffer = nullptr;
  /// Index into the buffers given to register_buffers() when `buffer` lies inside one of them
  /// (io_uring then uses READ_FIXED / WRITE_FIXED); -1 = not a registered buffer.
  std::int32_t buffer_index = -1;
  std::uint64_t user_data = 0;      ///< returned unchanged in the IoCompletion
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
  /// Names of the set flags ("async", "batched", ...), in declaration order.
  std::vector<std::string> names() const;

 private:
  std::uint32_t bits_ = 0;
};

/// Options common to every engine; an engine ignores what it cannot do (see capabilities()).
struct EngineOptions {
  /// Most requests held between queue() and reap() (io_uring: SQ entries, rounded up to a power
  /// of two by the kernel). 1..65536.
  std::uint32_t queue_depth = 32;
  /// io_uring: register the fds with the ring (IOSQE_FIXED_FILE; saves an fget/fput per I/O).
  /// fio: registerfiles (default off).
  bool register_files = false;
  /// io_uring: honour register_buffers() (READ_FIXED/WRITE_FIXED; pages pinned once instead of per
  /// I/O). fio: fixedbufs (default off).
  bool register_buffers = false;
};

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

  /// "io_uring", "psync", "null" — the name make_engine() accepts.
  virtual std::string_view name() const noexcept = 0;
  virtual Capabilities capabilities() const noexcept = 0;

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
  /// Moves up to out.size() completions into `out` and returns how many. Waits until at least
  /// min(min_events, in_flight()) completions are available or `timeout` has passed (then
  /// returns what there is, possibly 0). A signal (EINTR) also returns early.
  virtual std::size_t reap(std::size_t min_events, std::span<IoCompletion> out,
                           std::chrono::nanoseconds timeout) = 0;
  /// Requests queued (or completed by queue()) and not yet reaped.
  virtual std::size_t in_flight() const noexcept = 0;
};

/// Names make_engine() accepts, compiled in or not: {"io_uring", "psync", "null"}.
std::vector<std::string_view> engine_names();

/// Whether an engine can be used here, without throwing (for `drivelab list` and test skips).
struct EngineAvailability {
  bool known = false;         ///< one of engine_names()
  bool compiled_in = false;   ///< false: this binary was built without it (DRIVELAB_WITH_URING=OFF)
  bool usable = false;        ///< compiled in and the kernel lets us create one
  std::string reason;         ///< why not usable; empty when usable
};
/// Probes by creating (and destroying) a small instance. io_uring: a 2-entry ring.
EngineAvailability probe_engine(std::string_view name);

/// Creates an engine. Throws:
///  - ConfigError for an unknown name ("unknown I/O engine 'x' (choices: io_uring, psync, null)");
///  - NotCompiledIn for io_uring in a build without liburing;
///  - EnvironmentError when the kernel refuses ("io_uring is not available on this
///    kernel/container: io_uring_queue_init failed: Operation not permitted (is
///    kernel.io_uring_disabled set?)").
std::unique_ptr<IoEngine> make_engine(std::string_view name, const EngineOptions& options = {});

}  // namespace drivelab::io
