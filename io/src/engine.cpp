#include "drivelab/io/engine.hpp"

#include <span>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/rows.hpp"

namespace drivelab::io {

std::string_view to_string(Op op) noexcept { return op == Op::read ? "read" : "write"; }

std::vector<std::string> Capabilities::names() const {
  static constexpr std::pair<Capability, const char*> kNames[] = {
      {Capability::async, "async"},
      {Capability::batched, "batched"},
      {Capability::supports_direct, "supports_direct"},
      {Capability::registered_files, "registered_files"},
      {Capability::registered_buffers, "registered_buffers"},
      {Capability::no_io, "no_io"},
  };
  std::vector<std::string> out;
  for (const auto& [cap, name] : kNames)
    if (has(cap)) out.emplace_back(name);
  return out;
}

// ---- The registration list -----------------------------------------------------------------------
// ONE row per engine. Each name is an EngineInfo defined in the engine's own file, as
// detail::rows::NAME (uring_engine.cpp, libaio_engine.cpp, psync_engine.cpp, null_engine.cpp);
// DRIVELAB_ROW_TABLE (core/rows.hpp) declares and references every one. The order is that of
// engine_names(), `drivelab list` and the messages.
// clang-format off: one row per line
#define DRIVELAB_IO_ENGINES(ROW) \
  ROW(uring) \
  ROW(libaio) \
  ROW(psync) \
  ROW(null)
// clang-format on

DRIVELAB_ROW_TABLE(EngineInfo, DRIVELAB_IO_ENGINES, kEngines)

namespace {
const EngineInfo* find_engine(std::string_view name) {
  for (const EngineInfo* e : kEngines)
    if (e->name == name) return e;
  return nullptr;
}
}  // namespace

std::span<const EngineInfo* const> engines() noexcept { return kEngines; }

std::vector<std::string_view> engine_names() {
  std::vector<std::string_view> out;
  for (const EngineInfo* e : kEngines) out.push_back(e->name);
  return out;
}

std::unique_ptr<IoEngine> make_engine(std::string_view name, const EngineOptions& options) {
  if (options.queue_depth < 1 || options.queue_depth > 65536)
    throw ConfigError(fmt::format("I/O engine queue depth {} is out of range 1..65536", options.queue_depth));
  const EngineInfo* e = find_engine(name);
  if (e == nullptr)
    throw ConfigError(fmt::format("unknown I/O engine '{}' (choices: {})", name, fmt::join(engine_names(), ", ")));
  if (e->make != nullptr) return e->make(options);
  // An optional engine this build has not compiled in (DRIVELAB_WITH_URING / DRIVELAB_WITH_LIBAIO,
  // io/CMakeLists.txt): the option, the library and the alternatives.
  throw NotCompiledIn(fmt::format(
      "the {} engine is not compiled into this build of drivelab (configured with {}=OFF or without {}); use "
      "engine {}",
      e->name, e->build_option, e->library, e->instead));
}

EngineAvailability probe_engine(std::string_view name) {
  EngineAvailability a;
  const EngineInfo* e = find_engine(name);
  if (e == nullptr) {
    a.reason = fmt::format("unknown I/O engine '{}'", name);
    return a;
  }
  a.known = true;
  a.note = std::string(e->note);
  a.summary = std::string(e->summary);
  a.capabilities = e->capabilities;  // what it declares, even where the kernel refuses it
  try {
    EngineOptions small;
    small.queue_depth = 2;
    (void)make_engine(name, small);
    a.compiled_in = true;
    a.usable = true;
  } catch (const NotCompiledIn& ex) {
    a.reason = ex.what();
  } catch (const Error& ex) {
    a.compiled_in = true;
    a.reason = ex.what();
  }
  if (a.usable && e->probe_features != nullptr) a.features = e->probe_features();
  return a;
}

}  // namespace drivelab::io
