#include "commands.hpp"

#include <unistd.h>

#include <iostream>

#include <fmt/format.h>

#include "drivelab/config/yaml.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/results/journal.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"
#include "registry.hpp"

namespace drivelab::app {
namespace {

/// Loads, applies overrides and decodes; prints every diagnostic. Returns false on any problem.
bool load_protocol(config::Document& doc, const runner::Registry& registry,
                   const std::vector<std::string>& overrides, runner::Protocol& out) {
  config::Diagnostics diags;
  if (doc.loaded())
    for (const auto& o : overrides) doc.apply_override(o, diags);
  if (diags.empty()) out = runner::decode_protocol(doc, registry, diags);
  if (!diags.empty()) {
    std::cerr << diags.to_string();
    if (!diags.to_string().empty() && diags.to_string().back() != '\n') std::cerr << '\n';
    std::cerr << fmt::format("{}: {} problem{} found\n", doc.name(), diags.size(), diags.size() == 1 ? "" : "s");
    return false;
  }
  return true;
}

int execute(runner::Protocol& protocol, const RunArgs& args) {
  runner::StopFlag::install_signal_handlers();
  runner::RunOptions options;
  options.target = args.target;
  options.out_dir = args.out_dir;
  options.command_line = args.command_line;
  options.quiet = args.quiet;
  options.live_line = ::isatty(STDOUT_FILENO) == 1;
  try {
    const runner::RunOutcome outcome = runner::run_protocol(protocol, options, runner::StopFlag::global());
    switch (outcome.record.status) {
      case results::Status::complete: return kExitOk;
      case results::Status::interrupted: return kExitInterrupted;
      default: return kExitTestFailed;
    }
  } catch (const EnvironmentError& e) {
    std::cerr << "drivelab: " << e.what() << '\n';
    return kExitEnvironment;
  }
}

}  // namespace

int cmd_validate(const std::filesystem::path& protocol_file, const std::vector<std::string>& overrides) {
  const runner::Registry registry = make_registry();
  config::Diagnostics load_diags;
  config::Document doc = config::Document::load_file(protocol_file, load_diags);
  if (!load_diags.empty()) {
    std::cerr << load_diags.to_string() << '\n';
    return kExitBadInput;
  }
  runner::Protocol protocol;
  if (!load_protocol(doc, registry, overrides, protocol)) return kExitBadInput;
  std::cout << fmt::format("{}: ok — protocol '{}', {} test{}\n", protocol_file.string(), protocol.name,
                           protocol.tests.size(), protocol.tests.size() == 1 ? "" : "s");
  for (const auto& t : protocol.tests)
    std::cout << fmt::format("  {:<20} {:<8} warm-up {:>6.0f} s, measured {:>6.0f} s\n", t.settings.name,
                             t.settings.kind, std::chrono::duration<double>(t.settings.warmup).count(),
                             std::chrono::duration<double>(t.settings.duration).count());
  return kExitOk;
}

int cmd_run(const std::filesystem::path& protocol_file, const RunArgs& args) {
  const runner::Registry registry = make_registry();
  config::Diagnostics load_diags;
  config::Document doc = config::Document::load_file(protocol_file, load_diags);
  if (!load_diags.empty()) {
    std::cerr << load_diags.to_string() << '\n';
    return kExitBadInput;
  }
  runner::Protocol protocol;
  if (!load_protocol(doc, registry, args.overrides, protocol)) return kExitBadInput;
  return execute(protocol, args);
}

int cmd_run_generated(const std::string& yaml_text, const std::string& origin, const RunArgs& args) {
  const runner::Registry registry = make_registry();
  config::Diagnostics load_diags;
  config::Document doc = config::Document::load_string(yaml_text, origin, load_diags);
  if (!load_diags.empty()) {
    std::cerr << load_diags.to_string() << '\n';
    return kExitBadInput;
  }
  runner::Protocol protocol;
  if (!load_protocol(doc, registry, args.overrides, protocol)) return kExitBadInput;
  return execute(protocol, args);
}

int cmd_recover(const std::filesystem::path& journal, const std::filesystem::path& out) {
  try {
    const results::RunRecord record = results::recover_from_journal(journal);
    std::filesystem::path dest = out;
    if (dest.empty()) {
      std::string name = journal.filename().string();
      const std::string suffix = ".journal.jsonl";
      if (name.size() > suffix.size() && name.ends_with(suffix)) name.resize(name.size() - suffix.size());
      dest = journal.parent_path() / (name + ".recovered.json");
    }
    results::write_record(dest, record);
    std::cout << fmt::format("recovered {} test{} (run status: {}) into {}\n", record.tests.size(),
                             record.tests.size() == 1 ? "" : "s", results::to_string(record.status),
                             dest.string());
    return kExitOk;
  } catch (const ConfigError& e) {
    std::cerr << "drivelab: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const EnvironmentError& e) {
    std::cerr << "drivelab: " << e.what() << '\n';
    return kExitEnvironment;
  }
}

int cmd_list() {
  const runner::Registry registry = make_registry();
  for (const auto& t : registry.types()) std::cout << fmt::format("{:<10} {}\n", t.kind, t.summary);
  return kExitOk;
}

}  // namespace drivelab::app
