#include "drivelab/cohort/mpi_cohort.hpp"

#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace drivelab::cohort {
namespace {

using runner::ClockOffset;
using runner::CohortError;
using runner::PhaseState;
using runner::PhaseVote;

std::int64_t realtime_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
std::int64_t monotonic_now_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string mpi_error_text(int code) {
  std::array<char, MPI_MAX_ERROR_STRING> buf{};
  int len = 0;
  if (MPI_Error_string(code, buf.data(), &len) != MPI_SUCCESS) return fmt::format("MPI error {}", code);
  return std::string(buf.data(), static_cast<std::size_t>(len));
}

constexpr int kHostNameBytes = 256;
constexpr int kClockExchanges = 8;
constexpr int kTagClockPing = 101;
constexpr int kTagClockPong = 102;
constexpr int kTagArrival = 103;
constexpr int kTagSurvivorSize = 104;
constexpr int kTagSurvivorText = 105;
constexpr int kTagSurvivorsDone = 106;
/// How long abort() gives MPI_Abort to end this process before it _exits by itself.
constexpr std::int64_t kAbortGraceNs = 5'000'000'000;
/// A call into MPI that has not returned for this long is reported as stuck in the error.
constexpr std::int64_t kStuckNs = 100'000'000;

/// Thrown inside the MPI thread when the caller gave up on the collective (its deadline passed).
struct Abandoned {};

/// What the caller and the MPI thread share. Held by shared_ptr on both sides: a thread that
/// never comes back from MPI (detached) keeps it, and every buffer an abandoned collective's
/// requests may still write into, alive.
struct Channel {
  std::mutex m;
  std::condition_variable cv;
  std::function<void()> job;  ///< the posted job (runs on the MPI thread)
  bool posted = false;        ///< a job waits for the MPI thread
  bool running = false;       ///< the MPI thread runs a job
  bool finished = false;      ///< the last job finished (result in `error`)
  bool quit = false;
  std::exception_ptr error;
  std::atomic<bool> abandon{false};
  /// CLOCK_MONOTONIC at which the MPI thread entered its current MPI call; 0 outside MPI.
  std::atomic<std::int64_t> in_mpi_since{0};
  std::atomic<const char*> in_mpi_call{""};
  /// Per rank, whether its arrival at the current barrier was seen (written by the MPI thread).
  std::vector<std::atomic<bool>> arrived;
  std::vector<std::shared_ptr<void>> kept;  ///< buffers of abandoned collectives: never freed

  void loop() {
    std::unique_lock lock(m);
    for (;;) {
      cv.wait(lock, [&] { return posted || quit; });
      if (quit) return;
      posted = false;
      running = true;
      std::function<void()> j = std::move(job);
      lock.unlock();
      std::exception_ptr e;
      try {
        j();
      } catch (...) {
        e = std::current_exception();
      }
      lock.lock();
      running = false;
      finished = true;
      error = e;
      cv.notify_all();
    }
  }
};

/// Calls `fn` (one MPI call) noting when it started, so that the caller can tell a blocked
/// progress engine from a slow peer.
template <typename Fn>
int mpi_call(Channel& ch, const char* name, Fn&& fn) {
  ch.in_mpi_call.store(name, std::memory_order_relaxed);
  ch.in_mpi_since.store(monotonic_now_ns(), std::memory_order_release);
  const int rc = fn();
  ch.in_mpi_since.store(0, std::memory_order_release);
  return rc;
}

class MpiCohort final : public runner::Cohort {
 public:
  explicit MpiCohort(const runner::StopFlag& stop) : stop_(stop), ch_(std::make_shared<Channel>()) {
    thread_ = std::thread([ch = ch_] { ch->loop(); });
  }

