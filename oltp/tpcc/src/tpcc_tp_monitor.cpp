// The TP monitor: terminals as state machines on Boost.Asio steady_timers in one timer thread,
// a FIFO queue of submitted transactions, and a pool of worker threads with one Connection each.
// Also the open-loop arrival process of `rate:` (same queue and pool, no terminal timers).
//
// A pooled terminal's cycle (clause 5.2.5), all in the timer thread except the execution:
//
//   draw a card --keying timer--> submit: inputs drawn, Card queued --worker--> execute
//        ^                                                                      |
//        +------------------ think timer <-- response (handed back to the timer thread)
//
// Timers are armed at absolute times computed from the previous SCHEDULED time (keying) or from
// the worker's end-of-transaction time (think), so a late wake-up does not stretch the cycle; it
// is recorded as timer lateness instead. A terminal costs ~440 bytes (identity, deck and RNG ~172,
// steady_timer 112, its pending wait ~100, hand-back link 16): 15,000 terminals are ~6.6 MB.
// Lateness and how the timer thread is kept on time: tpcc_driver.hpp, docs/oltp-tpcc.md section 4.
#include <utility>  // before any Asio header: GCC 12 + Boost 1.74 (docs/protocol.md §3)

// GCC 12 at -O2 reports a null dereference in Asio's scheduler::compensating_work_started (called by
// the reactor's descriptor operations, here the eventfd below, only on a thread running the
// io_context, where the pointer is never null): a false positive in Boost's header, silenced there.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#pragma GCC diagnostic pop

#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "tpcc_terminal_engine.hpp"

namespace drivelab::oltp::tpcc::detail {
namespace {

namespace asio = boost::asio;

asio::steady_timer::time_point to_time_point(std::int64_t monotonic_ns) {
  // libstdc++'s steady_clock reads CLOCK_MONOTONIC, the clock of monotonic_ns().
  return asio::steady_timer::time_point(std::chrono::nanoseconds(monotonic_ns));
}

int make_eventfd() {
  const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("eventfd: {}", std::strerror(errno)));
  return fd;
}

class TpMonitor final : public TerminalEngine {
 public:
  explicit TpMonitor(DriverState& state) : s_(state), arrival_timer_(io_), done_fd_(io_, make_eventfd()) {}
  ~TpMonitor() override { join(); }

  void start() override;
  void join() override;
  int executors() const noexcept override { return s_.opt.connections; }
  std::int64_t busy_ns(std::int64_t now_ns) const override {
    std::int64_t sum = 0;
    for (const auto& w : workers_) sum += w->busy.cumulative_ns(now_ns);
    return sum;
  }
  QueueSample queue(std::int64_t now_ns) override {
    std::lock_guard lock(qmu_);
    return {qmeter_.area(now_ns), qmeter_.take_max()};
  }
  std::uint64_t arrivals() const noexcept override { return arrivals_.load(std::memory_order_relaxed); }
  std::uint64_t arrivals_dropped() const noexcept override { return dropped_.load(std::memory_order_relaxed); }
  int logged_in() const noexcept override { return logged_in_.load(std::memory_order_relaxed); }
  TimerThreadScheduling timer_thread() const noexcept override {
    return {timer_fifo_.load(std::memory_order_relaxed), timer_nice_.load(std::memory_order_relaxed),
            timer_slice_us_.load(std::memory_order_relaxed)};
  }
  void merge_lateness(LatencyHistogram& out) const override { out.merge(lateness_); }

 private:
  enum class Phase : std::uint8_t { keying, thinking };
  struct Terminal {
    Terminal(asio::io_context& io, TerminalIdentity identity) : id(std::move(identity)), timer(io) {}
    TerminalIdentity id;
    asio::steady_timer timer;
    std::int64_t due_ns = 0;        // when the armed timer should fire
    std::int64_t end_ns = 0;        // end of its last transaction } set by the worker before
    std::int64_t think_ns = 0;      // its think time, drawn        } handing it back
    Terminal* next_done = nullptr;  // link in TpMonitor::done_ while handed back
    TxType next = TxType::new_order;
    Phase phase = Phase::thinking;
  };
  struct Worker {
    int index = 0;
    std::unique_ptr<Session> session;
    BusyMeter busy;
    std::thread thread;
  };

