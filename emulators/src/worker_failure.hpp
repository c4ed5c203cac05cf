#pragma once
// The failure plumbing of an emulator's worker threads: the io emulator's IoWorkers and the
// vdbench emulator's VdbenchJobs each record their first error (failed(), error()) and stop; the
// emulator's thread asks any_worker_failed() while it waits (core/phase.hpp's abort) and then
// throws the first worker's error, which ends the test as failed.
#include <algorithm>
#include <string>

#include "drivelab/core/errors.hpp"

namespace drivelab::emulators::detail {

/// Whether any of `workers` (a range of pointers to objects with `bool failed() const`) failed.
template <class Workers>
bool any_worker_failed(const Workers& workers) noexcept {
  return std::any_of(workers.begin(), workers.end(), [](const auto& w) { return w->failed(); });
}

/// Throws EnvironmentError with the error() of the first failed worker (a storage error such as
/// EIO or ENOSPC: the machine could not do the I/O), or InternalError(`no_message`) if none of
/// them failed (a caller's bug: call it after any_worker_failed()).
template <class Workers>
[[noreturn]] void throw_worker_error(const Workers& workers, const char* no_message) {
  for (const auto& w : workers)
    if (w->failed()) throw EnvironmentError(w->error());
  throw InternalError(no_message);
}

}  // namespace drivelab::emulators::detail
