#include "odbc_util.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"

namespace drivelab::oltp::odbc {
namespace {

bool iequals(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool contains(std::string_view haystack, std::string_view needle) noexcept {
  return haystack.find(needle) != std::string_view::npos;
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return std::string(s);
}

/// Splits `s` into its raw parts: (key, raw value incl. braces, start, end) of each KEY=VALUE.
struct RawPart {
  std::string key;
  std::string value;                           // without braces, '}}' unescaped
  std::size_t value_begin = 0, value_end = 0;  // raw value span in the input (with braces)
};

std::vector<RawPart> split_parts(std::string_view s) {
  std::vector<RawPart> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t key_begin = i;
    while (i < s.size() && s[i] != '=' && s[i] != ';') ++i;
    RawPart part;
    part.key = trim(s.substr(key_begin, i - key_begin));
    if (i >= s.size() || s[i] == ';') {  // a part without '='
      part.value_begin = part.value_end = i;
      if (!part.key.empty()) out.push_back(std::move(part));
      ++i;
      continue;
    }
    ++i;  // '='
    part.value_begin = i;
    // Leading blanks before a brace are tolerated by drivers; keep them out of the value.
    std::size_t j = i;
    while (j < s.size() && s[j] == ' ') ++j;
    if (j < s.size() && s[j] == '{') {
      i = j + 1;
      while (i < s.size()) {
        if (s[i] == '}') {
          if (i + 1 < s.size() && s[i + 1] == '}') {
            part.value += '}';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        part.value += s[i++];
      }
      while (i < s.size() && s[i] != ';') ++i;  // anything between '}' and ';' is dropped
    } else {
      const std::size_t v = i;
      while (i < s.size() && s[i] != ';') ++i;
      part.value = trim(s.substr(v, i - v));
    }
    part.value_end = i;
    if (!part.key.empty()) out.push_back(std::move(part));
    if (i < s.size()) ++i;  // ';'
  }
  return out;
}

bool is_password_key(std::string_view key) {
  return std::any_of(kPasswordKeys.begin(), kPasswordKeys.end(), [&](std::string_view k) { return iequals(k, key); });
}

bool any_sqlstate(const std::vector<DiagRecord>& records, std::initializer_list<std::string_view> states) {
  return std::any_of(records.begin(), records.end(), [&](const DiagRecord& r) {
    return std::any_of(states.begin(), states.end(), [&](std::string_view s) { return r.sqlstate == s; });
  });
}

bool any_native(const std::vector<DiagRecord>& records, std::initializer_list<int> natives) {
  return std::any_of(records.begin(), records.end(), [&](const DiagRecord& r) {
    return std::find(natives.begin(), natives.end(), r.native) != natives.end();
  });
}

bool any_message(const std::vector<DiagRecord>& records, std::string_view text) {
  return std::any_of(records.begin(), records.end(), [&](const DiagRecord& r) { return contains(r.message, text); });
}

}  // namespace

// ---- handles -----------------------------------------------------------------------------------

void DbcFree::operator()(void* h) const noexcept {
  SQLEndTran(SQL_HANDLE_DBC, h, SQL_ROLLBACK);
  SQLDisconnect(h);
  SQLFreeHandle(SQL_HANDLE_DBC, h);
}

EnvHandle make_env() {
  SQLHANDLE h = SQL_NULL_HANDLE;
  if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &h)))
    throw BackendError("odbc: cannot allocate an environment handle (unixODBC driver manager)");
  EnvHandle env(h);
  // ODBC 3 behaviour: SQLSTATEs of ODBC 3, SQL_NO_DATA for searched UPDATE/DELETE of no row.
  const SQLRETURN rc = SQLSetEnvAttr(h, SQL_ATTR_ODBC_VERSION, reinterpret_cast<SQLPOINTER>(SQL_OV_ODBC3), 0);
  if (!SQL_SUCCEEDED(rc))
    throw BackendError("odbc: SQL_ATTR_ODBC_VERSION 3: " + format_diagnostics(read_diagnostics(SQL_HANDLE_ENV, h)));
  return env;
}

std::vector<std::string> installed_drivers(SQLHENV env) {
  std::vector<std::string> out;
  SQLCHAR name[512];
  SQLCHAR attrs[2048];
  SQLSMALLINT name_len = 0;
  SQLSMALLINT attrs_len = 0;
  for (SQLUSMALLINT dir = SQL_FETCH_FIRST;; dir = SQL_FETCH_NEXT) {
    const SQLRETURN rc = SQLDrivers(env, dir, name, sizeof name, &name_len, attrs, sizeof attrs, &attrs_len);
    if (!SQL_SUCCEEDED(rc)) break;  // SQL_NO_DATA at the end, SQL_ERROR without an odbcinst.ini
    out.emplace_back(reinterpret_cast<const char*>(name));
  }
  return out;
}

