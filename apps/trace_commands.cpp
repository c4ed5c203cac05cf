// `drivelab trace stat|convert` (docs/vdi.md "drivelab trace").
#include <filesystem>
#include <iostream>

#include <unistd.h>

#include <fmt/format.h>

#include "commands.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/trace/convert.hpp"
#include "drivelab/trace/native.hpp"
#include "drivelab/trace/readers.hpp"
#include "drivelab/trace/stat.hpp"

namespace drivelab::app {
namespace {

trace::TraceReadOptions read_options(const TraceArgs& args) {
  trace::TraceReadOptions options;
  if (args.blkparse_event == "D" || args.blkparse_event == "d") {
    options.blkparse_event = trace::BlkparseEvent::dispatch;
  } else if (args.blkparse_event != "Q" && args.blkparse_event != "q") {
    throw ConfigError(fmt::format("--blkparse-event: expected Q or D, got '{}'", args.blkparse_event));
  }
  if (!args.time_unit.empty()) options.time_unit = trace::parse_time_unit(args.time_unit);
  options.fio_wait = trace::parse_fio_wait(args.fio_wait);
  return options;
}

}  // namespace

int cmd_trace_stat(const TraceArgs& args) {
  try {
    auto source = trace::open_trace(args.input, trace::parse_trace_format(args.format), read_options(args));
    const trace::TraceStats stats = trace::compute_trace_stats(*source);
    std::cout << (args.json ? trace::trace_stats_json(stats) : trace::format_trace_stats(stats));
    return kExitOk;
  } catch (const trace::TraceFormatError& e) {
    std::cerr << "drivelab: " << e.what() << '\n';
    return kExitBadInput;
  }
}

int cmd_trace_convert(const TraceArgs& args) {
  try {
    // The writers truncate OUT before the reader has read IN: the same file would be lost.
    std::error_code ec;
    if (std::filesystem::equivalent(args.input, args.output, ec))
      throw ConfigError(
          fmt::format("output '{}' is the input trace itself; write to another file", args.output.string()));
    auto source = trace::open_trace(args.input, trace::parse_trace_format(args.format), read_options(args));
    if (args.to != "native" && args.to != "fio-iolog-v3")
      throw ConfigError(fmt::format("--to: expected native or fio-iolog-v3, got '{}'", args.to));
    // A regular OUT (or a new one) is written beside itself and renamed over it only when
    // complete: an input that turns out truncated or garbage halfway leaves OUT as it was.
    // Anything else is written directly, through the name as given: a symbolic link (never
    // replaced by a file: /dev/stdout is one, and renaming over it would take stdout away from
    // every process), a device, a pipe. The name is looked at without following links.
    // "-" is standard output.
    const std::filesystem::path out_name = args.output == "-" ? std::filesystem::path("/dev/stdout") : args.output;
    const std::filesystem::file_status st = std::filesystem::symlink_status(out_name, ec);
    const bool special =
        st.type() != std::filesystem::file_type::not_found && st.type() != std::filesystem::file_type::regular;
    const std::filesystem::path file =
        special ? out_name : std::filesystem::path(out_name.string() + fmt::format(".drivelab-tmp-{}", ::getpid()));
    struct RemoveUnlessKept {
      std::filesystem::path path;
      bool keep = false;
      ~RemoveUnlessKept() {
        std::error_code ignored;
        if (!keep) std::filesystem::remove(path, ignored);
      }
    } partial{special ? std::filesystem::path() : file};
    if (args.to == "native") {
      const std::uint64_t records = trace::write_native_trace(*source, file);
      std::cerr << fmt::format("drivelab: wrote {} requests on {} devices to {} (native)\n", records,
                               source->devices().size(), args.output.string());
    } else if (args.to == "fio-iolog-v3") {
      trace::FioIologOptions options;
      options.file_name = args.fio_file;
      const trace::ConvertSummary summary = trace::write_fio_iolog_v3(*source, file, options);
      std::cerr << fmt::format("drivelab: wrote {} requests on {} devices to {} (fio iolog v3)", summary.ios_written,
                               summary.devices, args.output.string());
      if (summary.skipped_empty)
        std::cerr << fmt::format("; skipped {} zero-length reads/writes", summary.skipped_empty);
      std::cerr << '\n';
    }
    if (!special) {
      std::filesystem::rename(file, out_name);  // throws filesystem_error naming both paths
      partial.keep = true;
    }
    return kExitOk;
  } catch (const trace::TraceFormatError& e) {
    std::cerr << "drivelab: " << e.what() << '\n';
    return kExitBadInput;
  }
}

}  // namespace drivelab::app
