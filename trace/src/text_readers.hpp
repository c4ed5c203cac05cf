#pragma once
// Internal: the reader factories (one class per format; the text ones on TextTraceSource,
// text_source.hpp).
#include <memory>

#include "input.hpp"

namespace drivelab::trace::detail {

std::unique_ptr<TraceSource> make_text_reader(std::unique_ptr<ByteInput> input, const std::filesystem::path& name,
                                              TraceFormat format, const TraceReadOptions& options);
/// The comma-separated formats (csv_readers.cpp); make_text_reader hands them on.
std::unique_ptr<TraceSource> make_csv_reader(std::unique_ptr<ByteInput> input, const std::filesystem::path& name,
                                             TraceFormat format, const TraceReadOptions& options);
/// SCSI CDB opcode (SBC-3) to TraceOp; false for commands that move no block data (INQUIRY, ...).
bool scsi_opcode_op(std::uint64_t opcode, TraceOp& op);
/// True for a blkparse device field "MAJ,MIN" (both decimal).
bool is_blkparse_device_field(std::string_view field);

std::unique_ptr<TraceSource> make_binary_reader(std::unique_ptr<ByteInput> input, const std::filesystem::path& name,
                                                TraceFormat format, const TraceReadOptions& options);

}  // namespace drivelab::trace::detail