std::string_view debian_package_of_driver(std::string_view driver) noexcept {
  const auto is = [&](std::string_view name) {
    return driver.size() == name.size() && std::equal(driver.begin(), driver.end(), name.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
           });
  };
  if (is("PostgreSQL Unicode") || is("PostgreSQL ANSI")) return "odbc-postgresql";
  if (is("MariaDB Unicode") || is("MariaDB")) return "odbc-mariadb";
  if (is("SQLite3") || is("SQLite")) return "libsqliteodbc";
  return {};
}

DbcHandle make_dbc(SQLHENV env) {
  SQLHANDLE h = SQL_NULL_HANDLE;
  if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_DBC, env, &h)))
    throw BackendError("odbc: cannot allocate a connection handle: " +
                       format_diagnostics(read_diagnostics(SQL_HANDLE_ENV, env)));
  return DbcHandle(h);
}

StmtHandle make_stmt(SQLHDBC dbc) {
  SQLHANDLE h = SQL_NULL_HANDLE;
  if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_STMT, dbc, &h))) {
    const auto records = read_diagnostics(SQL_HANDLE_DBC, dbc);
    throw BackendError("odbc: cannot allocate a statement handle: " + format_diagnostics(records),
                       records.empty() ? std::string() : records.front().sqlstate,
                       records.empty() ? 0 : records.front().native);
  }
  return StmtHandle(h);
}

// ---- connection strings ------------------------------------------------------------------------

std::vector<ConnAttr> parse_connection_string(std::string_view s) {
  std::vector<ConnAttr> out;
  for (RawPart& p : split_parts(s)) out.push_back({std::move(p.key), std::move(p.value)});
  return out;
}

std::optional<std::string> find_attr(const std::vector<ConnAttr>& attrs, std::span<const std::string_view> keys) {
  for (const ConnAttr& a : attrs)
    for (std::string_view k : keys)
      if (iequals(a.key, k)) return a.value;
  return std::nullopt;
}

std::string quote_value(std::string_view v) {
  const bool needs =
      v.find_first_of(";{}") != std::string_view::npos || (!v.empty() && (v.front() == ' ' || v.back() == ' '));
  if (!needs) return std::string(v);
  std::string out = "{";
  for (char c : v) {
    out += c;
    if (c == '}') out += '}';
  }
  out += '}';
  return out;
}

std::string with_credentials(std::string_view s, const std::string& user, const std::string& password) {
  const auto attrs = parse_connection_string(s);
  std::string out(s);
  const auto append = [&](std::string_view key, const std::string& value) {
    if (!out.empty() && out.back() != ';') out += ';';
    out += key;
    out += '=';
    out += quote_value(value);
  };
  if (!user.empty() && !find_attr(attrs, kUserKeys)) append("UID", user);
  if (!password.empty() && !find_attr(attrs, kPasswordKeys)) append("PWD", password);
  return out;
}

std::string redact_connection_string(std::string_view s) {
  std::string out;
  std::size_t copied = 0;
  for (const RawPart& p : split_parts(s)) {
    if (!is_password_key(p.key)) continue;
    out.append(s.substr(copied, p.value_begin - copied));
    out += "***";
    copied = p.value_end;
  }
  out.append(s.substr(copied));
  return out;
}

std::string scrub(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3))
    text.replace(at, secret.size(), "***");
  return text;
}

// ---- diagnostics -------------------------------------------------------------------------------

std::vector<DiagRecord> read_diagnostics(SQLSMALLINT handle_type, SQLHANDLE handle) {
  std::vector<DiagRecord> out;
  for (SQLSMALLINT i = 1; i < 64; ++i) {
    std::array<SQLCHAR, 6> state{};
    SQLINTEGER native = 0;
    std::array<SQLCHAR, 2048> message{};
    SQLSMALLINT length = 0;
    const SQLRETURN rc = SQLGetDiagRec(handle_type, handle, i, state.data(), &native, message.data(),
                                       static_cast<SQLSMALLINT>(message.size()), &length);
    if (!SQL_SUCCEEDED(rc)) break;
    DiagRecord r;
    r.sqlstate.assign(reinterpret_cast<const char*>(state.data()), 5);
    r.native = static_cast<int>(native);
    const auto n =
        std::min<std::size_t>(static_cast<std::size_t>(std::max<SQLSMALLINT>(length, 0)), message.size() - 1);
    std::string text(reinterpret_cast<const char*>(message.data()), n);
    // psqlODBC ends messages with ";\nError while executing the query": one line for logs.
    std::replace(text.begin(), text.end(), '\n', ' ');
    r.message = trim(text);
    out.push_back(std::move(r));
  }
  return out;
}

