#include "drivelab/runner/engine_key.hpp"

#include "drivelab/io/engine.hpp"

namespace drivelab::runner {

void decode_engine(config::MapReader& r, std::string& engine) {
  const config::Node& section = r.node();
  if (section.is_map()) {
    if (const config::Node e = section.child("engine"); e.defined() && e.is_null()) {
      r.accept("engine");
      engine = "null";
      return;
    }
  }
  r.choice("engine", engine, io::engine_names());
}

}  // namespace drivelab::runner
