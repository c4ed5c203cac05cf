#pragma once
/// \file sqlite_backend.hpp
/// The embedded default backend: SQLite 3 (Debian 12 ships 3.40) on a file on the drive under
/// test. Every terminal opens its own connection to the same file.
///
/// What reaches the drive (with the defaults journal_mode=WAL, synchronous=FULL): every COMMIT
/// appends its pages to `<db>-wal` and fsyncs it, so each write transaction costs at least one
/// flush of the drive's write cache; checkpoints (run by the committing connection: PASSIVE
/// every ~1000 WAL pages as SQLite's autocheckpoint, RESTART past 64 MiB of WAL so that the WAL
/// does not grow without bound while terminals keep reading) copy pages into the database file
/// and fsync it. Reads are served by SQLite's page
/// cache (`cache_size`, per connection: SQLite has no shared buffer pool) and then the OS page
/// cache — SQLite does not use O_DIRECT, so a database smaller than RAM is read from memory.
///
/// Concurrency: SQLite allows one writer at a time. Read-write transactions start with
/// BEGIN IMMEDIATE (the writer lock is taken up front, so no transaction fails half-way on a lock
/// upgrade); read-only ones are WAL snapshot readers that never wait. A writer that cannot get
/// the lock waits in a busy handler that polls with short sleeps (50 us doubling to 1 ms, instead
/// of SQLite's default 1..100 ms steps, which would measure sleep granularity instead of the
/// drive) for up to busy_timeout_ms, then fails with SQLITE_BUSY, classified `retryable`.
///
/// Error classification (https://www.sqlite.org/rescode.html):
///   SQLITE_BUSY, SQLITE_LOCKED (and extended codes)           -> retryable
///   SQLITE_FULL, SQLITE_IOERR (and every SQLITE_IOERR_* extended code), also during COMMIT
///                                                               -> storage_failure (the test
///                                                                  fails; docs/backend-sqlite.md)
///   SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_CANTOPEN, SQLITE_PROTOCOL during COMMIT -> in_doubt
///   everything else                                            -> fatal
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backend/backend_row.hpp"

namespace drivelab::oltp {

/// Settings of the SQLite backend (its keys of the database section: journal_mode, synchronous,
/// cache_size, busy_timeout, declared in sqlite_keys.cpp).
struct SqliteOptions {
  std::filesystem::path path;                    ///< database file; "-wal" and "-shm" files sit beside it
  std::string journal_mode = "WAL";              ///< WAL | DELETE | TRUNCATE | PERSIST | MEMORY | OFF
  std::string synchronous = "FULL";              ///< OFF | NORMAL | FULL | EXTRA
  std::uint64_t cache_size_bytes = 64ull << 20;  ///< page cache per connection
  std::chrono::milliseconds busy_timeout{5000};  ///< longest wait for the writer lock
};

/// The sqlite row (backend_row.hpp): embedded, dialect sqlite, no managed server, and the keys
/// journal_mode (WAL), synchronous (FULL), cache_size (64MiB, 1MiB..1TiB) and busy_timeout (5s,
/// 1ms..1h), declared once in sqlite_keys.cpp with their words and ranges.
const BackendRow& sqlite_row() noexcept;

/// SqliteOptions from the values of its keys (defaults where not given); `path` left empty.
SqliteOptions sqlite_options(const OptionValues& values);

/// Valid words for the options above (any case), for config validation.
bool is_valid_journal_mode(std::string_view word);
bool is_valid_synchronous(std::string_view word);

/// The classification above of a SQLite (extended) result code `rc`; `in_commit`: the call was
/// COMMIT. The one place SQLite's codes are read (sqlite_backend.cpp).
Outcome classify_sqlite_result(int rc, bool in_commit) noexcept;

/// Creates the backend (does not open or create the file yet).
std::unique_ptr<Backend> make_sqlite_backend(SqliteOptions options);

/// What every sqlite backend can do (Backend::capabilities()): One writer at a time (BEGIN IMMEDIATE), one loader, a
/// file of this process, no procedures.
Capabilities sqlite_capabilities() noexcept;

/// How a SQLite database grows under TPC-C (growth.hpp; Backend::growth_constants() of every
/// sqlite backend): 1,164 B of tables per New-Order and a 16 MiB allowance for the WAL file,
/// measured as sqlite_backend.cpp says.
GrowthConstants sqlite_growth_constants() noexcept;

/// The SQLite library version in use ("3.40.1").
std::string sqlite_library_version();

}  // namespace drivelab::oltp
