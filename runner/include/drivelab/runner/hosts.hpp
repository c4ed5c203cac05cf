#pragma once
/// \file hosts.hpp
/// A protocol's `hosts:` section: what differs from one host (or rank) of a multi-host run to the
/// next, so that one protocol file serves four VMs with their own drives and their own database
/// servers (issue 16; docs/multihost.md "Per-host targets and databases"):
///
///     hosts:
///       - rank: 0                          # the entry of rank 0 (mpirun's numbering), or
///         host: vm1                        # of the host named so (gethostname(2)); one of the two
///         target: /mnt/nvme0/drivelab      # this host's --target ({rank} and {host} expanded)
///         out: /srv/results                # optional: its --out
///         set:                             # optional: this host's overrides, each as --set
///           tests[0].tpcc.server.connection: "host=10.0.0.5 dbname=bench"
///           tests[*].duration: 30m
///
/// Which entry is a process's: the one naming its rank, else the one naming its host name, else
/// none (the command line's --target and the protocol as written). Outside mpirun a process is
/// rank 0 of 1, so the same file also serves runs started by hand on each VM (`--start-at`).
/// Precedence, lowest first: the protocol file, the entry's `set:`, the command line's `--set`;
/// the command line's `--target`/`--out` over the entry's `target:`/`out:`.
///
/// Errors (at their keys, with the protocol's other problems): an entry with both or neither of
/// `rank` and `host`, a rank below 0, the same rank or host twice, an empty target, a `set:` that
/// is not a mapping of key paths, unknown keys.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/config/document.hpp"

namespace drivelab::runner {

struct HostEntry {
  std::optional<int> rank;  ///< `rank:`; empty when the entry names a host
  std::string host;         ///< `host:`; "" when the entry names a rank
  std::string target;       ///< "" = not given
  std::string out;          ///< "" = not given
  /// `set:` as --set assignments ("tests[0].duration=30m"), values in YAML flow form.
  std::vector<std::string> set;
  std::string key_path;    ///< "hosts[2]", for messages
  config::Location where;  ///< the entry's place in the protocol file
  /// "rank 0" or "host vm1".
  std::string describe() const;
};

/// Decodes a `hosts:` section (an undefined node: none). Problems go to the node's Diagnostics.
std::vector<HostEntry> decode_hosts(const config::Node& section);

/// The entry of the process with this rank and host name: the one naming its rank, else the one
/// naming its host, else nullptr.
const HostEntry* find_host_entry(const std::vector<HostEntry>& entries, int rank, std::string_view host);

/// Applies `entry.set` to `doc` in order. A failed assignment is reported into `diags` as
/// "<hosts[i].set>: <why>" (Document::apply_override's message), and leaves the document as it was.
void apply_host_overrides(config::Document& doc, const HostEntry& entry, config::Diagnostics& diags);

/// The `hosts:` section of a loaded document, decoded on its own (before the document is
/// otherwise decoded: the entry's overrides must be applied first). Problems are not reported
/// here (decode_protocol reports them, once, with the rest).
std::vector<HostEntry> hosts_of(const config::Document& doc);

}  // namespace drivelab::runner
