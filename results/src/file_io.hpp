#pragma once
/// \file file_io.hpp (private)
/// The few POSIX file operations the results component needs, with errors that name the file.
#include <filesystem>
#include <string>
#include <string_view>

namespace drivelab::results {
struct RunRecord;
}

namespace drivelab::results::detail {

/// Parses the text of the record file `path` (read_record, the results store). Throws
/// ConfigError "result record 'PATH': not valid JSON: ..." or "...: <the reader's message>".
RunRecord record_from_text(const std::string& text, const std::filesystem::path& path);

/// Reads a whole file. Throws EnvironmentError "cannot read <what> '<path>': <strerror>".
std::string read_file(const std::filesystem::path& path, std::string_view what);

/// Writes `text` to `path` so that a reader sees either the old file or the new one, never a part:
/// temporary file in the same directory (O_EXCL), write, fsync, rename over `path`, fsync the
/// directory (so the rename itself survives a power loss). Throws EnvironmentError naming the step.
void write_file_atomically(const std::filesystem::path& path, std::string_view text, std::string_view what);

/// write(2) until done or an error; EINTR is retried. Returns 0 or the errno of the failing call
/// and sets `written` to the bytes that reached the file.
int write_fully(int fd, std::string_view data, std::size_t& written) noexcept;

}  // namespace drivelab::results::detail