DbStatus classify(const std::vector<DiagRecord>& records, SqlDialect dialect, bool in_commit, bool connection_dead) {
  DbStatus s;
  s.outcome = Outcome::fatal;
  const DiagRecord* first = nullptr;
  for (const DiagRecord& r : records) {
    if (first == nullptr && !r.sqlstate.starts_with("01")) first = &r;
  }
  if (first == nullptr && !records.empty()) first = &records.front();
  if (first != nullptr) {
    s.sqlstate = first->sqlstate;
    s.native_code = first->native;
  }
  std::vector<std::string> texts;
  texts.reserve(records.size());
  for (const DiagRecord& r : records) texts.push_back(fmt::format("[{}] {}", r.sqlstate, r.message));
  s.message = texts.empty() ? "ODBC call failed without diagnostics" : fmt::format("{}", fmt::join(texts, "; "));

  bool lost =
      connection_dead ||
      std::any_of(records.begin(), records.end(), [](const DiagRecord& r) { return r.sqlstate.starts_with("08"); }) ||
      any_sqlstate(records, {"57P01", "57P02", "57P03"});
  bool retry = any_sqlstate(records, {"40001", "40P01", "55P03", "57014", "HYT00", "HY008"});
  if (dialect == SqlDialect::mysql) {
    // 1213 deadlock, 1205 lock wait timeout, 1020 record changed (sysbench's ignored errors);
    // 1317 interrupted (our SQLCancel = KILL QUERY), 1969/3024 max_statement_time.
    retry = retry || any_native(records, {1213, 1205, 1020, 1317, 1969, 3024});
    lost = lost || any_native(records, {2006, 2013, 2055});
  } else if (dialect == SqlDialect::sqlserver) {
    // 1205 deadlock victim, 1222 lock request time-out (SET LOCK_TIMEOUT).
    retry = retry || any_native(records, {1205, 1222});
  }
  const bool storage = std::any_of(records.begin(), records.end(), [&](const DiagRecord& r) {
    return is_storage_error(dialect, r.sqlstate, r.native, r.message);
  });
  if (storage) {
    s.outcome = Outcome::storage_failure;  // also during COMMIT, also with the session gone
    s.connection_lost = lost;
  } else if (lost) {
    s.connection_lost = true;
    s.outcome = in_commit ? Outcome::in_doubt : Outcome::retryable;
  } else if (retry) {
    s.outcome = Outcome::retryable;
  }
  return s;
}

std::string format_diagnostics(const std::vector<DiagRecord>& records) {
  if (records.empty()) return "no diagnostics";
  std::vector<std::string> parts;
  parts.reserve(records.size());
  for (const DiagRecord& r : records)
    parts.push_back(r.native != 0 ? fmt::format("[{}] (native {}) {}", r.sqlstate, r.native, r.message)
                                  : fmt::format("[{}] {}", r.sqlstate, r.message));
  return fmt::format("{}", fmt::join(parts, "; "));
}

bool is_unknown_database(const std::vector<DiagRecord>& records) {
  return any_sqlstate(records, {"3D000"}) || any_native(records, {1049, 4060}) ||
         std::any_of(records.begin(), records.end(), [](const DiagRecord& r) {
           return contains(r.message, "database \"") && contains(r.message, "does not exist");
         });
}

namespace {
/// " (Debian: apt-get install <package>)" for a driver Debian packages, else "".
std::string install_hint(std::string_view driver) {
  const std::string_view package = debian_package_of_driver(driver);
  return package.empty() ? std::string() : fmt::format(" (Debian: apt-get install {})", package);
}
}  // namespace