  // Timer thread.
  void launch_terminals();
  void begin_cycle(Terminal& t, std::int64_t base_ns);
  void submit(Terminal& t);
  void on_response(Terminal& t);
  void arm(Terminal& t, Phase phase, std::int64_t due_ns);
  void on_timer(Terminal& t);
  void await_responses();
  void take_responses();
  void arm_sweep(std::int64_t due_ns);
  void arm_arrival();
  void on_arrival_timer();
  void record_lateness(std::int64_t ns) {
    if (s_.stats.measuring()) lateness_.record(ns);
  }
  std::int64_t interarrival_ns();

  // Queue.
  bool push(Card card, bool may_drop);
  std::optional<Card> pop();
  void wake_workers();

  // Workers.
  void worker_main(Worker& w);
  void hand_back(Terminal& t, std::int64_t end_ns);
  /// Timer thread: SCHED_FIFO priority kTimerRtPriority where allowed, else nice kTimerNice where
  /// allowed and a kTimerSliceNs time slice where the kernel takes one (tpcc_driver.hpp).
  void raise_timer_thread_priority();

  DriverState& s_;
  // io_ first: the timers below are destroyed before it.
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::vector<std::unique_ptr<Terminal>> terminals_;
  asio::steady_timer arrival_timer_;
  Rng arrival_rng_;
  std::int64_t next_arrival_ns_ = 0;
  std::uint64_t arrival_seq_ = 0;
  std::atomic<std::uint64_t> arrivals_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::thread io_thread_;
  // Responses handed back by the workers: a lock-free LIFO of terminals (intrusive, a terminal has
  // at most one transaction in flight) and an eventfd the timer thread waits on in its epoll set.
  std::atomic<Terminal*> done_{nullptr};
  std::atomic<bool> wake_sent_{false};  // the eventfd was written and the timer thread has not yet taken the list
  asio::posix::stream_descriptor done_fd_;
  asio::steady_timer sweep_timer_{io_};
  // Written by the timer thread only, without a lock (a lock shared with the workers could make
  // the timer thread wait for a preempted worker); read after join().
  LatencyHistogram lateness_;

