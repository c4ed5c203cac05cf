#include "drivelab/oltp/tpcc/tpcc_growth.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "drivelab/core/units.hpp"
#include "drivelab/oltp/tpcc/tpcc_driver.hpp"

namespace drivelab::oltp::tpcc {
namespace {

/// THE growth constants, measured on 2026-12-02 on the 2-CPU Debian 12 VM of docs/oltp-tpcc.md
/// "Sizing" (virtio disk, ext4; the runs, their commands and raw numbers are there and in
/// docs/backend-postgres.md section 4 and docs/backend-mysql.md "Sizing"): 2 warehouses loaded,
/// then 60 s of think: none with 4 dedicated users and no warm-up; growth = size after the run -
/// size after the load, over the New-Orders of the run (all five types at the deck's mix).
///   SQLite:     database file 164,020,224 -> 168,460,288 B over 3,815 New-Orders = 1,164 B; the
///               WAL file's high-water mark (load and run, sampled every 2 s) 4,354,872 B
///               (wal_autocheckpoint: 1,000 pages): allowance 16 MiB, ~4x, because a long reader
///               (Stock-Level, the checks) holds a checkpoint back and the WAL then keeps growing.
///   PostgreSQL: pg_database_size 229,801,319 -> 245,292,391 B over 4,988 New-Orders = 3,106 B
///               (MVCC: every STOCK, CUSTOMER, DISTRICT update writes a new row version);
///               pg_stat_wal wal_bytes 153,302,959 B = 30,734 B of WAL per New-Order; the load
///               left 218,112,000 B in pg_wal for 229.8 MB loaded (0.95 per loaded byte),
///               recycled by the run (pg_wal stayed at that size).
///   MariaDB:    (240 s: InnoDB extends its files by whole extents, so 60 s did not show)
///               sum(data_length + index_length) 190,873,600 -> 216,743,936 B over 21,039
///               New-Orders = 1,230 B (du of the .ibd files: 259,217,050 -> 279,139,994 B =
///               947 B; the larger is taken); ibdata1 (undo) stayed at 79,691,776 B (purge
///               reuses it); the redo log is the fixed 256 MiB ib_logfile0 made at start-up.
constexpr GrowthConstants kSqlite{.table_bytes_per_new_order = 1164,
                                  .wal_bytes_per_new_order = 0,
                                  .load_wal_per_loaded_byte = 0,
                                  .log_allowance_bytes = 16ull << 20};
constexpr GrowthConstants kPostgres{.table_bytes_per_new_order = 3106,
                                    .wal_bytes_per_new_order = 30734,
                                    .load_wal_per_loaded_byte = 0.95,
                                    .log_allowance_bytes = 0};
constexpr GrowthConstants kMariadb{.table_bytes_per_new_order = 1230,
                                   .wal_bytes_per_new_order = 0,
                                   .load_wal_per_loaded_byte = 0,
                                   .log_allowance_bytes = 0};

/// New-Order cards in the deck (tpcc_random.hpp Deck): 10 of 23.
constexpr double kNewOrderShare = static_cast<double>(Deck::kCardsPerType[0]) / static_cast<double>(Deck::kCards);

}  // namespace

std::optional<GrowthBackend> growth_backend(const DatabaseConfig& config) noexcept {
  if (capabilities_of(config.backend).embedded) return GrowthBackend::sqlite;
  if (!config.managed) return std::nullopt;
  return *config.managed == ServerKind::postgres ? GrowthBackend::postgres : GrowthBackend::mariadb;
}

const GrowthConstants& growth_constants(GrowthBackend backend) noexcept {
  switch (backend) {
    case GrowthBackend::sqlite: return kSqlite;
    case GrowthBackend::postgres: return kPostgres;
    case GrowthBackend::mariadb: return kMariadb;
  }
  return kSqlite;
}

std::optional<double> offered_new_order_rate(const TpccConfig& config) noexcept {
  if (config.rate_per_s > 0) return config.rate_per_s * kNewOrderShare;
  if (config.think == ThinkMode::tpcc)
    return config.users * tpcc_terminal_rate_per_s() / std::max(config.think_scale, 1e-9) * kNewOrderShare;
  return std::nullopt;
}

GrowthEstimate estimate_growth(GrowthBackend backend, std::uint64_t database_bytes, bool database_on_drive,
                               double new_orders_per_s, double seconds, const WalSettings& wal) noexcept {
  const GrowthConstants& k = growth_constants(backend);
  GrowthEstimate e;
  e.database_bytes = database_bytes;
  e.database_on_drive = database_on_drive;
  e.new_orders_per_s = std::max(new_orders_per_s, 0.0);
  e.seconds = std::max(seconds, 0.0);
  e.bytes_per_new_order = k.table_bytes_per_new_order;
  e.growth_bytes = static_cast<std::uint64_t>(std::ceil(e.new_orders_per_s * e.seconds * e.bytes_per_new_order));
  double log = static_cast<double>(k.log_allowance_bytes);
  if (k.wal_bytes_per_new_order > 0) {
    // pg_wal holds the WAL since the redo point of the last checkpoint: at most one checkpoint
    // cycle and the checkpoint's own spread, never more than max_wal_size (docs 30.5).
    // A load still to come writes its own WAL first; the run then recycles those segments, so
    // the larger of the two is what pg_wal holds.
    const double kept_s = std::min(e.seconds, (1.0 + wal.checkpoint_completion_target) * wal.checkpoint_timeout_s);
    const double run_wal = e.new_orders_per_s * kept_s * k.wal_bytes_per_new_order;
    const double load_wal = database_on_drive ? 0.0 : k.load_wal_per_loaded_byte * static_cast<double>(database_bytes);
    log += std::min(std::max(run_wal, load_wal), static_cast<double>(wal.max_wal_size_bytes)) +
           static_cast<double>(wal.wal_keep_size_bytes);
  }
  e.log_bytes = static_cast<std::uint64_t>(std::ceil(log));
  return e;
}

std::string growth_refusal(const GrowthEstimate& e, std::uint64_t free_bytes, const std::string& dir,
                           const std::string& what) {
  if (e.needed_bytes() <= free_bytes) return {};
  const std::string per_new_order = format_size(static_cast<std::uint64_t>(std::llround(e.bytes_per_new_order)));
  if (e.database_on_drive)  // after the warm-up: the database is written; what the rest needs
    return fmt::format(
        "not enough free space in {} for the rest of this run: the database is on the drive ({} {}); the run "
        "still needs growth {:.1f} New-Orders/s (the warm-up's rate) x {:.0f} s x {} = {} + log allowance {} = {}, "
        "and {} is free (docs/oltp-tpcc.md, \"Sizing\")",
        dir, what, format_size(e.database_bytes), e.new_orders_per_s, e.seconds, per_new_order,
        format_size(e.growth_bytes), format_size(e.log_bytes), format_size(e.needed_bytes()), format_size(free_bytes));
  const std::string growth =
      e.new_orders_per_s > 0
          ? fmt::format("growth {:.1f} New-Orders/s x {:.0f} s x {} = {}", e.new_orders_per_s, e.seconds, per_new_order,
                        format_size(e.growth_bytes))
          : std::string("the run's growth (a closed loop: checked after the warm-up, at the rate it measures)");
  return fmt::format(
      "not enough free space in {} for this run: {} {} + {} + log allowance {} = {} needed, {} free "
      "(docs/oltp-tpcc.md, \"Sizing\")",
      dir, what, format_size(e.database_bytes), growth, format_size(e.log_bytes), format_size(e.needed_bytes()),
      format_size(free_bytes));
}

}  // namespace drivelab::oltp::tpcc