  /// Joins the job (join_mpi). On a CohortError the object must be left alive: the MPI thread
  /// may still be inside one of its jobs, which use it.
  void join(std::chrono::nanoseconds timeout) {
    // Everything from MPI_Init_thread on runs on the MPI thread: it is MPI's main thread.
    run("joining the job (MPI_Init_thread)", timeout, [this] { init(); });
    // mine, then every rank's (kHostNameBytes each)
    auto names = std::make_shared<std::vector<char>>(static_cast<std::size_t>(kHostNameBytes) *
                                                     static_cast<std::size_t>(size_ + 1));
    ::gethostname(names->data(), kHostNameBytes - 1);
    run(
        "host names", timeout,
        [this, names] {
          MPI_Request req = MPI_REQUEST_NULL;
          check(MPI_Iallgather(names->data(), kHostNameBytes, MPI_CHAR, names->data() + kHostNameBytes, kHostNameBytes,
                               MPI_CHAR, comm_, &req),
                "host names");
          poll(&req, 1, "host names");
        },
        names);
    for (int r = 1; r <= size_; ++r)
      hosts_.emplace_back(names->data() + static_cast<std::ptrdiff_t>(r) * kHostNameBytes);
    run("clock offset", timeout, [this] { estimate_clock_offsets(); });
  }

  ~MpiCohort() override {
    // A broken cohort ends with abort() (the runner and commands.cpp do): destroyed instead, its
    // MPI thread, if it ever comes back from MPI, only touches its own channel (poll).
    if (broken_) {
      // abort() is the way out; MPI_Finalize could wait for a dead rank, and the MPI thread may
      // be stuck inside MPI for good: it is left alone, never joined.
      thread_.detach();
      return;
    }
    try {
      run("finalize", kDefaultTimeout, [this] {
        MPI_Comm_free(&barrier_comm_);
        MPI_Comm_free(&comm_);
        if (initialized_here_) MPI_Finalize();
      });
    } catch (const CohortError&) {
      thread_.detach();
      return;
    }
    {
      std::lock_guard lock(ch_->m);
      ch_->quit = true;
    }
    ch_->cv.notify_all();
    thread_.join();
  }

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  const std::vector<std::string>& hosts() const noexcept override { return hosts_; }
  ClockOffset clock_offset() const noexcept override { return offset_; }
  bool broken() const noexcept override { return broken_; }
  std::vector<int> survivors() const override { return survivors_; }
  std::vector<int> not_arrived() const override {
    std::vector<int> out;
    for (int r = 0; r < static_cast<int>(ch_->arrived.size()); ++r)
      if (!ch_->arrived[static_cast<std::size_t>(r)].load(std::memory_order_relaxed)) out.push_back(r);
    return out;
  }

