#pragma once
/// \file cohort.hpp
/// The ranks of a multi-host run (issue 16, docs/multihost.md): one protocol on N hosts or VMs,
/// started together by `mpirun` (or `srun`), every rank one `drivelab run` with its own target,
/// journal and record. The runner sees only this interface; the Open MPI implementation is in
/// cohort/ (drivelab::cohort), so runner/ and a build without MPI stay MPI-free.
///
/// Every member is collective: each rank calls it, in the same order, from the runner's thread
/// (the MPI implementation hands each call to its own MPI thread and waits for it with the
/// deadline, so an MPI call that blocks cannot hold the runner; docs/multihost.md). None waits
/// forever: each takes a
/// deadline and throws CohortError when the other ranks do not arrive in time (a host frozen,
/// its network gone, a rank that took another branch); after a CohortError the cohort is
/// broken(): the runner makes no further collective call (but the survivors' gather,
/// gather_survivors), records the reason, writes its own record and ends the job with abort() so
/// that mpirun stops the other ranks.
///
/// The waits are IOR's phase barriers (IOR's `MPI_Barrier` before each open, write and read
/// phase, ior.c): what they do not remove, the start skew, is measured and recorded.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace drivelab::runner {

class StopFlag;

/// A rank did not arrive at a collective in time, or the transport failed. what() names the
/// collective and the timeout ("ranks did not all reach 'test oltp: run' within 600 s").
class CohortError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What a rank brings to a phase barrier. Ordered: the worst state wins (PhaseVote).
enum class PhaseState : int {
  ready = 0,     ///< this rank is ready for the phase
  stopping = 1,  ///< a stop was requested here (SIGINT/SIGTERM)
  failed = 2,    ///< this rank's test failed (or the rank cannot run it)
};

/// The outcome of a phase barrier on every rank: the worst state brought and the lowest rank
/// that brought it (MPI_MAXLOC semantics), and this host's CLOCK_REALTIME at the release.
struct PhaseVote {
  PhaseState state = PhaseState::ready;
  int rank = 0;  ///< the lowest rank with `state`
  std::int64_t released_unix_ns = 0;
};

/// This host's clock against rank 0's: offset = local CLOCK_REALTIME - rank 0's at the same
/// instant, estimated by Cristian's algorithm over the best (lowest round trip) of several
/// exchanges; uncertainty = half that round trip. Zero for rank 0.
struct ClockOffset {
  std::int64_t offset_ns = 0;
  std::int64_t uncertainty_ns = 0;
};

class Cohort {
 public:
  /// How long a collective still waits once a stop was requested on this host.
  static constexpr std::chrono::seconds kStopGrace{3};

