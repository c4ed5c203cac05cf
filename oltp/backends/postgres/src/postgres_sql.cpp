#include "postgres_sql.hpp"

#include <cctype>
#include <charconv>

namespace drivelab::oltp::pg {
namespace {

bool ident_char(char c) noexcept {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}

/// At sql[i] == '$': the length of a dollar-quote tag ("$$", "$name$"), or 0 if this `$` is not
/// one (e.g. a $1 parameter or part of an identifier).
std::size_t dollar_tag(std::string_view sql, std::size_t i) noexcept {
  if (i > 0 && ident_char(sql[i - 1])) return 0;
  std::size_t j = i + 1;
  if (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j])) != 0) return 0;
  while (j < sql.size() && ident_char(sql[j]) && sql[j] != '$') ++j;
  if (j < sql.size() && sql[j] == '$') return j - i + 1;
  return 0;
}

}  // namespace

Rewritten rewrite_placeholders(std::string_view sql) {
  Rewritten out;
  out.sql.reserve(sql.size() + 16);
  std::size_t i = 0;
  const std::size_t n = sql.size();
  while (i < n) {
    const char c = sql[i];
    if (c == '?') {
      out.sql += '$';
      out.sql += std::to_string(++out.params);
      ++i;
    } else if (c == '\'') {
      // E'..' strings take backslash escapes; standard strings only the doubled quote.
      const bool escapes = i > 0 && (sql[i - 1] == 'E' || sql[i - 1] == 'e') && (i < 2 || !ident_char(sql[i - 2]));
      std::size_t j = i + 1;
      while (j < n) {  // j ends on the closing quote (or n if unterminated)
        if (escapes && sql[j] == '\\') {
          j += 2;
        } else if (sql[j] == '\'') {
          if (j + 1 < n && sql[j + 1] == '\'')
            j += 2;
          else
            break;
        } else {
          ++j;
        }
      }
      const std::size_t end = j < n ? j + 1 : n;
      out.sql.append(sql.substr(i, end - i));
      i = end;
    } else if (c == '"') {
      std::size_t j = i + 1;
      while (j < n) {
        if (sql[j] == '"') {
          if (j + 1 < n && sql[j + 1] == '"') {
            j += 2;  // "" inside a quoted identifier
            continue;
          }
          break;
        }
        ++j;
      }
      const std::size_t end = j < n ? j + 1 : n;
      out.sql.append(sql.substr(i, end - i));
      i = end;
    } else if (c == '-' && i + 1 < n && sql[i + 1] == '-') {
      const std::size_t eol = sql.find('\n', i);
      const std::size_t end = eol == std::string_view::npos ? n : eol;
      out.sql.append(sql.substr(i, end - i));
      i = end;
    } else if (c == '/' && i + 1 < n && sql[i + 1] == '*') {
      std::size_t j = i + 2;
      int depth = 1;
      while (j < n && depth > 0) {
        if (sql[j] == '/' && j + 1 < n && sql[j + 1] == '*') {
          ++depth;
          j += 2;
        } else if (sql[j] == '*' && j + 1 < n && sql[j + 1] == '/') {
          --depth;
          j += 2;
        } else {
          ++j;
        }
      }
      out.sql.append(sql.substr(i, j - i));
      i = j;
    } else if (c == '$') {
      const std::size_t tag_len = dollar_tag(sql, i);
      if (tag_len == 0) {
        out.sql += c;
        ++i;
        continue;
      }
      const std::string_view tag = sql.substr(i, tag_len);
      const std::size_t close = sql.find(tag, i + tag_len);
      const std::size_t end = close == std::string_view::npos ? n : close + tag_len;
      out.sql.append(sql.substr(i, end - i));
      i = end;
    } else {
      out.sql += c;
      ++i;
    }
  }
  return out;
}

std::int64_t parse_int64(std::string_view text) noexcept {
  std::int64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec == std::errc() && (r.ptr == text.data() + text.size() || *r.ptr != '.')) return v;
  if (text == "t") return 1;  // boolean
  if (text == "f") return 0;
  double d = 0;  // NUMERIC such as "3001.00": as SQLite, truncate toward zero
  std::from_chars(text.data(), text.data() + text.size(), d);
  return static_cast<std::int64_t>(d);
}

double parse_double(std::string_view text) noexcept {
  double v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

}  // namespace drivelab::oltp::pg
