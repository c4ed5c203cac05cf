#pragma once
/// \file completion.hpp
/// `drivelab --bash-completion`: the bash completion script, written from the command line's own
/// definitions (the CLI11 tree main() builds), so it offers exactly the subcommands and options
/// that `--help` lists. The Debian package installs it as
/// /usr/share/bash-completion/completions/drivelab (packaging/CMakeLists.txt); from a source
/// build: `source <(build/apps/drivelab --bash-completion)`.
#include <string>

namespace CLI {
class App;
}

namespace drivelab::app {

/// A bash script that defines `_drivelab` and registers it (`complete -F _drivelab drivelab`).
/// It completes, per command path ("", "oltp tpcc", ...): the subcommands and option names
/// (long and short, hidden options left out); after an option that takes a value, directories
/// (a type name with DIR and not FILE, PATH or DEVICE), nothing (INT, UINT, FLOAT, NUMBER) or
/// file names (anything else: TEXT, FILE, PATH, DIR|DEVICE); in the place of a positional
/// argument, file names. `--opt=value` is
/// understood. Needs bash 4 and no bash-completion helpers.
std::string bash_completion(const CLI::App& app);

}  // namespace drivelab::app
