// `drivelab --bash-completion` (completion.hpp).
#include "completion.hpp"

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace drivelab::app {
namespace {

/// What follows an option that takes a value, from its CLI11 type name ("TEXT:DIR", "UINT", ...).
std::string value_kind(const CLI::Option& opt) {
  const std::string type = opt.get_type_name();
  const bool files = type.find("FILE") != std::string::npos || type.find("PATH") != std::string::npos ||
                     type.find("DEVICE") != std::string::npos;  // --target: TEXT:DIR|DEVICE
  if (type.find("DIR") != std::string::npos && !files) return "dir";
  for (const char* number : {"INT", "UINT", "FLOAT", "NUMBER"})
    if (type == number) return "none";
  return "file";
}

/// One command path's share of the script: the transitions into its subcommands and the options
/// that take a value (the word loop), and its candidate words (the final case).
struct Command {
  std::string path;  ///< "" for drivelab itself, "oltp tpcc" for `drivelab oltp tpcc`
  std::vector<std::string> words;
  bool positional = false;
};

void walk(const CLI::App& app, const std::string& path, std::string& loop_cases, std::string& value_cases,
          std::vector<Command>& commands) {
  Command cmd{path, {}, false};
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;  // hidden
    if (!opt->nonpositional()) {
      cmd.positional = true;
      continue;
    }
    std::vector<std::string> names;
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
    for (const auto& n : names) {
      cmd.words.push_back(n);
      if (opt->get_expected_min() == 0) continue;  // a flag (or an option whose value is optional)
      loop_cases += fmt::format("      \"{}/{}\") value_of={} ;;\n", path, n, n);
      value_cases += fmt::format("      \"{}/{}\") _drivelab_values {} ;;\n", path, n, value_kind(*opt));
    }
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;
    const std::string sub_path = path.empty() ? sub->get_name() : path + " " + sub->get_name();
    cmd.words.push_back(sub->get_name());
    loop_cases += fmt::format("      \"{}/{}\") cmd=\"{}\" ;;\n", path, sub->get_name(), sub_path);
    walk(*sub, sub_path, loop_cases, value_cases, commands);
  }
  commands.push_back(std::move(cmd));
}

}  // namespace

std::string bash_completion(const CLI::App& app) {
  std::string loop_cases, value_cases;
  std::vector<Command> commands;
  walk(app, "", loop_cases, value_cases, commands);
  std::string command_cases;
  for (const Command& c : commands) {
    std::string words;
    for (const auto& w : c.words) words += (words.empty() ? "" : " ") + w;
    command_cases += fmt::format("    \"{}\") words=\"{}\" files={} ;;\n", c.path, words, c.positional ? 1 : 0);
  }
  return fmt::format(R"(# bash completion for drivelab: printed by `drivelab --bash-completion` from drivelab's own
# command-line definitions (apps/completion.cpp), so it offers what `drivelab ... --help` lists.

# _drivelab_values dir|file|none: the candidates for an option's value.
_drivelab_values() {{
  case $1 in
    dir) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
    file) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    *) COMPREPLY=() ;;
  esac
}}

_drivelab() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} cmd="" value_of="" w i words files
  # `--opt=value`: bash splits it at the "=" (COMP_WORDBREAKS); completing right after the "="
  # completes the value of the word before it.
  if [[ $cur == "=" ]]; then cur=""; fi
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${{COMP_WORDS[i]}}
    [[ $w == "=" ]] && continue
    if [[ -n $value_of ]]; then value_of=""; continue; fi
    case "$cmd/$w" in
{}    esac
  done
  [[ ${{COMP_WORDS[COMP_CWORD]}} == "=" && -z $value_of ]] && value_of=${{COMP_WORDS[COMP_CWORD - 1]}}
  if [[ -n $value_of ]]; then
    case "$cmd/$value_of" in
{}      *) COMPREPLY=() ;;
    esac
    return 0
  fi
  case "$cmd" in
{}  esac
  if [[ $cur == -* || $files -eq 0 ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
  else
    _drivelab_values file
  fi
  return 0
}}
complete -F _drivelab drivelab
)",
                     loop_cases, value_cases, command_cases);
}

}  // namespace drivelab::app
