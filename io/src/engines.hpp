#pragma once
// Private: constructors of the engine leaves, used only by the factory in engine.cpp.
#include <memory>
#include <string>

#include "drivelab/io/engine.hpp"

namespace drivelab::io::detail {

std::unique_ptr<IoEngine> make_psync_engine(const EngineOptions& options);
std::unique_ptr<IoEngine> make_null_engine(const EngineOptions& options);
#ifdef DRIVELAB_HAVE_URING
/// Throws EnvironmentError when the kernel refuses a ring (see uring_unavailable_message).
std::unique_ptr<IoEngine> make_uring_engine(const EngineOptions& options);
#endif

/// "io_uring is not available on this kernel/container: io_uring_queue_init failed: <strerror>"
/// plus a hint for the errnos that have a usual cause (EPERM: kernel.io_uring_disabled or a
/// seccomp profile; ENOMEM: RLIMIT_MEMLOCK; ENOSYS: kernel without io_uring).
std::string uring_unavailable_message(int errnum);

}  // namespace drivelab::io::detail
