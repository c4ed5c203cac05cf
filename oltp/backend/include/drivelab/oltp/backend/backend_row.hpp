#pragma once
/// \file backend_row.hpp
/// What a backend says about itself before anything is opened, in one row that database/ asks
/// while a protocol is decoded: its word in `backend:`, its Capabilities, the managed servers it
/// can speak to, its SQL dialect, and the keys of the database section it owns (each backend's
/// `<name>_row()` in its own folder; database/ holds the table of rows).
///
/// A key a backend owns is declared once, with its type, default, range or words and the words
/// of its documentation; database/ decodes it with the section's reader (file:line:column at each
/// error) and records it. The same key under another backend is an error naming its owner
/// ("'journal_mode' is a sqlite key; this test's backend is postgres"). The keys every backend
/// shares (backend, database, server: {...}) stay with database/ (database.hpp).
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backend/server.hpp"

namespace drivelab::oltp {

/// The value types a backend's key can have; each is read as MapReader reads it
/// (config/map_reader.hpp) and recorded in the same words.
enum class OptionType {
  word,      ///< one of `words` (any case when `any_case`); recorded as written
  size,      ///< bytes with units ("64MiB"), within [min_bytes, max_bytes]; recorded by format_size
  duration,  ///< a duration with units ("5s"), within [min_duration, max_duration]; format_duration
};

/// One key of the database section that a backend owns.
struct OptionKey {
  std::string_view name;  ///< the key as written in the section: "journal_mode"
  OptionType type = OptionType::word;
  std::string_view doc;   ///< what it sets, in the database's own words (one line, for docs and errors)
  std::string_view noun;  ///< the value's name in an error: "'x' is not a <noun> (choices: ...)"
  std::span<const std::string_view> words = {};  ///< word: the accepted words, as the errors list them
  bool any_case = false;                         ///< word: "wal" is WAL
  std::string_view default_word = {};
  std::uint64_t default_bytes = 0, min_bytes = 0, max_bytes = 0;
  std::chrono::nanoseconds default_duration{}, min_duration{}, max_duration{};
};

/// A decoded value of one key (the field of its type is set).
struct OptionValue {
  std::string word;
  std::uint64_t bytes = 0;
  std::chrono::nanoseconds duration{};
};

/// The values of a backend's keys that the protocol gave, by key name (a key not given is absent:
/// option_value() then answers its default).
using OptionValues = std::map<std::string, OptionValue, std::less<>>;

/// The value of key `name` of `keys`: the one in `values`, else the key's default. `name` must be
/// one of `keys` (InternalError otherwise: a backend asked for a key it does not declare).
OptionValue option_value(std::span<const OptionKey> keys, const OptionValues& values, std::string_view name);

/// True when `word` is one of `key.words` (ignoring case when key.any_case).
bool accepts_word(const OptionKey& key, std::string_view word) noexcept;

/// One backend's row.
struct BackendRow {
  std::string_view name;  ///< its word in `backend:` ("sqlite")
  Capabilities (*capabilities)() noexcept = nullptr;
  /// The managed servers it can speak to (`server: {managed: ...}`); empty for an embedded one.
  std::span<const ServerKind> managed_servers = {};
  /// The dialect it speaks; nullopt when the protocol says (ODBC: its key `dialect`, which a
  /// managed server's dialect fills in).
  std::optional<SqlDialect> dialect;
  /// The keys of the database section it owns, in the order the record lists them.
  std::span<const OptionKey> keys = {};
};

/// The dialect a managed server of `kind` speaks (postgres: postgres; mariadb: mysql).
constexpr SqlDialect dialect_of(ServerKind kind) noexcept {
  return kind == ServerKind::postgres ? SqlDialect::postgres : SqlDialect::mysql;
}

/// `managed_servers` of a backend that speaks to the one managed server `K`.
template <ServerKind K>
inline constexpr std::array<ServerKind, 1> kOneManagedServer{K};

/// The row of a backend that speaks to the one managed server `K`, in that server's dialect
/// (dialect_of), and owns no key of the database section (postgres, mysql).
template <ServerKind K>
constexpr BackendRow one_server_row(std::string_view name, Capabilities (*capabilities)() noexcept) noexcept {
  return {.name = name,
          .capabilities = capabilities,
          .managed_servers = kOneManagedServer<K>,
          .dialect = dialect_of(K),
          .keys = {}};
}

}  // namespace drivelab::oltp
