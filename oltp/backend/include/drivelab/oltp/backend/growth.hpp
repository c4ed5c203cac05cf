#pragma once
/// \file growth.hpp
/// How a database that lives on the drive under test grows under a TPC-C run, stated by what
/// keeps its files there: an embedded backend (Backend::growth_constants(), SQLite's file) or a
/// managed server (ManagedServer::growth_constants(), PostgreSQL's cluster, MariaDB's datadir).
/// A database on an existing server is not on the drive: nobody states it. The TPC-C space
/// check (tpcc/tpcc_growth.hpp) turns these into its estimate; each backend's numbers, with
/// their measurement, sit beside its code (sqlite_backend.cpp, postgres_server.cpp,
/// mysql_server.cpp; docs/oltp-tpcc.md "Sizing").
#include <cstdint>

namespace drivelab::oltp {

/// Measured growth of one backend per committed TPC-C New-Order (the run's whole mix around it).
/// Every backend's numbers are measured the same way, on the 2-CPU Debian 12 VM of
/// docs/oltp-tpcc.md "Sizing" (virtio disk, ext4; the runs, their commands and raw numbers are
/// there and in docs/backend-postgres.md section 4 and docs/backend-mysql.md "Sizing"):
/// 2 warehouses loaded, then 60 s of think: none with 4 dedicated users and no warm-up; growth =
/// size after the run - size after the load, over the New-Orders of the run (all five types at
/// the deck's mix).
struct GrowthConstants {
  double table_bytes_per_new_order = 0;   ///< tables + indexes (+ InnoDB undo), bytes
  double wal_bytes_per_new_order = 0;     ///< PostgreSQL: WAL written per New-Order, bytes; else 0
  double load_wal_per_loaded_byte = 0;    ///< PostgreSQL: WAL left in pg_wal by the load, per byte loaded
  std::uint64_t log_allowance_bytes = 0;  ///< SQLite: the WAL file's measured high-water mark
};

/// PostgreSQL's settings that bound pg_wal (the managed profile's values by default,
/// postgres_server.cpp; ManagedServer::wal_settings reads the running server's). Only used where
/// GrowthConstants::wal_bytes_per_new_order > 0.
struct WalSettings {
  std::uint64_t max_wal_size_bytes = 16ull << 30;
  std::uint64_t wal_keep_size_bytes = 0;
  double checkpoint_timeout_s = 300;
  double checkpoint_completion_target = 0.9;
};

}  // namespace drivelab::oltp
