#pragma once
/// \file store_sql.hpp (private)
/// SQLite statements of the results store (store.hpp): prepared, bound and stepped with every
/// error turned into the project's errors, naming the store's file. SQLITE_NOTADB and
/// SQLITE_CORRUPT are ConfigError ("not a drivelab results store"), anything else
/// EnvironmentError. Internal to results/: store.cpp and store_devices.cpp use it.
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::results::detail {

/// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::filesystem::path& where) : db_(db), where_(where) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) fail("prepare");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int index, std::string_view text) {
    if (sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT) != SQLITE_OK)
      fail("bind");
  }
  void bind_null(int index) {
    if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) fail("bind");
  }
  /// Text, or NULL for "".
  void bind_nonempty(int index, std::string_view text) {
    if (text.empty())
      bind_null(index);
    else
      bind(index, text);
  }
  /// A JSON string as text, anything else as NULL.
  void bind_or_null(int index, const Json& j) {
    if (j.is_string())
      bind(index, j.get<std::string>());
    else
      bind_null(index);
  }
  void bind(int index, std::int64_t v) {
    if (sqlite3_bind_int64(stmt_, index, v) != SQLITE_OK) fail("bind");
  }
  void bind(int index, double v) {
    if (sqlite3_bind_double(stmt_, index, v) != SQLITE_OK) fail("bind");
  }
  template <class T>
  void bind(int index, const std::optional<T>& v) {
    if (v)
      bind(index, *v);
    else
      bind_null(index);
  }
  /// True while there is a row.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("step");
  }
  /// Ready to step again with new bindings.
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string text(int column) const {
    const auto* p = sqlite3_column_text(stmt_, column);
    return p == nullptr ? std::string()
                        : std::string(reinterpret_cast<const char*>(p),
                                      static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }

 private:
  [[noreturn]] void fail(const char* what) const {
    const int code = sqlite3_errcode(db_);
    const std::string message = fmt::format("results store '{}': {}", where_.string(), sqlite3_errmsg(db_));
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) throw ConfigError(message + " (not a drivelab results store)");
    throw EnvironmentError(fmt::format("{} ({})", message, what));
  }
  sqlite3* db_;
  std::filesystem::path where_;
  sqlite3_stmt* stmt_ = nullptr;
};

/// Runs `sql` to its end.
inline void exec(sqlite3* db, const std::string& sql, const std::filesystem::path& where) {
  Statement s(db, sql, where);
  while (s.step()) {
  }
}

}  // namespace drivelab::results::detail
