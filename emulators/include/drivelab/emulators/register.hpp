#pragma once
/// \file register.hpp
/// The synthetic I/O emulators of drivelab, added to a Registry by hand (no static
/// self-registration: the linker would drop it from a static library).
#include "drivelab/runner/emulator.hpp"

namespace drivelab::emulators {

/// Adds every emulator of this component:
///  - `io`: one fio-style job — fixed-QD random or sequential I/O on a file in the target
///    (emulators/io_job.hpp, docs/io.md).
///  - `precondition`: sequential fill, then random write passes, of a device region or a data file
///    (emulators/precondition.hpp, docs/targets.md).
///  - `video`: frame-sized write and read passes, like Blackmagic Disk Speed Test
///    (emulators/video.hpp, docs/video.md).
/// Throws InternalError if a kind is already registered.
void register_emulators(runner::Registry& registry);

}  // namespace drivelab::emulators
