#pragma once
/// \file storage_failure.hpp
/// The one wording of a failed I/O, for every kind that does I/O through an IoEngine (io,
/// vdbench, precondition, video; the replayer can use it too): a full disk or failed storage
/// (ENOSPC, EIO, EROFS/EPERM after a remount read-only, a short transfer) ends the test as
/// `failed` (EnvironmentError) with this text as its reason (issue 15, docs/results.md).
///
///   storage failure: write of 131072 bytes at offset 41943040 to /dev/loop0: No space left on
///   device (ENOSPC), 0.02 s into the measured phase
#include <cstdint>
#include <string>
#include <string_view>

#include "drivelab/io/engine.hpp"

namespace drivelab::io {

/// One I/O whose completion did not transfer what it asked for.
struct FailedIo {
  Op op = Op::read;
  std::uint64_t length_bytes = 0;  ///< what was asked, bytes
  std::uint64_t offset_bytes = 0;  ///< where, bytes from the start of the file or device
  std::string_view file;           ///< the target's path as the user named it
  /// The engine's completion result (IoCompletion::result): a negative errno, or the number of
  /// bytes transferred when fewer than length_bytes (a short transfer, 0 included).
  std::int64_t result = 0;
  /// Names the operation when it is neither of op's read and write (the replayer's
  /// "fdatasync (flush)", "discard (punch hole)"); empty: to_string(op). A length_bytes of 0
  /// leaves out "of <length> bytes at offset <offset>" (a flush has neither).
  std::string_view operation = {};
};

/// "storage failure: <op> of <length> bytes at offset <offset> to|from <file>: <cause>,
/// <seconds> s into the <phase>" ("storage failure: <operation> of <file>: <cause>, ..." for a
/// length of 0), where <cause> is errno_text(-result) ("No space left on device
/// (ENOSPC)") or "short transfer of <result> bytes"; seconds with two decimals. `phase` names
/// the phase the clock counts from ("measured phase", "warm-up", "fill").
std::string storage_failure(const FailedIo& io, double seconds_into_phase, std::string_view phase);

/// "storage failure: fdatasync of <file> after <what>: <errno_text(errnum)>": buffered writes
/// often fail only here (ENOSPC or EIO at writeback). `what` says what was written ("the fill").
std::string storage_sync_failure(std::string_view file, std::string_view what, int errnum);

}  // namespace drivelab::io
