#include "drivelab/oltp/tpcc/tpcc_growth.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "drivelab/core/units.hpp"
#include "drivelab/oltp/tpcc/tpcc_driver.hpp"

namespace drivelab::oltp::tpcc {
namespace {

/// New-Order cards in the deck (tpcc_random.hpp Deck): 10 of 23.
constexpr double kNewOrderShare = static_cast<double>(Deck::kCardsPerType[0]) / static_cast<double>(Deck::kCards);

}  // namespace

std::optional<GrowthConstants> growth_constants(const Backend& backend, const ManagedServer* server) noexcept {
  if (server != nullptr) return server->growth_constants();
  return backend.growth_constants();
}

std::optional<double> offered_new_order_rate(const TpccConfig& config) noexcept {
  if (config.rate_per_s > 0) return config.rate_per_s * kNewOrderShare;
  if (config.think == ThinkMode::tpcc)
    return config.users * tpcc_terminal_rate_per_s() / std::max(config.think_scale, 1e-9) * kNewOrderShare;
  return std::nullopt;
}

GrowthEstimate estimate_growth(const GrowthConstants& k, std::uint64_t database_bytes, bool database_on_drive,
                               double new_orders_per_s, double seconds, const WalSettings& wal) noexcept {
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
