#include "postgres_cancel.hpp"

#include <sys/socket.h>

#include <array>
#include <chrono>

#include "drivelab/core/clock.hpp"

namespace drivelab::oltp::pg {

WatchedCall::WatchedCall(CallSlot* slot) noexcept : slot_(slot) {
  if (slot_ == nullptr) return;
  slot_->call.fetch_add(1, std::memory_order_acq_rel);
  slot_->busy_since_ns.store(monotonic_ns(), std::memory_order_release);
}

WatchedCall::~WatchedCall() {
  if (slot_ != nullptr) slot_->busy_since_ns.store(0, std::memory_order_release);
}

CancelWatcher::CancelWatcher() : outbox_(std::make_shared<Outbox>()) {}

CancelWatcher::~CancelWatcher() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard lock(outbox_->mu);
    outbox_->stop = true;
    outbox_->pending.clear();
  }
  outbox_->cv.notify_all();
}

void CancelWatcher::add(std::shared_ptr<CallSlot> slot) {
  std::lock_guard lock(mu_);
  slots_.push_back(std::move(slot));
  if (thread_.joinable()) return;
  // The sender: detached, it keeps the outbox (and the slot it is sending for) alive itself.
  std::thread([box = outbox_] {
    std::unique_lock l(box->mu);
    for (;;) {
      box->cv.wait(l, [&] { return box->stop || !box->pending.empty(); });
      if (box->stop) return;
      const std::shared_ptr<CallSlot> s = std::move(box->pending.front());
      box->pending.pop_front();
      l.unlock();
      std::array<char, 256> err{};
      PQcancel(s->canceller.get(), err.data(), static_cast<int>(err.size()));
      l.lock();
    }
  }).detach();
  thread_ = std::thread([this] { run(); });
}

void CancelWatcher::run() {
  std::vector<std::shared_ptr<CallSlot>> slots;
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::nanoseconds(kTickNs), [this] { return stop_; });
    if (stop_) break;
    // Sessions that have closed (only the watcher holds their slot) are dropped.
    std::erase_if(slots_, [](const std::shared_ptr<CallSlot>& s) { return s.use_count() == 1; });
    slots = slots_;
    lock.unlock();
    const std::int64_t now = monotonic_ns();
    for (const auto& s : slots) look_at(s, now);
    slots.clear();
    lock.lock();
  }
}

void CancelWatcher::look_at(const std::shared_ptr<CallSlot>& sp, std::int64_t now) {
  CallSlot& s = *sp;
  // The call number first: a call that starts after it was read has a new number, and one that
  // started before has its start in busy_since_ns (WatchedCall numbers the call, then marks it).
  const std::uint64_t call = s.call.load(std::memory_order_acquire);
  const std::int64_t since = s.busy_since_ns.load(std::memory_order_acquire);
  if (since == 0 || now - since < kCancelAfterNs) return;
  std::lock_guard lock(s.mu);
  const std::atomic<bool>* flag = s.cancel.load(std::memory_order_relaxed);
  if (flag == nullptr || s.socket < 0 || !flag->load(std::memory_order_relaxed)) return;
  // Still the call that was seen waiting (not ended, no other started since).
  if (s.busy_since_ns.load(std::memory_order_acquire) == 0 || s.call.load(std::memory_order_acquire) != call) return;
  if (s.cancelled_call != call) {
    {
      std::lock_guard box(outbox_->mu);
      outbox_->pending.push_back(sp);
    }
    outbox_->cv.notify_one();
    s.cancelled_call = call;
    s.cancel_sent_ns = now;
  } else if (now - s.cancel_sent_ns >= kCancelGiveUpNs && !s.abandoned.load(std::memory_order_relaxed)) {
    // The server neither answered nor honoured the cancel: the session is given up. Its poll()
    // returns at once; the result still pending would confuse the next command anyway.
    s.abandoned.store(true, std::memory_order_release);
    ::shutdown(s.socket, SHUT_RDWR);
  }
}

}  // namespace drivelab::oltp::pg
