#include "drivelab/core/errors.hpp"

#include <cstring>

#include <fmt/format.h>

namespace drivelab {

void throw_errno(const std::string& what, int errnum) { throw EnvironmentError(what + ": " + std::strerror(errnum)); }

std::string errno_text(int errnum) {
  const char* name = strerrorname_np(errnum);
  return fmt::format("{} ({})", std::strerror(errnum), name ? name : std::to_string(errnum));
}

}  // namespace drivelab
