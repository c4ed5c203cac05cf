#pragma once
/// \file compare_commands.hpp
/// `drivelab compare BASELINE... -- CANDIDATE...` and `drivelab noise PROTOCOL --target DIR
/// --repeat N` (issue 32; docs/confidence.md). The statistics and the tables are report/compare.hpp's.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"

namespace drivelab::app {

/// `drivelab compare`. Exit status as diff(1) has it: 0 no candidate metric worse (beyond the
/// margin), 1 a candidate metric worse beyond `--fail-if-worse P%` with confidence, 2 bad input or
/// trouble (a file that cannot be read or written, a store query that selects nothing, a run on
/// both sides, no common test, N < 2 on a side).
struct CompareArgs {
  /// Every input word, baseline then candidate: a record file, or `db:KEY=VALUE[,KEY=VALUE...]`,
  /// the runs of the store `--db` that the filters select (results::parse_run_filter's keys).
  std::vector<std::string> inputs;
  /// How many of `inputs` came after `--` (the candidates); nullopt: no `--` was given.
  std::optional<std::size_t> candidates;
  /// Never filled (`inputs` takes every word): a second positional list, so that CLI11 keeps the
  /// words after `--` for this subcommand instead of handing them to `drivelab` itself (CLI11 2.1
  /// does that once a subcommand's positionals are all satisfied).
  std::vector<std::string> keep_after_separator;
  std::filesystem::path db;    ///< --db: the results store of the `db:` inputs
  std::filesystem::path json;  ///< --json FILE
  std::optional<double> fail_if_worse_pct;
};
/// The check of a repetition count option (`run --repeat`, `validate --repeat`, `noise --repeat`):
/// a whole number from lo to hi; otherwise "expected a whole number of repetitions from 1 to 1000,
/// found 'x'" (CLI11's Range alone says "Value x not in range" of a word that is no number).
CLI::Validator repetition_count(unsigned lo, unsigned hi);

/// Adds the `compare` subcommand to `app`, its options into `args`.
CLI::App* add_compare_command(CLI::App& app, CompareArgs& args);
/// Where the candidates begin: for `drivelab compare ... -- CANDIDATE...` the number of words after
/// the first `--` (CLI11 gives every word after `--` to the one positional list, in order); nullopt
/// for another command or no `--`.
std::optional<std::size_t> compare_candidates_in(int argc, char** argv);
int cmd_compare(const CompareArgs& args);

/// `drivelab noise`: the protocol run `repeat` times on the target (records written as `run`
/// writes them), then per test and headline metric the mean, its 95% interval, the run-to-run CV
/// and the change a comparison at this N could detect. Exit 0; a run's own non-zero status (a
/// failed test: 1; bad input 2, environment 3, interrupted 130) is returned after the table of
/// what did complete.
struct NoiseArgs {
  std::filesystem::path protocol;
  unsigned repeat = 5;
};
CLI::App* add_noise_command(CLI::App& app, NoiseArgs& args);
int cmd_noise(const NoiseArgs& noise, const RunArgs& args);

}  // namespace drivelab::app
