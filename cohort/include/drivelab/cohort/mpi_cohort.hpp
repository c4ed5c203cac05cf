#pragma once
/// \file mpi_cohort.hpp
/// runner::Cohort on Open MPI 4.1 (Debian's openmpi-bin / libopenmpi-dev; any MPI-3 library
/// works: only the C API's nonblocking collectives are used). docs/multihost.md.
///
/// Every collective is nonblocking (MPI_Ibarrier-style MPI_Iallreduce, MPI_Igatherv, MPI_Ibcast)
/// and completed by polling MPI_Testall against a deadline, so no rank waits forever: a rank that
/// died or froze turns into a CohortError on the others within the collective's timeout (Open MPI
/// itself ends the job when a rank dies; this bound covers the frozen host and the lost link,
/// which it does not notice). The poll spins for the first 20 ms of a wait (the barrier release is
/// seen within microseconds, which keeps the measured start skew honest), then sleeps 100 us, and
/// 1 ms after a second.
#include <chrono>
#include <memory>

#include "drivelab/runner/cohort.hpp"
#include "drivelab/runner/stop.hpp"

namespace drivelab::cohort {

/// Joins the job: MPI_Init_thread (MPI_THREAD_SERIALIZED), the hosts' names (MPI_Allgather) and
/// each host's clock offset against rank 0 (ClockOffset: 8 exchanges per rank, best round trip).
/// `stop` cuts every later wait to Cohort::kStopGrace once requested. MPI_Finalize runs in the
/// destructor unless the cohort is broken (then abort() is the way out). Throws CohortError when
/// MPI cannot start or the ranks do not all join within `timeout`.
std::unique_ptr<runner::Cohort> join_mpi(const runner::StopFlag& stop, std::chrono::nanoseconds timeout);

}  // namespace drivelab::cohort
