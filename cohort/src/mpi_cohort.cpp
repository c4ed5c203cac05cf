#include "drivelab/cohort/mpi_cohort.hpp"

#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <limits>
#include <thread>

#include <fmt/format.h>

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

class MpiCohort final : public runner::Cohort {
 public:
  MpiCohort(const runner::StopFlag& stop, std::chrono::nanoseconds timeout) : stop_(stop) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized == 0) {
      int provided = 0;
      if (const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided); rc != MPI_SUCCESS)
        throw CohortError(fmt::format("MPI_Init_thread failed: {}", mpi_error_text(rc)));
      if (provided < MPI_THREAD_SERIALIZED) throw CohortError("the MPI library does not provide MPI_THREAD_SERIALIZED");
      initialized_here_ = true;
    }
    // Errors return to us (CohortError) instead of aborting the job from inside MPI.
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);

    std::array<char, kHostNameBytes> mine{};
    ::gethostname(mine.data(), mine.size() - 1);
    std::vector<char> all(static_cast<std::size_t>(kHostNameBytes) * static_cast<std::size_t>(size_));
    MPI_Request req = MPI_REQUEST_NULL;
    check(MPI_Iallgather(mine.data(), kHostNameBytes, MPI_CHAR, all.data(), kHostNameBytes, MPI_CHAR, comm_, &req),
          "host names");
    wait(&req, 1, "host names", timeout);
    for (int r = 0; r < size_; ++r) hosts_.emplace_back(all.data() + static_cast<std::ptrdiff_t>(r) * kHostNameBytes);
    estimate_clock_offsets(timeout);
  }

  ~MpiCohort() override {
    if (broken_) return;  // abort() is the way out; MPI_Finalize could wait for a dead rank
    MPI_Comm_free(&comm_);
    if (initialized_here_) MPI_Finalize();
  }

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  const std::vector<std::string>& hosts() const noexcept override { return hosts_; }
  ClockOffset clock_offset() const noexcept override { return offset_; }
  bool broken() const noexcept override { return broken_; }

  std::string broadcast(std::string value, std::string_view what) override {
    std::uint64_t n = value.size();
    MPI_Request req = MPI_REQUEST_NULL;
    check(MPI_Ibcast(&n, 1, MPI_UINT64_T, 0, comm_, &req), what);
    wait(&req, 1, what, kDefaultTimeout);
    value.resize(n);
    check(MPI_Ibcast(value.data(), static_cast<int>(n), MPI_CHAR, 0, comm_, &req), what);
    wait(&req, 1, what, kDefaultTimeout);
    return value;
  }

  PhaseVote barrier(std::string_view what, PhaseState mine, std::chrono::nanoseconds timeout) override {
    // MPI_MAXLOC on {state, rank}: the worst state, and the lowest rank that has it.
    std::array<int, 2> in{static_cast<int>(mine), rank_};
    std::array<int, 2> out{0, 0};
    MPI_Request req = MPI_REQUEST_NULL;
    check(MPI_Iallreduce(in.data(), out.data(), 1, MPI_2INT, MPI_MAXLOC, comm_, &req), what);
    wait(&req, 1, what, timeout);
    return PhaseVote{static_cast<PhaseState>(out[0]), out[1], realtime_ns()};
  }

  void sum(std::span<double> values, std::string_view what, std::chrono::nanoseconds timeout) override {
    std::vector<double> in(values.begin(), values.end());
    MPI_Request req = MPI_REQUEST_NULL;
    check(MPI_Iallreduce(in.data(), values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM, comm_, &req),
          what);
    wait(&req, 1, what, timeout);
  }

  std::vector<std::string> gather(std::string mine, std::string_view what, std::chrono::nanoseconds timeout) override {
    if (mine.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw CohortError(fmt::format("{}: {} bytes is more than one MPI message holds", what, mine.size()));
    int n = static_cast<int>(mine.size());
    std::vector<int> sizes(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
    MPI_Request req = MPI_REQUEST_NULL;
    check(MPI_Igather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, comm_, &req), what);
    wait(&req, 1, what, timeout);
    std::vector<int> displs(sizes.size());
    std::int64_t total = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      displs[i] = static_cast<int>(total);
      total += sizes[i];
    }
    if (total > std::numeric_limits<int>::max())
      throw CohortError(fmt::format("{}: {} bytes is more than one MPI message holds", what, total));
    std::vector<char> all(static_cast<std::size_t>(total));
    check(MPI_Igatherv(mine.data(), n, MPI_CHAR, all.data(), sizes.data(), displs.data(), MPI_CHAR, 0, comm_, &req),
          what);
    wait(&req, 1, what, timeout);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < sizes.size(); ++i)
      out.emplace_back(all.data() + displs[i], static_cast<std::size_t>(sizes[i]));
    return out;
  }

  [[noreturn]] void abort(int exit_code) override {
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);  // MPI_Abort does not return; if it did, do not linger
  }

 private:
  static constexpr std::chrono::nanoseconds kDefaultTimeout = std::chrono::seconds(60);

  void check(int rc, std::string_view what) {
    if (rc == MPI_SUCCESS) return;
    broken_ = true;
    throw CohortError(fmt::format("{}: {}", what, mpi_error_text(rc)));
  }

  /// Completes `n` requests by polling against the deadline (see the file comment).
  void wait(MPI_Request* reqs, int n, std::string_view what, std::chrono::nanoseconds timeout) {
    const std::int64_t start = monotonic_now_ns();
    std::int64_t deadline = start + timeout.count();
    bool stopped = false;
    for (;;) {
      int done = 0;
      check(MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE), what);
      if (done != 0) return;
      const std::int64_t now = monotonic_now_ns();
      if (!stopped && stop_.requested()) {
        stopped = true;
        deadline = std::min(deadline, now + std::chrono::nanoseconds(kStopGrace).count());
      }
      if (now >= deadline) {
        broken_ = true;  // the requests stay pending: the communicator is no longer usable
        const double waited_s = static_cast<double>(now - start) / 1e9;
        throw CohortError(stopped ? fmt::format("the ranks did not all reach '{}' within {:.3g} s of the stop request "
                                                "(a rank died or is stopped)",
                                                what, waited_s)
                                  : fmt::format("the ranks did not all reach '{}' within {:.3g} s (a rank died, froze "
                                                "or lost its network; --barrier-timeout sets the limit)",
                                                what, waited_s));
      }
      const std::int64_t waited = now - start;
      if (waited < 20'000'000) {
        sched_yield();
      } else {
        std::this_thread::sleep_for(waited < 1'000'000'000 ? std::chrono::microseconds(100)
                                                           : std::chrono::microseconds(1000));
      }
    }
  }

  /// Cristian's algorithm, rank 0 as the time server, one rank at a time.
  void estimate_clock_offsets(std::chrono::nanoseconds timeout) {
    for (int r = 1; r < size_; ++r) {
      for (int i = 0; i < kClockExchanges; ++i) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (rank_ == 0) {
          std::int64_t ping = 0;
          check(MPI_Irecv(&ping, 1, MPI_INT64_T, r, kTagClockPing, comm_, &req), "clock offset");
          wait(&req, 1, "clock offset", timeout);
          std::int64_t t0 = realtime_ns();
          check(MPI_Isend(&t0, 1, MPI_INT64_T, r, kTagClockPong, comm_, &req), "clock offset");
          wait(&req, 1, "clock offset", timeout);
        } else if (rank_ == r) {
          std::int64_t t1 = realtime_ns();
          std::int64_t t0 = 0;
          std::array<MPI_Request, 2> reqs{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
          check(MPI_Irecv(&t0, 1, MPI_INT64_T, 0, kTagClockPong, comm_, &reqs[1]), "clock offset");
          check(MPI_Isend(&t1, 1, MPI_INT64_T, 0, kTagClockPing, comm_, &reqs[0]), "clock offset");
          wait(reqs.data(), 2, "clock offset", timeout);
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
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  bool initialized_here_ = false;
  bool broken_ = false;
  std::vector<std::string> hosts_;
  ClockOffset offset_;
};

}  // namespace

std::unique_ptr<runner::Cohort> join_mpi(const runner::StopFlag& stop, std::chrono::nanoseconds timeout) {
  return std::make_unique<MpiCohort>(stop, timeout);
}

}  // namespace drivelab::cohort
