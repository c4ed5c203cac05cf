#pragma once
/// \file register.hpp
/// The VDI kinds, added to a Registry by hand (apps/registry.cpp):
///  - `replay`: a block trace file replayed onto files in the target (replay_config.hpp).
///  - `vdi`: a generated VDI phase (boot, initial_login, monday_login; full or linked clones)
///    replayed the same way (vdi_model.hpp).
/// Throws InternalError if a kind is already registered.
#include "drivelab/runner/emulator.hpp"

namespace drivelab::vdi {

void register_emulators(runner::Registry& registry);

}  // namespace drivelab::vdi
