#include "drivelab/runner/engine_key.hpp"

#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "drivelab/io/engine.hpp"

namespace drivelab::runner {

void decode_engine(config::MapReader& r, std::string& engine) {
  const config::Node& section = r.node();
  if (section.is_map()) {
    if (const config::Node e = section.child("engine"); e.defined() && e.is_null()) {
      r.accept("engine");
      const std::optional<std::string> spelled = e.written();
      if (!spelled || *spelled == "null" || *spelled == "Null" || *spelled == "NULL") {
        engine = "null";
        return;
      }
      e.error(
          fmt::format("engine has no value ({} is YAML's null): give one of {}, or leave the key out for the "
                      "default{}",
                      *spelled == "~" ? "'~'" : "an empty value", fmt::join(io::engine_names(), ", "),
                      engine.empty() ? "" : fmt::format(" ({})", engine)));
      return;
    }
  }
  r.choice("engine", engine, io::engine_names());
}

}  // namespace drivelab::runner
