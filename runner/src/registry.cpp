#include <algorithm>

#include "drivelab/core/errors.hpp"
#include "drivelab/runner/emulator.hpp"

namespace drivelab::runner {

void Registry::add(EmulatorType type) {
  if (find(type.kind) != nullptr) throw InternalError("emulator kind registered twice: " + type.kind);
  types_.push_back(std::move(type));
}

const EmulatorType* Registry::find(std::string_view kind) const noexcept {
  auto it = std::find_if(types_.begin(), types_.end(), [&](const EmulatorType& t) { return t.kind == kind; });
  return it == types_.end() ? nullptr : &*it;
}

std::vector<std::string> Registry::kinds() const {
  std::vector<std::string> out;
  for (const auto& t : types_) out.push_back(t.kind);
  return out;
}

}  // namespace drivelab::runner
