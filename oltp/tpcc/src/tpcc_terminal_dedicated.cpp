// Dedicated terminals: one thread and one Connection per user, as HammerDB's virtual users, for
// runs that must look like N sessions to the server. User i logs in at start + i / login_rate
// (HammerDB ramps its users the same way), then loops: card, keying sleep, execute, think sleep.
// Queue wait is ~0 by construction (nobody queues in the driver; waits are in the server).
//
// Threads get 1 MiB stacks instead of glibc's 8 MiB default: 15,000 users then reserve 15 GiB of
// address space instead of 120 GiB (only touched pages count in RSS either way; the call depth of
// a transaction through any backend is far below 1 MiB).
#include <pthread.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "tpcc_terminal_engine.hpp"

namespace drivelab::oltp::tpcc::detail {
namespace {

/// A joinable thread with a chosen stack size (std::thread cannot set one).
class StackThread {
 public:
  static constexpr std::size_t kStackBytes = 1u << 20;

  explicit StackThread(std::function<void()> fn) : fn_(std::make_unique<std::function<void()>>(std::move(fn))) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, kStackBytes);
    const int rc = pthread_create(&thread_, &attr, &StackThread::trampoline, fn_.get());
    pthread_attr_destroy(&attr);
    if (rc != 0)
      throw EnvironmentError(
          fmt::format("cannot create a terminal thread: {} (raise ulimit -u or "
                      "use terminals: pooled)",
                      std::strerror(rc)));
    joinable_ = true;
  }
  ~StackThread() { join(); }
  StackThread(const StackThread&) = delete;
  StackThread& operator=(const StackThread&) = delete;

  void join() {
    if (joinable_) pthread_join(thread_, nullptr);
    joinable_ = false;
  }

 private:
  static void* trampoline(void* fn) {
    (*static_cast<std::function<void()>*>(fn))();
    return nullptr;
  }
  std::unique_ptr<std::function<void()>> fn_;
  pthread_t thread_{};
  bool joinable_ = false;
};

class DedicatedTerminals final : public TerminalEngine {
 public:
  explicit DedicatedTerminals(DriverState& state) : s_(state) {}
  ~DedicatedTerminals() override { join(); }

  void start() override;
  void join() override {
    for (auto& u : users_)
      if (u->thread) u->thread->join();
  }
  int executors() const noexcept override { return s_.opt.users; }
  std::int64_t busy_ns(std::int64_t now_ns) const override {
    std::int64_t sum = 0;
    for (const auto& u : users_) sum += u->busy.cumulative_ns(now_ns);
    return sum;
  }
  QueueSample queue(std::int64_t) override { return {}; }
  int logged_in() const noexcept override { return logged_in_.load(std::memory_order_relaxed); }

 private:
  struct User {
    TerminalIdentity id;
    BusyMeter busy;
    std::unique_ptr<StackThread> thread;
  };
  void user_main(User& u, std::int64_t t0_ns);
  /// Sleeps until `due_ns` and records the wake-up's lateness; false on stop.
  bool sleep_until(User& u, std::int64_t due_ns);

  DriverState& s_;
  std::vector<std::unique_ptr<User>> users_;
  std::atomic<int> logged_in_{0};
};

void DedicatedTerminals::start() {
  const DriverOptions& o = s_.opt;
  const Rng base(o.seed);
  users_.reserve(static_cast<std::size_t>(o.users));
  for (int i = 0; i < o.users; ++i) {
    auto u = std::make_unique<User>();
    u->id = TerminalIdentity::make(i, o.terminal_first + i * o.terminal_step, o, base);
    users_.push_back(std::move(u));
  }
  const std::int64_t t0 = monotonic_ns();
  for (auto& u : users_) u->thread = std::make_unique<StackThread>([this, up = u.get(), t0] { user_main(*up, t0); });
}

bool DedicatedTerminals::sleep_until(User& u, std::int64_t due_ns) {
  if (!s_.stop.sleep_until(due_ns)) return false;
  s_.stats.record_lateness(u.id.index, monotonic_ns() - due_ns);
  return true;
}

void DedicatedTerminals::user_main(User& u, std::int64_t t0_ns) {
  const DriverOptions& o = s_.opt;
  const int i = u.id.index;
  const std::string who = fmt::format("user {}", i + 1);
  try {
    if (o.login_rate_per_s > 0 && !s_.stop.sleep_until(t0_ns + static_cast<std::int64_t>(i * 1e9 / o.login_rate_per_s)))
      return;
    std::unique_ptr<Session> session;
    try {
      session = std::make_unique<Session>(s_.backend, s_.stop, o.reconnect_timeout, o.protocol, &s_.failures);
    } catch (const std::exception& ex) {
      s_.fail(login_failure_message(who, o.users, logged_in_.load(), o.login_rate_per_s, ex));
      return;
    }
    logged_in_.fetch_add(1, std::memory_order_relaxed);

    std::int64_t base = monotonic_ns();
    if (o.think == ThinkMode::tpcc) {
      base += static_cast<std::int64_t>(u.id.rng.uniform01() * s_.start_spread_ns());
      if (!sleep_until(u, base)) return;
    }
    while (!s_.stop.requested()) {
      const TxType type = u.id.next_type(o.profile);
      if (const std::int64_t keying = s_.keying_ns(type); keying > 0) {
        base += keying;
        if (!sleep_until(u, base)) return;
      }
      const Card card = u.id.card(s_.gen, type);
      const std::int64_t start = monotonic_ns();
      u.busy.begin(start);
      const ExecResult r = session->execute(card, who);
      const std::int64_t end = monotonic_ns();
      u.busy.end(end);
      s_.stats.record(i, type, r, start, start, end);
      if (r.fatal) {
        s_.fail(*r.fatal);
        return;
      }
      if (r.abandoned) return;
      base = end;
      if (const std::int64_t think = s_.think_ns(type, u.id.rng); think > 0) {
        base += think;
        if (!sleep_until(u, base)) return;
      }
    }
  } catch (const std::exception& ex) {
    s_.fail(fmt::format("{}: {}", who, ex.what()));
  }
}

}  // namespace

std::unique_ptr<TerminalEngine> make_dedicated_terminals(DriverState& state) {
  return std::make_unique<DedicatedTerminals>(state);
}

}  // namespace drivelab::oltp::tpcc::detail
