// `drivelab compare` and `drivelab noise` (docs/confidence.md).
#include "compare_commands.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/report/compare.hpp"
#include "drivelab/report/dataset.hpp"
#include "drivelab/results/record.hpp"
#include "drivelab/results/store.hpp"

namespace drivelab::app {
namespace {

constexpr std::string_view kDbPrefix = "db:";

/// "3%" or "3" -> 3; a ValidationError for anything that is not a percentage from 0 to below 100.
double parse_margin(const std::string& text) {
  std::string_view v = text;
  if (!v.empty() && v.back() == '%') v.remove_suffix(1);
  double x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || !std::isfinite(x) || x < 0 || x >= 100)
    throw CLI::ValidationError("--fail-if-worse", fmt::format("'{}' is not a percentage from 0 to below 100 "
                                                              "(e.g. 3%)",
                                                              text));
  return x;
}

/// One side's inputs read into `data`; every problem (a missing file, a query that selects
/// nothing) is appended to `problems` and the next input read.
void read_side(const char* side, const std::vector<std::string>& inputs, const CompareArgs& args, report::Dataset& data,
               std::vector<std::string>& problems) {
  if (inputs.empty())
    problems.push_back(fmt::format("no {} inputs (drivelab compare BASELINE... -- CANDIDATE...)", side));
  for (const std::string& input : inputs) {
    try {
      if (!input.starts_with(kDbPrefix)) {
        if (!std::filesystem::exists(input)) {
          problems.push_back(fmt::format("{}: {} input: no such file", input, side));
          continue;
        }
        report::add_file(data, input, {});
        continue;
      }
      if (args.db.empty()) {
        problems.push_back(fmt::format("{}: a {} input from a results store needs --db FILE", input, side));
        continue;
      }
      std::vector<results::RunFilter> where;
      const std::string spec = input.substr(kDbPrefix.size());
      for (std::size_t at = 0; at < spec.size();) {
        const std::size_t comma = spec.find(',', at);
        const std::string f = spec.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        if (!f.empty()) where.push_back(results::parse_run_filter(f));
        at = comma == std::string::npos ? spec.size() : comma + 1;
      }
      const results::RunStore store(args.db, false);
      const std::vector<results::StoredRun> runs = store.select(where);
      if (runs.empty())
        problems.push_back(fmt::format("{}: no stored run of {} matches ({} side)", input, args.db.string(), side));
      for (const results::StoredRun& run : runs)
        report::add_record_json(data, run.record, fmt::format("{} ({})", run.source, input), {});
    } catch (const Error& e) {  // ConfigError: not a record, a bad filter; EnvironmentError: unreadable
      problems.push_back(fmt::format("{} input {}: {}", side, input, e.what()));
    }
  }
}

}  // namespace

CLI::Validator repetition_count(unsigned lo, unsigned hi) {
  return CLI::Validator(
      [lo, hi](const std::string& given) -> std::string {
        unsigned value = 0;
        const char* end = given.data() + given.size();
        const auto [ptr, ec] = std::from_chars(given.data(), end, value);
        if (ec != std::errc() || ptr != end || value < lo || value > hi)
          return fmt::format("expected a whole number of repetitions from {} to {}, found '{}'", lo, hi, given);
        return {};
      },
      fmt::format("{}-{}", lo, hi), "repetition count");
}

CLI::App* add_compare_command(CLI::App& app, CompareArgs& args) {
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare a candidate's runs with a baseline's, per test and headline metric: the change with its 95% interval, "
      "the verdict (Holm across a test's metrics) and the smallest change the runs could detect (docs/confidence.md)");
  cmd->add_option("inputs", args.inputs,
                  "BASELINE... -- CANDIDATE...: record files (<run_id>.json), or db:KEY=VALUE[,KEY=VALUE...] for the "
                  "runs of the --db store that the filters select (keys as report --where); options go before --");
  cmd->add_option("candidates", args.keep_after_separator)->expected(1)->group("");
  cmd->add_option("--db", args.db, "The results store (drivelab results import) of the db: inputs");
  cmd->add_option("--json", args.json, "Also write the comparison as JSON (schema drivelab.compare/1)");
  cmd->add_option_function<std::string>(
         "--fail-if-worse", [&args](const std::string& v) { args.fail_if_worse_pct = parse_margin(v); },
         "Exit 1 only when a candidate metric is worse by more than P% with confidence (its 95% interval wholly "
         "beyond P% in the worse direction); default: when any metric is judged worse")
      ->type_name("P%");
  cmd->footer(
      "Exit status (as diff(1)): 0 no candidate metric worse (beyond the margin); 1 a candidate metric worse "
      "(beyond --fail-if-worse P%) with confidence; 2 bad input or trouble: a file that cannot be read or written, "
      "a db: query that selects nothing, a run on both sides, no common test, N < 2 on a side (each named).");
  return cmd;
}

std::optional<std::size_t> compare_candidates_in(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "compare") return std::nullopt;
  for (int i = 2; i < argc; ++i)
    if (std::string_view(argv[i]) == "--") return static_cast<std::size_t>(argc - 1 - i);
  return std::nullopt;
}

