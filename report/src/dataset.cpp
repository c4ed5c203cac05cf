#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/names.hpp"
#include "drivelab/report/dataset.hpp"
#include "drivelab/results/catalogue.hpp"

namespace drivelab::report {

Better better_for_unit(std::string_view unit) noexcept {
  if (unit == "1/s" || unit == "1/min" || unit == "MB/s" || unit == "MiB/s") return Better::higher;
  if (unit == "s" || unit == "ms" || unit == "us" || unit == "ns") return Better::lower;
  return Better::unranked;
}

Better better_for(std::string_view metric, std::string_view unit) noexcept {
  const results::MetricDef* d = results::find_metric_def(metric);
  if (d == nullptr || (d->unit_string() != unit && !(d->other_unit && unit_text(*d->other_unit) == unit)))
    return better_for_unit(unit);
  switch (d->better) {
    case results::Direction::higher: return Better::higher;
    case results::Direction::lower: return Better::lower;
    case results::Direction::none: break;
  }
  return Better::unranked;
}

std::string_view to_string(Better b) noexcept {
  static constexpr EnumNames<Better, 3> kNames{
      {{"higher", Better::higher}, {"lower", Better::lower}, {"unranked", Better::unranked}}};
  return name_of(kNames, b);
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

const results::Metric* find_metric(const std::vector<results::Metric>& metrics, std::string_view metric_name) noexcept {
  for (const auto& m : metrics)
    if (m.name == metric_name) return &m;
  return nullptr;
}

const results::Metric* Result::find_metric(std::string_view name) const noexcept {
  return report::find_metric(metrics, name);
}

const results::Metric* HostResult::find_metric(std::string_view metric_name) const noexcept {
  return report::find_metric(metrics, metric_name);
}

std::string hosts_test_key(const std::string& key, unsigned hosts) {
  return hosts > 1 ? fmt::format("{}_{}vms", key, hosts) : key;
}

std::string test_key(std::string_view name) {
  std::string k;
  k.reserve(name.size());
  for (char c : name) {
    if (c == '-' || c == ' ')
      k += '_';
    else
      k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
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

}  // namespace

std::string config_difference(const results::Json& a, const results::Json& b) {
  if (!a.is_object() || !b.is_object()) return {};
  std::vector<std::string> diffs;
  for (const auto& [k, v] : a.items()) {
    const auto it = b.find(k);
    if (it == b.end())
      diffs.push_back(fmt::format("{} {} vs none", k, v.dump()));
    else if (*it != v)
      diffs.push_back(fmt::format("{} {} vs {}", k, v.dump(), it->dump()));
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

namespace {

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

using results::Json;

const Json& member(const Json& j, const char* key, const std::string& path, bool (Json::*is)() const noexcept,
                   const char* what) {
  static const Json null;
  if (!j.is_object()) throw ConfigError(fmt::format("{}: expected an object", path));
  const auto it = j.find(key);
  if (it == j.end()) return null;
  if (!((*it).*is)()) throw ConfigError(fmt::format("{}.{}: expected {}", path, key, what));
  return *it;
}

std::string string_member(const Json& j, const char* key, const std::string& path) {
  const Json& v = member(j, key, path, &Json::is_string, "a string");
  return v.is_null() ? std::string() : v.get<std::string>();
}

/// The unit of the merged test's metric `name` (headline first, then groups); "" if none.
std::string unit_in(const results::TestRecord& t, const std::string& name) {
  if (const auto* m = t.find_metric(name)) return m->unit;
  for (const auto& g : t.groups)
    for (const auto& m : g.metrics)
      if (m.name == name) return m.unit;
  return {};
}

/// Result::per_host of test `t` from the merged record's `hosts` (mh-spec: hosts[] by rank, each
/// with its own tests[] by the same names).
std::vector<HostResult> hosts_of(const Json& hosts, const results::TestRecord& t) {
  std::vector<HostResult> out;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const Json& h = hosts[i];
    const std::string path = fmt::format("hosts[{}]", i);
    HostResult r;
    r.name = string_member(h, "name", path);
    const Json& rank = member(h, "rank", path, &Json::is_number_integer, "an integer");
    r.rank = rank.is_null() ? static_cast<int>(i) : rank.get<int>();
    r.status = string_member(h, "status", path);
    r.reason = string_member(h, "reason", path);
    const Json& tests = member(h, "tests", path, &Json::is_array, "an array");
    for (std::size_t k = 0; tests.is_array() && k < tests.size(); ++k) {
      const std::string tpath = fmt::format("{}.tests[{}]", path, k);
      if (string_member(tests[k], "name", tpath) != t.name) continue;
      r.status = string_member(tests[k], "status", tpath);
      r.reason = string_member(tests[k], "reason", tpath);
      const Json& metrics = member(tests[k], "metrics", tpath, &Json::is_object, "an object");
      if (metrics.is_object()) {
        for (const auto& item : metrics.items()) {
          // A non-finite value is written as null (docs/results.md) and reads back as NaN.
          const Json& value = item.value();
          const bool number = value.is_number();
          if (!number && !value.is_null())
            throw ConfigError(
                fmt::format("{}.metrics.{}: expected a number, got {}", tpath, item.key(), value.type_name()));
          r.metrics.push_back({item.key(), number ? value.get<double>() : NAN, unit_in(t, item.key()), {}});
        }
      }
      const Json& intervals = member(tests[k], "intervals", tpath, &Json::is_array, "an array");
      for (std::size_t n = 0; intervals.is_array() && n < intervals.size(); ++n) {
        try {
          r.intervals.push_back(results::interval_from_json(intervals[n]));
        } catch (const ConfigError& e) {
          throw ConfigError(fmt::format("{}.intervals[{}]: {}", tpath, n, e.what()));
        }
      }
      break;
    }
    if (r.status == "running") r.status = std::string(results::to_string(results::Status::interrupted));
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const HostResult& a, const HostResult& b) { return a.rank < b.rank; });
  return out;
}

/// `<job_id>-r<k>`: the run id of rank k of a multi-host job (mh-spec).
bool is_rank_of(const std::string& run_id, const std::string& job_id) {
  const std::string prefix = job_id + "-r";
  return !job_id.empty() && run_id.size() > prefix.size() && run_id.starts_with(prefix) &&
         std::all_of(run_id.begin() + static_cast<std::ptrdiff_t>(prefix.size()), run_id.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

/// A merged record's job: the per-rank records of it read before are its host rows, not drives.
double number_or(const results::Json& j, const char* key, double otherwise) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : otherwise;
}

/// A test's curve from details `points` (vdbench: achieved_iops, latency_*_us; tpcc rate: curve:
/// achieved_tps, latency_*_ms) and its sizing answers from details `slo`.
void read_curve(const results::Json& details, Result& r) {
  if (!details.is_object()) return;
  if (const auto pts = details.find("points"); pts != details.end() && pts->is_array()) {
    for (const auto& p : *pts) {
      if (!p.is_object()) continue;
      const bool tps = p.contains("achieved_tps");
      const double scale = tps ? 1e3 : 1.0;  // ms -> us
      const double rate = number_or(p, tps ? "achieved_tps" : "achieved_iops", NAN);
      const double avg = number_or(p, tps ? "latency_avg_ms" : "latency_avg_us", NAN) * scale;
      if (!std::isfinite(rate) || !std::isfinite(avg)) continue;
      r.curve.push_back({rate, avg, number_or(p, tps ? "latency_p99_ms" : "latency_p99_us", 0.0) * scale});
      if (tps) r.curve_rate_word = "TPS";
    }
  }
  if (const auto slo = details.find("slo"); slo != details.end() && slo->is_array()) {
    for (const auto& a : *slo) {
      if (!a.is_object() || !a.contains("metric") || !a["metric"].is_string()) continue;
      r.sizing.push_back({a["metric"].get<std::string>(),
                          a.contains("figure") && a["figure"].is_string() ? a["figure"].get<std::string>() : "",
                          number_or(a, "bound_ms", 0.0), number_or(a, "answer", 0.0),
                          a.contains("outcome") && a["outcome"].is_string() ? a["outcome"].get<std::string>() : ""});
    }
  }
}

void drop_ranks_of(Dataset& data, const std::string& job_id, const std::string& source) {
  std::vector<std::pair<std::string, std::string>> dropped;  // run id, source
  std::erase_if(data.results, [&](const Result& r) {
    if (!is_rank_of(r.run_id, job_id)) return false;
    if (dropped.empty() || dropped.back().first != r.run_id) dropped.emplace_back(r.run_id, r.source);
    return true;
  });
  for (const auto& [run_id, from] : dropped)
    data.notes.push_back(
        fmt::format("{}: the merged record of job {} has run {} ({}) as a host row: that rank's "
                    "record is not counted again as a drive",
                    source, job_id, run_id, from));
  std::erase_if(data.variants, [&](const TestVariant& v) {
    return std::none_of(data.results.begin(), data.results.end(), [&v](const Result& r) { return r.test == v.as; });
  });
}

}  // namespace

std::vector<results::Metric> drive_health(const results::TestRecord& t) {
  struct Column {
    const char* name;
    const char* unit;
    std::optional<double> results::DriveHealthSeen::* figure;
    enum { highest, lowest, sum } over;
  };
  using H = results::DriveHealthSeen;
  static constexpr Column kColumns[] = {
      {"drive_temperature_before_c", "°C", &H::temperature_before_c, Column::highest},
      {"drive_temperature_after_c", "°C", &H::temperature_after_c, Column::highest},
      {"drive_temperature_max_c", "°C", &H::temperature_max_c, Column::highest},
      {"drive_warning_temp_c", "°C", &H::warning_temp_c, Column::lowest},
      {"drive_tmt_transitions", "count", &H::tmt_transitions, Column::sum},
      {"drive_tmt_seconds", "s", &H::tmt_seconds, Column::sum},
      {"drive_media_errors", "count", &H::media_errors, Column::sum},
      {"drive_percentage_used", "%", &H::percentage_used, Column::highest},
  };
  const std::vector<H> drives = results::drive_health_seen(t);
  std::vector<results::Metric> out;
  for (const Column& c : kColumns) {
    std::optional<double> v;
    for (const H& d : drives) {
      const std::optional<double>& x = d.*c.figure;
      if (!x) continue;
      v = !v ? *x : c.over == Column::sum ? *v + *x : c.over == Column::lowest ? std::min(*v, *x) : std::max(*v, *x);
    }
    if (v) out.push_back({c.name, *v, c.unit, "drive health (details.health)"});
  }
  return out;
}

void add_record(Dataset& data, const results::RunRecord& record, const std::string& source, const std::string& label,
                const results::Json& hosts, const results::Json& cohort) {
  // The same run given twice (e.g. `results/*.json` matches both <run_id>.json and latest.json,
  // its copy) would count as two repetitions and fake the run-to-run noise.
  for (const Result& r : data.results)
    if (!record.run_id.empty() && r.run_id == record.run_id) {
      data.notes.push_back(
          fmt::format("{}: run {} was already read from {}: not counted twice", source, record.run_id, r.source));
      return;
    }
  if (!hosts.is_null() && !hosts.is_array()) throw ConfigError("hosts: expected an array");
  if (!cohort.is_null() && !cohort.is_object()) throw ConfigError("cohort: expected an object");
  const auto host_count = static_cast<unsigned>(hosts.is_array() ? hosts.size() : 0);
  if (host_count > 0) drop_ranks_of(data, record.run_id, source);
  // One rank's own record of a multi-host job (cohort with a rank, no hosts): one host's figures.
  const std::string job_id =
      host_count == 0 && cohort.is_object() ? string_member(cohort, "job_id", "cohort") : std::string();
  if (!job_id.empty() && is_rank_of(record.run_id, job_id)) {
    for (const Result& r : data.results)
      if (r.run_id == job_id && !r.per_host.empty()) {
        data.notes.push_back(
            fmt::format("{}: run {} is a rank of job {}, whose merged record {} is also given: it is "
                        "that record's host row, not counted again as a drive",
                        source, record.run_id, job_id, r.source));
        return;
      }
    const Json& size = member(cohort, "size", "cohort", &Json::is_number_integer, "an integer");
    data.notes.push_back(fmt::format(
        "{}: run {} is one rank of the {}multi-host job {}: reported as one host's result (ranked with single hosts); "
        "`drivelab results merge` of the job's records gives its system row",
        source, record.run_id, size.is_null() ? std::string() : fmt::format("{}-host ", size.get<long long>()),
        job_id));
  }
  const std::string system = fmt::format("{} host{}", host_count, host_count == 1 ? "" : "s");
  const std::string drive = host_count == 0 ? (label.empty() ? drive_name(record.target) : label)
                            : label.empty() ? system
                                            : fmt::format("{} ({})", label, system);
  if (record.status != results::Status::complete)
    data.notes.push_back(
        fmt::format("{}: run {} is {}: {}", source, record.run_id, results::to_string(record.status), record.reason));
  // What the record says about its own numbers is said beside them: a warning or a failed check
  // does not change a complete test's place, but a reader must see it (docs/reporter.md).
  for (const auto& w : record.warnings)
    data.notes.push_back(fmt::format("{}: run {}: warning: {}", source, record.run_id, w));
  for (const auto& t : record.tests) {
    if (t.status == results::Status::skipped) {
      data.notes.push_back(fmt::format("{}: test {} was skipped: {}", source, t.name, t.reason));
      continue;
    }
    if (t.discarded) {
      // `repeat_between: discard-first`: the repetition that brought the drive to its state is
      // not a repetition of the measurement (docs/results.md "Repetitions").
      data.notes.push_back(fmt::format("{}: test {} repetition {} is discarded by the protocol: not counted", source,
                                       t.name, t.repetition));
      continue;
    }
    Result r;
    r.drive = drive;
    r.test = assign_variant(data, hosts_test_key(test_key(t.name), host_count), t.name, t.kind,
                            workload_config(t.config), source);
    r.kind = t.kind;
    r.origin = Origin::measured;
    r.status = std::string(results::to_string(t.status));
    r.reason = t.reason;
    if (t.status == results::Status::running) {
      // Only a provisional record (the `<run_id>.json` rewritten while the run goes) says
      // `running`; read after the fact, its process was killed (SIGKILL, crash, power loss) or is
      // still measuring. Either way the test did not finish: it is interrupted, as after Ctrl-C.
      r.status = std::string(results::to_string(results::Status::interrupted));
      r.reason =
          "the record ends before this test's end (its process was killed, or the run is still going); "
          "intervals so far are kept";
    }
    r.source = source;
    r.run_id = record.run_id;
    r.metrics = t.metrics;
    r.intervals = t.intervals;
    if (host_count > 0) {
      r.hosts = host_count;
      r.per_host = hosts_of(hosts, t);
      for (const auto& g : t.groups)
        if (g.name == kLabConventionsGroup) r.lab_conventions = g.metrics;
    }
    read_curve(t.details, r);
    r.health = drive_health(t);
    for (results::CheckSeen& c : results::checks_seen(t))
      if (c.outcome == "warning" || c.outcome == "failed") r.checks.push_back(std::move(c));
    if (r.partial())
      data.notes.push_back(fmt::format("{}: test {} on {} is {}{}{}", source, t.name, drive, r.status,
                                       r.reason.empty() ? "" : ": ", r.reason));
    for (const auto& w : t.warnings)
      data.notes.push_back(fmt::format("{}: test {} on {}: warning: {}", source, t.name, drive, w));
    for (const auto& c : t.checks)
      if (!c.passed)
        data.notes.push_back(fmt::format("{}: test {} on {}: check {} failed{}{}", source, t.name, drive, c.name,
                                         c.detail.empty() ? "" : ": ", c.detail));
    data.results.push_back(std::move(r));
  }
}

}  // namespace drivelab::report
