#include "commands.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "drivelab/config/document.hpp"
#include "drivelab/core/clock.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/io/target_safety.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/io/engine.hpp"
#include "drivelab/trace/readers.hpp"
#include "drivelab/report/report.hpp"
#include "drivelab/results/journal.hpp"
#include "drivelab/results/merge.hpp"
#include "drivelab/results/store.hpp"
#include "drivelab/results/summary.hpp"
#include "drivelab/results/validate.hpp"
#include "drivelab/runner/hosts.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"
#include "registry.hpp"
#ifdef DRIVELAB_WITH_MPI
#include "drivelab/cohort/mpi_cohort.hpp"
#endif

namespace drivelab::app {
namespace {

/// A protocol document with the problems found while reading it (file or generated text).
struct LoadedDocument {
  config::Document doc;
  config::Diagnostics diags;
};

LoadedDocument read_document(const std::filesystem::path& file, const std::optional<std::string>& text) {
  LoadedDocument d;
  d.doc =
      text ? config::Document::load_string(*text, file.string(), d.diags) : config::Document::load_file(file, d.diags);
  return d;
}

/// One diagnostic as printed. For a protocol generated from options (`flags` not null), a
/// problem at a key an option set names the option ("drivelab io: --xfersize/--bs: '4q' is not
/// a size ..."), and any other names the key without a line of a document the user never saw.
std::string describe(const config::Diagnostic& d, const std::string& origin,
                     const std::map<std::string, std::string>* flags) {
  if (flags == nullptr || d.where.file != origin) return d.to_string();
  if (const auto it = flags->find(d.key_path); it != flags->end())
    return fmt::format("{}: {}: {}", origin, it->second, d.message);
  if (d.key_path.empty()) return fmt::format("{}: {}", origin, d.message);
  return fmt::format("{}: {}: {}", origin, d.key_path, d.message);
}

/// Applies overrides and decodes; prints every diagnostic (reading, overrides, decoding) on
/// stderr. Returns false on any problem.
bool load_protocol(LoadedDocument loaded, const runner::Registry& registry, const std::vector<std::string>& overrides,
                   runner::Protocol& out, const std::map<std::string, std::string>* flags = nullptr) {
  config::Document& doc = loaded.doc;
  config::Diagnostics& diags = loaded.diags;
  // This host's `hosts:` entry first (runner/hosts.hpp), so the command line's --set wins over it.
  const LaunchPlace place = launch_place();
  const std::vector<runner::HostEntry> hosts = runner::hosts_of(doc);
  if (const runner::HostEntry* e = runner::find_host_entry(hosts, place.rank, place.host))
    runner::apply_host_overrides(doc, *e, diags);
  if (doc.loaded())
    for (const auto& o : overrides) doc.apply_override(o, diags);
  if (doc.loaded()) out = runner::decode_protocol(doc, registry, diags);  // report everything at once
  if (!diags.empty()) {
    for (const auto& d : diags.items()) {
      const std::string line = describe(d, doc.name(), flags);
      std::cerr << line;
      if (line.empty() || line.back() != '\n') std::cerr << '\n';
    }
    std::cerr << fmt::format("{}: {} problem{} found\n", doc.name(), diags.size(), diags.size() == 1 ? "" : "s");
    return false;
  }
  return true;
}

int execute(runner::Protocol& protocol, const RunArgs& args) {
  runner::StopFlag::install_signal_handlers();
  runner::RunOptions options;
  const LaunchPlace place = launch_place();
  // --target and --out, else this host's hosts: entry's (runner/hosts.hpp).
  const runner::HostEntry* entry = runner::find_host_entry(protocol.hosts, place.rank, place.host);
  std::string target = args.target.string();
  if (target.empty() && entry != nullptr) {
    target = expand_launch_pattern(entry->target, place);
    if (const std::string problem = target_problem(target, target != entry->target); !problem.empty()) {
      std::cerr << fmt::format("{}: {}.target ({}): {}\n", protocol.file, entry->key_path, entry->describe(), problem);
      return kExitBadInput;
    }
  }
  if (target.empty()) {
    std::cerr << fmt::format(
        "drivelab: no target: give --target DIR|DEVICE, or a hosts: entry with target: for {} "
        "(rank {}, host {}) in {}\n",
        place.launched ? "this rank" : "this host", place.rank, place.host, protocol.file);
    return kExitBadInput;
  }
  options.target = expand_launch_pattern(target, place);
  options.destroy_data_on = args.destroy_data_on;
  const bool out_given = args.out_dir != RunArgs{}.out_dir;
  options.out_dir = expand_launch_pattern(
      !out_given && entry != nullptr && !entry->out.empty() ? entry->out : args.out_dir.string(), place);
  options.command_line = args.command_line;
  options.quiet = args.quiet;
  options.live_line = ::isatty(STDOUT_FILENO) == 1;
  options.barrier_timeout = args.barrier_timeout;
  options.repeat = args.repeat;
  options.harness_ceiling = !args.no_harness_ceiling;
  std::unique_ptr<runner::Cohort> cohort;
  std::ostringstream follower_out;  // ranks > 0 print one line at the end, not the run's progress
  if (place.launched) {
#ifdef DRIVELAB_WITH_MPI
    try {
      cohort = cohort::join_mpi(runner::StopFlag::global(), args.barrier_timeout);
    } catch (const runner::CohortError& e) {
      std::cerr << "drivelab: rank " << place.rank << ": cannot join the multi-host run: " << e.what() << '\n';
      return kExitEnvironment;
    }
    options.cohort = cohort.get();
    if (cohort->rank() != 0) {
      options.out = &follower_out;
      options.live_line = false;
    }
#else
    std::cerr << "drivelab: started by an MPI launcher (rank " << place.rank << " of " << place.size
              << "), but this build has no MPI: rebuild with libopenmpi-dev installed (docs/multihost.md)\n";
    return kExitEnvironment;
#endif
  }
  // A multi-host run that cannot go on (a collective timed out, this rank's target refused) ends
  // the whole job: mpirun stops the other ranks, whose records stay valid (interrupted).
  const auto finish = [&](int code) {
    // A broken run exits non-zero even when this rank's own tests completed: the job has no
    // merged record (a host did not answer: an environment failure).
    if (cohort && (cohort->broken() || code == kExitEnvironment))
      cohort->abort(code == kExitOk ? kExitEnvironment : code);
    return code;
  };
  std::unique_ptr<metrics::PrometheusExporter> exporter;
  if (args.metrics_listen) {
    // Listening before anything runs: a port in use is said at once (exit 3), no record made.
    metrics::ListenAddress at = *args.metrics_listen;
    if (at.port != 0 && cohort) {  // one port per rank: the given port plus the rank
      const int port = at.port + cohort->rank();
      if (port > 65535) {
        std::cerr << fmt::format("drivelab: --metrics-listen {}: rank {} would listen on port {}, above 65535\n",
                                 at.to_string(), cohort->rank(), port);
        return finish(kExitBadInput);
      }
      at.port = static_cast<std::uint16_t>(port);
    }
    try {
      exporter = std::make_unique<metrics::PrometheusExporter>(at, metrics::ExporterLabels{place.host, place.rank});
    } catch (const EnvironmentError& e) {
      std::cerr << "drivelab: " << (cohort ? cohort->describe_rank(cohort->rank()) + ": " : std::string()) << e.what()
                << '\n';
      return finish(kExitEnvironment);
    }
    options.live_metrics = exporter.get();
    (options.out != nullptr ? *options.out : std::cout) << "metrics: " << exporter->url() << '\n' << std::flush;
  }
  options.start_at = args.start_at;
  try {
    const runner::RunOutcome outcome = runner::run_protocol(protocol, options, runner::StopFlag::global());
    const results::Status status = outcome.merged ? outcome.merged->status : outcome.record.status;
    if (cohort && cohort->rank() != 0)
      std::cout << fmt::format("drivelab: {}: record {} ({})\n", cohort->describe_rank(cohort->rank()),
                               outcome.record_path.string(), results::to_string(outcome.record.status))
                << std::flush;
    switch (status) {
      case results::Status::complete: return finish(kExitOk);
      case results::Status::interrupted: return finish(kExitInterrupted);
      default: return finish(kExitTestFailed);
    }
  } catch (const EnvironmentError& e) {
    std::cerr << "drivelab: " << (cohort ? cohort->describe_rank(cohort->rank()) + ": " : std::string()) << e.what()
              << '\n';
    return finish(kExitEnvironment);
  }
}

}  // namespace

LaunchPlace launch_place() {
  LaunchPlace p;
  if (const auto l = runner::launched_by_mpi()) {
    p.launched = true;
    p.rank = l->rank;
    p.size = l->size;
  }
  std::array<char, 256> host{};
  ::gethostname(host.data(), host.size() - 1);
  p.host = host.data();
  return p;
}

std::string expand_launch_pattern(const std::string& pattern, const LaunchPlace& place) {
  return runner::expand_rank_pattern(pattern, place.rank, place.host);
}

std::string target_problem(const std::string& path, bool from_pattern) {
  std::error_code ec;
  if (from_pattern && !std::filesystem::exists(path, ec)) std::filesystem::create_directory(path, ec);
  if (io::is_block_device(path) || std::filesystem::is_directory(path, ec)) return {};
  return std::filesystem::exists(path, ec) ? "target '" + path + "' is neither a directory nor a block device"
                                           : "target '" + path + "' does not exist";
}

std::chrono::system_clock::time_point parse_start_at(const std::string& value,
                                                     std::chrono::system_clock::time_point now) {
  using namespace std::chrono;
  system_clock::time_point at;
  if (!value.empty() && value.front() == '+') {
    nanoseconds d{};
    try {
      d = parse_duration(std::string_view(value).substr(1));
    } catch (const std::exception& e) {
      throw ConfigError(fmt::format("'{}': {}", value, e.what()));
    }
    at = now + duration_cast<system_clock::duration>(d);
  } else {
    // RFC 3339 in UTC: YYYY-MM-DDTHH:MM:SS[.fraction]Z.
    std::tm tm{};
    std::istringstream in(value);
    in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
    double fraction = 0;
    std::string rest;
    if (!in.fail()) std::getline(in, rest);
    if (!rest.empty() && rest.front() == '.') {
      const auto z = rest.find_first_not_of("0123456789", 1);
      if (z != 1 && z != std::string::npos) {
        fraction = std::stod("0" + rest.substr(0, z));
        rest = rest.substr(z);
      }
    }
    if (in.fail() || rest != "Z")
      throw ConfigError(
          fmt::format("'{}' is not a UTC time such as 2026-12-05T23:30:00Z, nor +DURATION such as +90s", value));
    at = system_clock::from_time_t(timegm(&tm)) + duration_cast<system_clock::duration>(duration<double>(fraction));
  }
  if (at < now)
    throw ConfigError(fmt::format("'{}' is {:.1f} s in the past", value, duration<double>(now - at).count()));
  return at;
}

namespace {
/// What is ignored as configured: not an error, but said (Emulator::config_warnings), for every
/// test that decoded, also when others have errors.
void print_config_warnings(const runner::Protocol& protocol) {
  for (const auto& t : protocol.tests)
    for (const std::string& w : t.emulator ? t.emulator->config_warnings() : std::vector<std::string>())
      std::cerr << "warning: " << w << '\n';
}
}  // namespace

int cmd_validate(const std::filesystem::path& protocol_file, const std::vector<std::string>& overrides,
                 std::optional<std::uint32_t> repeat) {
  const runner::Registry registry = make_registry();
  // The hosts: entries as written, read first and the tree let go at once: only the entries are
  // kept, never a second copy of the document beside the one being decoded.
  const std::vector<runner::HostEntry> host_entries = runner::hosts_of(read_document(protocol_file, {}).doc);
  runner::Protocol protocol;
  const bool loaded_ok = load_protocol(read_document(protocol_file, {}), registry, overrides, protocol);
  // Every hosts: entry's overrides, as that host will apply them (this host's were applied above),
  // also when the rest has problems: every mistake at once. A problem the entry's `set:` causes is
  // said at the entry's line, not at "<--set>" (the command line's).
  std::size_t host_problems = 0;
  for (const runner::HostEntry& e : host_entries) {
    if (e.set.empty()) continue;
    LoadedDocument loaded = read_document(protocol_file, {});
    runner::apply_host_overrides(loaded.doc, e, loaded.diags);
    if (loaded.diags.empty()) (void)runner::decode_protocol(loaded.doc, registry, loaded.diags);
    for (const auto& d : loaded.diags.items()) {
      const bool from_set = d.where.file == "<--set>" || d.key_path == e.key_path + ".set";
      if (!from_set) continue;                             // the protocol's own problems: reported above
      const bool own = d.key_path == e.key_path + ".set";  // an assignment that did not apply
      std::cerr << fmt::format("{}:{}:{}: {}.set ({}): {}{}\n", protocol_file.string(), e.where.line, e.where.column,
                               e.key_path, e.describe(), own ? "" : d.key_path + ": ", d.message);
      ++host_problems;
    }
  }
  if (host_problems > 0)
    std::cerr << fmt::format("{}: {} problem{} found in the hosts: entries' overrides\n", protocol_file.string(),
                             host_problems, host_problems == 1 ? "" : "s");
  if (!loaded_ok || host_problems > 0) {
    print_config_warnings(protocol);  // the tests that decoded: every finding at once
    return kExitBadInput;
  }
  std::cout << fmt::format("{}: ok — protocol '{}', {} test{}\n", protocol_file.string(), protocol.name,
                           protocol.tests.size(), protocol.tests.size() == 1 ? "" : "s");
  // `run --repeat N` overrides the protocol's repeat:, as run_protocol does (runner::RunOptions).
  const std::uint32_t repetitions = repeat.value_or(protocol.repeat);
  if (repetitions > 1)
    std::cout << fmt::format("  every test {} times{}\n", repetitions, repeat ? " (--repeat)" : " (repeat:)");
  for (const runner::HostEntry& e : protocol.hosts)
    std::cout << fmt::format(
        "  {} ({}): target {}{}\n", e.key_path, e.describe(), e.target.empty() ? "(--target)" : e.target,
        e.set.empty() ? "" : fmt::format(", {} override{}", e.set.size(), e.set.size() == 1 ? "" : "s"));
  for (const auto& t : protocol.tests) {
    const std::string schedule = t.emulator ? t.emulator->schedule(t.settings) : std::string();
    if (!schedule.empty())
      std::cout << fmt::format("  {:<20} {:<12} {}\n", t.settings.name, t.settings.kind, schedule);
    else
      std::cout << fmt::format("  {:<20} {:<12} warm-up {:>6.0f} s, measured {:>6.0f} s\n", t.settings.name,
                               t.settings.kind, std::chrono::duration<double>(t.settings.warmup).count(),
                               std::chrono::duration<double>(t.settings.duration).count());
  }
  print_config_warnings(protocol);
  return kExitOk;
}

/// Keeps the tests named by --only (in the protocol's order). False, with the names the protocol
/// has, if a name matches no test.
bool select_tests(runner::Protocol& protocol, std::vector<std::string> only, const std::string& file) {
  if (only.empty()) return true;
  for (auto& n : only) {  // --only 'a, b': names without the blanks around them
    const auto first = n.find_first_not_of(" \t");
    n = first == std::string::npos ? std::string() : n.substr(first, n.find_last_not_of(" \t") - first + 1);
  }
  std::string names;
  for (const auto& t : protocol.tests) names += (names.empty() ? "" : ", ") + t.settings.name;
  bool ok = true;
  for (const auto& n : only) {
    if (std::none_of(protocol.tests.begin(), protocol.tests.end(),
                     [&](const auto& t) { return t.settings.name == n; })) {
      std::cerr << fmt::format("{}: --only: no test named '{}' (the protocol's tests: {})\n", file, n, names);
      ok = false;
    }
  }
  std::erase_if(protocol.tests,
                [&](const auto& t) { return std::find(only.begin(), only.end(), t.settings.name) == only.end(); });
  return ok;
}

int cmd_run(const std::filesystem::path& protocol_file, const RunArgs& args) {
  const runner::Registry registry = make_registry();
  runner::Protocol protocol;
  if (!load_protocol(read_document(protocol_file, {}), registry, args.overrides, protocol)) return kExitBadInput;
  if (!select_tests(protocol, args.only, protocol_file.string())) return kExitBadInput;
  return execute(protocol, args);
}

int cmd_run_generated(const std::string& yaml_text, const std::string& origin,
                      const std::map<std::string, std::string>& flags, const RunArgs& args) {
  const runner::Registry registry = make_registry();
  runner::Protocol protocol;
  if (!load_protocol(read_document(origin, yaml_text), registry, args.overrides, protocol, &flags))
    return kExitBadInput;
  return execute(protocol, args);
}

namespace {

/// Runs a `results` subcommand: a bad record or journal is exit 2, a file that cannot be read or
/// written exit 3, each with its message.
template <class F>
int results_command(F&& f) {
  try {
    return f();
  } catch (const ConfigError& e) {
    std::cerr << "drivelab: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const EnvironmentError& e) {
    std::cerr << "drivelab: " << e.what() << '\n';
    return kExitEnvironment;
  }
}

}  // namespace

int cmd_recover(const std::filesystem::path& journal, const std::filesystem::path& out) {
  return results_command([&] {
    std::error_code ec;
    if (!out.empty() && std::filesystem::equivalent(out, journal, ec))
      throw ConfigError(fmt::format("results recover: the output '{}' is the journal '{}' itself; give another -o",
                                    out.string(), journal.string()));
    results::RunRecord record = results::recover_from_journal(journal);
    const bool alive = results::journal_run_alive(journal);
    if (alive) {
      // A snapshot of a run still going: a live record (results::is_live), which its finished record replaces.
      record.reason = results::kLiveRecordReason;
      std::cerr << fmt::format(
          "drivelab: warning: the run of {} is still going (its reserve is held): this is the run so far, a live "
          "record; its own record replaces it when the run ends\n",
          journal.string());
    }
    std::filesystem::path dest = out;
    if (dest.empty()) {
      // <run_id>.recovered.json beside the journal, whatever the journal file is called.
      std::string name = record.run_id;
      if (name.empty()) {
        name = journal.filename().string();
        const std::string suffix = ".journal.jsonl";
        if (name.size() > suffix.size() && name.ends_with(suffix)) name.resize(name.size() - suffix.size());
      }
      dest = journal.parent_path() / (name + ".recovered.json");
    }
    results::write_record(dest, record);
    // The killed run's reserve beside its journal (8 MiB) goes too, unless a live run holds it.
    for (const auto& stale : results::remove_stale_reserves(journal.has_parent_path() ? journal.parent_path() : "."))
      std::cerr << fmt::format("drivelab: removed {}, the reserve of a run that was killed\n", stale.string());
    results::keep_copy_for_validation(dest);
    std::cout << fmt::format("recovered {} test{} (run status: {}) into {}\n", record.tests.size(),
                             record.tests.size() == 1 ? "" : "s", results::to_string(record.status), dest.string());
    return kExitOk;
  });
}

int cmd_merge(const std::vector<std::filesystem::path>& inputs, const std::filesystem::path& out) {
  namespace fs = std::filesystem;
  return results_command([&] {
    std::vector<results::MergeInput> records;
    std::vector<fs::path> journals;  // of the runs this merge closes: their reserves go
    for (const fs::path& in : inputs) {
      results::LoadedInput loaded = results::read_merge_input(in);
      if (!loaded.note.empty()) std::cerr << "drivelab: results merge: " << loaded.note << '\n';
      journals.push_back(results::journal_of_input(in, loaded.input.record));
      records.push_back(std::move(loaded.input));
    }
    const results::RunRecord merged = results::merge_host_records(std::move(records));
    const fs::path dest = out.empty() ? inputs.front().parent_path() / (merged.run_id + ".json") : out;
    std::error_code ec;
    for (const fs::path& in : inputs) {
      if (fs::equivalent(dest, in, ec)) {
        std::cerr << fmt::format("drivelab: results merge: the output '{}' is the input '{}'; give another -o\n",
                                 dest.string(), in.string());
        return kExitBadInput;
      }
    }
    results::write_record(dest, merged);
    // A killed rank's reserve (8 MiB beside its journal) goes, unless a live run holds it.
    for (const fs::path& j : journals)
      if (results::remove_stale_reserve(j))
        std::cerr << fmt::format("drivelab: removed {}.reserve, the reserve of a run that was killed\n", j.string());
    results::keep_copy_for_validation(dest);
    std::cout << results::format_summary(merged, dest);
    return merged.status == results::Status::complete ? kExitOk : kExitTestFailed;
  });
}

int cmd_results_validate(const std::vector<std::filesystem::path>& files, const std::filesystem::path& schema) {
  return results_command([&] {
    const results::Validation v = results::validate_files(files, schema);
    std::cout << v.output << std::flush;
    return v.exit_code;
  });
}

int cmd_results_import(const std::vector<std::filesystem::path>& records, const std::filesystem::path& db) {
  return results_command([&] {
    results::RunStore store(db, true);
    std::size_t imported = 0, already = 0, refused = 0;
    for (const auto& file : records) {
      try {
        const results::ImportOutcome o = store.import_file(file);
        if (o.stored) {
          ++imported;
          std::cout << fmt::format("{}: imported run {}{}\n", file.string(), o.run_id,
                                   o.replaced_live ? fmt::format(" (in place of the live record imported from {}, "
                                                                 "written before the run finished)",
                                                                 o.stored_source)
                                                   : "");
        } else {
          ++already;
          std::cout << fmt::format("{}: run {} already stored (imported from {}{})\n", file.string(), o.run_id,
                                   o.stored_source,
                                   o.same_content ? "" : "; this file differs: the stored record is kept");
        }
      } catch (const ConfigError& e) {
        ++refused;
        std::cerr << "drivelab: results import: " << e.what() << '\n';
      }
    }
    std::cout << fmt::format("imported {}, already stored {}{} ({} runs in {})\n", imported, already,
                             refused > 0 ? fmt::format(", refused {}", refused) : "", store.run_count(), db.string());
    return refused > 0 ? kExitBadInput : kExitOk;
  });
}

int cmd_report(const ReportArgs& args) {
  report::Dataset data;
  try {
    if (args.inputs.empty() && args.db.empty())
      throw ConfigError("report: give result files, or --db with a results store (drivelab report --help)");
    for (std::size_t i = 0; i < args.inputs.size(); ++i)
      report::add_file(data, args.inputs[i], i < args.labels.size() ? args.labels[i] : std::string());
    if (!args.db.empty()) {
      std::vector<results::RunFilter> where;
      for (const auto& w : args.where) where.push_back(results::parse_run_filter(w));
      const results::RunStore store(args.db, false);
      // The stored JSON goes the way of a record file: the same reading and ranking.
      const std::vector<results::StoredRun> runs = store.select(where);
      for (const results::StoredRun& run : runs) report::add_record_json(data, run.record, run.source, {});
      if (runs.empty()) {
        // Said in the report and, once, on stderr with the report's other notes (below): an empty
        // report must not read as "nothing was slow".
        data.notes.push_back(fmt::format("no stored run of {} matches {}", args.db.string(),
                                         args.where.empty()
                                             ? std::string("(no --where)")
                                             : fmt::format("--where {}", fmt::join(args.where, " --where "))));
      }
    } else if (!args.where.empty()) {
      throw ConfigError("report: --where selects runs of a results store: give --db too");
    }
    if (!args.published.empty()) report::add_file(data, args.published, {});
  } catch (const ConfigError& e) {
    std::cerr << "drivelab: " << e.what() << '\n';
    return kExitBadInput;
  }
  if (args.labels.size() > args.inputs.size())
    std::cerr << fmt::format("drivelab: warning: {} labels for {} inputs; the extra labels are unused\n",
                             args.labels.size(), args.inputs.size());
  const report::Report rep = report::build_report(std::move(data), report::ReportOptions{args.include_partial});
  const auto write = [](const std::filesystem::path& p, const std::string& text) {
    std::error_code ec;
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) throw EnvironmentError(fmt::format("cannot create the directory of {}: {}", p.string(), ec.message()));
    errno = 0;
    std::ofstream out(p, std::ios::binary);
    out << text;
    out.close();
    if (!out)
      throw EnvironmentError(fmt::format("cannot write {}{}", p.string(), errno != 0 ? ": " + errno_text(errno) : ""));
  };
  if (!args.csv.empty()) write(args.csv, report::to_csv(rep));
  if (!args.md.empty()) write(args.md, report::to_markdown(rep));
  if (!args.html.empty()) {
    std::vector<report::Chart> charts;
    std::string note;
    if (args.no_charts) {
      note = "Charts not drawn (--no-charts).";
    } else {
      report::ChartOptions opt;
      opt.dir =
          args.charts_dir.empty() ? args.html.parent_path() / (args.html.stem().string() + "_charts") : args.charts_dir;
      charts = report::draw_charts(rep, opt);  // EnvironmentError if gnuplot is missing or fails
    }
    write(args.html, report::to_html(rep, charts, note));
  }
  if (args.csv.empty() && args.md.empty() && args.html.empty()) std::cout << report::to_markdown(rep);
  for (const auto& n : rep.data.notes) std::cerr << "drivelab: note: " << n << '\n';
  return kExitOk;
}

