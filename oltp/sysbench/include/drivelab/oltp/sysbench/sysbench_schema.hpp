#pragma once
/// \file sysbench_schema.hpp
/// sysbench's tables and their population (`sysbench oltp_* prepare`, oltp_common.lua
/// create_table()), on any backend:
///
///   CREATE TABLE sbtest<N>(
///     id <auto-increment INTEGER>,
///     k INTEGER DEFAULT '0' NOT NULL,
///     c CHAR(120) DEFAULT '' NOT NULL,
///     pad CHAR(60) DEFAULT '' NOT NULL,
///     PRIMARY KEY (id)) <table options>
///   ... rows ...
///   CREATE INDEX k_<N> ON sbtest<N>(k)           -- after the rows, as sysbench does
///
/// Auto-increment by dialect (oltp_common.lua: mysql AUTO_INCREMENT, pgsql SERIAL; SQLite has no
/// sysbench driver: its INTEGER PRIMARY KEY is the rowid, which auto-increments; SQL Server has none
/// either: a plain INTEGER, because the workload always gives ids explicitly). MySQL tables get
/// the dialect's table options (ENGINE=InnoDB, sysbench's default --mysql-storage-engine).
///
/// Rows: id 1..table_size, k = sysbench.rand.default(1, table_size) (the configured distribution,
/// `special` by default, so k is skewed like sysbench's), c and pad from the templates of
/// sysbench_random.hpp. sysbench lets the auto-increment number the rows; we write the ids
/// explicitly (same values, and no dependence on the server's auto-increment lock mode).
///
/// drivelab_meta (the bookkeeping table of every drivelab database, see backend.hpp) records
/// workload=sysbench, tables, table_size and complete=1 once the load finished, so a database we
/// loaded is recognised and may be destroyed by a later run; a database prepared by sysbench itself
/// has no drivelab_meta and is only ever reused (never dropped).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "drivelab/core/rng.hpp"
#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/sysbench/sysbench_random.hpp"

namespace drivelab::oltp::sysbench {

/// "sbtest<table>" (1-based).
std::string table_name(int table);
/// The CREATE TABLE statement of table `table` for `dialect` (Dialect::name: sqlite, postgres,
/// mysql, sqlserver).
std::string create_table_sql(const Dialect& dialect, int table);
/// "CREATE INDEX k_<table> ON sbtest<table>(k)".
std::string create_index_sql(int table);

/// What tables were loaded with.
struct Scale {
  int tables = 1;
  std::int64_t table_size = 10000;
};

/// Progress of a load, reported after each finished table.
struct LoadProgress {
  int tables_done = 0;
  int tables_total = 0;
  std::uint64_t rows_done = 0;
  double elapsed_s = 0;
  double eta_s = 0;
};

struct LoadStats {
  double seconds = 0;
  std::uint64_t rows = 0;
  int threads = 1;
  bool complete = false;  ///< false when stopped early
};

/// Loader threads (and connections) a load with `threads` opens: min(threads, tables,
/// capabilities.max_load_threads), at least 1 (LoadStats::threads).
int load_threads_used(int threads, const Scale& scale, const Capabilities& capabilities) noexcept;

/// Creates and fills sbtest1..tables in an empty database, then the k indexes, drivelab_meta and
/// Backend::finish_load(). Tables are loaded in parallel by load_threads_used() loader threads, each on its own
/// Backend::connect_for_load() session (sysbench's parallel prepare: thread i loads tables i+1, i+1+threads, ...),
/// through the backend's BulkLoader in transactions of 50,000 rows. Table t draws from rng.split(t), so the content
/// does not depend on the number of loader threads. `stop` is polled every 50,000 rows. Throws BackendError /
/// EnvironmentError.
LoadStats load_tables(Backend& backend, const Scale& scale, const RandOptions& rand, const Rng& rng, int threads,
                      const std::function<void(const LoadProgress&)>& progress, const std::function<bool()>& stop);

/// Whether the tables in the database can be reused for `scale`: nullopt if yes, else the reason.
/// With drivelab_meta: it must say workload=sysbench, complete, same tables and table_size.
/// Without (e.g. `sysbench prepare` loaded them): every sbtest1..tables must answer
/// SELECT MAX(id) with table_size (an index lookup, cheap at any size). Never throws for missing
/// tables (that is a reason).
std::optional<std::string> check_reusable(Connection& conn, const Scale& scale);

/// True when the database has drivelab_meta (so it is drivelab's and may be destroyed).
bool has_drivelab_meta(Connection& conn);

}  // namespace drivelab::oltp::sysbench
