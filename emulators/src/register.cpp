#include "drivelab/emulators/register.hpp"

#include "io_emulator.hpp"
#include "precondition_emulator.hpp"
#include "video_emulator.hpp"
#include "vdbench_emulator.hpp"

namespace drivelab::emulators {

void register_emulators(runner::Registry& registry) {
  registry.add({.kind = "io",
                .summary = "one fio-style job: fixed-QD random or sequential I/O on a file in the target",
                .decode = [](const config::Node& section, const runner::TestSettings&) -> std::unique_ptr<runner::Emulator> {
                  return std::make_unique<detail::IoEmulator>(decode_io_job(section));
                }});
  registry.add({.kind = "precondition",
                .summary = "fill the target (device, region or file) sequentially, then random 4K write passes",
                .decode = [](const config::Node& section, const runner::TestSettings&) -> std::unique_ptr<runner::Emulator> {
                  return std::make_unique<detail::PreconditionEmulator>(decode_precondition(section));
                }});
  registry.add({.kind = "video",
                .summary = "Blackmagic-style video test: frame-sized writes then reads, formats and frame rates sustained",
                .decode = [](const config::Node& section, const runner::TestSettings&) -> std::unique_ptr<runner::Emulator> {
                  return std::make_unique<detail::VideoEmulator>(decode_video(section));
                }});
  registry.add({.kind = "vdbench",
                .summary = "vdbench-style workloads: skewed mixes, iorate max | N | curve, open-loop latency and lateness",
                .decode = [](const config::Node& section, const runner::TestSettings&) -> std::unique_ptr<runner::Emulator> {
                  return std::make_unique<detail::VdbenchEmulator>(decode_vdbench(section));
                }});
}

}  // namespace drivelab::emulators