int cmd_list() {
  const runner::Registry registry = make_registry();
  for (const auto& t : registry.types()) std::cout << fmt::format("{:<10} {}\n", t.kind, t.summary);
  // What each I/O engine can do on this machine (io/engine.hpp probe_engine): "not compiled in"
  // and "blocked here" are different problems with different fixes.
  std::cout << "\nI/O engines (probed here):\n";
  for (std::string_view name : io::engine_names()) {
    const io::EngineAvailability a = io::probe_engine(name);
    const char* state = a.usable ? "usable" : (a.compiled_in ? "blocked" : "not compiled in");
    std::cout << fmt::format("{:<10} {:<16} {}\n", name, state, fmt::join(a.capabilities.names(), ", "));
    std::cout << fmt::format("{:<10} {}\n", "", a.summary);
    if (!a.usable) std::cout << fmt::format("{:<10} {}\n", "", a.reason);
    if (!a.note.empty()) std::cout << fmt::format("{:<10} note: {}\n", "", a.note);
    for (const io::FeatureAvailability& f : a.features)
      std::cout << fmt::format("{:<10} {}: {}\n", "", f.name, f.usable ? "usable" : f.reason);
  }
  // The trace formats `drivelab trace` and `format:` read (trace/src/formats.cpp), in detection order.
  std::cout << "\nTrace formats (--format, format:; auto tries them in this order):\n";
  for (const trace::TraceFormatInfo* f : trace::trace_formats()) {
    std::cout << fmt::format("{:<20} {}\n", f->name, f->summary);
    std::cout << fmt::format("{:<20} clock: {}, {}\n", "", f->clock.unit, f->clock.origin);
  }
  return kExitOk;
}

}  // namespace drivelab::app
