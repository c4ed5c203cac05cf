#include "odbc_watcher.hpp"

#include <sqlext.h>

#include <algorithm>

#include "drivelab/core/clock.hpp"

namespace drivelab::oltp::odbc {

CancelWatcher::~CancelWatcher() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::shared_ptr<CancelWatcher::Slot> CancelWatcher::add() {
  auto slot = std::make_shared<Slot>();
  std::lock_guard lock(mu_);
  slots_.push_back(slot);
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  return slot;
}

void CancelWatcher::remove(const std::shared_ptr<Slot>& slot) {
  std::lock_guard lock(mu_);
  const auto it = std::find(slots_.begin(), slots_.end(), slot);
  if (it == slots_.end()) return;
  *it = std::move(slots_.back());
  slots_.pop_back();
}

void CancelWatcher::run() {
  std::vector<std::pair<std::shared_ptr<Slot>, CancelReason>> due;
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, kTick);
    if (stop_) break;
    const std::int64_t now = monotonic_ns();
    due.clear();
    for (const auto& s : slots_) {
      if (!s->busy.load(std::memory_order_acquire)) continue;
      const std::atomic<bool>* flag = s->cancel_flag.load(std::memory_order_acquire);
      if (flag != nullptr && flag->load(std::memory_order_relaxed)) {
        due.emplace_back(s, CancelReason::stop_requested);
        continue;
      }
      std::lock_guard slot_lock(s->mu);
      if (s->stmt != nullptr && s->deadline_ns != 0 && now >= s->deadline_ns)
        due.emplace_back(s, CancelReason::deadline);
    }
    // SQLCancel talks to the server (a cancel request, KILL QUERY): outside the list lock, so
    // connections come and go meanwhile.
    lock.unlock();
    for (auto& [s, why] : due) {
      std::lock_guard slot_lock(s->mu);
      if (s->stmt == nullptr || s->cancelled != CancelReason::none) continue;
      s->cancelled = why;
      SQLCancel(s->stmt);
    }
    due.clear();
    lock.lock();
  }
}

RunningCall::RunningCall(CancelWatcher::Slot& slot, SQLHSTMT stmt, std::int64_t deadline_ns) : slot_(slot) {
  std::lock_guard lock(slot_.mu);
  slot_.stmt = stmt;
  slot_.deadline_ns = deadline_ns;
  slot_.cancelled = CancelReason::none;
  slot_.busy.store(true, std::memory_order_release);
}

CancelReason RunningCall::finish() noexcept {
  if (done_) return reason_;
  done_ = true;
  std::lock_guard lock(slot_.mu);
  slot_.stmt = nullptr;
  slot_.busy.store(false, std::memory_order_release);
  reason_ = slot_.cancelled;
  slot_.cancelled = CancelReason::none;
  return reason_;
}

}  // namespace drivelab::oltp::odbc
