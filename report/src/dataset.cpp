#include <cctype>

#include <fmt/format.h>

#include "drivelab/report/dataset.hpp"

namespace drivelab::report {

Better better_for_unit(std::string_view unit) noexcept {
  if (unit == "1/s" || unit == "1/min" || unit == "MB/s" || unit == "MiB/s") return Better::higher;
  if (unit == "s" || unit == "ms" || unit == "us" || unit == "ns") return Better::lower;
  return Better::unranked;
}

std::string_view to_string(Better b) noexcept {
  switch (b) {
    case Better::higher: return "higher";
    case Better::lower: return "lower";
    case Better::unranked: break;
  }
  return "unranked";
}

std::string_view to_string(Origin o) noexcept {
  switch (o) {
    case Origin::measured: return "measured";
    case Origin::published: return "published";
    case Origin::fio: return "fio";
    case Origin::sysbench: return "sysbench";
  }
  return "?";
}

const results::Metric* Result::find_metric(std::string_view name) const noexcept {
  for (const auto& m : metrics)
    if (m.name == name) return &m;
  return nullptr;
}

std::string test_key(std::string_view name) {
  std::string k;
  k.reserve(name.size());
  for (char c : name) {
    if (c == '-' || c == ' ') k += '_';
    else k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return k;
}

namespace {

std::string str_or_empty(const results::Json& j, const char* key) {
  if (!j.is_object()) return {};
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return {};
  std::string s = it->get<std::string>();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.pop_back();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.erase(s.begin());
  return s;
}

}  // namespace

std::string drive_name(const results::Json& target) {
  const std::string model = str_or_empty(target, "model");
  const std::string serial = str_or_empty(target, "serial");
  if (!model.empty() && !serial.empty()) return fmt::format("{} (SN {})", model, serial);
  if (!model.empty()) return model;
  if (!serial.empty()) return fmt::format("disk {}", serial);
  const std::string fs = str_or_empty(target, "filesystem");
  std::string dev = str_or_empty(target, "block_device");
  if (dev.empty()) dev = str_or_empty(target, "mount_source");
  if (!dev.empty() && !fs.empty()) return fmt::format("{} ({})", dev, fs);
  if (!dev.empty()) return dev;
  if (!fs.empty()) return fs;
  return "unknown target";
}

namespace {

/// What the workload is: the test's configuration without the keys that only say what happens
/// to the files or the database afterwards.
results::Json workload_config(const results::Json& config) {
  if (!config.is_object()) return config;
  results::Json out = results::Json::object();
  for (const auto& [k, v] : config.items())
    if (!k.starts_with("keep_") && k != "reuse") out[k] = v;
  return out;
}

/// Up to three top-level keys whose values differ ("rw randwrite vs randread").
std::string config_difference(const results::Json& a, const results::Json& b) {
  if (!a.is_object() || !b.is_object()) return {};
  std::vector<std::string> diffs;
  for (const auto& [k, v] : a.items()) {
    const auto it = b.find(k);
    if (it == b.end()) diffs.push_back(fmt::format("{} {} vs none", k, v.dump()));
    else if (*it != v) diffs.push_back(fmt::format("{} {} vs {}", k, v.dump(), it->dump()));
  }
  for (const auto& [k, v] : b.items())
    if (!a.contains(k)) diffs.push_back(fmt::format("{} none vs {}", k, v.dump()));
  if (diffs.size() > 3) {
    const std::size_t more = diffs.size() - 3;
    diffs.resize(3);
    diffs.push_back(fmt::format("{} more", more));
  }
  std::string out;
  for (const auto& d : diffs) out += (out.empty() ? "" : ", ") + d;
  return out;
}

/// The test key a measured test gets: the first workload of a name keeps the name; another kind
/// becomes "name (kind)", another configuration of the same kind "name (config N)", with a note.
std::string assign_variant(Dataset& data, const std::string& key, const std::string& name, const std::string& kind,
                           const results::Json& config, const std::string& source) {
  const TestVariant* first = nullptr;
  bool kind_seen = false;
  int count = 0;
  for (const TestVariant& v : data.variants) {
    if (v.key != key) continue;
    if (v.kind == kind && v.config == config) return v.as;
    if (first == nullptr) first = &v;
    kind_seen = kind_seen || v.kind == kind;
    ++count;
  }
  std::string as = key;
  if (first != nullptr) {
    as = kind_seen ? fmt::format("{} (config {})", key, count + 1) : fmt::format("{} ({})", key, kind);
    const std::string diff = first->kind == kind ? config_difference(config, first->config) : std::string();
    data.notes.push_back(fmt::format(
        "{}: test {} ({}) is not the workload of test {} ({}) in {}{}{}: reported apart as {}, not ranked against it",
        source, name, kind, name, first->kind, first->source, diff.empty() ? "" : ": ", diff, as));
  }
  data.variants.push_back({key, kind, config, source, as});
  return as;
}

}  // namespace

void add_record(Dataset& data, const results::RunRecord& record, const std::string& source,
                const std::string& label) {
  // The same run given twice (e.g. `results/*.json` matches both <run_id>.json and latest.json,
  // its copy) would count as two repetitions and fake the run-to-run noise.
  for (const Result& r : data.results)
    if (!record.run_id.empty() && r.run_id == record.run_id) {
      data.notes.push_back(fmt::format("{}: run {} was already read from {}: not counted twice", source,
                                       record.run_id, r.source));
      return;
    }
  const std::string drive = label.empty() ? drive_name(record.target) : label;
  if (record.status != results::Status::complete)
    data.notes.push_back(fmt::format("{}: run {} is {}: {}", source, record.run_id, results::to_string(record.status),
                                     record.reason));
  for (const auto& t : record.tests) {
    if (t.status == results::Status::skipped) {
      data.notes.push_back(fmt::format("{}: test {} was skipped: {}", source, t.name, t.reason));
      continue;
    }
    Result r;
    r.drive = drive;
    r.test = assign_variant(data, test_key(t.name), t.name, t.kind, workload_config(t.config), source);
    r.kind = t.kind;
    r.origin = Origin::measured;
    r.status = std::string(results::to_string(t.status));
    r.reason = t.reason;
    if (t.status == results::Status::running) {
      // Only a provisional record (the `<run_id>.json` rewritten while the run goes) says
      // `running`; read after the fact, its process was killed (SIGKILL, crash, power loss) or is
      // still measuring. Either way the test did not finish: it is interrupted, as after Ctrl-C.
      r.status = std::string(results::to_string(results::Status::interrupted));
      r.reason = "the record ends before this test's end (its process was killed, or the run is still going); "
                 "intervals so far are kept";
    }
    r.source = source;
    r.run_id = record.run_id;
    r.metrics = t.metrics;
    r.intervals = t.intervals;
    if (t.details.is_object() && t.details.contains("points") && t.details["points"].is_array()) {
      for (const auto& p : t.details["points"]) {
        if (!p.is_object() || !p.contains("achieved_iops") || !p.contains("latency_avg_us")) continue;
        if (!p["achieved_iops"].is_number() || !p["latency_avg_us"].is_number()) continue;
        r.curve.push_back({p["achieved_iops"].get<double>(), p["latency_avg_us"].get<double>()});
      }
    }
    if (r.partial())
      data.notes.push_back(fmt::format("{}: test {} on {} is {}{}{}", source, t.name, drive, r.status,
                                       r.reason.empty() ? "" : ": ", r.reason));
    data.results.push_back(std::move(r));
  }
}

}  // namespace drivelab::report
