#pragma once
/// \file tpcc_schema.hpp
/// The nine TPC-C tables (clause 1.3) with the primary keys of clause 1.3, the population
/// (clause 4.3.3.1) and the bookkeeping table `drivelab_meta` that says whether a database was
/// completely loaded, at which scale and with which C-Load constants (needed to pick a valid
/// C-Run when a database is reused).
///
/// DDL is portable SQL (INTEGER, DECIMAL, VARCHAR, CHAR, TIMESTAMP); ORDER is a reserved word, so
/// the ORDER table is named `orders`. Secondary indexes are created after the load (cheaper than
/// maintaining them row by row): customer (c_w_id, c_d_id, c_last, c_first) for the by-last-name
/// lookups of Payment and Order-Status (clause 2.5.2.2 / 2.6.2.2), and orders (o_w_id, o_d_id,
/// o_c_id, o_id) for Order-Status's "most recent order of the customer".
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/core/rng.hpp"
#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/tpcc/tpcc_random.hpp"

namespace drivelab::oltp::tpcc {

/// Table names in load order.
inline constexpr std::array<std::string_view, 9> kTables{"warehouse", "district",   "customer", "history", "new_order",
                                                         "orders",    "order_line", "item",     "stock"};

/// The CREATE TABLE statements of the nine tables and drivelab_meta in `dialect` (its date-time
/// type and table options). Pure function: tests render it for every dialect without a server.
std::vector<std::string> schema_ddl(const Dialect& dialect);
/// The CREATE INDEX statements of the secondary indexes (portable in every dialect).
std::vector<std::string> index_ddl();

/// Creates the nine tables and drivelab_meta. Throws BackendError (e.g. tables already exist).
void create_schema(Connection& conn, const Dialect& dialect);
/// Creates the secondary indexes (after the load).
void create_indexes(Connection& conn);

/// What drivelab_meta records about a database.
struct LoadMeta {
  Scale scale;
  CConstants c_load;
  bool complete = false;  ///< the load finished (an interrupted load leaves false)
};
/// Writes (replaces) the meta rows. Throws BackendError.
void write_meta(Connection& conn, const LoadMeta& meta);
/// Reads the meta rows; nullopt if the table is missing or incomplete. Never throws for a
/// missing table (a foreign or damaged file is simply "not reusable").
std::optional<LoadMeta> read_meta(Connection& conn);

/// Current local time as "YYYY-MM-DD HH:MM:SS", the text form of a TIMESTAMP every backend
/// accepts (O_ENTRY_D, H_DATE, C_SINCE, OL_DELIVERY_D). The text is formatted once per second
/// per thread (localtime_r takes glibc's time-zone lock; 87% of transactions need a timestamp)
/// and the reference stays valid until the calling thread's next call.
const std::string& sql_timestamp_now();

/// Why a database cannot be reused for a run at `scale`, or "" when it can: drivelab_meta says
/// complete with the same warehouses and items, and cheap row counts agree (WAREHOUSE = W,
/// DISTRICT = 10 W, ITEM = items), which catches a foreign or damaged database behind a valid
/// meta table. `meta` receives the meta rows when present (C-Load is needed to pick C-Run).
/// Never throws for missing tables.
std::string reuse_problem(Connection& conn, const Scale& scale, std::optional<LoadMeta>& meta);

/// Bytes a loaded database takes on the drive (tables + indexes, after the load), for the
/// free-space check before building. Measured here per warehouse with the full 100,000 items
/// (docs/backend-postgres.md, "Database size"): sqlite (WAL mode, after the load) and postgres
/// (pg_database_size); the servers without a measurement (mysql/mariadb, odbc) use the
/// PostgreSQL figure until measured. STOCK and ITEM scale with `scale.items`. The SQLite figure
/// is taken for an embedded database (`capabilities.embedded`), else the PostgreSQL one.
std::uint64_t estimated_database_bytes(const Scale& scale, const Capabilities& capabilities);

/// Progress of a load, reported after each warehouse.
struct LoadProgress {
  int warehouses_done = 0;
  int warehouses_total = 0;
  double elapsed_s = 0;
  double eta_s = 0;
};

/// What a load did.
struct LoadStats {
  double seconds = 0;
  std::uint64_t rows = 0;
  int threads = 1;        ///< loader connections used
  bool complete = false;  ///< false when stopped early by `stop`
};

/// How to load.
struct LoadOptions {
  /// Loader connections, each a Backend::connect_for_load() session that takes whole warehouses
  /// from a shared counter. Capped by Capabilities::max_load_threads (SQLite: 1) and by the
  /// number of warehouses.
  int threads = 1;
  /// Called after each warehouse (from the worker that finished it; calls are serialised).
  std::function<void(const LoadProgress&)> progress;
  /// Polled before each district by every worker (calls are serialised); true stops the load.
  std::function<bool()> stop;
};

/// Loader connections a load with `threads` asked for really opens: capped by
/// Capabilities::max_load_threads and by the warehouses, at least 1 (LoadStats::threads).
int load_threads_used(int threads, const Scale& scale, const Capabilities& capabilities) noexcept;

/// Populates an empty database per clause 4.3.3.1 at `scale` with the C-Load constants `c_load`
/// (C_LAST: NURand(255, 0, 999) for customers 1,001..3,000):
///   1. schema and meta (complete = false) on a load connection (Backend::connect_for_load);
///      on PostgreSQL the primary keys are dropped again, to be built once after the COPY
///      (a sorted build instead of row-by-row B-tree inserts; measured in docs/backend-postgres.md);
///   2. ITEM once, then one pass per warehouse (STOCK in one transaction, then each DISTRICT with
///      its CUSTOMERs, HISTORY, ORDERS, ORDER-LINEs and NEW-ORDERs in one transaction) through
///      the BulkLoader, by `options.threads` parallel connections;
///   3. primary keys (PostgreSQL) and secondary indexes, built in parallel by the same
///      connections; meta (complete = true); Backend::finish_load().
/// Row content depends only on `rng` and the warehouse number (one split stream per warehouse,
/// stream 0 for ITEM), never on the thread count or the order the warehouses are taken in.
/// A stopped load returns complete = false and leaves meta.complete = false. Throws
/// BackendError / EnvironmentError (the first error of any worker, after all have stopped).
LoadStats load_database(Backend& backend, const Scale& scale, const CConstants& c_load, const Rng& rng,
                        const LoadOptions& options);

/// The single-connection form (threads = 1) of the above.
LoadStats load_database(Backend& backend, const Scale& scale, const CConstants& c_load, const Rng& rng,
                        const std::function<void(const LoadProgress&)>& progress, const std::function<bool()>& stop);

}  // namespace drivelab::oltp::tpcc
