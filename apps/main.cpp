// drivelab — application-level storage benchmarks. See README.md and docs/.
#include <csignal>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "commands.hpp"
#include "compare_commands.hpp"
#include "completion.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/io/engine.hpp"
#include "drivelab/io/target_safety.hpp"
#include "drivelab/oltp/database/database.hpp"
#include "drivelab/results/identity.hpp"
#include "drivelab/results/store.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/trace/readers.hpp"

namespace {

using drivelab::app::RunArgs;

/// Options shared by every command that runs something.
void add_run_options(CLI::App& cmd, RunArgs& args, bool target_required = true) {
  auto* t = cmd.add_option("--target", args.target,
                           "Directory on the drive under test (test files are created only inside it), or a block "
                           "device for the tests that can use one (docs/targets.md)");
  if (target_required) t->required();
  // README "Exit status": a target that is not a directory or a block device is a bad option (2),
  // said before anything runs; io::is_block_device is the one test of a block device.
  t->check(CLI::Validator(
      [](const std::string& given) -> std::string {
        // {rank}/{host} (multi-host runs, docs/multihost.md): this rank's directory.
        const std::string path = drivelab::app::expand_launch_pattern(given, drivelab::app::launch_place());
        return drivelab::app::target_problem(path, path != given);
      },
      "DIR|DEVICE", "directory or block device"));
  cmd.add_option("--destroy-data-on", args.destroy_data_on,
                 "Allow writing to the target block device with this serial number (loop device: its backing "
                 "file) even though it holds a partition table or data signatures");
  cmd.add_option("--out", args.out_dir, "Directory for the result record and journal")->capture_default_str();
  cmd.add_option("--set", args.overrides,
                 "Override a protocol key: --set tests[0].duration=10s, --set 'tests[*].warmup=0s'")
      ->take_all();
  cmd.add_flag("--quiet,-q", args.quiet, "No per-interval lines (the summary is still printed)");
  cmd.add_flag("--no-harness-ceiling", args.no_harness_ceiling,
               "Do not measure the harness's own ceiling (the null engine's I/Os per CPU-second, about 0.1 s) "
               "before the first test, nor check tests against it (protocol key harness_ceiling: false; "
               "docs/telemetry.md)");
  cmd.add_option_function<std::string>(
      "--barrier-timeout",
      [&args](const std::string& v) {
        try {
          args.barrier_timeout = drivelab::parse_duration(v);
        } catch (const std::exception& e) {
          throw CLI::ValidationError("--barrier-timeout", e.what());
        }
        if (args.barrier_timeout.count() <= 0) throw CLI::ValidationError("--barrier-timeout", "must be more than 0");
      },
      "Multi-host runs (mpirun): the longest wait of a rank at a phase barrier before the run ends on every host "
      "(default 10m; docs/multihost.md)");
  cmd.add_option_function<std::string>(
      "--start-at",
      [&args](const std::string& v) {
        try {
          args.start_at = drivelab::app::parse_start_at(v, std::chrono::system_clock::now());
        } catch (const std::exception& e) {
          throw CLI::ValidationError("--start-at", e.what());
        }
      },
      "Start the first test at this UTC time (2026-12-05T23:30:00Z) or after this long (+90s): runs started by "
      "hand on several hosts begin together; their records merge with `results merge` (docs/multihost.md)");
  cmd.add_option_function<std::string>(
         "--metrics-listen",
         [&args](const std::string& v) {
           try {
             args.metrics_listen = drivelab::metrics::parse_listen_address(v);
           } catch (const std::exception& e) {
             throw CLI::ValidationError(e.what());
           }
         },
         "Serve the run's live figures for Prometheus at http://ADDRESS/metrics: HOST:PORT, [IPV6]:PORT, or PORT "
         "alone for 127.0.0.1 (off unless given; under mpirun, port + rank; docs/metrics.md)")
      ->type_name("ADDRESS");
}

/// Single-test commands: each option is one key of the test or of its `<kind>:` section; values
/// stay text so the protocol decoder checks units and ranges with the same messages as in YAML.
struct SingleTest {
  std::string name;
  std::map<std::string, std::string> common;   // warmup, duration, interval
  std::map<std::string, std::string> section;  // kind-specific keys
  std::map<std::string, std::string> flags;    // key path -> the option, "--xfersize/--bs", for messages
};

enum class Part { common, section };

/// One protocol key as a command-line option of a single-test subcommand.
struct KeyOption {
  const char* flags;  ///< CLI11 names: "--xfersize,--bs"
  const char* key;    ///< the key of the kind's section: "xfersize"
  const char* help;
};

void add_key(CLI::App& cmd, SingleTest& s, const std::string& kind, Part part, const std::string& flags,
             const std::string& key, const std::string& help) {
  auto& into = part == Part::common ? s.common : s.section;
  cmd.add_option_function<std::string>(flags, [&into, key](const std::string& v) { into[key] = v; }, help);
  std::string label;  // "--xfersize,--bs" -> "--xfersize/--bs"; "--users,-u" -> "--users/-u"
  for (const char c : flags) label += c == ',' ? '/' : c;
  s.flags[part == Part::common ? "tests[0]." + key : "tests[0]." + kind + "." + key] = label;
}

void add_timing(CLI::App& cmd, SingleTest& s, const std::string& kind) {
  add_key(cmd, s, kind, Part::common, "--warmup", "warmup", "Warm-up before measuring (e.g. 10s)");
  add_key(cmd, s, kind, Part::common, "--duration,--runtime", "duration", "Measured time (e.g. 60s)");
  add_key(cmd, s, kind, Part::common, "--interval", "interval", "Reporting interval (e.g. 5s)");
}

std::string single_test_yaml(const std::string& kind, const SingleTest& s) {
  YAML::Emitter y;
  y << YAML::BeginMap << YAML::Key << "protocol" << YAML::Value << (kind + "-command-line");
  y << YAML::Key << "tests" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << s.name << YAML::Key << "kind" << YAML::Value << kind;
  for (const auto& [k, v] : s.common) y << YAML::Key << k << YAML::Value << v;
  y << YAML::Key << kind << YAML::Value << YAML::BeginMap;
  for (const auto& [k, v] : s.section) y << YAML::Key << k << YAML::Value << v;
  y << YAML::EndMap << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
  return y.c_str();
}

/// `drivelab --version`: "drivelab <package version>" (results::package_version: the version the
/// Debian package carries, with the commit in it).
std::string version_line() { return "drivelab " + drivelab::results::package_version(); }

/// `drivelab run ... | head`: a closed stdout must not kill a run (SIGPIPE's default); writes to
/// it fail instead, and the run, its journal and its record go on. A handler that does nothing
/// rather than SIG_IGN: exec resets a handled signal to its default, so the servers and tools we
/// start do not inherit an ignored SIGPIPE.
void survive_closed_stdout() {
  struct sigaction pipe_action{};
  pipe_action.sa_handler = [](int) {};
  pipe_action.sa_flags = SA_RESTART;
  sigemptyset(&pipe_action.sa_mask);
  sigaction(SIGPIPE, &pipe_action, nullptr);
}

/// The formats whose row reads `option` ("--blkparse-event" -> "blkparse").
std::string formats_reading(std::string_view option) {
  std::string out;
  for (const drivelab::trace::TraceFormatInfo* f : drivelab::trace::trace_formats()) {
    if (f->options.find(option) != std::string_view::npos) out += fmt::format("{}{}", out.empty() ? "" : ", ", f->name);
  }
  return out;
}

/// `drivelab trace stat` and `trace convert`, their options into `args`.
std::pair<CLI::App*, CLI::App*> add_trace_commands(CLI::App& app, drivelab::app::TraceArgs& trace_args) {
  auto* trace_cmd = app.add_subcommand("trace", "Block traces: statistics and conversion (docs/vdi.md)");
  trace_cmd->require_subcommand(1);
  auto* trace_stat = trace_cmd->add_subcommand("stat",
                                               "I/O count, reads/writes, bytes, sizes, duration, mean and peak IOPS, "
                                               "requests per bucket over time, devices, LBA span");
  auto* trace_convert =
      trace_cmd->add_subcommand("convert", "Convert a trace to drivelab's native format or a fio iolog v3");
  for (auto* c : {trace_stat, trace_convert}) {
    c->add_option("input", trace_args.input, "Trace file")->required()->check(CLI::ExistingFile);
    // The choices and the formats each option applies to come from the registration list
    // (trace/src/formats.cpp, one row per format).
    c->add_option("--format", trace_args.format,
                  fmt::format("{} (default auto: detected; docs/vdi.md \"Trace formats\")",
                              drivelab::trace::trace_format_choices()));
    c->add_option(
        "--blkparse-event", trace_args.blkparse_event,
        fmt::format("{}: Q (queued, default) or D (issued to the driver)", formats_reading("--blkparse-event")));
    c->add_option("--time-unit", trace_args.time_unit,
                  fmt::format("Unit of the timestamps, for the formats whose file does not carry it ({}): ps, ns, "
                              "us, ms or s (default: the format's own, e.g. ns for mqsim; docs/vdi.md)",
                              drivelab::trace::time_unit_format_names()));
    c->add_option("--fio-wait", trace_args.fio_wait,
                  fmt::format("{} `wait N`: absolute-ms (default, as fio 3.33 replays it: until N ms after the "
                              "start) or relative-us (the HOWTO's text)",
                              formats_reading("--fio-wait")));
  }
  trace_stat->add_flag("--json", trace_args.json, "Print JSON");
  trace_convert->add_option("output", trace_args.output, "File to write")->required();
  trace_convert->add_option("--to", trace_args.to, "native or fio-iolog-v3")->required();
  trace_convert->add_option("--fio-file", trace_args.fio_file,
                            "fio-iolog-v3: one file name for every trace device "
                            "(default: trace-dev<N> per device; fio --replay_redirect also works)");
  return {trace_stat, trace_convert};
}

/// The words of an enum's table (core/names.hpp), comma-separated: "sqlite, postgres, mysql, odbc".
template <class E, std::size_t N>
std::string words_of(const drivelab::EnumNames<E, N>& names) {
  std::string out;
  for (const auto& [word, value] : names) out += (out.empty() ? "" : ", ") + std::string(word);
  return out;
}

/// An unknown subcommand names itself and the valid ones ("drivelab: unknown subcommand 'rnu';
/// the subcommands of drivelab are: run, validate, ..."), rather than CLI11's "The following
/// arguments were not expected". Walks the command words of argv down the tree; returns false
/// (message printed) at the first word that is not a subcommand of a command that needs one.
bool check_subcommands(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  std::string path = "drivelab";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word.front() == '-') return true;  // options: CLI11 checks them
    const auto subs = at->get_subcommands([](const CLI::App*) { return true; });
    if (subs.empty()) return true;
    const CLI::App* next = nullptr;
    std::string valid;
    for (const CLI::App* c : subs) {
      if (c->check_name(word)) next = c;
      valid += (valid.empty() ? "" : ", ") + c->get_name();
    }
    if (next == nullptr) {
      if (at->get_require_subcommand_min() == 0) return true;  // a positional argument
      std::cerr << fmt::format("drivelab: unknown subcommand '{}' of {}; the subcommands of {} are: {} ({} --help)\n",
                               word, path, path, valid, path);
      return false;
    }
    at = next;
    path += " " + next->get_name();
  }
  return true;
}

