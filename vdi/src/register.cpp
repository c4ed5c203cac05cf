#include "drivelab/vdi/register.hpp"

#include "drivelab/trace/readers.hpp"
#include "drivelab/vdi/replay_config.hpp"
#include "drivelab/vdi/vdi_model.hpp"
#include "replay_emulator.hpp"

namespace drivelab::vdi {

void register_emulators(runner::Registry& registry) {
  registry.add(
      {.kind = "replay",
       .summary = "replay a block trace (fio iolog, blkparse, MSR, CloudPhysics, MQSim, SYSTOR VDI, ...) open loop, or "
                  "as a curve",
       .decode = [](const config::Node& section, const runner::TestSettings&) -> std::unique_ptr<runner::Emulator> {
         ReplayConfig c = decode_replay(section);  // checks the trace file (replay_config.hpp)
         const trace::TraceFormat format = c.trace_format;
         const std::filesystem::path path = c.trace_path;
         const trace::TraceReadOptions options = c.read_options;  // time_unit
         return std::make_unique<detail::ReplayEmulator>(c.replay, to_json(c), [path, format, options](std::uint64_t) {
           return trace::open_trace(path, format, options);
         });
       }});
  registry.add(
      {.kind = "vdi",
       .summary =
           "VDI boot / initial login / Monday login of N full or linked clones, replayed open loop or as a curve",
       .decode = [](const config::Node& section, const runner::TestSettings&) -> std::unique_ptr<runner::Emulator> {
         VdiConfig c = decode_vdi(section);
         const VdiModelParams model = c.model;
         const bool seed_given = c.seed_given;
         auto e = std::make_unique<detail::ReplayEmulator>(c.replay, to_json(c),
                                                           [model, seed_given](std::uint64_t test_seed) {
                                                             VdiModelParams m = model;
                                                             if (!seed_given) m.seed = test_seed;
                                                             return std::make_unique<VdiModelSource>(m);
                                                           });
         e->set_summary_check(
             [model](results::TestRecorder& rec, const TraceSummary& s) { check_against_profile(rec, model, s); });
         return e;
       }});
}

}  // namespace drivelab::vdi