  std::mutex qmu_;
  std::condition_variable qcv_;
  std::deque<Card> queue_;
  QueueMeter qmeter_;

  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<int> logged_in_{0};
  std::atomic<bool> timer_fifo_{false};
  std::atomic<int> timer_nice_{0};
  std::atomic<int> timer_slice_us_{0};
  bool joined_ = false;
};

// The timer thread needs a few percent of a core but should run within a millisecond of each
// deadline, on a machine whose cores are busy (the database server, the pool, other work).
// Measured with 15,000 terminals on 2 busy cores (docs/oltp-tpcc.md section 4): at nice -10 its
// wake-ups waited for a core up to a scheduler tick (lateness p99 1.6-1.8 ms), with a 100 us slice
// p99 ~1 ms, under SCHED_FIFO p99 0.13 ms. The lowest real-time priority is enough: it only has
// to come before normal threads.
constexpr int kTimerRtPriority = 1;
constexpr int kTimerNice = -10;
constexpr std::uint64_t kTimerSliceNs = 100'000;  // the shortest Linux takes (it clamps to 0.1-100 ms)
// Responses handed back (hand_back below): the timer thread takes them every kSweepPeriodNs, and
// at once when a think timer is due within kSweepHorizonNs.
constexpr std::int64_t kSweepPeriodNs = 10'000'000;
constexpr std::int64_t kSweepHorizonNs = 50'000'000;

void TpMonitor::start() {
  const DriverOptions& o = s_.opt;
  // The pool connects up front, so a wrong password or a missing schema fails start() at once.
  for (int i = 0; i < o.connections; ++i) {
    auto w = std::make_unique<Worker>();
    w->index = i;
    w->session = std::make_unique<Session>(s_.backend, s_.stop, o.reconnect_timeout, o.protocol, &s_.failures);
    workers_.push_back(std::move(w));
    logged_in_.fetch_add(1, std::memory_order_relaxed);
  }
  const Rng base(o.seed);
  arrival_rng_ = base.split(0);
  terminals_.reserve(static_cast<std::size_t>(o.users));
  for (int i = 0; i < o.users; ++i) {
    const int number = o.terminal_first + i * o.terminal_step;  // the job's terminal number
    terminals_.push_back(std::make_unique<Terminal>(io_, TerminalIdentity::make(i, number, o, base)));
  }

  work_.emplace(io_.get_executor());
  for (auto& w : workers_) w->thread = std::thread([this, wp = w.get()] { worker_main(*wp); });
  asio::post(io_, [this] { launch_terminals(); });
  await_responses();
  io_thread_ = std::thread([this] {
    raise_timer_thread_priority();
    try {
      io_.run();
    } catch (const std::exception& ex) {
      s_.fail(fmt::format("terminal timer thread: {}", ex.what()));
      wake_workers();
    }
  });
}

void TpMonitor::join() {
  if (joined_) return;
  joined_ = true;
  wake_workers();
  work_.reset();
  io_.stop();
  if (io_thread_.joinable()) io_thread_.join();
  for (auto& w : workers_)
    if (w->thread.joinable()) w->thread.join();
}

/// struct sched_attr of sched_setattr(2), which glibc 2.36 does not declare.
struct SchedAttr {
  std::uint32_t size = sizeof(SchedAttr);
  std::uint32_t policy = SCHED_OTHER;
  std::uint64_t flags = 0;
  std::int32_t nice = 0;
  std::uint32_t priority = 0;
  std::uint64_t runtime = 0;  // SCHED_OTHER: the requested time slice, ns (Linux >= 6.12)
  std::uint64_t deadline = 0;
  std::uint64_t period = 0;
};

void TpMonitor::raise_timer_thread_priority() {
  // Linux: these calls on thread id 0 or the caller's tid change the calling thread only.
  sched_param rt{};
  rt.sched_priority = kTimerRtPriority;
  if (::pthread_setschedparam(::pthread_self(), SCHED_FIFO, &rt) == 0) {
    timer_fifo_.store(true, std::memory_order_relaxed);
    return;
  }
  const auto tid = static_cast<id_t>(::gettid());
  if (::setpriority(PRIO_PROCESS, tid, kTimerNice) == 0) timer_nice_.store(kTimerNice, std::memory_order_relaxed);
  SchedAttr attr;
  attr.nice = ::getpriority(PRIO_PROCESS, tid);  // keep the nice in effect (a change needs privilege)
  attr.runtime = kTimerSliceNs;
  // Kernels before 6.12 accept the call and ignore the slice: the record says what was granted
  // by the call, not what such a kernel did with it.
  if (::syscall(SYS_sched_setattr, 0, &attr, 0U) == 0)
    timer_slice_us_.store(static_cast<int>(kTimerSliceNs / 1000), std::memory_order_relaxed);
}

// ---- terminals (timer thread) ------------------------------------------------------------------

void TpMonitor::launch_terminals() {
  const std::int64_t now = monotonic_ns();
  if (s_.opt.rate_per_s > 0) {
    next_arrival_ns_ = now + interarrival_ns();
    arm_arrival();
    return;
  }
  arm_sweep(now + kSweepPeriodNs);
  for (auto& t : terminals_) {
    if (s_.opt.think == ThinkMode::tpcc) {
      // Spread the first submissions over one mean think time (New-Order's 12 s), so that
      // thousands of terminals do not key their first card in lockstep.
      arm(*t, Phase::thinking, now + static_cast<std::int64_t>(t->id.rng.uniform01() * s_.start_spread_ns()));
    } else {
      begin_cycle(*t, now);
    }
  }
}

void TpMonitor::begin_cycle(Terminal& t, std::int64_t base_ns) {
  t.next = t.id.next_type(s_.opt.profile);
  const std::int64_t keying = s_.keying_ns(t.next);
  if (keying > 0)
    arm(t, Phase::keying, base_ns + keying);
  else
    submit(t);
}

void TpMonitor::submit(Terminal& t) {
  Card card = t.id.card(s_.gen, t.next);
  card.submit_ns = monotonic_ns();
  push(std::move(card), false);  // a closed-loop terminal has at most one card in the queue
}

void TpMonitor::on_response(Terminal& t) {
  if (s_.stop.requested()) return;
  if (t.think_ns > 0)
    arm(t, Phase::thinking, t.end_ns + t.think_ns);
  else
    begin_cycle(t, monotonic_ns());
}

void TpMonitor::arm(Terminal& t, Phase phase, std::int64_t due_ns) {
  t.phase = phase;
  t.due_ns = due_ns;
  t.timer.expires_at(to_time_point(due_ns));
  t.timer.async_wait([this, tp = &t](const boost::system::error_code& ec) {
    if (!ec) on_timer(*tp);
  });
}

void TpMonitor::on_timer(Terminal& t) {
  if (s_.stop.requested()) return;
  record_lateness(monotonic_ns() - t.due_ns);
  if (t.phase == Phase::keying)
    submit(t);
  else
    begin_cycle(t, t.due_ns);
}

// Workers hand responses back through done_, a lock-free list the timer thread takes whole.
// Nothing here takes a lock a worker holds: asio::post would take the io_context's mutex, which a
// posting worker holds across the epoll_ctl that wakes the timer thread, so the woken timer thread
// would wait for it (and for a worker preempted there, a scheduler time slice).
//
// Each wake-up of the timer thread costs ~25 us of CPU on the 2-vCPU VM (measured: its CPU time /
// its wake-ups; ~40% of its profile is the context switch), so a response wakes it only when its think timer is due
// soon (think < kSweepHorizonNs: think: none, scaled think times, the short tail of the exponential). The others wait
// for the sweep, which takes the list every kSweepPeriodNs, long before their think timer is due; arming a timer ahead
// of time does not change when it fires. With 15,000 terminals that saves ~740 wake-ups a second. The worker draws the
// think time itself: while its card is in flight a terminal belongs to the worker (the timer thread touches it only
// when its timer fires or its response is taken), and the terminal's random stream is drawn in the same order as
// before.
void TpMonitor::hand_back(Terminal& t, std::int64_t end_ns) {
  const std::int64_t think = s_.think_ns(t.next, t.id.rng);
  t.end_ns = end_ns;
  t.think_ns = think;
  Terminal* head = done_.load(std::memory_order_relaxed);
  do t.next_done = head;
  while (!done_.compare_exchange_weak(head, &t, std::memory_order_seq_cst, std::memory_order_relaxed));
  // From here on the terminal is the timer thread's again: only locals are read.
  if (think < kSweepHorizonNs && !wake_sent_.exchange(true, std::memory_order_seq_cst)) {
    const std::uint64_t one = 1;
    // Fails only when the counter would overflow, i.e. the timer thread is already due to wake.
    [[maybe_unused]] const auto n = ::write(done_fd_.native_handle(), &one, sizeof one);
  }
}

void TpMonitor::await_responses() {
  done_fd_.async_wait(asio::posix::stream_descriptor::wait_read, [this](const boost::system::error_code& ec) {
    if (ec) return;
    std::uint64_t count = 0;
    [[maybe_unused]] const auto n = ::read(done_fd_.native_handle(), &count, sizeof count);  // reset (non-blocking)
    take_responses();
    await_responses();
  });
}

void TpMonitor::arm_sweep(std::int64_t due_ns) {
  sweep_timer_.expires_at(to_time_point(due_ns));
  sweep_timer_.async_wait([this, due_ns](const boost::system::error_code& ec) {
    if (ec) return;
    take_responses();
    arm_sweep(std::max(due_ns + kSweepPeriodNs, monotonic_ns()));
  });
}

void TpMonitor::take_responses() {
  // Clear the flag before taking the list: a worker that hands back after the exchange finds it
  // clear and writes the eventfd again; one that handed back before is in the list.
  wake_sent_.store(false, std::memory_order_seq_cst);
  Terminal* lifo = done_.exchange(nullptr, std::memory_order_seq_cst);
  Terminal* fifo = nullptr;
  while (lifo != nullptr) {
    Terminal* next = lifo->next_done;
    lifo->next_done = fifo;
    fifo = lifo;
    lifo = next;
  }
  while (fifo != nullptr) {
    Terminal* next = fifo->next_done;  // before on_response: the terminal may be handed back again
    on_response(*fifo);
    fifo = next;
  }
}

// ---- open-loop arrivals (timer thread) ---------------------------------------------------------

std::int64_t TpMonitor::interarrival_ns() {
  // Poisson process: exponential gaps with mean 1 / rate (u in (0, 1], so the log is finite).
  const double u = 1.0 - arrival_rng_.uniform01();
  return static_cast<std::int64_t>(-std::log(u) / s_.opt.rate_per_s * 1e9);
}

void TpMonitor::arm_arrival() {
  arrival_timer_.expires_at(to_time_point(next_arrival_ns_));
  arrival_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) on_arrival_timer();
  });
}

