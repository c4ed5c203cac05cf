#pragma once
/// \file commands.hpp
/// The subcommands of `drivelab`. Each returns the process exit status:
///   0 complete, 1 a test failed, 2 bad input (protocol/options), 3 environment (target, kernel,
///   permissions), 130 interrupted by SIGINT/SIGTERM (the partial record is still written).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "drivelab/metrics/prometheus.hpp"

namespace drivelab::app {

inline constexpr int kExitOk = 0;
inline constexpr int kExitTestFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitEnvironment = 3;
inline constexpr int kExitInterrupted = 130;

struct RunArgs {
  /// --target; empty for `run` without it: then the protocol's `hosts:` entry of this host gives
  /// it (runner/hosts.hpp), else the run is refused (exit 2).
  std::filesystem::path target;
  std::string destroy_data_on;  ///< --destroy-data-on SERIAL (docs/targets.md)
  std::filesystem::path out_dir = "drivelab-results";
  std::vector<std::string> overrides;  ///< --set key.path=value
  std::vector<std::string> only;       ///< --only NAME[,NAME...]: run just these tests (protocol order)
  bool quiet = false;
  /// --no-harness-ceiling: runner::RunOptions::harness_ceiling = false.
  bool no_harness_ceiling = false;
  std::vector<std::string> command_line;
  /// --barrier-timeout: longest wait of a multi-host run's collectives (docs/multihost.md).
  std::chrono::nanoseconds barrier_timeout{std::chrono::minutes(10)};
  /// --start-at: the wall-clock instant (UTC) to start the first test at, so runs started by hand
  /// on several hosts begin together (their records merge with `results merge`); none = at once.
  std::optional<std::chrono::system_clock::time_point> start_at;
  /// --metrics-listen: serve the live figures for Prometheus there (docs/metrics.md); none when
  /// not given. Under mpirun each rank listens on the port plus its rank.
  std::optional<metrics::ListenAddress> metrics_listen;
  /// --repeat N (`run` only): every test N times, overriding the protocol (runner::RunOptions::repeat).
  std::optional<std::uint32_t> repeat;
};

/// Why `path` cannot be a run's target ("target 'x' does not exist", "... is neither a directory
/// nor a block device"), or "" when it can: a directory or a block device (io::is_block_device).
/// A path made from a {rank}/{host} pattern whose directory is missing is created first when its
/// parent exists, so one pattern serves every rank.
std::string target_problem(const std::string& path, bool from_pattern);

/// The instant of a --start-at value: "2026-12-05T23:30:00Z" (RFC 3339 in UTC, fractions of a
/// second allowed) or "+90s" (a duration from now, units as in a protocol). ConfigError naming
/// the value for anything else, or for an instant already past at `now`.
std::chrono::system_clock::time_point parse_start_at(const std::string& value,
                                                     std::chrono::system_clock::time_point now);

/// Where this process runs in a multi-host job, from the launcher's environment (before MPI
/// starts; cohort::launched_by_mpi): rank 0 of 1 when not launched by mpirun/srun.
struct LaunchPlace {
  bool launched = false;
  int rank = 0;
  int size = 1;
  std::string host;  ///< gethostname(2)
};
LaunchPlace launch_place();
/// --target and --out with `{rank}` and `{host}` replaced (runner::expand_rank_pattern); a path
/// without them is returned as it is, on one host too.
std::string expand_launch_pattern(const std::string& pattern, const LaunchPlace& place);

/// `drivelab run PROTOCOL.yaml --target DIR|DEVICE [--destroy-data-on SERIAL]`.
int cmd_run(const std::filesystem::path& protocol_file, const RunArgs& args);
/// `drivelab validate PROTOCOL.yaml`: every problem, one per line, on stderr; 0 if none.
int cmd_validate(const std::filesystem::path& protocol_file, const std::vector<std::string>& overrides,
                 std::optional<std::uint32_t> repeat = std::nullopt);
/// Runs a one-test protocol built from command-line options (`drivelab io`, `drivelab oltp tpcc`).
/// `yaml_text` is the generated protocol; `origin` ("drivelab io") names it in error messages, and
/// `flags` maps its key paths to the options that set them ("tests[0].io.xfersize" ->
/// "--xfersize/--bs"), so a bad value is reported at the option the user typed, not at a line of
/// a document they never saw.
int cmd_run_generated(const std::string& yaml_text, const std::string& origin,
                      const std::map<std::string, std::string>& flags, const RunArgs& args);
/// `drivelab results recover JOURNAL [-o FILE]`.
int cmd_recover(const std::filesystem::path& journal, const std::filesystem::path& out);
/// `drivelab results merge RECORD_OR_JOURNAL... [-o FILE]`: the hosts' records (a `.jsonl` input is
/// a journal, recovered first) merged with results::merge_host_records into `out` (default
/// `<job_id>.json` beside the first input), then the merged summary. Exit 0 when the merged status
/// is complete, 1 otherwise (a missing host is named), 2 for inputs that do not merge (the message
/// names the input and the key) or an output that is one of the inputs, 3 when a file cannot be
/// read or written.
int cmd_merge(const std::vector<std::filesystem::path>& inputs, const std::filesystem::path& out);
/// `drivelab results validate FILE... [--schema FILE]`: records, journals (.jsonl) and report CSVs
/// (.csv) against the record schema (results/validate.hpp; the built-in one unless `schema`).
/// Prints each fault with its file (and line) and JSON pointer. Exit 0 every file valid, 2 some
/// file invalid, 3 the validator cannot run (no python3 or python3-jsonschema).
int cmd_results_validate(const std::vector<std::filesystem::path>& files, const std::filesystem::path& schema);
/// `drivelab results import RECORD... --db FILE`: stores records in the results store
/// (results/store.hpp), one line per file, then "imported N, already stored M" (and ", refused K").
/// Exit 0, or 2 when an input is not a record (each named; the others are still stored) or the
/// database is not a results store, 3 when a file or the database cannot be read or written.
int cmd_results_import(const std::vector<std::filesystem::path>& records, const std::filesystem::path& db);
/// `drivelab report RESULT... --html/--md/--csv FILE`: ranks drives side by side (docs/reporter.md).
struct ReportArgs {
  std::vector<std::filesystem::path> inputs;  ///< drivelab records, fio JSON, sysbench text, published CSV
  /// --db: a results store; its runs (those --where selects) are reported after `inputs`, each as
  /// the record file it was imported from.
  std::filesystem::path db;
  std::vector<std::string> where;       ///< --where KEY=VALUE (results::parse_run_filter)
  std::vector<std::string> labels;      ///< drive names for the inputs, in order
  std::filesystem::path published;      ///< --published CSV
  std::filesystem::path html, md, csv;  ///< outputs (none given: Markdown on stdout)
  std::filesystem::path charts_dir;     ///< default: <html stem>_charts beside the HTML
  bool no_charts = false;
  bool include_partial = false;  ///< --include-partial: rank partial tests with complete ones
};
int cmd_report(const ReportArgs& args);
/// `drivelab trace stat FILE` / `drivelab trace convert IN OUT --to native|fio-iolog-v3`
/// (docs/vdi.md). Malformed traces exit 2 with "file:line: reason".
struct TraceArgs {
  std::filesystem::path input, output;
  std::string format = "auto";           ///< --format (trace/readers.hpp names)
  std::string blkparse_event = "Q";      ///< --blkparse-event Q|D
  std::string time_unit;                 ///< --time-unit ps|ns|us|ms|s (empty: the format's own)
  std::string fio_wait = "absolute-ms";  ///< --fio-wait absolute-ms|relative-us (fio iolog v2)
  std::string to;                        ///< --to native|fio-iolog-v3
  std::string fio_file;                  ///< --fio-file: one fio file name for every trace device
  bool json = false;                     ///< stat --json
};
int cmd_trace_stat(const TraceArgs& args);
int cmd_trace_convert(const TraceArgs& args);
/// `drivelab list`: the emulator kinds, and the I/O engines with what each can do here.
int cmd_list();

}  // namespace drivelab::app
