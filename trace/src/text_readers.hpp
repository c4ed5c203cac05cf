#pragma once
// Internal: the text trace readers (one class per format, all on TextTraceSource).
#include <memory>

#include "input.hpp"

namespace drivelab::trace::detail {

std::unique_ptr<TraceSource> make_text_reader(std::unique_ptr<ByteInput> input,
                                              const std::filesystem::path& name, TraceFormat format,
                                              const TraceReadOptions& options);
/// SCSI CDB opcode (SBC-3) to TraceOp; false for commands that move no block data (INQUIRY, ...).
bool scsi_opcode_op(std::uint64_t opcode, TraceOp& op);
/// True for a blkparse device field "MAJ,MIN" (both decimal).
bool is_blkparse_device_field(std::string_view field);

std::unique_ptr<TraceSource> make_binary_reader(std::unique_ptr<ByteInput> input,
                                                const std::filesystem::path& name, TraceFormat format);

}  // namespace drivelab::trace::detail
