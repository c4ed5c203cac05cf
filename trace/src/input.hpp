#pragma once
// Internal: the byte sources and the bounded line reader under every trace reader, and the
// factory entry that reads from any byte source (the fuzz targets feed memory through it).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "drivelab/core/fd.hpp"
#include "drivelab/trace/readers.hpp"

namespace drivelab::trace::detail {

/// A sequential byte stream.
class ByteInput {
 public:
  virtual ~ByteInput() = default;
  /// Reads up to `n` bytes into `out`; returns 0 at the end. Throws EnvironmentError on I/O error.
  virtual std::size_t read(char* out, std::size_t n) = 0;
};

/// A file read with read(2): a regular file or a pipe (FIFO, `<(zcat t.gz)`, /dev/stdin on a
/// pipe). A directory, a character or block device or a socket is refused with ConfigError before
/// it is opened (refused_file_kind, readers.hpp); EnvironmentError if it cannot be opened.
class FileInput final : public ByteInput {
 public:
  explicit FileInput(const std::filesystem::path& file);
  std::size_t read(char* out, std::size_t n) override;
  /// False for a pipe: it can be read once only.
  [[nodiscard]] bool regular() const noexcept { return regular_; }
  /// The file's size; 0 for a pipe.
  [[nodiscard]] std::uint64_t size_bytes() const noexcept { return size_bytes_; }

 private:
  UniqueFd fd_;
  std::filesystem::path file_;
  bool regular_ = false;
  std::uint64_t size_bytes_ = 0;
};

/// `head` (bytes already read from `rest`), then the rest of `rest`: format detection reads the
/// first bytes once, so a pipe loses nothing.
class PrefixedInput final : public ByteInput {
 public:
  PrefixedInput(std::string head, std::unique_ptr<ByteInput> rest) : head_(std::move(head)), rest_(std::move(rest)) {}
  std::size_t read(char* out, std::size_t n) override;

 private:
  std::string head_;
  std::size_t pos_ = 0;
  std::unique_ptr<ByteInput> rest_;
};

/// Reads `input` in chunks of kBytes: the binary readers ask for one fixed-size record at a time,
/// which would otherwise be one read(2) each.
class BufferedInput final : public ByteInput {
 public:
  static constexpr std::size_t kBytes = 64 * 1024;
  explicit BufferedInput(std::unique_ptr<ByteInput> input) : input_(std::move(input)), buffer_(kBytes) {}
  std::size_t read(char* out, std::size_t n) override;

 private:
  std::unique_ptr<ByteInput> input_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;
};

/// Bytes held in memory (tests, fuzz targets).
class MemoryInput final : public ByteInput {
 public:
  explicit MemoryInput(std::string data) : data_(std::move(data)) {}
  std::size_t read(char* out, std::size_t n) override;

 private:
  std::string data_;
  std::size_t pos_ = 0;
};

/// Longest accepted line; longer lines are a TraceFormatError (bounds the reader's memory).
inline constexpr std::size_t kMaxLineBytes = 4096;

/// Splits a byte stream into lines ('\n', a trailing '\r' removed) with a fixed-size buffer.
class LineReader {
 public:
  LineReader(std::unique_ptr<ByteInput> input, std::filesystem::path name);
  /// Next line (without terminator) or false at the end. The view lives until the next call.
  bool next(std::string_view& line);
  /// 1-based number of the line last returned.
  [[nodiscard]] std::uint64_t line_number() const noexcept { return line_number_; }
  [[nodiscard]] const std::filesystem::path& name() const noexcept { return name_; }
  [[noreturn]] void fail(const std::string& reason) const;

 private:
  bool refill();
  std::unique_ptr<ByteInput> input_;
  std::filesystem::path name_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  std::uint64_t line_number_ = 0;
};

/// Reads exactly `n` bytes, or returns the count read before the end (0 at a clean end).
std::size_t read_full(ByteInput& input, char* out, std::size_t n);

/// Maps device names to dense indices (TraceSource::devices()); at most kMaxDevices names.
class DeviceTable {
 public:
  static constexpr std::size_t kMaxDevices = 65536;
  /// Index of `name`, added if new; returns false if the table is full.
  bool index_of(std::string_view name, std::uint32_t& index);
  [[nodiscard]] const std::vector<std::string>& names() const noexcept { return names_; }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> index_;
};

/// Opens a reader over `input` in `format` (not automatic); `name` appears in messages.
std::unique_ptr<TraceSource> open_trace_input(std::unique_ptr<ByteInput> input, const std::filesystem::path& name,
                                              TraceFormat format, const TraceReadOptions& options);

/// Detects the format from the first `head` bytes of a file of `file_size_bytes`.
/// Returns TraceFormat::automatic if no rule matches.
TraceFormat detect_format_from_head(std::string_view head, std::uint64_t file_size_bytes);

/// Opens `data` (detected when `format` is automatic); for fuzz targets and tests.
std::unique_ptr<TraceSource> open_trace_memory(std::string data, const std::filesystem::path& name, TraceFormat format,
                                               const TraceReadOptions& options = {});

}  // namespace drivelab::trace::detail
