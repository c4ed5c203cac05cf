#pragma once
/// \file merge.hpp
/// The exact merge of the per-host records of one multi-host run (issue 16; the contract is the
/// mh-spec, every rule in docs/results.md, "Merging hosts"). Used online by rank 0 and offline by
/// `drivelab results merge`.
///
/// Pure: no clock, no environment, no randomness. The same inputs give a record whose to_json dump
/// is byte for byte the same, whatever the order of the inputs when they carry a `cohort` (they are
/// placed by rank; every sum is taken in rank order).
#include <filesystem>
#include <string>
#include <vector>

#include "drivelab/results/record.hpp"

namespace drivelab::results {

/// One host's record. `source` ("rank2.json", "rank 2") names it in error messages only; it is
/// never written into the merged record.
struct MergeInput {
  RunRecord record;
  std::string source;
};

/// Merges the hosts' records of one run into one record:
///  - run_id = cohort.job_id; schema, tool, host, protocol, protocol_file, command_line, config, seed
///    of the lowest rank present; started_at min, finished_at max; cohort {job_id, size, ranks};
///    target {"kind": "hosts", "hosts": N, "description": "N hosts"}; hosts[] one entry per rank
///    0..N-1 (a rank with no input: status "missing");
///  - status complete only when every rank is present and complete; else the worst present
///    (failed > interrupted > skipped; a rank still running counts as interrupted: a merged
///    record is never running), interrupted when only ranks are missing; failed when a rank
///    stalled beyond 3 s (merge_time.hpp);
///  - tests by index: histograms merged bin by bin; a metric with `of` recomputed from the merged
///    histogram; then by the metric catalogue's MetricDef::merge (catalogue.hpp: the largest
///    host's for a maximum, per host only for a peak, summed CPU seconds); then by unit: 1/s,
///    1/min, MB/s, MiB/s, count, bytes summed; s the max; any other metric listed in
///    details.per_host_only (its values per host in hosts[]); a whole database server's counter
///    (HostMerge::server) the lowest measured rank's when the hosts shared one server; intervals
///    by time on rank 0's clock (results/src/merge_time.hpp: a stalled rank's stall and the
///    windows it missed left out; the values the catalogue declares figures of the interval
///    histogram "latency" recomputed from the merged one, those it declares kSummedOverHosts
///    summed as the operations over the window, others dropped); a time-limited test's summed
///    headline rates over the common window when a rank measured outside it (merge_time.hpp:
///    MergedIntervals::window_rates); checks of every host and
///    warnings not shared by all prefixed "rank k (host h): "; details {start_skew_ns, per_host_only}; each group also
///    gets the labs' convention figures sum_of_hosts_<rate>, mean_of_hosts_<latency avg/pNN>.
/// Inputs without `cohort` (runs started separately): ranks by input order, size = the number of
/// inputs, job_id = "merged-" + the first input's run_id; they must have run at the same time
/// (each test they ran started on every one before it ended on any).
/// Throws ConfigError naming the input's source and the key: no inputs; some inputs with a cohort
/// and some without; different cohort.job_id or cohort.size; a rank outside 0..size-1 or twice;
/// a different protocol; different test names (a complete record must have every test; an
/// unfinished one may stop early); without a cohort, a test that started on one input after it
/// had ended on another (different runs of one protocol).
RunRecord merge_host_records(const std::vector<MergeInput>& inputs);

/// One input of `drivelab results merge` as read from `path`, with what the reading decided.
struct LoadedInput {
  MergeInput input;
  /// Why another file than `path` was read ("" when none): "rank1.json is stale (status running,
  /// 3 intervals): its journal r1.journal.jsonl holds 8; merged from the journal".
  std::string note;
};

/// Reads one input of a merge: a journal (`*.jsonl`) recovered (recover_from_journal), else a
/// record (read_record). A record still `running` was left behind mid-run (the runner rewrites
/// it as its intervals double, docs/results.md "Durability"), so its journal beside it,
/// `<run_id>.journal.jsonl`, holds at least as much: when that journal exists and reads, and
/// holds as many tests and intervals or more, it is the input. `source` is `path` as given.
/// Throws what read_record and recover_from_journal throw.
LoadedInput read_merge_input(const std::filesystem::path& path);

/// The journal that goes with input `path`: `path` itself for a journal, else
/// `<dir>/<run_id>.journal.jsonl` of the record (whether or not it exists).
std::filesystem::path journal_of_input(const std::filesystem::path& path, const RunRecord& record);

}  // namespace drivelab::results
