#include "drivelab/runner/hosts.hpp"

#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "drivelab/config/map_reader.hpp"

namespace drivelab::runner {

std::string HostEntry::describe() const { return rank ? fmt::format("rank {}", *rank) : fmt::format("host {}", host); }

std::vector<HostEntry> decode_hosts(const config::Node& section) {
  std::vector<HostEntry> out;
  if (!section.defined() || section.is_null()) return out;
  if (!section.is_sequence()) {
    section.error("expected a list of hosts (each with rank: or host:, and target:, out:, set:)");
    return out;
  }
  std::set<int> ranks;
  std::set<std::string> names;
  for (const config::Node& el : section.elements()) {
    HostEntry e;
    e.key_path = el.path();
    e.where = el.location();
    config::MapReader r(el);
    int rank = 0;
    const bool has_rank = r.integer("rank", rank, {.min = 0, .max = 1'000'000});
    const bool has_host = r.string("host", e.host);
    if (has_rank) e.rank = rank;
    const bool bad_rank = el.child("rank").defined() && !has_rank;  // already reported by integer()
    if (!bad_rank && has_rank == has_host) {
      el.error(has_rank ? "an entry names a rank or a host, not both"
                        : "an entry needs rank: (mpirun's rank number) or host: (the host's name)");
    } else if (has_rank && !ranks.insert(rank).second) {
      el.child("rank").error(fmt::format("rank {} has two entries", rank));
    } else if (has_host && (e.host.empty() || !names.insert(e.host).second)) {
      el.child("host").error(e.host.empty() ? "host must name a host"
                                            : fmt::format("host '{}' has two entries", e.host));
    }
    if (r.string("target", e.target) && e.target.empty())
      el.child("target").error("target must name a directory or a block device");
    if (r.string("out", e.out) && e.out.empty()) el.child("out").error("out must name a directory");
    if (const config::Node set = r.section("set"); set.defined() && !set.is_null()) {
      if (!set.is_map()) {
        set.error("expected a mapping of key paths to values (tests[0].duration: 30s), as --set takes them");
      } else {
        for (const auto& [key, value] : set.entries()) {
          YAML::Emitter y;
          y << YAML::Flow << value.yaml();
          e.set.push_back(key + "=" + y.c_str());
        }
      }
    }
    r.finish();
    out.push_back(std::move(e));
  }
  return out;
}

const HostEntry* find_host_entry(const std::vector<HostEntry>& entries, int rank, std::string_view host) {
  for (const HostEntry& e : entries)
    if (e.rank && *e.rank == rank) return &e;
  for (const HostEntry& e : entries)
    if (!e.rank && e.host == host) return &e;
  return nullptr;
}

void apply_host_overrides(config::Document& doc, const HostEntry& entry, config::Diagnostics& diags) {
  for (const std::string& assignment : entry.set) {
    config::Diagnostics d;
    doc.apply_override(assignment, d);
    for (const config::Diagnostic& x : d.items())
      diags.error(entry.where, entry.key_path + ".set",
                  fmt::format("{} ({}): {}", assignment, entry.describe(), x.message));
  }
}

std::vector<HostEntry> hosts_of(const config::Document& doc) {
  if (!doc.loaded()) return {};
  config::Diagnostics ignored;  // decode_protocol reports them with the rest
  const config::Node root = doc.root(ignored);
  if (!root.is_map()) return {};
  return decode_hosts(root.child("hosts"));
}

}  // namespace drivelab::runner
