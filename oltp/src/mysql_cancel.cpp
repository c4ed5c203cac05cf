#include "mysql_cancel.hpp"

#include <algorithm>
#include <chrono>

#include <cppconn/connection.h>
#include <cppconn/exception.h>
#include <cppconn/statement.h>

#include "drivelab/core/clock.hpp"

namespace drivelab::oltp::mysql {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(20);
/// Calls younger than this are left to finish: most statements take well under it, and killing
/// them would only turn finished work into retries.
constexpr std::int64_t kMinCallAgeNs = 20'000'000;

}  // namespace

InterruptibleCall::InterruptibleCall(CallSlot* slot) noexcept {
  if (slot == nullptr || slot->cancel.load(std::memory_order_relaxed) == nullptr) return;
  slot_ = slot;
  std::lock_guard lock(slot_->mu);
  slot_->busy = true;
  slot_->busy_since_ns = monotonic_ns();
  slot_->kill_sent = false;
}

InterruptibleCall::~InterruptibleCall() {
  if (slot_ == nullptr) return;
  std::lock_guard lock(slot_->mu);  // waits for a KILL being sent to this call
  slot_->busy = false;
}

CancelWatcher::CancelWatcher(ConnectParams side_params) : params_(std::move(side_params)) {
  // The side connection only sends KILL QUERY: short timeouts, no default database needed.
  params_.database.clear();
  params_.read_timeout_s = 10;
  params_.write_timeout_s = 10;
  params_.connect_timeout_s = 5;
}

CancelWatcher::~CancelWatcher() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CancelWatcher::add(std::shared_ptr<CallSlot> slot) {
  std::lock_guard lock(mu_);
  // Drop the slots of closed sessions (only this list still holds them).
  slots_.erase(std::remove_if(slots_.begin(), slots_.end(),
                              [](const std::shared_ptr<CallSlot>& s) { return s.use_count() == 1; }),
               slots_.end());
  slots_.push_back(std::move(slot));
}

void CancelWatcher::start() noexcept {
  std::lock_guard lock(mu_);
  if (started_ || stop_) return;
  try {
    thread_ = std::thread([this] { run(); });
    started_ = true;
  } catch (...) {
    // No thread: lock waits end by innodb_lock_wait_timeout instead (documented).
  }
}

void CancelWatcher::run() {
  std::unique_ptr<sql::Connection> side;
  try {
    ensure_thread_init();
  } catch (...) {
    return;
  }
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, kPollInterval, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    tick(side);
    lock.lock();
  }
}

void CancelWatcher::tick(std::unique_ptr<sql::Connection>& side) {
  std::vector<std::shared_ptr<CallSlot>> slots;
  {
    std::lock_guard lock(mu_);
    slots = slots_;
  }
  const std::int64_t now = monotonic_ns();
  for (const auto& slot : slots) {
    if (slot->cancel.load(std::memory_order_relaxed) == nullptr) continue;
    // The flag is read under the slot's mutex: a closing session clears it under the same
    // mutex, so a flag that dies with its session is never read afterwards.
    std::lock_guard lock(slot->mu);
    const std::atomic<bool>* flag = slot->cancel.load(std::memory_order_relaxed);
    if (flag == nullptr || !flag->load(std::memory_order_relaxed)) continue;
    if (!slot->busy || slot->kill_sent || now - slot->busy_since_ns < kMinCallAgeNs) continue;
    try {
      if (!side) side = connect(params_);
      std::unique_ptr<sql::Statement> st(side->createStatement());
      st->execute("KILL QUERY " + std::to_string(slot->connection_id));
      slot->kill_sent = true;
      kills_.fetch_add(1, std::memory_order_relaxed);
    } catch (const std::exception&) {
      // 1094 (unknown thread: the session is gone) needs nothing; anything else: a fresh side
      // connection next time. The call still ends by itself (lock wait timeout, lost server).
      slot->kill_sent = true;
      side.reset();
    }
  }
}

}  // namespace drivelab::oltp::mysql
