#include "drivelab/io/storage_failure.hpp"

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"

namespace drivelab::io {

std::string storage_failure(const FailedIo& io, double seconds_into_phase, std::string_view phase) {
  const std::string cause =
      io.result < 0 ? errno_text(static_cast<int>(-io.result)) : fmt::format("short transfer of {} bytes", io.result);
  const std::string_view operation = io.operation.empty() ? to_string(io.op) : io.operation;
  if (io.length_bytes == 0)
    return fmt::format("storage failure: {} of {}: {}, {:.2f} s into the {}", operation, io.file, cause,
                       seconds_into_phase, phase);
  return fmt::format("storage failure: {} of {} bytes at offset {} {} {}: {}, {:.2f} s into the {}", operation,
                     io.length_bytes, io.offset_bytes, io.op == Op::read ? "from" : "to", io.file, cause,
                     seconds_into_phase, phase);
}

std::string storage_sync_failure(std::string_view file, std::string_view what, int errnum) {
  return fmt::format("storage failure: fdatasync of {} after {}: {}", file, what, errno_text(errnum));
}

}  // namespace drivelab::io