std::string connect_error_message(const std::vector<DiagRecord>& records, std::string_view connection_string,
                                  const std::string& user) {
  const auto attrs = parse_connection_string(connection_string);
  const auto dsn = find_attr(attrs, {"DSN", "FILEDSN"});
  const auto driver = find_attr(attrs, {"Driver"});
  const auto server = find_attr(attrs, {"Server", "Servername", "Host", "Socket", "Address", "Addr"});
  const auto database = find_attr(attrs, {"Database", "DB", "Initial Catalog"});
  const auto user_in_string = find_attr(attrs, kUserKeys);
  const std::string who = !user.empty() ? user : user_in_string.value_or("(the driver's default user)");
  const std::string where = server ? *server : dsn ? fmt::format("(the server of DSN '{}')", *dsn) : "(default)";

  std::string what;
  if (any_sqlstate(records, {"IM002"})) {
    what = dsn      ? fmt::format(
                          "ODBC data source '{}' not found (no such DSN in odbc.ini and no default driver): "
                          "`odbcinst -q -s` lists the data sources, `odbcinst -q -d` the drivers",
                          *dsn)
           : driver ? fmt::format("ODBC driver '{}' not found: `odbcinst -q -d` lists the installed drivers{}", *driver,
                                  install_hint(*driver))
                    : "no DSN= or Driver= in the connection string and no default driver: name one "
                      "(`odbcinst -q -s` lists the data sources, `odbcinst -q -d` the drivers)";
  } else if (any_message(records, "Can't open lib") || any_sqlstate(records, {"IM003"})) {
    what = fmt::format(
        "ODBC driver '{}' cannot be loaded (not registered in odbcinst.ini, or its library is "
        "missing): `odbcinst -q -d` lists the installed drivers{}",
        driver.value_or(dsn ? "of DSN " + *dsn : "?"), install_hint(driver.value_or("")));
  } else if (any_sqlstate(records, {"28000", "28P01"}) || any_message(records, "authentication failed") ||
             any_message(records, "Access denied for user") || any_message(records, "Login failed for user") ||
             (any_message(records, "role \"") && any_message(records, "does not exist"))) {
    what = fmt::format("authentication failed for user '{}' (check the user and the password source)", who);
  } else if (is_unknown_database(records)) {
    what = fmt::format("database '{}' does not exist on server {}", database.value_or("?"), where);
  } else if (any_sqlstate(records, {"08001", "08S01", "08004", "HYT00"}) || any_native(records, {2002, 2003, 2005})) {
    what = fmt::format("cannot connect to server {}", where);
  } else {
    what = "connect failed";
  }
  return fmt::format("odbc: {}: {} (connection string: {})", what, format_diagnostics(records), connection_string);
}

// ---- text --------------------------------------------------------------------------------------

void append_utf16(std::string_view in, std::u16string& out) {
  // Never more UTF-16 units than UTF-8 bytes: write through a pointer, trim at the end (the
  // loader converts every text value; push_back per unit was most of its client time).
  const std::size_t start = out.size();
  out.resize(start + in.size());
  char16_t* dst = out.data() + start;
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  const auto* end = p + in.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      *dst++ = c;
      ++p;
      continue;
    }
    int extra = 0;
    char32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
      extra = 1;
      cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      cp = c & 0x07u;
    } else {
      *dst++ = u'\uFFFD';
      ++p;
      continue;
    }
    if (end - p <= extra) {  // cut short at the end
      *dst++ = u'\uFFFD';
      break;
    }
    bool ok = true;
    for (int k = 1; k <= extra; ++k) {
      if ((p[k] & 0xC0) != 0x80) {
        ok = false;
        break;
      }
      cp = (cp << 6) | (p[k] & 0x3Fu);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    static constexpr char32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (!ok || cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      *dst++ = u'\uFFFD';
      ++p;
      continue;
    }
    p += extra + 1;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      *dst++ = static_cast<char16_t>(0xD800 + (cp >> 10));
      *dst++ = static_cast<char16_t>(0xDC00 + (cp & 0x3FF));
    } else {
      *dst++ = static_cast<char16_t>(cp);
    }
  }
  out.resize(static_cast<std::size_t>(dst - out.data()));
}

void utf8_to_utf16(std::string_view in, std::u16string& out) {
  out.clear();
  append_utf16(in, out);
}

void utf16_to_utf8(std::u16string_view in, std::string& out) {
  out.reserve(out.size() + in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    char32_t cp = in[i];
    if (cp < 0x80) {
      out += static_cast<char>(cp);
      continue;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < in.size() && in[i + 1] >= 0xDC00 && in[i + 1] <= 0xDFFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (in[i + 1] - 0xDC00);
      ++i;
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
      cp = 0xFFFD;
    }
    if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
}

std::string info_text(SQLHDBC dbc, SQLUSMALLINT what) {
  std::array<SQLCHAR, 512> buf{};
  SQLSMALLINT length = 0;
  if (!SQL_SUCCEEDED(SQLGetInfo(dbc, what, buf.data(), static_cast<SQLSMALLINT>(buf.size()), &length))) return {};
  const auto n = std::min<std::size_t>(static_cast<std::size_t>(std::max<SQLSMALLINT>(length, 0)), buf.size() - 1);
  return std::string(reinterpret_cast<const char*>(buf.data()), n);
}

}  // namespace drivelab::oltp::odbc