/// A subcommand and what running it does: main() runs the action of the one the user chose.
/// Every add_*_commands function below adds its subcommands to the CLI and their actions here;
/// the options they parse live in a CommandLine, which outlives the parse.
struct Action {
  CLI::App* command;
  std::function<int()> run;
};

/// Everything the command line parses into (one object, so the actions' references stay valid).
struct CommandLine {
  RunArgs args;
  std::string protocol_file;
  SingleTest io{"io", {}, {}, {{"tests[0].name", "--name"}}};
  SingleTest tpcc{"tpcc", {}, {}, {{"tests[0].name", "--name"}}};
  std::string journal_file, recover_out;
  std::vector<std::filesystem::path> merge_inputs;
  std::filesystem::path merge_out;
  std::vector<std::filesystem::path> validate_files, import_files;
  std::filesystem::path validate_schema, import_db;
  drivelab::app::ReportArgs report_args;
  drivelab::app::TraceArgs trace_args;
  drivelab::app::CompareArgs compare_args;
  drivelab::app::NoiseArgs noise_args;
};

/// `drivelab run` and `drivelab validate`.
void add_protocol_commands(CLI::App& app, CommandLine& cl, std::vector<Action>& actions) {
  using namespace drivelab::app;
  auto* run = app.add_subcommand("run", "Run a protocol file against a target directory or block device");
  run->add_option("protocol", cl.protocol_file, "Protocol YAML (e.g. config/quick.yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  add_run_options(*run, cl.args, /*target_required=*/false);  // or the protocol's hosts: entry
  run->add_option("--only", cl.args.only, "Run only these tests of the protocol, by name (comma-separated or repeated)")
      ->delimiter(',');
  run->add_option("--repeat", cl.args.repeat,
                  "Run every test N times (1-1000), overriding the protocol's repeat: (each repetition its own "
                  "test record and seed; the record adds mean, CV and 95% interval: docs/results.md, Repetitions)")
      ->type_name("N")
      ->check(drivelab::app::repetition_count(1, drivelab::runner::kMaxRepeat));
  actions.push_back({run, [&cl] { return cmd_run(cl.protocol_file, cl.args); }});

  auto* validate = app.add_subcommand("validate", "Check a protocol file and report every problem");
  validate->add_option("protocol", cl.protocol_file, "Protocol YAML")->required();
  validate->add_option("--set", cl.args.overrides, "Override a protocol key (as for run)")->take_all();
  validate->add_option("--repeat", cl.args.repeat, "Every test N times (as for run)")
      ->type_name("N")
      ->check(drivelab::app::repetition_count(1, drivelab::runner::kMaxRepeat));
  actions.push_back({validate, [&cl] { return cmd_validate(cl.protocol_file, cl.args.overrides, cl.args.repeat); }});
}

/// A single-test subcommand (`drivelab io`, `drivelab oltp tpcc`): the run options, --name, the
/// timing keys and `keys`, each a key of the kind's section; running it runs the generated
/// one-test protocol (cmd_run_generated, named `origin` in messages).
CLI::App* add_single_test_command(CLI::App& parent, const std::string& word, const std::string& description,
                                  const std::string& kind, const std::string& name_help,
                                  std::initializer_list<KeyOption> keys, SingleTest& test, CommandLine& cl,
                                  std::vector<Action>& actions) {
  auto* cmd = parent.add_subcommand(word, description);
  add_run_options(*cmd, cl.args);
  cmd->add_option("--name", test.name, name_help)->capture_default_str();
  add_timing(*cmd, test, kind);
  for (const KeyOption& k : keys) add_key(*cmd, test, kind, Part::section, k.flags, k.key, k.help);
  const std::string origin =
      parent.get_parent() == nullptr ? "drivelab " + word : "drivelab " + parent.get_name() + " " + word;
  actions.push_back({cmd, [&test, &cl, kind, origin] {
                       return drivelab::app::cmd_run_generated(single_test_yaml(kind, test), origin, test.flags,
                                                               cl.args);
                     }});
  return cmd;
}

/// `drivelab io`: one fio-style job, its options the keys of kind io.
void add_io_command(CLI::App& app, CommandLine& cl, std::vector<Action>& actions) {
  // The registered engines (io/src/engine.cpp), as `drivelab list` shows them.
  static const std::string engine_help =
      fmt::format("{} (drivelab list)", fmt::join(drivelab::io::engine_names(), " | "));
  add_single_test_command(
      app, "io", "One fio-style I/O job on a file in the target (kind: io)", "io",
      "Test name (names the file drivelab-<name>.dat)",
      {
          {"--engine,--ioengine", "engine", engine_help.c_str()},
          {"--rw", "rw", "randread | randwrite | read | write"},
          {"--xfersize,--bs", "xfersize", "Transfer size (e.g. 4k)"},
          {"--iodepth", "iodepth", "Outstanding I/Os per job"},
          {"--jobs,--numjobs", "jobs", "Jobs (threads), each with its own queue"},
          {"--file-size,--size", "file_size", "Test file size (e.g. 2GiB)"},
          {"--direct", "direct", "O_DIRECT (true/false)"},
          {"--keep-file", "keep_file", "Keep the file for the next run (true/false)"},
          {"--iodepth-batch-submit,--iodepth_batch_submit", "iodepth_batch_submit",
           "I/Os per submit call (fio's name; default 1)"},
          {"--iodepth-batch-complete-min,--iodepth_batch_complete_min", "iodepth_batch_complete_min",
           "Least completions per reap (fio's name; default 1, 0 = poll)"},
          {"--iodepth-batch-complete-max,--iodepth_batch_complete_max", "iodepth_batch_complete_max",
           "Most completions per reap (fio's name; default = the min)"},
          {"--registerfiles", "registerfiles", "io_uring: registered files (true/false)"},
          {"--fixedbufs", "fixedbufs", "io_uring: registered buffers (true/false)"},
          {"--sqthread-poll,--sqthread_poll", "sqthread_poll", "io_uring: kernel SQ polling thread (true/false)"},
      },
      cl.io, cl, actions);
}

/// `drivelab oltp tpcc`: one TPC-C test, its options the keys of kind tpcc.
void add_oltp_commands(CLI::App& app, CommandLine& cl, std::vector<Action>& actions) {
  SingleTest& tpcc = cl.tpcc;
  auto* oltp = app.add_subcommand("oltp", "OLTP database workloads");
  oltp->require_subcommand(1);
  auto* tpcc_cmd = add_single_test_command(*oltp, "tpcc", "TPC-C-like OLTP on a database in the target (kind: tpcc)",
                                           "tpcc", "Test name",
                                           {
                                               {"--warehouses,-w", "warehouses", "Warehouses (scale)"},
                                               {"--users,-u", "users", "Virtual users (terminals)"},
                                               {"--think", "think", "none | tpcc (keying and think times)"},
                                               {"--journal-mode", "journal_mode", "SQLite journal mode (wal)"},
                                               {"--synchronous", "synchronous", "SQLite synchronous (full)"},
                                               {"--cache-size", "cache_size", "Database buffer (e.g. 64MiB)"},
                                               {"--keep-database", "keep_database", "Keep the database (true/false)"},
                                           },
                                           tpcc, cl, actions);
  // --backend: the words of oltp::kBackendKindNames, the one list the protocol key decodes with;
  // `--backend help` prints them (before the required options are checked: CLI11 runs option
  // callbacks first).
  const std::string backends = words_of(drivelab::oltp::kBackendKindNames);
  tpcc_cmd->add_option_function<std::string>(
      "--backend",
      [&tpcc, backends](const std::string& v) {
        if (v == "help") {
          std::cout << "backends: " << backends << " (default sqlite; docs/oltp-tpcc.md, docs/backend-*.md)\n";
          throw CLI::Success();
        }
        tpcc.section["backend"] = v;
      },
      "Database backend: " + backends + " (default sqlite); --backend help lists them");
  tpcc.flags["tests[0].tpcc.backend"] = "--backend";
}

/// `drivelab results recover`, `merge`, `validate` and `import`.
void add_results_commands(CLI::App& app, CommandLine& cl, std::vector<Action>& actions) {
  auto* res = app.add_subcommand("results", "Work with result records");
  res->require_subcommand(1);
  auto* recover = res->add_subcommand("recover", "Rebuild a valid (partial) record from a run's journal");
  recover->add_option("journal", cl.journal_file, "<run_id>.journal.jsonl")->required()->check(CLI::ExistingFile);
  recover->add_option("-o,--output", cl.recover_out, "Record to write (default: <run_id>.recovered.json)");
  actions.push_back({recover, [&cl] { return drivelab::app::cmd_recover(cl.journal_file, cl.recover_out); }});

  auto* merge =
      res->add_subcommand("merge", "Merge the per-host records (or journals) of a multi-host run into one record");
  merge->add_option("inputs", cl.merge_inputs, "<run_id>.json records or <run_id>.journal.jsonl journals, one per host")
      ->required()
      ->check(CLI::ExistingFile);
  merge->add_option("-o,--output", cl.merge_out, "Record to write (default: <job_id>.json beside the first input)");
  actions.push_back({merge, [&cl] { return drivelab::app::cmd_merge(cl.merge_inputs, cl.merge_out); }});

  auto* validate =
      res->add_subcommand("validate",
                          "Check records, journals (.jsonl) and report CSVs (.csv) against the record's JSON Schema "
                          "(docs/results.schema.json; needs python3-jsonschema)");
  validate
      ->add_option("files", cl.validate_files, "<run_id>.json, <run_id>.journal.jsonl, drivelab report --csv output")
      ->required()
      ->check(CLI::ExistingFile);
  validate->add_option("--schema", cl.validate_schema, "Validate against this schema file instead of the built-in one")
      ->check(CLI::ExistingFile);
  actions.push_back(
      {validate, [&cl] { return drivelab::app::cmd_results_validate(cl.validate_files, cl.validate_schema); }});

  auto* import =
      res->add_subcommand("import", "Keep records in a SQLite results store (one row per run id) for report --db");
  import->add_option("records", cl.import_files, "<run_id>.json records")->required()->check(CLI::ExistingFile);
  import->add_option("--db", cl.import_db, "The store (created if it does not exist), e.g. runs.sqlite")->required();
  actions.push_back({import, [&cl] { return drivelab::app::cmd_results_import(cl.import_files, cl.import_db); }});
}

/// `drivelab report`.
void add_report_command(CLI::App& app, CommandLine& cl, std::vector<Action>& actions) {
  drivelab::app::ReportArgs& report_args = cl.report_args;
  auto* report_cmd =
      app.add_subcommand("report", "Rank drives side by side from result records and imports (HTML, Markdown, CSV)");
  report_cmd
      ->add_option(
          "inputs", report_args.inputs,
          "drivelab result records (.json), fio JSON (json/json+), sysbench text output, published-results CSV")
      ->check(CLI::ExistingFile);
  report_cmd->add_option("--db", report_args.db, "Report the runs of a results store (drivelab results import)")
      ->check(CLI::ExistingFile);
  report_cmd->add_option(
      "--where", report_args.where,
      "With --db: only runs with KEY=VALUE; keys: " + std::string(drivelab::results::kRunFilterKeys) +
          " (repeat; the same key: any of the values; docs/reporter.md)");
  report_cmd
      ->add_option("--published", report_args.published,
                   "Published-results CSV (drive,capacity,source,test,metric,value,unit,vms,note: docs/reporter.md)")
      ->check(CLI::ExistingFile);
  report_cmd->add_option("--label", report_args.labels,
                         "Drive name for the inputs, in order (repeat: first --label names the first input)");
  report_cmd->add_option("--html", report_args.html, "Self-contained HTML page with charts");
  report_cmd->add_option("--md", report_args.md, "Markdown tables");
  report_cmd->add_option("--csv", report_args.csv, "CSV: one row per test, metric and drive");
  report_cmd->add_option("--charts-dir", report_args.charts_dir,
                         "Where the charts' SVG, PNG and gnuplot files go (default: <html>_charts)");
  report_cmd->add_flag("--no-charts", report_args.no_charts, "Do not draw charts (no gnuplot needed)");
  report_cmd->add_flag("--include-partial", report_args.include_partial,
                       "Rank interrupted/failed (partial) tests with complete ones (default: shown apart, not ranked)");
  actions.push_back({report_cmd, [&cl] { return drivelab::app::cmd_report(cl.report_args); }});
}

/// `drivelab compare` and `drivelab noise` (apps/compare_commands.cpp, docs/confidence.md).
void add_confidence_commands(CLI::App& app, CommandLine& cl, std::vector<Action>& actions) {
  auto* compare = drivelab::app::add_compare_command(app, cl.compare_args);
  actions.push_back({compare, [&cl] { return drivelab::app::cmd_compare(cl.compare_args); }});
  auto* noise = drivelab::app::add_noise_command(app, cl.noise_args);
  add_run_options(*noise, cl.args);
  actions.push_back({noise, [&cl] { return drivelab::app::cmd_noise(cl.noise_args, cl.args); }});
}

/// `drivelab trace stat|convert`, `drivelab list` and `drivelab version`.
void add_other_commands(CLI::App& app, CommandLine& cl, std::vector<Action>& actions) {
  const auto [trace_stat, trace_convert] = add_trace_commands(app, cl.trace_args);
  actions.push_back({trace_stat, [&cl] { return drivelab::app::cmd_trace_stat(cl.trace_args); }});
  actions.push_back({trace_convert, [&cl] { return drivelab::app::cmd_trace_convert(cl.trace_args); }});
  actions.push_back({app.add_subcommand("list", "List the test kinds, and the I/O engines with what each can do here"),
                     [] { return drivelab::app::cmd_list(); }});
  actions.push_back({app.add_subcommand("version", "Print version and build information"), [] {
                       std::cout << drivelab::results::probe_tool().dump(2) << '\n';
                       return drivelab::app::kExitOk;
                     }});
}

}  // namespace

