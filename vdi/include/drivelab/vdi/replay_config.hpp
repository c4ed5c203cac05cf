#pragma once
/// \file replay_config.hpp
/// The `replay:` and `vdi:` sections of tests of kinds `replay` (a trace file) and `vdi` (a VDI
/// model, vdi_model.hpp). Both share the replay keys (replay.hpp has the model, docs/vdi.md the
/// details):
///
///     - name: vdi-boot-linked
///       kind: vdi
///       duration: 10m          # longest a single replay may run; a replay cut short is reported
///       vdi: {phase: boot, clones: linked, desktops: 50, stagger: 1s, phase_length: 0s,
///             image_size: 256MiB, seed: 7,
///             engine: io_uring, queue_depth: 64, file_size: 4GiB, targets: 1, direct: true,
///             keep_file: true, time_scale: 1, target_iops: 0, no_stall: false, align: auto,
///             offset_shift: 0, verify: false, curve: [], curve_of: max,
///             flushes: replay, discards: replay}
///     - name: tpcc-trace
///       kind: replay
///       # relative to this protocol file's directory: config/ -> ../../shared/data/traces/...
///       replay: {trace: ../../shared/data/traces/umass_tpcc_small.trace, format: auto, time_scale: 0.5}
///
/// `time_unit` (ps, ns, us, ms, s; default: the format's own, e.g. ns for mqsim) is the unit of the
/// trace's timestamps for the formats whose file does not carry it (trace/readers.hpp
/// takes_time_unit); the summary pass and the replay both read the trace in it. Given for another
/// format, it is an error at the `trace` key.
///
/// Replay keys: `time_scale` multiplies trace times (0.5 = twice as fast); `target_iops` > 0 fits
/// the time scale to that rate instead; `no_stall` issues as fast as `queue_depth` allows;
/// `align` (auto = the target's O_DIRECT alignment, else a power of two >= 512, e.g. 4k);
/// `curve` percentages (vdbench style, e.g. [10, 50, 70, 80, 90, 100, 110, 120]) replay the
/// trace once at no_stall (the max run) and then once per point at pct % of `curve_of`: `max`
/// (the max run's IOPS, rounded as vdbench does, runner/curve.hpp) or `recorded` (the trace's own
/// rate). `flushes` (flush requests, preflushes and FUA writes as fdatasync) and `discards` (hole
/// punches) are `replay` (the default) or `skip` (each skipped one counted, the count warned
/// about in the record). Targets are files in a target directory (a block device is refused: device_access()
/// is `unsupported`). Errors are reported at file:line:column with the key path; unknown keys are errors.
///
/// `engine: null` unquoted is YAML's null value; it selects the null engine, as for kinds `io`
/// and `vdbench` (emulators/src/io_job.cpp).
///
/// The trace path (docs/vdi.md "Trace paths"): an absolute path is used as written; a relative
/// one is resolved against the directory of the protocol file that names it (as docker compose,
/// kustomize and vdbench include files do), so a protocol works from any working directory; a
/// value given on the command line (`--set tests[0].replay.trace=...`, reported at "<--set>") and
/// one in a document that is not a file (a name starting with '<') are resolved against the
/// working directory. decode_replay checks the resolved file at once (a stat and the first 4 KiB,
/// so `drivelab validate` and `drivelab run` report it before any work): it must exist, be a
/// regular file (the replay reads it twice: a summary pass, then the replay; a pipe or a device is
/// refused), be readable, and be in a format the reader recognises (`format: auto`: detected from
/// its first 4 KiB; a named format: its header read). Each problem is reported at the `trace` key
/// with the path as written and as resolved.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "drivelab/config/document.hpp"
#include "drivelab/core/names.hpp"
#include "drivelab/results/record.hpp"
#include "drivelab/trace/readers.hpp"
#include "drivelab/vdi/replay.hpp"
#include "drivelab/vdi/vdi_model.hpp"

namespace drivelab::vdi {

enum class CurveOf { max, recorded };
inline constexpr EnumNames<CurveOf, 2> kCurveOfNames{{{"max", CurveOf::max}, {"recorded", CurveOf::recorded}}};
inline std::string_view to_string(CurveOf c) noexcept { return name_of(kCurveOfNames, c); }

/// The keys both kinds share.
struct ReplaySettings {
  std::string engine = "io_uring";
  std::uint32_t queue_depth = 64;
  std::uint64_t file_size_bytes = std::uint64_t{1} << 30;  ///< each target file
  std::uint32_t targets = 1;                               ///< target files, 1..64
  bool direct = true;
  bool keep_file = true;
  double time_scale = 1.0;
  double target_iops = 0;  ///< > 0: fit the time scale to this rate
  bool no_stall = false;
  std::uint32_t align_bytes = 0;  ///< 0 = auto
  std::uint64_t offset_shift_bytes = 0;
  bool verify = false;
  std::vector<double> curve;  ///< empty: one replay
  CurveOf curve_of = CurveOf::max;
  TraceAction flushes = TraceAction::replay;   ///< `flushes: replay|skip` (replay.hpp "Operations")
  TraceAction discards = TraceAction::replay;  ///< `discards: replay|skip`
};

struct ReplayConfig {
  std::string trace;                                                ///< the trace path as written
  std::filesystem::path trace_path;                                 ///< resolved (absolute; see the rule above)
  std::string format = "auto";                                      ///< trace/readers.hpp names
  trace::TraceFormat trace_format = trace::TraceFormat::automatic;  ///< `format` parsed
  std::string time_unit;                                            ///< as written; empty: the format's own
  trace::TraceReadOptions read_options;  ///< `time_unit` parsed; what the replay opens the trace with
  ReplaySettings replay;
};

struct VdiConfig {
  VdiModelParams model;
  bool seed_given = false;  ///< false: the test's seed is used
  ReplaySettings replay;
};

/// The trace path `written` at `node` resolved by the rule above (absolute, lexically normal).
std::filesystem::path resolve_trace_path(const config::Node& node, const std::string& written);

/// Decode a `replay:` / `vdi:` section (undefined: defaults; `replay` needs `trace`, and checks
/// the trace file as described above). Problems go to the section's diagnostics.
ReplayConfig decode_replay(const config::Node& section);
VdiConfig decode_vdi(const config::Node& section);

results::Json to_json(const ReplaySettings& s);
results::Json to_json(const ReplayConfig& c);
results::Json to_json(const VdiConfig& c);

}  // namespace drivelab::vdi
