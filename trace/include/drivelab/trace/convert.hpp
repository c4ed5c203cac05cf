#pragma once
/// \file convert.hpp
/// `drivelab trace convert`: writes any TraceSource as a fio iolog v3 that fio 3.33 replays
/// (`fio --read_iolog=OUT --ioengine=psync ...`), streaming with bounded memory. The native
/// writer is in native.hpp.
#include <cstdint>
#include <filesystem>
#include <string>

#include "drivelab/trace/source.hpp"

namespace drivelab::trace {

/// How trace devices become fio file names.
struct FioIologOptions {
  /// Every trace device onto this one file name (fio `filename`); empty: one file per trace
  /// device, named `file_prefix` + device index ("trace-dev0", ...). fio opens the names written
  /// in the log; `--replay_redirect=PATH` sends them all to one file or device instead.
  std::string file_name;
  std::string file_prefix = "trace-dev";
};

/// What a conversion wrote.
struct ConvertSummary {
  std::uint64_t ios_written = 0;    ///< read/write/trim/sync lines
  std::uint64_t skipped_empty = 0;  ///< zero-length reads and writes (fio rejects them)
  std::uint64_t devices = 0;        ///< trace devices seen
};

/// Writes `source` as "fio version 3 iolog". Timestamps are whole µs since the first request
/// (fio 3.33 replays a v3 gap of N as N µs), plus 1 µs: fio's delay_since_ttime() ignores the gap
/// after a zero timestamp, so no request is written at time 0. Requests earlier than the first
/// one (unsorted traces) are written at 1 µs; fio issues them without waiting. Each device gets
/// `add` and `open` (at that request's time) before its first request and `close` at the end; flush becomes `sync`,
/// discard `trim`, a request's preflush (TraceIo::kPreflush) a `sync` just before it; FUA has no
/// fio iolog action and is dropped. Times are the source's as read: its clock unit (time_unit) applies. Throws
/// EnvironmentError if `file` cannot be written, TraceFormatError from the source, ConfigError if a file name has
/// whitespace.
ConvertSummary write_fio_iolog_v3(TraceSource& source, const std::filesystem::path& file,
                                  const FioIologOptions& options = {});

}  // namespace drivelab::trace
