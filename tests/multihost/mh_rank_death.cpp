// mh_rank_death: one rank dies (SIGKILL) while the others wait in a runner::Cohort collective with
// a deadline (issue 34, "No MPI call can hold the run"; tests/multihost/rank_death_test.sh runs it).
//   mpirun -np N ... mh_rank_death VICTIM barrier|sum DELAY_MS TIMEOUT_MS OUT_DIR [kill|stop|silent]
// Every rank joins the cohort (drivelab::cohort::join_mpi) and passes one barrier; then rank
// VICTIM sleeps DELAY_MS, writes OUT_DIR/death (its CLOCK_REALTIME in ns) and kills itself with
// SIGKILL (kill, the default), stops itself with SIGSTOP (stop: a frozen rank) or sleeps on, alive
// and silent (silent: a rank that took another branch, or whose network is cut from outside), while every other rank
// enters the collective (a phase barrier, or a sum of doubles) with a timeout of TIMEOUT_MS. A survivor that comes back
// writes OUT_DIR/r<rank> (fsync'd, so it stays when the launcher kills the job right after):
//   entered=<ns> returned=<ns> outcome=error|ok message=<CohortError's what()>
// waits (at most 5 s) until every other survivor has written its line too, and ends the job with
// Cohort::abort(3). The wait is the test's, not the runner's: Open MPI 5's launcher kills the
// other ranks as soon as one aborts, which could otherwise take a survivor that returned in time
// before it wrote its line. Everything on one host, so one clock.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "drivelab/cohort/mpi_cohort.hpp"
#include "drivelab/runner/stop.hpp"

namespace {
std::int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
void write_durable(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) || ::fsync(fd) != 0) {
    std::perror(path.c_str());
    std::_Exit(4);
  }
  ::close(fd);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr, "usage: mh_rank_death VICTIM barrier|sum DELAY_MS TIMEOUT_MS OUT_DIR [kill|stop|silent]\n");
    return 2;
  }
  const int victim = std::atoi(argv[1]);
  const std::string op = argv[2];
  const auto delay = std::chrono::milliseconds(std::atoi(argv[3]));
  const auto timeout = std::chrono::milliseconds(std::atoi(argv[4]));
  const std::string out = argv[5];
  const std::string how = argc == 7 ? argv[6] : "kill";
  // SIGTERM from the launcher (a rank died) requests a stop, as in drivelab run: the cohort then
  // cuts its wait to Cohort::kStopGrace, which never lengthens it.
  drivelab::runner::StopFlag::install_signal_handlers();
  auto cohort = drivelab::cohort::join_mpi(drivelab::runner::StopFlag::global(), std::chrono::seconds(60));
  cohort->barrier("start", drivelab::runner::PhaseState::ready, std::chrono::seconds(60));
  if (cohort->rank() == victim) {
    std::this_thread::sleep_for(delay);
    write_durable(out + "/death", std::to_string(realtime_ns()) + "\n");
    if (how == "silent") {
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    }
    std::raise(how == "stop" ? SIGSTOP : SIGKILL);
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // SIGSTOP: until SIGKILL
  }
  const std::int64_t entered = realtime_ns();
  std::string outcome = "ok", message;
  try {
    if (op == "sum") {
      std::vector<double> v{1.0};
      cohort->sum(v, "doomed sum", timeout);
    } else {
      cohort->barrier("doomed barrier", drivelab::runner::PhaseState::ready, timeout);
    }
  } catch (const drivelab::runner::CohortError& e) {
    outcome = "error";
    message = e.what();
  }
  const std::int64_t returned = realtime_ns();
  write_durable(out + "/r" + std::to_string(cohort->rank()),
                "entered=" + std::to_string(entered) + " returned=" + std::to_string(returned) + " outcome=" + outcome +
                    " broken=" + (cohort->broken() ? "1" : "0") + " message=" + message + "\n");
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (int r = 0; r < cohort->size(); ++r) {
    if (r == victim) continue;
    while (!std::filesystem::exists(out + "/r" + std::to_string(r)) && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  cohort->abort(3);
}
