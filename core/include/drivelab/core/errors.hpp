#pragma once
/// \file errors.hpp
/// The small exception taxonomy of drivelab (after duckdb's exception.hpp). Exceptions are for
/// fatal conditions only; expected per-operation outcomes on hot paths (busy, retryable abort,
/// EAGAIN) are return values.
///
/// - ConfigError:       bad protocol / command-line input. Carries "file:line:column: key.path: msg".
/// - EnvironmentError:  the machine cannot do what was asked (no O_DIRECT on this filesystem,
///                      io_uring blocked by the kernel, disk too small, permission denied).
/// - NotCompiledIn:     a feature exists in drivelab but this binary was built without it
///                      (distinct from EnvironmentError, as seastar's backend selector does).
/// - BackendError:      a database backend failed fatally; carries the SQLSTATE or native code.
/// - InternalError:     a bug in drivelab (violated invariant).
#include <stdexcept>
#include <string>
#include <utility>

namespace drivelab {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ConfigError : public Error {
 public:
  using Error::Error;
};

class EnvironmentError : public Error {
 public:
  using Error::Error;
};

class NotCompiledIn : public EnvironmentError {
 public:
  using EnvironmentError::EnvironmentError;
};

class BackendError : public Error {
 public:
  /// \param sqlstate five-character SQLSTATE ("40001") or "" when the backend has none.
  /// \param native_code the backend's own error number (SQLite result code, MySQL errno), 0 if none.
  BackendError(const std::string& what, std::string sqlstate = {}, int native_code = 0)
      : Error(what), sqlstate_(std::move(sqlstate)), native_code_(native_code) {}
  const std::string& sqlstate() const noexcept { return sqlstate_; }
  int native_code() const noexcept { return native_code_; }

 private:
  std::string sqlstate_;
  int native_code_;
};

class InternalError : public Error {
 public:
  using Error::Error;
};

/// Throws EnvironmentError with `what` and strerror(errnum) appended ("open x: No such file").
[[noreturn]] void throw_errno(const std::string& what, int errnum);

/// An errno value as the I/O paths report it: strerror(3) and the symbolic name from glibc's
/// strerrorname_np(3), "Operation not permitted (EPERM)". A value without a name (0, negative,
/// unknown) keeps strerror's text and shows the number instead: "Unknown error 4242 (4242)".
/// Takes the positive errno; for an engine's negative result pass -result.
std::string errno_text(int errnum);

}  // namespace drivelab
