#pragma once
// Real databases for the OLTP tests: a temp directory, and a TPC-C database of 1 warehouse at
// full scale loaded ONCE per build of the test binary and copied by each test that needs one
// (ctest runs every test case in its own process; loading for each would take minutes).
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "drivelab/core/fd.hpp"
#include "drivelab/oltp/backends/sqlite/sqlite_backend.hpp"
#include "drivelab/oltp/tpcc/tpcc_schema.hpp"
#include "temp_dir.hpp"  // tests/support

namespace drivelab::oltp::test {

namespace fs = std::filesystem;

/// A temporary directory, in memory (/dev/shm) when available: these tests check logic, not the
/// drive, and copying an 86 MB database per test to a slow disk would dominate the suite's time.
struct TempDir : drivelab::test_support::TempDir {
  TempDir() : drivelab::test_support::TempDir("drivelab-oltp-test", drivelab::test_support::TempBase::memory) {}
};

inline constexpr std::uint64_t kLoadSeed = 42;

/// The C-Load constants of the cached database (derived from kLoadSeed).
inline tpcc::CConstants cached_c_load() {
  Rng rng(kLoadSeed);
  return tpcc::make_c_load(rng);
}

inline std::unique_ptr<Backend> sqlite_at(const fs::path& path) {
  SqliteOptions o;
  o.path = path;
  o.cache_size_bytes = 16ull << 20;
  o.synchronous = "OFF";  // durability is not under test here; fsyncs would only slow the suite
  return make_sqlite_backend(o);
}

/// Path of the shared 1-warehouse database; built on first use (under a file lock, so parallel
/// ctest processes build it once). Keyed by the test binary's modification time, so a rebuilt
/// loader never reuses a stale file.
inline fs::path cached_database() {
  const fs::path dir = fs::path(DRIVELAB_BINARY_DIR) / "test-scratch" / "oltp-cache";
  fs::create_directories(dir);
  const auto exe_time = fs::last_write_time(fs::read_symlink("/proc/self/exe"));
  const fs::path db = dir / fmt::format("tpcc-w1-{}.db", exe_time.time_since_epoch().count());
  UniqueFd lock(::open((dir / "lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644));
  if (!lock || ::flock(lock.get(), LOCK_EX) != 0) throw std::runtime_error("cannot lock the oltp test cache");
  if (fs::exists(db)) return db;
  for (const auto& e : fs::directory_iterator(dir))  // older builds' databases
    if (e.path().filename().string().rfind("tpcc-", 0) == 0) fs::remove(e.path());
  const fs::path tmp = dir / "building.db";
  auto backend = sqlite_at(tmp);
  backend->destroy();
  const auto stats =
      tpcc::load_database(*backend, {.warehouses = 1}, cached_c_load(), Rng(kLoadSeed).split(2), nullptr, nullptr);
  if (!stats.complete) throw std::runtime_error("load did not complete");
  fs::rename(tmp, db);
  return db;
}

/// A private copy of the shared database at `dir / name`.
inline fs::path copy_of_cached_database(const fs::path& dir, const std::string& name = "tpcc.db") {
  const fs::path dst = dir / name;
  fs::copy_file(cached_database(), dst, fs::copy_options::overwrite_existing);
  return dst;
}

/// Runs a single-value query and returns it as int64 (test helper; throws on failure).
inline std::int64_t query_int(Connection& c, const std::string& sql) {
  auto q = c.prepare(sql);
  DbStatus s = q->execute();
  if (!s.ok() || !q->next(s)) throw std::runtime_error("query failed: " + sql + " " + s.to_string());
  return q->column_int64(0);
}
inline double query_double(Connection& c, const std::string& sql) {
  auto q = c.prepare(sql);
  DbStatus s = q->execute();
  if (!s.ok() || !q->next(s)) throw std::runtime_error("query failed: " + sql + " " + s.to_string());
  return q->column_double(0);
}
inline std::string query_text(Connection& c, const std::string& sql) {
  auto q = c.prepare(sql);
  DbStatus s = q->execute();
  if (!s.ok() || !q->next(s)) throw std::runtime_error("query failed: " + sql + " " + s.to_string());
  return std::string(q->column_text(0));
}

}  // namespace drivelab::oltp::test
