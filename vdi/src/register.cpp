#include "drivelab/vdi/register.hpp"

#include <cmath>

#include <fmt/format.h>

#include "drivelab/results/recorder.hpp"

#include "drivelab/vdi/replay_config.hpp"
#include "drivelab/trace/readers.hpp"
#include "drivelab/vdi/vdi_model.hpp"
#include "replay_emulator.hpp"

namespace drivelab::vdi {
namespace {

/// The generated stream against its documented profile (docs/vdi.md "## VDI models"): read %,
/// mean request size and IOPS per desktop, measured from the stream, each within 5% (checked when
/// every desktop issues at least 100 requests).
void check_against_profile(results::TestRecorder& rec, const VdiModelParams& model, const TraceSummary& s) {
  const PhaseProfile& prof = phase_profile(model.phase, model.clones);
  const double rw = static_cast<double>(s.reads + s.writes);
  if (rw <= 0) return;
  const double phase_s = model.phase_s > 0 ? model.phase_s : prof.phase_s;
  const double read_pct = 100.0 * static_cast<double>(s.reads) / rw;
  const double mean_size = static_cast<double>(s.read_bytes + s.write_bytes) / rw;
  const double iops_per_desktop = rw / static_cast<double>(model.desktops) / phase_s;
  const auto within = [](double measured, double target) { return std::abs(measured - target) <= 0.05 * target; };
  // A desktop issues round(IOPS x phase) requests: below 100 the rounding alone can exceed 5%, and
  // the ratios have too few requests to settle; the numbers are recorded, the check is not made.
  const double per_desktop = std::round(prof.iops_per_desktop * phase_s);
  rec.group_metric("model", "read_pct", read_pct, "%", fmt::format("generated; profile {:g}%", prof.read_pct));
  rec.group_metric("model", "mean_size_bytes", mean_size, "bytes", fmt::format("generated; profile {:.0f}", prof.mean_size_bytes()));
  rec.group_metric("model", "iops_per_desktop", iops_per_desktop, "1/s",
                   fmt::format("generated; profile {:g}", prof.iops_per_desktop));
  if (per_desktop < 100) return;
  rec.check("model: the generated workload matches its documented profile within 5%",
            within(read_pct, prof.read_pct) && within(mean_size, prof.mean_size_bytes()) &&
                within(iops_per_desktop, prof.iops_per_desktop),
            fmt::format("reads {:.2f}% (profile {:g}%), mean size {:.0f} B (profile {:.0f} B), {:.2f} IOPS per desktop "
                        "(profile {:g})",
                        read_pct, prof.read_pct, mean_size, prof.mean_size_bytes(), iops_per_desktop,
                        prof.iops_per_desktop));
}

}  // namespace

void register_emulators(runner::Registry& registry) {
  registry.add({.kind = "replay",
                .summary = "replay a block trace (fio iolog, blkparse, MSR, CloudPhysics, UMass, ...) open loop, or as a curve",
                .decode = [](const config::Node& section, const runner::TestSettings&) -> std::unique_ptr<runner::Emulator> {
                  ReplayConfig c = decode_replay(section);  // checks the trace file (replay_config.hpp)
                  const trace::TraceFormat format = c.trace_format;
                  const std::filesystem::path path = c.trace_path;
                  return std::make_unique<detail::ReplayEmulator>(
                      c.replay, to_json(c), [path, format](std::uint64_t) { return trace::open_trace(path, format); });
                }});
  registry.add({.kind = "vdi",
                .summary = "VDI boot / initial login / Monday login of N full or linked clones, replayed open loop or as a curve",
                .decode = [](const config::Node& section, const runner::TestSettings&) -> std::unique_ptr<runner::Emulator> {
                  VdiConfig c = decode_vdi(section);
                  const VdiModelParams model = c.model;
                  const bool seed_given = c.seed_given;
                  auto e = std::make_unique<detail::ReplayEmulator>(
                      c.replay, to_json(c), [model, seed_given](std::uint64_t test_seed) {
                        VdiModelParams m = model;
                        if (!seed_given) m.seed = test_seed;
                        return std::make_unique<VdiModelSource>(m);
                      });
                  e->set_summary_check([model](results::TestRecorder& rec, const TraceSummary& s) {
                    check_against_profile(rec, model, s);
                  });
                  return e;
                }});
}

}  // namespace drivelab::vdi