int cmd_compare(const CompareArgs& args) {
  if (!args.candidates || *args.candidates > args.inputs.size() + args.keep_after_separator.size()) {
    std::cerr << "drivelab: compare: give BASELINE... -- CANDIDATE... (the candidates after --; drivelab compare "
                 "--help)\n";
    return report::kCompareBadInput;
  }
  std::vector<std::string> words = args.inputs;  // in argv order: the slot only ever holds a later word
  words.insert(words.end(), args.keep_after_separator.begin(), args.keep_after_separator.end());
  const auto split = words.begin() + static_cast<std::ptrdiff_t>(words.size() - *args.candidates);
  const std::vector<std::string> base(words.begin(), split), cand(split, words.end());
  report::Dataset b, c;
  std::vector<std::string> problems;
  read_side("baseline", base, args, b, problems);
  read_side("candidate", cand, args, c, problems);
  // A run on both sides would be compared with itself.
  std::map<std::string, std::string> base_runs;
  for (const auto& r : b.results)
    if (!r.run_id.empty()) base_runs.emplace(r.run_id, r.source);
  std::set<std::string> said;
  for (const auto& r : c.results)
    if (const auto it = base_runs.find(r.run_id); it != base_runs.end() && said.insert(r.run_id).second)
      problems.push_back(fmt::format("run {} is on both sides ({} and {})", r.run_id, it->second, r.source));

  report::CompareOptions opt;
  opt.fail_if_worse_pct = args.fail_if_worse_pct;
  report::CompareResult result = report::compare(b, c, opt);
  result.problems.insert(result.problems.begin(), problems.begin(), problems.end());
  // The JSON first: a file that cannot be written is bad input, and the text's last line says the
  // exit status the command returns.
  if (!args.json.empty()) {
    errno = 0;
    std::ofstream out(args.json, std::ios::binary);
    out << report::to_json(result).dump(2) << '\n';
    out.close();
    if (!out)
      result.problems.push_back(
          fmt::format("cannot write {}{}", args.json.string(), errno != 0 ? ": " + errno_text(errno) : ""));
  }
  std::cout << report::to_text(result) << std::flush;
  for (const auto& p : result.problems) std::cerr << "drivelab: compare: " << p << '\n';
  return result.exit_status();
}

CLI::App* add_noise_command(CLI::App& app, NoiseArgs& args) {
  auto* cmd = app.add_subcommand(
      "noise",
      "A/A check of the instrument: run a protocol N times on one target and print each headline metric's run-to-run "
      "CV and the change a comparison at this N could detect (docs/confidence.md)");
  cmd->add_option("protocol", args.protocol, "Protocol YAML (e.g. config/quick.yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--repeat", args.repeat, "Runs (N >= 3)")->capture_default_str()->check(repetition_count(3, 1000));
  return cmd;
}

namespace {

/// The record `latest.json` in `out_dir` names (runner/run.hpp), with its path.
std::pair<results::RunRecord, std::filesystem::path> latest_record(const std::filesystem::path& out_dir) {
  const std::filesystem::path latest = out_dir / "latest.json";
  std::error_code ec;
  std::filesystem::path target = std::filesystem::read_symlink(latest, ec);
  const std::filesystem::path path = ec ? latest : (target.is_absolute() ? target : out_dir / target);
  return {results::read_record(path), path};
}

}  // namespace

int cmd_noise(const NoiseArgs& noise, const RunArgs& args) {
  report::Dataset data;
  // One run with every test repeated (runner::RunOptions::repeat, as `run --repeat N`): one
  // record, each repetition its own test record with its own seed; the reporter counts each.
  RunArgs repeated = args;
  repeated.repeat = noise.repeat;
  std::cout << fmt::format("noise: one run, every test {} times\n", noise.repeat) << std::flush;
  const int status = cmd_run(noise.protocol, repeated);
  // Interrupted (Ctrl-C): the run's record keeps the repetitions that completed; their table
  // follows, then the status.
  if (status == kExitBadInput || status == kExitEnvironment) return status;
  std::set<std::string> seen;
  try {
    auto [record, path] = latest_record(args.out_dir);
    seen.insert(record.run_id);
    report::add_record(data, record, path.string(), {});
  } catch (const Error& e) {
    std::cerr << "drivelab: noise: " << e.what() << '\n';
    return status == kExitInterrupted ? status : kExitEnvironment;
  }
  const std::vector<report::NoiseRow> rows = report::noise_rows(data);
  std::cout << fmt::format(
      "\nnoise: {} run of {} on {}, every test {} times; CV = standard deviation / mean over the "
      "repetitions; the last column is the change a comparison of two such sets (same N, same spread) detects with 80% "
      "power at 95% (docs/confidence.md)\n\n",
      seen.size(), noise.protocol.string(), args.target.string(), noise.repeat);
  std::cout << report::noise_text(rows);
  for (const auto& n : data.notes) std::cerr << "drivelab: note: " << n << '\n';
  return status;
}

}  // namespace drivelab::app