  std::vector<std::string> gather_survivors(std::string mine, std::chrono::nanoseconds timeout) override {
    if (survivors_.size() < 2) throw CohortError("no survivors to gather: no phase barrier broke the cohort");
    struct Buffers {
      std::string mine;
      std::uint64_t n = 0;
      std::vector<std::uint64_t> sizes;
      std::vector<std::string> texts;
    };
    auto buf = std::make_shared<Buffers>();
    buf->mine = std::move(mine);
    buf->n = buf->mine.size();
    const int root = survivors_.front();
    if (rank_ == root) {
      buf->sizes.resize(static_cast<std::size_t>(size_));
      buf->texts.resize(static_cast<std::size_t>(size_));
    }
    const std::string what = fmt::format("the end of the run (the survivors' records to rank {})", root);
    run_broken(
        what, timeout,
        [this, buf, root, what, others = survivors_] {
          if (rank_ != root) {
            std::array<MPI_Request, 2> reqs{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
            check(MPI_Isend(&buf->n, 1, MPI_UINT64_T, root, kTagSurvivorSize, comm_, &reqs[0]), what);
            check(MPI_Isend(buf->mine.data(), static_cast<int>(buf->n), MPI_CHAR, root, kTagSurvivorText, comm_,
                            &reqs[1]),
                  what);
            poll(reqs.data(), 2, what);
            return;
          }
          std::vector<MPI_Request> reqs;
          for (int r : others)
            if (r != rank_)
              check(MPI_Irecv(&buf->sizes[static_cast<std::size_t>(r)], 1, MPI_UINT64_T, r, kTagSurvivorSize, comm_,
                              &reqs.emplace_back(MPI_REQUEST_NULL)),
                    what);
          poll(reqs.data(), static_cast<int>(reqs.size()), what);
          reqs.clear();
          for (int r : others) {
            if (r == rank_) continue;
            std::string& t = buf->texts[static_cast<std::size_t>(r)];
            t.resize(buf->sizes[static_cast<std::size_t>(r)]);
            check(MPI_Irecv(t.data(), static_cast<int>(t.size()), MPI_CHAR, r, kTagSurvivorText, comm_,
                            &reqs.emplace_back(MPI_REQUEST_NULL)),
                  what);
          }
          poll(reqs.data(), static_cast<int>(reqs.size()), what);
        },
        buf);
    if (rank_ == root) buf->texts[static_cast<std::size_t>(rank_)] = std::move(buf->mine);
    return std::move(buf->texts);
  }

  void survivors_done(std::chrono::nanoseconds timeout) override {
    if (survivors_.size() < 2) return;
    const int root = survivors_.front();
    auto token = std::make_shared<int>(0);
    const std::string what = fmt::format("the end of the run (rank {} writes the merged record)", root);
    run_broken(
        what, timeout,
        [this, token, root, what, others = survivors_] {
          std::vector<MPI_Request> reqs;
          if (rank_ == root) {
            for (int r : others)
              if (r != rank_)
                check(MPI_Isend(token.get(), 1, MPI_INT, r, kTagSurvivorsDone, comm_,
                                &reqs.emplace_back(MPI_REQUEST_NULL)),
                      what);
          } else {
            check(MPI_Irecv(token.get(), 1, MPI_INT, root, kTagSurvivorsDone, comm_,
                            &reqs.emplace_back(MPI_REQUEST_NULL)),
                  what);
          }
          poll(reqs.data(), static_cast<int>(reqs.size()), what);
        },
        token);
  }

  std::string broadcast(std::string value, std::string_view what) override {
    auto buf = std::make_shared<std::pair<std::uint64_t, std::string>>(value.size(), std::move(value));
    run(
        what, kDefaultTimeout,
        [this, buf, what] {
          MPI_Request req = MPI_REQUEST_NULL;
          check(MPI_Ibcast(&buf->first, 1, MPI_UINT64_T, 0, comm_, &req), what);
          poll(&req, 1, what);
          buf->second.resize(buf->first);
          check(MPI_Ibcast(buf->second.data(), static_cast<int>(buf->first), MPI_CHAR, 0, comm_, &req), what);
          poll(&req, 1, what);
        },
        buf);
    return buf->second;
  }

  PhaseVote barrier(std::string_view what, PhaseState mine, std::chrono::nanoseconds timeout) override {
    // Every rank sends its {state, rank} to every other rank and receives theirs (on a
    // communicator of its own, so that no other message matches): the vote is the worst state
    // and the lowest rank that has it (MPI_MAXLOC's rule), and at a timeout the ranks whose
    // arrival was not seen are known by name.
    struct Buffers {
      std::vector<std::array<int, 2>> in;
      std::array<int, 2> out{};
      std::int64_t released = 0;
    };
    auto buf = std::make_shared<Buffers>();
    buf->in.resize(static_cast<std::size_t>(size_));
    buf->out = {static_cast<int>(mine), rank_};
    for (auto& a : ch_->arrived) a.store(false, std::memory_order_relaxed);
    ch_->arrived[static_cast<std::size_t>(rank_)].store(true, std::memory_order_relaxed);
    run(
        what, timeout,
        [this, buf, what] {
          const int others = size_ - 1;
          std::vector<MPI_Request> recvs(static_cast<std::size_t>(others), MPI_REQUEST_NULL);
          std::vector<MPI_Request> sends(static_cast<std::size_t>(others), MPI_REQUEST_NULL);
          std::vector<int> peer;
          for (int r = 0; r < size_; ++r)
            if (r != rank_) peer.push_back(r);
          for (std::size_t i = 0; i < peer.size(); ++i)
            check(MPI_Irecv(buf->in[static_cast<std::size_t>(peer[i])].data(), 2, MPI_INT, peer[i], kTagArrival,
                            barrier_comm_, &recvs[i]),
                  what);
          for (std::size_t i = 0; i < peer.size(); ++i)
            check(MPI_Isend(buf->out.data(), 2, MPI_INT, peer[i], kTagArrival, barrier_comm_, &sends[i]), what);
          poll(recvs.data(), others, what, [&, &ch = *ch_](int index) {
            ch.arrived[static_cast<std::size_t>(peer[static_cast<std::size_t>(index)])].store(
                true, std::memory_order_relaxed);
          });
          buf->released = realtime_ns();
          poll(sends.data(), others, what);
        },
        buf, /*names_missing=*/true);
    PhaseVote vote{mine, rank_, buf->released};
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      const auto& [state, from] = buf->in[static_cast<std::size_t>(r)];
      if (state > static_cast<int>(vote.state) || (state == static_cast<int>(vote.state) && from < vote.rank))
        vote = PhaseVote{static_cast<PhaseState>(state), from, vote.released_unix_ns};
    }
    return vote;
  }

