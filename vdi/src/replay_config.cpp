#include "drivelab/vdi/replay_config.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/results/config_json.hpp"
#include "drivelab/runner/curve.hpp"
#include "drivelab/runner/engine_key.hpp"

namespace drivelab::vdi {
namespace {

// The keys of ReplaySettings, read from the same mapping as the kind's own keys.
void decode_settings(config::MapReader& r, const config::Node& section, ReplaySettings& s) {
  runner::decode_engine(r, s.engine);
  r.integer("queue_depth", s.queue_depth, {.min = 1, .max = 65536});
  if (r.size("file_size", s.file_size_bytes, {.min = std::uint64_t{1} << 20}) && s.file_size_bytes % 4096 != 0)
    section.child("file_size")
        .error(fmt::format("file_size must be a multiple of 4 KiB, found {}", format_size(s.file_size_bytes)));
  r.integer("targets", s.targets, {.min = 1, .max = 64});
  r.boolean("direct", s.direct);
  r.boolean("keep_file", s.keep_file);
  r.number("time_scale", s.time_scale, {.min = 1e-6, .max = 1e6});
  r.number("target_iops", s.target_iops, {.min = 0, .max = 1e9});
  r.boolean("no_stall", s.no_stall);
  if (const config::Node a = r.section("align"); a.defined()) {
    const std::string text = a.scalar();
    if (text == "auto") {
      s.align_bytes = 0;
    } else {
      try {
        const std::uint64_t v = parse_size(text);
        if (v < 512 || v > (1u << 20) || !std::has_single_bit(v))
          a.error(fmt::format("align must be 'auto' or a power of two from 512 B to 1 MiB, found '{}'", text));
        else
          s.align_bytes = static_cast<std::uint32_t>(v);
      } catch (const std::invalid_argument& e) {
        a.error(fmt::format("align must be 'auto' or a size: {}", e.what()));
      }
    }
  }
  r.size("offset_shift", s.offset_shift_bytes);
  r.boolean("verify", s.verify);
  if (const config::Node curve = r.section("curve"); curve.defined() && !curve.is_null()) {
    // [] (the default) is one replay; any other value is decoded as every kind's curve is.
    if (!curve.is_sequence() || !curve.elements().empty()) s.curve = runner::decode_curve(curve);
  }
  r.choice("curve_of", s.curve_of, kCurveOfNames);
  r.choice("flushes", s.flushes, kTraceActionNames);
  r.choice("discards", s.discards, kTraceActionNames);
}

/// The checks of the resolved trace file (replay_config.hpp): problems at `node`, naming the path
/// as written and as resolved.
void check_trace_file(const config::Node& node, const std::string& written, const std::filesystem::path& resolved,
                      trace::TraceFormat format, const trace::TraceReadOptions& options, std::string_view base) {
  const std::string where = written == resolved.string()
                                ? fmt::format("'{}'", written)
                                : fmt::format("'{}' (resolved to {})", written, resolved.string());
  struct stat st{};
  if (::stat(resolved.c_str(), &st) != 0) {
    const int err = errno;
    node.error(err == ENOENT || err == ENOTDIR
                   ? fmt::format("trace file {} does not exist{}", where,
                                 std::filesystem::path(written).is_relative()
                                     ? fmt::format(" (a relative trace path is resolved against {})", base)
                                     : std::string())
                   : fmt::format("trace file {}: {}", where, std::strerror(err)));
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    const std::string_view kind = trace::refused_file_kind(st.st_mode);
    node.error(
        fmt::format("trace file {} is {}: a replay reads its trace twice (a summary pass, then the replay), so "
                    "it must be a regular file",
                    where, kind.empty() ? std::string_view("a pipe") : kind));
    return;
  }
  try {
    (void)trace::open_trace(resolved, format, options);  // detects the format (first 4 KiB) or reads the header
  } catch (const trace::TraceFormatError& e) {
    if (format == trace::TraceFormat::automatic)
      node.error(
          fmt::format("trace file {}: unrecognised trace format (give one with `format:`; the detection rules "
                      "are in docs/vdi.md)",
                      where));
    else
      node.error(fmt::format("trace file {} is not a valid {} trace: {}", where, trace::to_string(format), e.what()));
  } catch (const ConfigError& e) {
    node.error(fmt::format("trace file {}: {}", where, e.what()));  // a time_unit the format does not take
  } catch (const Error& e) {
    node.error(fmt::format("trace file {} cannot be read: {}", where, e.what()));
  }
}

/// True when a relative path at `node` resolves against its protocol file's directory, false when
/// against the working directory (a --set value, a document that is not a file).
bool relative_to_file(const config::Node& node) {
  return node.location().file != "<--set>" && !node.file().empty() && node.file().front() != '<';
}

}  // namespace

std::filesystem::path resolve_trace_path(const config::Node& node, const std::string& written) {
  const std::filesystem::path p(written);
  if (p.is_absolute()) return p.lexically_normal();
  const std::filesystem::path base =
      relative_to_file(node) ? std::filesystem::path(node.file()).parent_path() : std::filesystem::path();
  return std::filesystem::absolute(base / p).lexically_normal();
}

ReplayConfig decode_replay(const config::Node& section) {
  ReplayConfig c;
  config::MapReader r(section);
  const bool trace_ok = r.string("trace", c.trace, true);
  bool format_ok = true;
  if (r.string("format", c.format)) {
    try {
      c.trace_format = trace::parse_trace_format(c.format);
    } catch (const ConfigError& e) {
      section.child("format").error(e.what());
      format_ok = false;
    }
  }
  if (r.string("time_unit", c.time_unit)) {
    try {
      c.read_options.time_unit = trace::parse_time_unit(c.time_unit);
    } catch (const ConfigError& e) {
      section.child("time_unit").error(e.what());
      format_ok = false;
    }
  }
  decode_settings(r, section, c.replay);
  r.finish();
  if (trace_ok) {
    const config::Node node = section.child("trace");
    if (c.trace.empty()) {
      node.error("expected the path of a trace file, found an empty string");
    } else {
      c.trace_path = resolve_trace_path(node, c.trace);
      if (format_ok)
        check_trace_file(node, c.trace, c.trace_path, c.trace_format, c.read_options,
                         relative_to_file(node) ? "the protocol file's directory" : "the working directory");
    }
  }
  return c;
}

VdiConfig decode_vdi(const config::Node& section) {
  VdiConfig c;
  config::MapReader r(section);
  r.choice("phase", c.model.phase, kVdiPhaseNames);
  r.choice("clones", c.model.clones, kCloneKindNames);
  r.integer("desktops", c.model.desktops, {.min = 1, .max = 100000});
  r.size("image_size", c.model.image_bytes, {.min = std::uint64_t{1} << 20});
  std::chrono::nanoseconds d{static_cast<std::int64_t>(c.model.stagger_s * 1e9)};
  if (r.duration("stagger", d)) c.model.stagger_s = static_cast<double>(d.count()) / 1e9;
  d = std::chrono::nanoseconds(0);
  if (r.duration("phase_length", d)) c.model.phase_s = static_cast<double>(d.count()) / 1e9;
  std::int64_t seed = 0;
  if (r.integer("seed", seed, {.min = 0})) {
    c.model.seed = static_cast<std::uint64_t>(seed);
    c.seed_given = true;
  }
  decode_settings(r, section, c.replay);
  r.finish();
  return c;
}

results::Json to_json(const ReplaySettings& s) {
  results::Json j{{"engine", s.engine},
                  {"queue_depth", s.queue_depth},
                  {"file_size", results::size_json(s.file_size_bytes)},
                  {"targets", s.targets},
                  {"direct", s.direct},
                  {"keep_file", s.keep_file},
                  {"time_scale", s.time_scale},
                  {"target_iops", s.target_iops},
                  {"no_stall", s.no_stall},
                  {"align", s.align_bytes == 0 ? results::Json("auto") : results::size_json(s.align_bytes)},
                  {"offset_shift", results::size_json(s.offset_shift_bytes)},
                  {"verify", s.verify},
                  {"curve", s.curve},
                  {"curve_of", to_string(s.curve_of)},
                  {"flushes", name_of(kTraceActionNames, s.flushes)},
                  {"discards", name_of(kTraceActionNames, s.discards)}};
  return j;
}

results::Json to_json(const ReplayConfig& c) {
  results::Json j = to_json(c.replay);
  j["trace"] = c.trace;
  j["trace_resolved"] = c.trace_path.string();
  j["format"] = c.format;
  if (!c.time_unit.empty()) j["time_unit"] = c.time_unit;
  return j;
}

results::Json to_json(const VdiConfig& c) {
  results::Json j = to_json(c.replay);
  j["phase"] = std::string(to_string(c.model.phase));
  j["clones"] = std::string(to_string(c.model.clones));
  j["desktops"] = c.model.desktops;
  j["image_size"] = results::size_json(c.model.image_bytes);
  j["stagger"] = format_duration(std::chrono::nanoseconds(std::llround(c.model.stagger_s * 1e9)));
  j["phase_length"] = format_duration(std::chrono::nanoseconds(std::llround(c.model.phase_s * 1e9)));
  if (c.seed_given) j["seed"] = c.model.seed;  // else the test's seed (in the record's tests[].seed)
  return j;
}

}  // namespace drivelab::vdi
