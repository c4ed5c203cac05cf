#pragma once
// The inputs of a merge of hosts' records (merge.hpp, docs/results.md "Merging hosts"): which
// input is which rank, and the checks that they are the ranks of one run of one protocol. Internal
// to results/: merge.cpp merges what these functions accept.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "drivelab/results/merge.hpp"

namespace drivelab::results::detail {

/// One present rank: its record, where it came from, its host name and clock offset.
struct Host {
  int rank = 0;
  std::string name;
  std::int64_t clock_offset_ns = 0;
  std::int64_t clock_offset_uncertainty_ns = 0;
  const MergeInput* input = nullptr;
  const RunRecord& record() const { return input->record; }
  std::string label() const { return fmt::format("rank {} (host {})", rank, name); }
};

/// The hosts of the inputs, sorted by rank, with the job they belong to: each input's cohort
/// checked against the first's (the same job and size, a rank of its own in 0..size-1), no run
/// given twice, no merged record among them. Inputs without a cohort (runs started by hand) are
/// ranks 0..N-1 in the order given.
struct Hosts {
  std::string job_id;
  int size = 0;
  std::vector<std::string> names;  ///< per rank (a missing rank's name from rank 0's list)
  std::vector<Host> hosts;         ///< by rank
};

/// Throws ConfigError naming the input's source and the key (merge.hpp lists the refusals).
Hosts collect_hosts(const std::vector<MergeInput>& inputs);

/// The number of tests of the merged record, after checking that the hosts ran one protocol: the
/// same protocol name, the same tests (names and repetitions) in the same order (a host that stopped early has a
/// prefix of them), and every complete record all of them; and, for inputs without a cohort (runs
/// started without MPI, which no job id ties together), that they ran at the same time: each test
/// that two or more of them ran (started_at and finished_at both known, not skipped) started on
/// every one before it ended on any (the hosts' clocks agreeing, as --start-at assumes). Throws
/// ConfigError naming the inputs and what differs.
std::size_t common_test_count(const std::vector<Host>& hosts);

}  // namespace drivelab::results::detail