  void sum(std::span<double> values, std::string_view what, std::chrono::nanoseconds timeout) override {
    auto buf = std::make_shared<std::pair<std::vector<double>, std::vector<double>>>(
        std::vector<double>(values.begin(), values.end()), std::vector<double>(values.size()));
    run(
        what, timeout,
        [this, buf, what] {
          MPI_Request req = MPI_REQUEST_NULL;
          check(MPI_Iallreduce(buf->first.data(), buf->second.data(), static_cast<int>(buf->first.size()), MPI_DOUBLE,
                               MPI_SUM, comm_, &req),
                what);
          poll(&req, 1, what);
        },
        buf);
    std::copy(buf->second.begin(), buf->second.end(), values.begin());
  }

  std::vector<std::string> gather(std::string mine, std::string_view what, std::chrono::nanoseconds timeout) override {
    if (mine.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw CohortError(fmt::format("{}: {} bytes is more than one MPI message holds", what, mine.size()));
    struct Buffers {
      std::string mine;
      int n = 0;
      std::vector<int> sizes, displs;
      std::vector<char> all;
    };
    auto buf = std::make_shared<Buffers>();
    buf->mine = std::move(mine);
    buf->n = static_cast<int>(buf->mine.size());
    buf->sizes.resize(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
    run(
        what, timeout,
        [this, buf, what] {
          MPI_Request req = MPI_REQUEST_NULL;
          check(MPI_Igather(&buf->n, 1, MPI_INT, buf->sizes.data(), 1, MPI_INT, 0, comm_, &req), what);
          poll(&req, 1, what);
          buf->displs.resize(buf->sizes.size());
          std::int64_t total = 0;
          for (std::size_t i = 0; i < buf->sizes.size(); ++i) {
            buf->displs[i] = static_cast<int>(total);
            total += buf->sizes[i];
          }
          // Every rank takes part in the Igatherv below, so an oversized total is reported after it.
          const bool too_big = total > std::numeric_limits<int>::max();
          if (too_big) std::fill(buf->sizes.begin(), buf->sizes.end(), 0);
          buf->all.resize(too_big ? 0 : static_cast<std::size_t>(total));
          check(MPI_Igatherv(buf->mine.data(), too_big ? 0 : buf->n, MPI_CHAR, buf->all.data(), buf->sizes.data(),
                             buf->displs.data(), MPI_CHAR, 0, comm_, &req),
                what);
          poll(&req, 1, what);
          if (too_big) throw CohortError(fmt::format("{}: {} bytes is more than one MPI message holds", what, total));
        },
        buf);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < buf->sizes.size(); ++i)
      out.emplace_back(buf->all.data() + buf->displs[i], static_cast<std::size_t>(buf->sizes[i]));
    return out;
  }

  [[noreturn]] void abort(int exit_code) override {
    // The last resort first: if MPI_Abort does not end this process in time (its progress engine
    // blocked on a dead peer), _exit does; the launcher then sees a rank end without
    // MPI_Finalize and stops the others itself (mpirun(1), "Process Termination").
    std::thread([exit_code] {
      std::this_thread::sleep_for(std::chrono::nanoseconds(kAbortGraceNs));
      std::_Exit(exit_code);
    }).detach();
    bool idle = false;
    {
      std::lock_guard lock(ch_->m);
      idle = !ch_->running && !ch_->posted && thread_.joinable();
      if (idle) {
        ch_->job = [exit_code] { MPI_Abort(MPI_COMM_WORLD, exit_code); };
        ch_->posted = true;
        ch_->finished = false;
      }
    }
    if (idle) {
      ch_->cv.notify_all();
    } else if (provided_ == MPI_THREAD_MULTIPLE) {
      // The MPI thread is inside MPI for good; with MPI_THREAD_MULTIPLE another thread may still
      // call MPI_Abort.
      MPI_Abort(MPI_COMM_WORLD, exit_code);
    } else {
      std::_Exit(exit_code);
    }
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // until one of the two ends us
  }

 private:
  static constexpr std::chrono::nanoseconds kDefaultTimeout = std::chrono::seconds(60);

  void init() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized == 0) {
      // MPI_THREAD_MULTIPLE when the library has it (Debian's Open MPI 4.1 and 5.0 do: ompi_info
      // "MPI_THREAD_MULTIPLE: yes"), so that abort() may call MPI_Abort while the MPI thread is
      // stuck; every other call is made from the MPI thread alone (SERIALIZED would do for them).
      if (const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided_); rc != MPI_SUCCESS)
        throw CohortError(fmt::format("MPI_Init_thread failed: {}", mpi_error_text(rc)));
      if (provided_ < MPI_THREAD_SERIALIZED)
        throw CohortError("the MPI library does not provide MPI_THREAD_SERIALIZED");
      initialized_here_ = true;
    } else {
      MPI_Query_thread(&provided_);
    }
    // Errors return to us (CohortError) instead of aborting the job from inside MPI, on the
    // cohort's communicators. Not Open MPI 5's TCP transport on a lost peer: its PML calls the
    // fatal handler itself (records before collectives cover it: docs/multihost.md). Nor
    // MPI_COMM_SELF's handler (where MPI-4 raises errors tied to no communicator): set to
    // MPI_ERRORS_RETURN it did not stop that abort, and on Open MPI 5.0.7 it left the survivors of
    // a dead or silent rank crashing in UCX instead of returning by their deadline
    // (rank_death_test and net_loss_test in a Debian 13 root, 2026-12-07).
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &barrier_comm_);
    MPI_Comm_set_errhandler(barrier_comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    ch_->arrived = std::vector<std::atomic<bool>>(static_cast<std::size_t>(size_));
  }

  /// Runs `job` on the MPI thread and waits for it until the deadline (cut to kStopGrace once a
  /// stop is requested). At the deadline the job is abandoned where it is — in the middle of an
  /// MPI call that does not return, possibly — `keep` (the job's buffers) is kept for good, the
  /// cohort is broken and the CohortError says what was waited for and what is known of why.
  void run(std::string_view what, std::chrono::nanoseconds timeout, std::function<void()> job,
           std::shared_ptr<void> keep = nullptr, bool names_missing = false) {
    if (broken_)
      throw CohortError(fmt::format("{}: the multi-host run is broken (an earlier collective failed)", what));
    std::unique_lock lock(ch_->m);
    ch_->job = std::move(job);
    ch_->posted = true;
    ch_->finished = false;
    ch_->error = nullptr;
    ch_->abandon.store(false);
    ch_->cv.notify_all();
    const std::int64_t start = monotonic_now_ns();
    std::int64_t deadline = start + timeout.count();
    const bool stop_at_entry = stop_.requested();
    bool stopped = false;
    std::int64_t stop_seen = 0;  // when the stop request was seen, if it cut the deadline
    for (;;) {
      if (ch_->finished) {
        if (ch_->error) {
          broken_ = true;
          std::rethrow_exception(ch_->error);
        }
        return;
      }
      const std::int64_t now = monotonic_now_ns();
      if (!stopped && stop_.requested()) {
        stopped = true;
        const std::int64_t cut = now + std::chrono::nanoseconds(kStopGrace).count();
        if (cut < deadline) {
          deadline = cut;
          stop_seen = now;
        }
        if (!stop_at_entry) {
          // Records before collectives: the caller writes its record now, on its own thread (the
          // MPI thread goes on with the collective meanwhile); its time counts in the grace.
          lock.unlock();
          stop_seen_while_waiting();
          lock.lock();
          continue;
        }
      }
      if (now >= deadline) {
        ch_->abandon.store(true);
        broken_ = true;
        if (names_missing) {
          survivors_.clear();
          for (int r = 0; r < size_; ++r)
            if (ch_->arrived[static_cast<std::size_t>(r)].load(std::memory_order_relaxed)) survivors_.push_back(r);
        }
        if (keep) ch_->kept.push_back(std::move(keep));
        lock.unlock();
        throw CohortError(timeout_message(what, now - start, stop_seen != 0 ? now - stop_seen : -1, names_missing));
      }
      // A signal handler cannot wake a condition variable: look at the stop flag every 10 ms.
      ch_->cv.wait_for(lock, std::chrono::nanoseconds(std::min<std::int64_t>(deadline - now, 10'000'000)));
    }
  }

  /// run() on a broken cohort (gather_survivors): waits, within `timeout`, for the MPI thread to
  /// come back from the abandoned collective (it does when Open MPI returns: poll() sees the
  /// abandon), then runs `job` as run() does. The cohort stays broken.
  void run_broken(std::string_view what, std::chrono::nanoseconds timeout, std::function<void()> job,
                  std::shared_ptr<void> keep) {
    const std::int64_t deadline = monotonic_now_ns() + timeout.count();
    {
      std::unique_lock lock(ch_->m);
      while (ch_->running || ch_->posted) {
        const std::int64_t now = monotonic_now_ns();
        if (now >= deadline)
          throw CohortError(fmt::format("{}: Open MPI has not returned from the collective that broke the run ({})",
                                        what, ch_->in_mpi_call.load(std::memory_order_relaxed)));
        ch_->cv.wait_for(lock, std::chrono::nanoseconds(std::min<std::int64_t>(deadline - now, 10'000'000)));
      }
    }
    broken_ = false;
    try {
      run(what, std::chrono::nanoseconds(std::max<std::int64_t>(deadline - monotonic_now_ns(), 0)), std::move(job),
          std::move(keep));
    } catch (...) {
      broken_ = true;
      throw;
    }
    broken_ = true;
  }

  /// `since_stop_ns`: the time since the stop request that cut the wait, or -1 (the deadline was
  /// the collective's own).
  std::string timeout_message(std::string_view what, std::int64_t waited_ns, std::int64_t since_stop_ns,
                              bool names_missing) const {
    const double waited_s = static_cast<double>(waited_ns) / 1e9;
    std::string msg = since_stop_ns >= 0
                          ? fmt::format(
                                "the ranks did not all reach '{}' within {:.3g} s of the stop request (after "
                                "{:.3g} s in all; a rank died or is stopped)",
                                what, static_cast<double>(since_stop_ns) / 1e9, waited_s)
                          : fmt::format(
                                "the ranks did not all reach '{}' within {:.3g} s (a rank died, froze or lost its "
                                "network; --barrier-timeout sets the limit)",
                                what, waited_s);
    std::vector<std::string> missing;
    if (!ch_->arrived.empty() && names_missing) {
      for (int r = 0; r < size_; ++r)
        if (!ch_->arrived[static_cast<std::size_t>(r)].load(std::memory_order_relaxed))
          missing.push_back(describe_rank(r));
      if (!missing.empty()) msg += fmt::format("; not arrived: {}", fmt::join(missing, ", "));
    }
    const std::int64_t since = ch_->in_mpi_since.load(std::memory_order_acquire);
    if (since != 0 && monotonic_now_ns() - since > kStuckNs)
      msg += fmt::format(
          "; Open MPI has not returned from {} for {:.3g} s (its progress engine blocks, e.g. the TCP "
          "transport on a lost peer)",
          ch_->in_mpi_call.load(std::memory_order_relaxed), static_cast<double>(monotonic_now_ns() - since) / 1e9);
    return msg;
  }

  void check(int rc, std::string_view what) {
    if (rc == MPI_SUCCESS) return;
    throw CohortError(fmt::format("{}: {}", what, mpi_error_text(rc)));
  }

  /// On the MPI thread: completes `n` requests by polling MPI_Testsome until they are all done
  /// or the caller abandons the collective. `on_done(i)` is called as request i completes. The
  /// poll spins for the first 20 ms of a wait (a barrier's release is seen within microseconds,
  /// which keeps the measured start skew honest), then sleeps 100 us, and 1 ms after a second.
  void poll(MPI_Request* reqs, int n, std::string_view what, const std::function<void(int)>& on_done = {}) {
    // Once abandoned, nothing of the caller's (`what`, this object) is touched again: the caller
    // may be gone. The channel is the thread's own.
    Channel& ch = *ch_;
    const std::int64_t start = monotonic_now_ns();
    std::vector<int> indices(static_cast<std::size_t>(std::max(n, 1)));
    int left = n;
    while (left > 0) {
      int count = 0;
      const int rc = mpi_call(ch, "MPI_Testsome",
                              [&] { return MPI_Testsome(n, reqs, &count, indices.data(), MPI_STATUSES_IGNORE); });
      if (ch.abandon.load(std::memory_order_relaxed)) throw Abandoned{};
      check(rc, what);
      if (count == MPI_UNDEFINED) break;  // no active request left
      for (int i = 0; i < count; ++i) {
        if (on_done) on_done(indices[static_cast<std::size_t>(i)]);
      }
      left -= count;
      if (left <= 0) break;
      const std::int64_t waited = monotonic_now_ns() - start;
      if (waited < 20'000'000) {
        sched_yield();
      } else {
        std::this_thread::sleep_for(waited < 1'000'000'000 ? std::chrono::microseconds(100)
                                                           : std::chrono::microseconds(1000));
      }
    }
  }

  /// Cristian's algorithm, rank 0 as the time server, one rank at a time (on the MPI thread).
  void estimate_clock_offsets() {
    for (int r = 1; r < size_; ++r) {
      for (int i = 0; i < kClockExchanges; ++i) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (rank_ == 0) {
          std::int64_t ping = 0;
          check(MPI_Irecv(&ping, 1, MPI_INT64_T, r, kTagClockPing, comm_, &req), "clock offset");
          poll(&req, 1, "clock offset");
          std::int64_t t0 = realtime_ns();
          check(MPI_Isend(&t0, 1, MPI_INT64_T, r, kTagClockPong, comm_, &req), "clock offset");
          poll(&req, 1, "clock offset");
        } else if (rank_ == r) {
          std::int64_t t1 = realtime_ns();
          std::int64_t t0 = 0;
          std::array<MPI_Request, 2> reqs{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
          check(MPI_Irecv(&t0, 1, MPI_INT64_T, 0, kTagClockPong, comm_, &reqs[1]), "clock offset");
          check(MPI_Isend(&t1, 1, MPI_INT64_T, 0, kTagClockPing, comm_, &reqs[0]), "clock offset");
          poll(reqs.data(), 2, "clock offset");
          const std::int64_t t2 = realtime_ns();
          const std::int64_t rtt = t2 - t1;
          if (i == 0 || rtt / 2 < offset_.uncertainty_ns) {
            offset_.uncertainty_ns = rtt / 2;
            offset_.offset_ns = t1 + rtt / 2 - t0;
          }
        }
      }
    }
  }

  const runner::StopFlag& stop_;
  std::shared_ptr<Channel> ch_;
  std::thread thread_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm barrier_comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int provided_ = MPI_THREAD_SINGLE;
  bool initialized_here_ = false;
  bool broken_ = false;
  std::vector<int> survivors_;  ///< survivors(): set when a phase barrier broke the cohort
  std::vector<std::string> hosts_;
  ClockOffset offset_;
};

}  // namespace

std::unique_ptr<runner::Cohort> join_mpi(const runner::StopFlag& stop, std::chrono::nanoseconds timeout) {
  auto cohort = std::make_unique<MpiCohort>(stop);
  try {
    cohort->join(timeout);
  } catch (const runner::CohortError&) {
    // The MPI thread may be inside MPI_Init or a collective for good, working on this object:
    // the object is left to it (never destroyed), and the caller exits.
    [[maybe_unused]] MpiCohort* left_to_mpi = cohort.release();
    throw;
  }
  return cohort;
}

}  // namespace drivelab::cohort
