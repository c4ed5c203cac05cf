#pragma once
/// \file escape.hpp
/// Escaping text for a format, written once: each format states which characters it replaces and
/// by what in one table of Escapes beside its writer (PostgreSQL's COPY text format, MySQL string
/// literals, HTML, a Markdown table cell, ...), and append_escaped() is the one loop over them.
///
///     constexpr Escape kHtml[] = {{'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}};
///     append_escaped(out, text, kHtml);
#include <span>
#include <string>
#include <string_view>

namespace drivelab {

/// A character a format escapes, and the text written in its place.
struct Escape {
  char c;
  std::string_view as;
};

/// Appends `text` to `out`, each character that `table` lists replaced by its text; the runs
/// between them are copied whole.
inline void append_escaped(std::string& out, std::string_view text, std::span<const Escape> table) {
  std::size_t from = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    for (const Escape& e : table) {
      if (e.c != text[i]) continue;
      out.append(text.substr(from, i - from));
      out.append(e.as);
      from = i + 1;
      break;
    }
  }
  out.append(text.substr(from));
}

/// `text` with the escapes of `table` (append_escaped into a new string).
inline std::string escaped(std::string_view text, std::span<const Escape> table) {
  std::string out;
  out.reserve(text.size());
  append_escaped(out, text, table);
  return out;
}

}  // namespace drivelab
