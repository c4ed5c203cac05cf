#pragma once
/// \file mpi_cohort.hpp
/// runner::Cohort on Open MPI 4.1 (Debian's openmpi-bin / libopenmpi-dev; any MPI-3 library
/// works: only the C API's nonblocking collectives are used). docs/multihost.md.
///
/// No MPI call can hold the run (issue 34): one thread of its own, the MPI thread, makes every MPI
/// call of the process, from MPI_Init_thread on; a collective posts its work to it and waits on a
/// condition variable until its deadline. The MPI thread completes each nonblocking collective by
/// polling MPI_Testsome (it spins for the first 20 ms of a wait, so a barrier's release is seen
/// within microseconds and the measured start skew stays honest, then sleeps 100 us, and 1 ms after
/// a second). Open MPI 4.1's TCP transport can block inside that poll when a peer dies (measured:
/// MPI_Testsome did not return for the 3 s to the deadline after rank 0 was SIGKILLed,
/// tests/multihost/rank_death_test.sh); the caller's deadline does not depend on it. At the
/// deadline the caller gets a CohortError that names the collective, the time waited, for a phase
/// barrier the ranks whose arrival was not seen ("not arrived: rank 0 (host a)"), and whether
/// Open MPI had stopped returning; the cohort is then broken and the MPI thread is left where it
/// is (never joined), with every buffer its requests may still write into.
///
/// A stop request first seen while the caller waits (not already made when it entered the
/// collective) runs the caller's Cohort::on_stop_while_waiting hook, on the caller's thread with
/// the MPI thread going on meanwhile, before the wait goes on cut to kStopGrace: the runner writes
/// its final record there (records before collectives, docs/multihost.md).
///
/// A phase barrier that times out keeps the ranks whose arrival it saw (survivors()); the one
/// exchange a broken cohort still makes is theirs (gather_survivors, survivors_done: Isend/Irecv
/// to the lowest survivor on the job's communicator, tags of their own), once the MPI thread has
/// come back from the abandoned barrier — within the same deadline, or not at all.
///
/// The way out of a broken cohort is abort(): MPI_Abort (on the MPI thread when it is free, else
/// from the caller's thread, which MPI_THREAD_MULTIPLE allows), and if that has not ended the
/// process within 5 s, _exit with the same status; the launcher ends the job when a rank exits
/// without MPI_Finalize (mpirun(1), "Process Termination"). Whatever the caller must keep (its
/// records) is to be durable before abort(). Nothing here uses Open MPI 5's fault-tolerance
/// extension (ULFM).
#include <chrono>
#include <memory>

#include "drivelab/runner/cohort.hpp"
#include "drivelab/runner/stop.hpp"

namespace drivelab::cohort {

/// Joins the job: starts the MPI thread, MPI_Init_thread (MPI_THREAD_MULTIPLE asked, at least
/// MPI_THREAD_SERIALIZED required; Debian 12's Open MPI 4.1 provides MULTIPLE: `ompi_info`), the
/// hosts' names (MPI_Allgather) and
/// each host's clock offset against rank 0 (ClockOffset: 8 exchanges per rank, best round trip).
/// `stop` cuts every later wait to Cohort::kStopGrace once requested (looked at every 10 ms: a
/// signal handler cannot wake the wait). MPI_Finalize runs, on the MPI thread, in the destructor
/// unless the cohort is broken (then abort() is the way out). Throws CohortError when
/// MPI cannot start or the ranks do not all join within `timeout`.
std::unique_ptr<runner::Cohort> join_mpi(const runner::StopFlag& stop, std::chrono::nanoseconds timeout);

}  // namespace drivelab::cohort
