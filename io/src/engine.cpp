#include "drivelab/io/engine.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
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

std::vector<std::string_view> engine_names() { return {"io_uring", "psync", "null"}; }

namespace detail {

std::string uring_unavailable_message(int errnum) {
  std::string msg = fmt::format("io_uring is not available on this kernel/container: io_uring_queue_init failed: {}",
                                std::strerror(errnum));
  switch (errnum) {
    case EPERM: msg += " (is kernel.io_uring_disabled set?)"; break;
    case ENOSYS: msg += " (the kernel was built without io_uring, or a seccomp filter hides it)"; break;
    case ENOMEM: msg += " (locked-memory limit too low? see ulimit -l)"; break;
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
  if (name == "io_uring") {
#ifdef DRIVELAB_HAVE_URING
    return detail::make_uring_engine(options);
#else
    throw NotCompiledIn(
        "the io_uring engine is not compiled into this build of drivelab (configured with "
        "DRIVELAB_WITH_URING=OFF or without liburing); use engine psync");
#endif
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
  try {
    EngineOptions small;
    small.queue_depth = 2;
    make_engine(name, small);
    a.compiled_in = true;
    a.usable = true;
  } catch (const NotCompiledIn& e) {
    a.reason = e.what();
  } catch (const Error& e) {
    a.compiled_in = true;
    a.reason = e.what();
  }
  return a;
}

}  // namespace drivelab::io