  virtual ~Cohort() = default;
  virtual int rank() const noexcept = 0;
  virtual int size() const noexcept = 0;
  /// Host name of each rank, by rank (gathered at start).
  virtual const std::vector<std::string>& hosts() const noexcept = 0;
  /// "rank 2 (host b)".
  std::string describe_rank(int r) const;
  virtual ClockOffset clock_offset() const noexcept = 0;
  /// The broadcast of rank 0's `value` (ignored on the other ranks).
  virtual std::string broadcast(std::string value, std::string_view what) = 0;
  /// Phase barrier: waits until every rank has arrived with its state, then returns the worst.
  /// Each wait of a collective is bounded by its `timeout`; once a stop is requested on this
  /// host (StopFlag) the wait is cut to kStopGrace: the other ranks, signalled by the launcher
  /// too, arrive within it, and a rank that died never will.
  virtual PhaseVote barrier(std::string_view what, PhaseState mine, std::chrono::nanoseconds timeout) = 0;
  /// Element-wise sum of `values` over the ranks, in place (MPI_SUM of doubles).
  virtual void sum(std::span<double> values, std::string_view what, std::chrono::nanoseconds timeout) = 0;
  /// Rank 0 receives every rank's `mine` (in rank order); the others get an empty vector.
  virtual std::vector<std::string> gather(std::string mine, std::string_view what,
                                          std::chrono::nanoseconds timeout) = 0;
  /// During a phase barrier (from the on_stop_while_waiting hook, on the caller's thread): the
  /// ranks whose arrival this rank has not seen yet, in rank order — when the launcher's SIGTERM
  /// comes there, the rank it lost (a dead rank, a host cut off) is among them. Empty by default.
  virtual std::vector<int> not_arrived() const { return {}; }
  /// True after a CohortError: no further collective may be called (but gather_survivors).
  virtual bool broken() const noexcept = 0;
  /// After a phase barrier broke the cohort: the ranks whose arrival this rank saw there, itself
  /// included, in rank order (the survivors, as this rank knows them); empty otherwise.
  virtual std::vector<int> survivors() const = 0;
  /// The one exchange a broken cohort still makes (issue 34: the lowest surviving rank writes the
  /// merged record): every rank of survivors() sends `mine` to the lowest of them, which receives
  /// them, by rank (a rank outside survivors() gets an empty string); the others get an empty
  /// vector. Point-to-point messages only, so a dead rank does not take part. Waits first for the
  /// MPI thread to come back from the collective that broke the cohort; throws CohortError when
  /// it does not or a survivor's message does not come within `timeout` (survivors that saw
  /// different survivors time out here). Call survivors_done() after it on every survivor.
  virtual std::vector<std::string> gather_survivors(std::string mine, std::chrono::nanoseconds timeout) = 0;
  /// After gather_survivors: the lowest survivor tells the others it is done (its merged record
  /// written), the others wait for that (at most `timeout`), so that none ends the job (abort())
  /// before it is written. Throws CohortError on a timeout.
  virtual void survivors_done(std::chrono::nanoseconds timeout) = 0;
  /// Ends the whole job (MPI_Abort): every other rank is stopped by the launcher. Does not return.
  [[noreturn]] virtual void abort(int exit_code) = 0;

  /// Records before collectives (docs/multihost.md, "When a host or rank dies"): `hook` runs once,
  /// on the caller's thread, when a stop request is first seen during the wait of a collective
  /// entered without one — typically the launcher's SIGTERM after another rank died, which Open
  /// MPI follows with SIGKILL 1 s later (4.1) or 250 ms later (5), before the wait could end. The
  /// runner writes its final record there; the wait then goes on, cut to kStopGrace. Set before
  /// one collective and cleared after it (an empty function: none).
  void on_stop_while_waiting(std::function<void()> hook) { stop_hook_ = std::move(hook); }

 protected:
  /// For implementations: runs the hook set by on_stop_while_waiting (once; it is cleared first).
  /// What it throws is dropped: the wait goes on.
  void stop_seen_while_waiting() noexcept;

 private:
  std::function<void()> stop_hook_;
};

/// This process's place in a job, as the launcher's environment says (read before MPI_Init, so
/// that --target /mnt/t/{rank} can be checked by the command line): OMPI_COMM_WORLD_RANK/SIZE
/// (Open MPI's mpirun), PMI_RANK/PMI_SIZE (MPICH, Slurm's PMI-2), SLURM_PROCID/SLURM_NTASKS (srun). nullopt when
/// started without a launcher: `drivelab run` is then exactly the single-host run. (Here, not in cohort/, so that a
/// build without MPI still notices a launcher and refuses to run N unrelated single-host runs.)
struct Launch {
  int rank = 0;
  int size = 1;
};
std::optional<Launch> launched_by_mpi();

/// `{rank}` and `{host}` in a path given to a rank (--target, --out) replaced by the rank number
/// and host name ("/mnt/t/{rank}" -> "/mnt/t/2"). Other text is kept; no other braces are
/// special.
std::string expand_rank_pattern(std::string_view pattern, int rank, std::string_view host);

}  // namespace drivelab::runner
