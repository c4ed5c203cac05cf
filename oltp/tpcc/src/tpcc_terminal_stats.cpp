#include "tpcc_terminal_stats.hpp"

#include <algorithm>

namespace drivelab::oltp::tpcc::detail {

StatsShards::StatsShards(int executors) {
  const int n = std::clamp(executors, 1, kMaxShards);
  for (int i = 0; i < n; ++i) shards_.push_back(std::make_unique<Shard>());
}

void StatsShards::record(int executor, TxType type, const ExecResult& r, std::int64_t submit_ns, std::int64_t start_ns,
                         std::int64_t end_ns) {
  if (r.abandoned || !measuring()) return;  // warm-up and stop: not recorded
  Shard& sh = shard(executor);
  std::lock_guard lock(sh.mu);
  TypeStats& s = sh.by_type[static_cast<std::size_t>(type)];
  const auto retries = static_cast<std::uint64_t>(r.retries);
  const auto reconnects = static_cast<std::uint64_t>(r.reconnects);
  s.retries += retries;
  s.reconnects += reconnects;
  sh.interval.retries += retries;
  sh.interval.reconnects += reconnects;
  if (r.in_doubt) ++sh.in_doubt;
  if (r.end == TxEnd::failed) {
    ++s.errors;
    ++sh.interval.errors;
    return;
  }
  const std::int64_t response = end_ns - submit_ns;
  if (r.end == TxEnd::committed) {
    ++s.commits;
    ++sh.interval.commits;
    if (type == TxType::new_order) ++sh.interval.new_order_commits;
    sh.delivery_skipped += static_cast<std::uint64_t>(r.delivery_skipped);
  } else {
    ++s.rollbacks;
  }
  s.response_time.record(response);
  s.queue_wait.record(start_ns - submit_ns);
  s.service_time.record(end_ns - start_ns);
  sh.interval.response_time.record(response);
}

void StatsShards::record_lateness(int executor, std::int64_t lateness_ns) {
  if (!measuring()) return;
  Shard& sh = shard(executor);
  std::lock_guard lock(sh.mu);
  sh.lateness.record(lateness_ns);
}

IntervalStats StatsShards::take_interval() {
  IntervalStats out;
  for (auto& sh : shards_) {
    std::lock_guard lock(sh->mu);
    IntervalStats& iv = sh->interval;
    out.response_time.merge(iv.response_time);
    out.commits += iv.commits;
    out.new_order_commits += iv.new_order_commits;
    out.retries += iv.retries;
    out.errors += iv.errors;
    out.reconnects += iv.reconnects;
    iv.response_time.reset();
    iv.commits = iv.new_order_commits = iv.retries = iv.errors = iv.reconnects = 0;
  }
  return out;
}

void StatsShards::totals(DriverTotals& out) const {
  for (const auto& sh : shards_) {
    std::lock_guard lock(sh->mu);
    for (std::size_t k = 0; k < kTxTypes; ++k) out.by_type[k].merge(sh->by_type[k]);
    out.in_doubt += sh->in_doubt;
    out.delivery_skipped_districts += sh->delivery_skipped;
    out.timer_lateness.merge(sh->lateness);
  }
}

}  // namespace drivelab::oltp::tpcc::detail
