#pragma once
// Internal: what the readers share (text_readers.cpp). Each reader's factory is its row's `open`
// (readers.hpp TraceFormatInfo).
#include <cstdint>

#include "drivelab/trace/source.hpp"

namespace drivelab::trace::detail {

/// SCSI CDB opcode (SBC-3) to TraceOp; false for commands that move no block data (INQUIRY, ...).
bool scsi_opcode_op(std::uint64_t opcode, TraceOp& op);

}  // namespace drivelab::trace::detail
