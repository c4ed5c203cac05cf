// Start skew of drivelab's phase barriers across the ranks of a multi-host run (issue 16):
//   mpirun -np 4 --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo
//       build/bench/cohort_skew [BARRIERS]
// Every rank passes BARRIERS (default 20) runner::Cohort barriers, exactly as the runner does
// before each phase, and notes its CLOCK_REALTIME at each release minus its clock offset to
// rank 0 (the cohort's estimate); rank 0 gathers them and prints, over the barriers, the p50 and
// p99 of the skew (latest release - earliest) and the offsets' uncertainty. bench/multihost.sh
// runs it. On one host the clocks are one clock: the skew is the barrier's own.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "drivelab/cohort/mpi_cohort.hpp"
#include "drivelab/runner/stop.hpp"

int main(int argc, char** argv) {
  const int barriers = argc > 1 ? std::atoi(argv[1]) : 20;
  auto cohort = drivelab::cohort::join_mpi(drivelab::runner::StopFlag::global(), std::chrono::seconds(60));
  const std::int64_t offset = cohort->clock_offset().offset_ns;
  std::ostringstream mine;
  for (int i = 0; i < barriers; ++i) {
    // ranks arrive at different moments, as after phases of different lengths
    std::this_thread::sleep_for(std::chrono::microseconds(1000 * ((i + cohort->rank()) % 4)));
    const auto v = cohort->barrier("skew", drivelab::runner::PhaseState::ready, std::chrono::seconds(60));
    mine << (v.released_unix_ns - offset) << ' ';
  }
  std::ostringstream unc;
  unc << cohort->clock_offset().uncertainty_ns;
  const auto all = cohort->gather(mine.str() + "| " + unc.str(), "skew results", std::chrono::seconds(60));
  if (cohort->rank() != 0) return 0;
  std::vector<std::vector<std::int64_t>> t(all.size());
  std::int64_t max_unc = 0;
  for (std::size_t r = 0; r < all.size(); ++r) {
    std::istringstream in(all[r]);
    std::string w;
    while (in >> w && w != "|") t[r].push_back(std::stoll(w));
    std::int64_t u = 0;
    in >> u;
    max_unc = std::max(max_unc, u);
  }
  std::vector<double> skew_us;
  for (int i = 0; i < barriers; ++i) {
    std::int64_t lo = t[0][i], hi = t[0][i];
    for (const auto& rt : t) {
      lo = std::min(lo, rt[i]);
      hi = std::max(hi, rt[i]);
    }
    skew_us.push_back(static_cast<double>(hi - lo) / 1e3);
  }
  std::sort(skew_us.begin(), skew_us.end());
  const auto pct = [&](double p) {
    const std::size_t k =
        static_cast<std::size_t>(std::max(1.0, p / 100.0 * static_cast<double>(skew_us.size()) + 0.999999)) - 1;
    return skew_us[std::min(k, skew_us.size() - 1)];
  };
  std::printf(
      "barrier start skew over %d barriers, %d ranks: p50 %.1f us, p99 %.1f us, max %.1f us; "
      "clock offset uncertainty <= %.1f us\n",
      barriers, cohort->size(), pct(50), pct(99), skew_us.back(), static_cast<double>(max_unc) / 1e3);
  return 0;
}
