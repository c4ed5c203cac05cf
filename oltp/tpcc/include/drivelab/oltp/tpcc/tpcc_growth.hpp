#pragma once
/// \file tpcc_growth.hpp
/// How much space a TPC-C run needs beyond its loaded database: the tables' growth per committed
/// New-Order times the New-Order rate and the seconds left, plus the log the backend keeps on the
/// drive. The free-space checks of the emulator (tpcc_emulator.cpp) refuse a run whose estimate
/// does not fit, printing every term (docs/oltp-tpcc.md, "Sizing").
///
/// Growth per New-Order (tables + indexes, all of them: ORDER, ORDER-LINE ~10 lines, NEW-ORDER
/// inserted and deleted again by Delivery, HISTORY of the Payments at the mix's ratio, InnoDB's
/// undo in ibdata): measured per backend and stated by what keeps the database on the drive
/// (backend/growth.hpp: Backend::growth_constants() of an embedded backend, else the managed
/// server's; the numbers live beside their code: sqlite_backend.cpp, postgres_server.cpp,
/// mysql_server.cpp; docs/backend-postgres.md section 4, docs/backend-mysql.md "Sizing",
/// docs/oltp-tpcc.md "Sizing"). The workload asks; it never tests a backend's name. The log:
///   SQLite      the WAL file: checkpointed every wal_autocheckpoint pages, but never shrunk and
///               held back while readers are open: a measured allowance;
///   PostgreSQL  pg_wal keeps the WAL since the last checkpoint's redo point: WAL per New-Order x
///               rate x (1 + checkpoint_completion_target) x checkpoint_timeout, or the load's
///               own WAL (~ its size) if larger, at most max_wal_size, plus wal_keep_size (docs
///               30.5 "WAL Configuration");
///   MariaDB     the redo log (innodb_log_file_size) is created at its full size when the server
///               starts, before this check: it is already off the free space; nothing is added.
#include <cstdint>
#include <optional>
#include <string>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backend/growth.hpp"
#include "drivelab/oltp/backend/server.hpp"
#include "drivelab/oltp/tpcc/tpcc_config.hpp"

namespace drivelab::oltp::tpcc {

/// The growth constants of the database `backend` reaches (`server`: its managed server, or
/// nullptr): the managed server's, else the backend's own (an embedded one); nullopt when the
/// database is not on the drive under test (an existing server).
std::optional<GrowthConstants> growth_constants(const Backend& backend, const ManagedServer* server) noexcept;

/// New-Orders per second the configuration offers, known before the run: think: tpcc at zero
/// response time (users x tpcc_terminal_rate_per_s() / think_scale x 10/23 New-Order cards, an
/// upper bound), or an open loop's rate x 10/23. nullopt for a closed loop (think: none without
/// rate): then only the warm-up can tell.
std::optional<double> offered_new_order_rate(const TpccConfig& config) noexcept;

/// The estimate and every term of it, for the refusal.
struct GrowthEstimate {
  std::uint64_t database_bytes = 0;  ///< the database now (or the estimated load before it)
  double new_orders_per_s = 0;
  double seconds = 0;              ///< warm-up + duration still to run
  double bytes_per_new_order = 0;  ///< tables' growth per New-Order
  std::uint64_t growth_bytes = 0;  ///< new_orders_per_s x seconds x bytes_per_new_order
  std::uint64_t log_bytes = 0;     ///< the log allowance (see the file comment)
  bool database_on_drive = false;  ///< the database is already written (not counted as needed)
  /// What must still fit in the free space: growth + log (+ the database unless on the drive).
  std::uint64_t needed_bytes() const noexcept {
    return (database_on_drive ? 0 : database_bytes) + growth_bytes + log_bytes;
  }
};

/// The estimate for a database growing by `k` (the growth constants) with a database of `database_bytes` already
/// written
/// (`database_on_drive`) or still to be loaded, running at `new_orders_per_s` (< 0: 0) for
/// `seconds` (< 0: 0). PostgreSQL's log (`wal`): min(max_wal_size, max(the load's WAL if still
/// to come, the run's WAL over one checkpoint cycle)) + wal_keep_size; the load's segments are
/// recycled by the run. Pure.
GrowthEstimate estimate_growth(const GrowthConstants& k, std::uint64_t database_bytes, bool database_on_drive,
                               double new_orders_per_s, double seconds, const WalSettings& wal = {}) noexcept;

/// The refusal when `estimate` does not fit in `free_bytes` of `dir`, or "" when it fits:
/// "not enough free space in DIR for this run: estimated load 45.0 MB + growth 12.3 New-Orders/s
/// x 600 s x 1.5 KiB = 11.2 MB + log allowance 8.0 MB = 64.2 MB needed, 50.0 MB free"; with the
/// database already on the drive "loaded size 45.0 MB (on the drive) + growth ...". `what` names
/// the database figure ("loaded size", "estimated load").
std::string growth_refusal(const GrowthEstimate& estimate, std::uint64_t free_bytes, const std::string& dir,
                           const std::string& what);

}  // namespace drivelab::oltp::tpcc
