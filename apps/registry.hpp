#pragma once
/// \file registry.hpp
/// The one explicit list of emulator kinds this binary offers (no static self-registration: the
/// linker drops those from static libraries; docs/protocol.md §3).
#include "drivelab/runner/emulator.hpp"

namespace drivelab::app {

runner::Registry make_registry();

}  // namespace drivelab::app
