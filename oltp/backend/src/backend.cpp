#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backend/server.hpp"

#include <fmt/format.h>

namespace drivelab::oltp {

std::string_view to_string(Outcome o) noexcept {
  switch (o) {
    case Outcome::ok: return "ok";
    case Outcome::retryable: return "retryable";
    case Outcome::in_doubt: return "in_doubt";
    case Outcome::fatal: return "fatal";
  }
  return "unknown";
}

std::string DbStatus::to_string() const {
  std::string s = fmt::format("{}: {}", oltp::to_string(outcome), message.empty() ? "-" : message);
  if (!sqlstate.empty()) s += fmt::format(" (SQLSTATE {})", sqlstate);
  if (native_code != 0) s += fmt::format(" (native {})", native_code);
  return s;
}

}  // namespace drivelab::oltp
