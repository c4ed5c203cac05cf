#include "drivelab/emulators/register.hpp"

#include "drivelab/runner/emulator_type.hpp"

#include "io_emulator.hpp"
#include "precondition_emulator.hpp"
#include "video_emulator.hpp"
#include "vdbench_emulator.hpp"

namespace drivelab::emulators {

void register_emulators(runner::Registry& registry) {
  using runner::construct;
  using runner::emulator_type;
  registry.add(emulator_type("io", "one fio-style job: fixed-QD random or sequential I/O on a file in the target",
                             decode_io_job, construct<detail::IoEmulator>{}));
  registry.add(emulator_type("precondition",
                             "fill the target (device, region or file) sequentially, then random 4K write passes",
                             decode_precondition, construct<detail::PreconditionEmulator>{}));
  registry.add(emulator_type(
      "video", "Blackmagic-style video test: frame-sized writes then reads, formats and frame rates sustained",
      decode_video, construct<detail::VideoEmulator>{}));
  registry.add(emulator_type(
      "vdbench", "vdbench-style workloads: skewed mixes, iorate max | N | curve, open-loop latency and lateness",
      decode_vdbench, construct<detail::VdbenchEmulator>{}));
}

}  // namespace drivelab::emulators