int main(int argc, char** argv) {
  using namespace drivelab::app;
  survive_closed_stdout();
  CLI::App app{
      "drivelab — application-level storage benchmarks: TPC-C-like OLTP on a database in the target, fio-style I/O"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_line);
  app.add_flag_callback(
      "--bash-completion",
      [&app] {
        std::cout << drivelab::app::bash_completion(app);
        throw CLI::Success();
      },
      "Print the bash completion script (the Debian package installs it; from a build: source <(drivelab "
      "--bash-completion))");

  CommandLine cl;
  for (int i = 0; i < argc; ++i) cl.args.command_line.emplace_back(argv[i]);
  std::vector<Action> actions;
  add_protocol_commands(app, cl, actions);
  add_io_command(app, cl, actions);
  add_oltp_commands(app, cl, actions);
  add_results_commands(app, cl, actions);
  add_report_command(app, cl, actions);
  add_confidence_commands(app, cl, actions);
  add_other_commands(app, cl, actions);
  // `drivelab compare BASELINE... -- CANDIDATE...`: where the candidates begin.
  cl.compare_args.candidates = drivelab::app::compare_candidates_in(argc, argv);

  if (!check_subcommands(app, argc, argv)) return kExitBadInput;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0; everything else is bad input (2), not
    // CLI11's own numbering.
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }

  try {
    for (const Action& a : actions)
      if (*a.command) return a.run();
  } catch (const drivelab::ConfigError& e) {
    std::cerr << "drivelab: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const drivelab::EnvironmentError& e) {
    std::cerr << "drivelab: " << e.what() << '\n';
    return kExitEnvironment;
  } catch (const std::exception& e) {
    // A defect of drivelab, not of the input: the run could not finish (README: exit status 3).
    std::cerr << "drivelab: internal error: " << e.what() << '\n';
    return kExitEnvironment;
  }
  return kExitOk;
}
