#pragma once
// SQL text helpers of the PostgreSQL backend: `?` placeholders to $n, the COPY text format, and
// numbers to and from the text format of parameters and results.
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "drivelab/core/escape.hpp"

namespace drivelab::oltp::pg {

/// Portable SQL with `?` placeholders rewritten for PostgreSQL ($1, $2, ...), and their count.
/// A `?` inside a string literal ('..', E'..'), a quoted identifier (".."), a dollar-quoted
/// string ($tag$..$tag$) or a comment (-- .., /* .. */, nested as PostgreSQL nests them) is
/// text, not a placeholder. (PostgreSQL's jsonb operators ?, ?| and ?& therefore cannot be
/// written in portable SQL; the workloads do not use them.)
struct Rewritten {
  std::string sql;
  int params = 0;
};
Rewritten rewrite_placeholders(std::string_view sql);

/// Appends `value` to a COPY text-format row with the escapes of the COPY documentation
/// (https://www.postgresql.org/docs/15/sql-copy.html, "Text Format"): backslash, tab, newline
/// and carriage return become \\, \t, \n, \r; everything else is copied.
inline void append_copy_text(std::string& out, std::string_view value) {
  static constexpr Escape kCopyText[] = {{'\\', "\\\\"}, {'\t', "\\t"}, {'\n', "\\n"}, {'\r', "\\r"}};
  append_escaped(out, value, kCopyText);
}

/// Shortest text that reads back as the same number (std::to_chars), for parameters and COPY.
inline void append_int64(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}
inline void append_double(std::string& out, double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

/// A result value in text format as an integer: integers as they are, a boolean's t/f as 1/0, a
/// NUMERIC such as "3001.00" truncated toward zero (as SQLite converts it); 0 for other text.
std::int64_t parse_int64(std::string_view text) noexcept;
/// A result value in text format as a double; 0 for text that is not a number.
double parse_double(std::string_view text) noexcept;

}  // namespace drivelab::oltp::pg
