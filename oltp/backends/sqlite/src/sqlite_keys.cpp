// The sqlite row and the keys it owns in the database section (sqlite_backend.hpp, backend_row.hpp).
#include <array>

#include "drivelab/oltp/backends/sqlite/sqlite_backend.hpp"

namespace drivelab::oltp {
namespace {

using namespace std::chrono_literals;

// SQLite's words (https://www.sqlite.org/pragma.html#pragma_journal_mode, #pragma_synchronous).
constexpr std::array<std::string_view, 6> kJournalModes{"WAL", "DELETE", "TRUNCATE", "PERSIST", "MEMORY", "OFF"};
constexpr std::array<std::string_view, 4> kSynchronous{"OFF", "NORMAL", "FULL", "EXTRA"};

constexpr std::array kKeys{
    OptionKey{.name = "journal_mode",
              .type = OptionType::word,
              .doc = "PRAGMA journal_mode of the run (the load runs without a journal)",
              .noun = "journal mode",
              .words = kJournalModes,
              .any_case = true,
              .default_word = "WAL"},
    OptionKey{.name = "synchronous",
              .type = OptionType::word,
              .doc = "PRAGMA synchronous of the run: when SQLite fsyncs",
              .noun = "synchronous level",
              .words = kSynchronous,
              .any_case = true,
              .default_word = "FULL"},
    OptionKey{.name = "cache_size",
              .type = OptionType::size,
              .doc = "SQLite's page cache of each connection (PRAGMA cache_size)",
              .noun = "cache size",
              .default_bytes = 64ull << 20,
              .min_bytes = 1ull << 20,
              .max_bytes = 1ull << 40},
    OptionKey{.name = "busy_timeout",
              .type = OptionType::duration,
              .doc = "the longest wait for the writer lock before a transaction is retried",
              .noun = "busy timeout",
              .default_duration = 5s,
              .min_duration = 1ms,
              .max_duration = 1h},
};

constexpr BackendRow kRow{.name = "sqlite",
                          .capabilities = &sqlite_capabilities,
                          .managed_servers = {},
                          .dialect = SqlDialect::sqlite,
                          .keys = kKeys};

}  // namespace

const BackendRow& sqlite_row() noexcept { return kRow; }

bool is_valid_journal_mode(std::string_view word) { return accepts_word(kKeys[0], word); }

bool is_valid_synchronous(std::string_view word) { return accepts_word(kKeys[1], word); }

SqliteOptions sqlite_options(const OptionValues& values) {
  SqliteOptions o;
  o.journal_mode = option_value(kKeys, values, "journal_mode").word;
  o.synchronous = option_value(kKeys, values, "synchronous").word;
  o.cache_size_bytes = option_value(kKeys, values, "cache_size").bytes;
  o.busy_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(option_value(kKeys, values, "busy_timeout").duration);
  return o;
}

}  // namespace drivelab::oltp
