#include "drivelab/io/storage_failure.hpp"

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"

namespace drivelab::io {

std::string storage_failure(const FailedIo& io, double seconds_into_phase, std::string_view phase) {
  const std::string cause = io.result < 0 ? errno_text(static_cast<int>(-io.result))
                                          : fmt::format("short transfer of {} bytes", io.result);
  return fmt::format("storage failure: {} of {} bytes at offset {} {} {}: {}, {:.2f} s into the {}", to_string(io.op),
                     io.length_bytes, io.offset_bytes, io.op == Op::write ? "to" : "from", io.file, cause,
                     seconds_into_phase, phase);
}

std::string storage_sync_failure(std::string_view file, std::string_view what, int errnum) {
  return fmt::format("storage failure: fdatasync of {} after {}: {}", file, what, errno_text(errnum));
}

}  // namespace drivelab::io
