#include "drivelab/core/errors.hpp"

#include <cstring>

namespace drivelab {

void throw_errno(const std::string& what, int errnum) {
  throw EnvironmentError(what + ": " + std::strerror(errnum));
}

}  // namespace drivelab