void TpMonitor::on_arrival_timer() {
  if (s_.stop.requested()) return;
  const std::int64_t now = monotonic_ns();
  record_lateness(now - next_arrival_ns_);
  // Every arrival that is due, each stamped with its INTENDED time: a late timer or a full pool
  // shows up as queue wait, never as a missing sample (no coordinated omission).
  while (next_arrival_ns_ <= now) {
    TerminalIdentity& id = terminals_[arrival_seq_++ % terminals_.size()]->id;
    Card card = id.card(s_.gen, id.next_type(s_.opt.profile));
    card.terminal = -1;  // nobody waits for the response
    card.submit_ns = next_arrival_ns_;
    arrivals_.fetch_add(1, std::memory_order_relaxed);
    if (!push(std::move(card), true)) dropped_.fetch_add(1, std::memory_order_relaxed);
    next_arrival_ns_ += interarrival_ns();
  }
  arm_arrival();
}

// ---- queue -------------------------------------------------------------------------------------

bool TpMonitor::push(Card card, bool may_drop) {
  {
    std::lock_guard lock(qmu_);
    if (may_drop && queue_.size() >= s_.opt.max_queued) return false;
    queue_.push_back(std::move(card));
    qmeter_.changed(monotonic_ns(), queue_.size());
  }
  qcv_.notify_one();
  return true;
}

