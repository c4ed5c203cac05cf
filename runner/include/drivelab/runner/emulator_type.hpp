#pragma once
/// \file emulator_type.hpp
/// Registering a kind from its two halves: the decoder of its section (a config struct, no I/O;
/// problems into the section's Diagnostics) and the factory that builds the emulator from that
/// config and the test's common settings. The kinds' register.cpp files list their kinds with it,
/// so each registration is one line of names rather than a lambda written again.
///
///     registry.add(runner::emulator_type("io", "one fio-style job ...", decode_io_job,
///                                        runner::construct<detail::IoEmulator>{}));
#include <memory>
#include <string>
#include <utility>

#include "drivelab/runner/emulator.hpp"

namespace drivelab::runner {

/// The EmulatorType whose decode is `make(decode(section), settings)`. `decode`:
/// Config(const config::Node&); `make`: std::unique_ptr<Emulator>(Config, const TestSettings&).
template <class Decode, class Make>
EmulatorType emulator_type(std::string kind, std::string summary, Decode decode, Make make) {
  return {std::move(kind), std::move(summary),
          [decode, make](const config::Node& section, const TestSettings& settings) -> std::unique_ptr<Emulator> {
            return make(decode(section), settings);
          }};
}

/// A `make` for an emulator constructed from its config alone (`explicit E(Config)`).
template <class E>
struct construct {
  template <class Config>
  std::unique_ptr<Emulator> operator()(Config config, const TestSettings&) const {
    return std::make_unique<E>(std::move(config));
  }
};

}  // namespace drivelab::runner