std::optional<Card> TpMonitor::pop() {
  std::unique_lock lock(qmu_);
  qcv_.wait(lock, [this] { return s_.stop.requested() || !queue_.empty(); });
  if (s_.stop.requested()) return std::nullopt;  // queued transactions are dropped at the end
  Card card = std::move(queue_.front());
  queue_.pop_front();
  qmeter_.changed(monotonic_ns(), queue_.size());
  return card;
}

void TpMonitor::wake_workers() {
  {
    std::lock_guard lock(qmu_);
  }  // a worker between its check and its wait sees the stop
  qcv_.notify_all();
}

// ---- workers -----------------------------------------------------------------------------------

void TpMonitor::worker_main(Worker& w) {
  try {
    while (std::optional<Card> card = pop()) {
      const std::int64_t start = monotonic_ns();
      w.busy.begin(start);
      const ExecResult r = w.session->execute(
          *card, card->terminal >= 0 ? fmt::format("terminal {} (connection {})", card->terminal, w.index)
                                     : fmt::format("connection {}", w.index));
      const std::int64_t end = monotonic_ns();
      w.busy.end(end);
      s_.stats.record(w.index, card->type(), r, card->submit_ns, start, end);
      if (r.fatal) {
        s_.fail(*r.fatal);
        wake_workers();
        return;
      }
      if (r.abandoned) return;
      if (card->terminal >= 0) {
        hand_back(*terminals_[static_cast<std::size_t>(card->terminal)], end);
      }
    }
  } catch (const std::exception& ex) {
    s_.fail(fmt::format("connection {}: {}", w.index, ex.what()));
    wake_workers();
  }
}

}  // namespace

std::unique_ptr<TerminalEngine> make_tp_monitor(DriverState& state) { return std::make_unique<TpMonitor>(state); }

}  // namespace drivelab::oltp::tpcc::detail
