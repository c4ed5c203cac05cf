// The record model and its JSON form (drivelab.run/1). The key order written here is the order
// documented in docs/results.md; change both together.
#include "drivelab/results/record.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "drivelab/core/errors.hpp"
#include "json_read.hpp"

namespace drivelab::results {

// The path-aware accessors of json_read.hpp are this file's vocabulary.
using namespace detail;  // NOLINT(google-build-using-namespace)

Status status_from_string(std::string_view s) {
  if (const auto v = value_of(kStatusNames, s)) return *v;
  throw std::invalid_argument("unknown status '" + std::string(s) + "'");
}

const Metric* TestRecord::find_metric(std::string_view metric_name) const noexcept {
  for (const Metric& m : metrics) {
    if (m.name == metric_name) return &m;
  }
  return nullptr;
}

bool is_live(const RunRecord& r) noexcept {
  if (r.status == Status::running || r.reason == kLiveRecordReason) return true;
  return std::any_of(r.tests.begin(), r.tests.end(), [](const TestRecord& t) { return t.status == Status::running; });
}

std::size_t interval_count(const RunRecord& r) noexcept {
  std::size_t n = 0;
  for (const TestRecord& t : r.tests) n += t.intervals.size();
  return n;
}

bool holds_at_least(const RunRecord& a, const RunRecord& b) noexcept {
  return a.tests.size() >= b.tests.size() && interval_count(a) >= interval_count(b);
}

std::optional<double> histogram_figure(const LatencyHistogram& h, std::string_view figure, std::string_view unit) {
  double per_unit_ns = 0;
  if (unit == "ns") {
    per_unit_ns = 1;
  } else if (unit == "us") {
    per_unit_ns = 1e3;
  } else if (unit == "ms") {
    per_unit_ns = 1e6;
  } else if (unit == "s") {
    per_unit_ns = 1e9;
  } else {
    return std::nullopt;
  }
  if (figure == "avg") return h.mean() / per_unit_ns;
  if (figure == "min") return static_cast<double>(h.min()) / per_unit_ns;
  if (figure == "max") return static_cast<double>(h.max()) / per_unit_ns;
  if (figure == "sum") return h.sum_ns() / per_unit_ns;
  if (figure.size() < 2 || figure[0] != 'p') return std::nullopt;
  const std::string q(figure.substr(1));
  std::size_t used = 0;
  double p = 0;
  try {
    p = std::stod(q, &used);
  } catch (const std::logic_error&) {
    return std::nullopt;
  }
  if (used != q.size() || !(p >= 0 && p <= 100)) return std::nullopt;
  return static_cast<double>(h.percentile(p)) / per_unit_ns;
}

// ---- writing ---------------------------------------------------------------------------------

Json to_json(const Interval& i) {
  Json values = Json::object();
  for (const auto& [name, v] : i.values) values[name] = number_or_null(v);
  Json out{{"t_s", number_or_null(i.t_s)}, {"duration_s", number_or_null(i.duration_s)}, {"values", std::move(values)}};
  if (!i.histograms.empty()) {
    Json histograms = Json::object();
    for (const auto& [name, h] : i.histograms) histograms[name] = to_json(h);
    out["histograms"] = std::move(histograms);
  }
  return out;
}

Json to_json(const LatencyHistogram& exact) {
  // The record carries the sums as doubles, and a reader rebuilds mean and stddev from them
  // (LatencyHistogram::from_bins). Writing the figures of that same rebuild makes a read-back
  // reproduce them bit for bit; they differ from the exact 128-bit ones only in the last ulps.
  const std::vector<LatencyHistogram::Bin> bin_list = exact.bins();
  const LatencyHistogram h = LatencyHistogram::from_bins(bin_list, exact.min(), exact.max(), exact.sum_ns(),
                                                         exact.sum_sq_ns(), exact.saturated());
  Json bins = Json::array();
  for (const LatencyHistogram::Bin& b : bin_list) {
    bins.push_back(Json::array({b.lower_ns, b.upper_ns, b.count}));
  }
  return Json{{"count", h.count()},
              {"saturated", h.saturated()},
              {"min_ns", h.min()},
              {"max_ns", h.max()},
              {"mean_ns", number_or_null(h.mean())},
              {"stddev_ns", number_or_null(h.stddev())},
              {"sum_ns", number_or_null(h.sum_ns())},
              {"sum_sq_ns", number_or_null(h.sum_sq_ns())},
              {"percentiles_ns",
               {{"p50", h.percentile(50)},
                {"p90", h.percentile(90)},
                {"p95", h.percentile(95)},
                {"p99", h.percentile(99)},
                {"p99.9", h.percentile(99.9)},
                {"max", h.max()}}},
              {"bins", std::move(bins)}};
}

namespace {

Json to_json(const MetricSource& of) { return Json{{"histogram", of.histogram}, {"figure", of.figure}}; }

}  // namespace

Json to_json(const TestRecord& t) {
  Json metrics = Json::object();
  for (const Metric& m : t.metrics) {
    Json metric{{"value", number_or_null(m.value)}, {"unit", m.unit}, {"description", m.description}};
    if (m.of) metric["of"] = to_json(*m.of);
    metrics[m.name] = std::move(metric);
  }
  Json groups = Json::object();
  for (const MetricGroup& g : t.groups) {
    Json group = Json::object();
    for (const Metric& m : g.metrics) {
      Json metric{{"value", number_or_null(m.value)}, {"unit", m.unit}};
      // Group metrics repeat per transaction type / operation: the description only when set.
      if (!m.description.empty()) metric["description"] = m.description;
      if (m.of) metric["of"] = to_json(*m.of);
      group[m.name] = std::move(metric);
    }
    groups[g.name] = std::move(group);
  }
  Json histograms = Json::object();
  for (const auto& [name, h] : t.histograms) histograms[name] = to_json(h);
  Json intervals = Json::array();
  for (const Interval& i : t.intervals) intervals.push_back(to_json(i));
  Json checks = Json::array();
  for (const Check& c : t.checks) {
    checks.push_back(Json{{"name", c.name}, {"passed", c.passed}, {"detail", c.detail}});
  }
  Json out{{"name", t.name}, {"kind", t.kind}};
  if (t.repetition > 0) {
    out["repetition"] = t.repetition;
    out["seed"] = t.seed;
  }
  if (t.discarded) out["discarded"] = true;
  out.update(Json{{"status", to_string(t.status)},
                  {"reason", t.reason},
                  {"started_at", t.started_at},
                  {"finished_at", t.finished_at},
                  {"warmup_s", number_or_null(t.warmup_s)},
                  {"measured_s", number_or_null(t.measured_s)}});
  if (t.barriers.is_object() && !t.barriers.empty()) out["barriers"] = t.barriers;
  out["config"] = t.config;
  out["metrics"] = std::move(metrics);
  out["groups"] = std::move(groups);
  out["histograms"] = std::move(histograms);
  out["intervals"] = std::move(intervals);
  out["checks"] = std::move(checks);
  out["warnings"] = t.warnings;
  out["details"] = t.details;
  return out;
}

Json to_json(const RunRecord& r) {
  Json tests = Json::array();
  for (const TestRecord& t : r.tests) tests.push_back(to_json(t));
  Json out{{"schema", r.schema},
           {"run_id", r.run_id},
           {"status", to_string(r.status)},
           {"reason", r.reason},
           {"protocol", r.protocol},
           {"protocol_file", r.protocol_file},
           {"started_at", r.started_at},
           {"finished_at", r.finished_at},
           {"seed", r.seed},
           {"command_line", r.command_line},
           {"tool", r.tool},
           {"host", r.host},
           {"target", r.target}};
  if (!r.cohort.is_null()) out["cohort"] = r.cohort;
  out["config"] = r.config;
  if (!r.repeat.is_null()) out["repeat"] = r.repeat;
  out["warnings"] = r.warnings;
  if (r.hosts.is_array() && !r.hosts.empty()) out["hosts"] = r.hosts;
  if (r.repetitions.is_array() && !r.repetitions.empty()) out["repetitions"] = r.repetitions;
  if (r.details.is_object() && !r.details.empty()) out["details"] = r.details;
  out["tests"] = std::move(tests);
  return out;
}

// ---- reading ---------------------------------------------------------------------------------

namespace {

std::vector<std::string> strings_at(const Json& j, const std::string& path) {
  expect(j.is_array(), j, path, "an array of strings");
  std::vector<std::string> out;
  out.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) out.push_back(as_string(j[i], at_index(path, i)));
  return out;
}

Metric metric_from_json(const std::string& name, const Json& j, const std::string& path) {
  object_at(j, path);
  Metric m;
  m.name = name;
  m.value = as_double(required(j, "value", path), join(path, "value"));
  m.unit = as_string(required(j, "unit", path), join(path, "unit"));
  read_opt(j, "description", path, m.description);
  if (const Json* of = member(j, "of")) {
    const std::string opath = join(path, "of");
    object_at(*of, opath);
    m.of = MetricSource{as_string(required(*of, "histogram", opath), join(opath, "histogram")),
                        as_string(required(*of, "figure", opath), join(opath, "figure"))};
  }
  return m;
}

LatencyHistogram histogram_at(const Json& j, const std::string& path);

Interval interval_at(const Json& j, const std::string& path) {
  object_at(j, path);
  Interval i;
  i.t_s = as_double(required(j, "t_s", path), join(path, "t_s"));
  i.duration_s = as_double(required(j, "duration_s", path), join(path, "duration_s"));
  const std::string vpath = join(path, "values");
  const Json& values = object_at(required(j, "values", path), vpath);
  for (const auto& [name, v] : values.items()) {
    i.values.emplace_back(name, as_double(v, join(vpath, name)));
  }
  if (const Json* h = member(j, "histograms")) {
    const std::string hpath = join(path, "histograms");
    for (const auto& [name, v] : object_at(*h, hpath).items()) {
      i.histograms.insert_or_assign(name, histogram_at(v, join(hpath, name)));
    }
  }
  return i;
}

LatencyHistogram histogram_at(const Json& j, const std::string& path) {
  object_at(j, path);
  const std::string bpath = join(path, "bins");
  const Json& bins_json = required(j, "bins", path);
  expect(bins_json.is_array(), bins_json, bpath, "an array of [lower_ns, upper_ns, count]");
  std::vector<LatencyHistogram::Bin> bins;
  bins.reserve(bins_json.size());
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < bins_json.size(); ++i) {
    const Json& b = bins_json[i];
    const std::string p = at_index(bpath, i);
    expect(b.is_array() && b.size() == 3, b, p, "[lower_ns, upper_ns, count]");
    LatencyHistogram::Bin bin{as_int64(b[0], at_index(p, 0)), as_int64(b[1], at_index(p, 1)),
                              as_uint64(b[2], at_index(p, 2))};
    if (bin.lower_ns < 0 || bin.upper_ns < bin.lower_ns) malformed(p, "bin bounds out of order");
    total += bin.count;
    bins.push_back(bin);
  }
  const std::uint64_t count = as_uint64(required(j, "count", path), join(path, "count"));
  if (count != total) {
    malformed(join(path, "count"),
              std::to_string(count) + " is not the sum of the bin counts (" + std::to_string(total) + ")");
  }
  // The writer's saturated samples are its last bin (LatencyHistogram::bins()), above the range of
  // the layout it wrote with: 2^42 ns now, 2^36 ns before issue 15. They stay saturated whatever
  // that range was (from_bins), so a percentile among them is never read lower than written.
  std::uint64_t saturated = 0;
  if (const Json* sat = member(j, "saturated")) {
    const std::string spath = join(path, "saturated");
    saturated = as_uint64(*sat, spath);
    if (saturated > 0 && (bins.empty() || bins.back().count != saturated))
      malformed(spath, std::to_string(saturated) + " saturated samples, but the last bin holds " +
                           (bins.empty() ? std::string("none") : std::to_string(bins.back().count)));
  }
  return LatencyHistogram::from_bins(bins, as_int64(required(j, "min_ns", path), join(path, "min_ns")),
                                     as_int64(required(j, "max_ns", path), join(path, "max_ns")),
                                     as_double(required(j, "sum_ns", path), join(path, "sum_ns")),
                                     as_double(required(j, "sum_sq_ns", path), join(path, "sum_sq_ns")), saturated);
}

TestRecord test_at(const Json& j, const std::string& path) {
  object_at(j, path);
  TestRecord t;
  t.name = as_string(required(j, "name", path), join(path, "name"));
  t.status = as_status(required(j, "status", path), join(path, "status"));
  read_opt(j, "kind", path, t.kind);
  if (const Json* rep = member(j, "repetition")) {
    const std::int64_t k = as_int64(*rep, join(path, "repetition"));
    if (k < 1 || k > 100000)
      malformed(join(path, "repetition"), std::to_string(k) + " is not a repetition (1, 2, ...)");
    t.repetition = static_cast<int>(k);
  }
  if (const Json* d = member(j, "discarded")) t.discarded = as_bool(*d, join(path, "discarded"));
  if (const Json* s = member(j, "seed")) t.seed = as_uint64(*s, join(path, "seed"));
  read_opt(j, "reason", path, t.reason);
  read_opt(j, "started_at", path, t.started_at);
  read_opt(j, "finished_at", path, t.finished_at);
  read_opt(j, "warmup_s", path, t.warmup_s);
  read_opt(j, "measured_s", path, t.measured_s);
  if (const Json* b = member(j, "barriers")) t.barriers = object_at(*b, join(path, "barriers"));
  if (const Json* c = member(j, "config")) t.config = *c;
  if (const Json* m = member(j, "metrics")) {
    const std::string mpath = join(path, "metrics");
    for (const auto& [name, v] : object_at(*m, mpath).items()) {
      t.metrics.push_back(metric_from_json(name, v, join(mpath, name)));
    }
  }
  if (const Json* g = member(j, "groups")) {
    const std::string gpath = join(path, "groups");
    for (const auto& [group_name, group] : object_at(*g, gpath).items()) {
      const std::string p = join(gpath, group_name);
      MetricGroup mg{group_name, {}};
      for (const auto& [name, v] : object_at(group, p).items()) {
        mg.metrics.push_back(metric_from_json(name, v, join(p, name)));
      }
      t.groups.push_back(std::move(mg));
    }
  }
  if (const Json* h = member(j, "histograms")) {
    const std::string hpath = join(path, "histograms");
    for (const auto& [name, v] : object_at(*h, hpath).items()) {
      t.histograms.insert_or_assign(name, histogram_at(v, join(hpath, name)));
    }
  }
  if (const Json* iv = member(j, "intervals")) {
    const std::string ipath = join(path, "intervals");
    expect(iv->is_array(), *iv, ipath, "an array");
    for (std::size_t i = 0; i < iv->size(); ++i) {
      t.intervals.push_back(interval_at((*iv)[i], at_index(ipath, i)));
    }
  }
  if (const Json* c = member(j, "checks")) {
    const std::string cpath = join(path, "checks");
    expect(c->is_array(), *c, cpath, "an array");
    for (std::size_t i = 0; i < c->size(); ++i) {
      const std::string p = at_index(cpath, i);
      const Json& cj = object_at((*c)[i], p);
      Check check;
      check.name = as_string(required(cj, "name", p), join(p, "name"));
      check.passed = as_bool(required(cj, "passed", p), join(p, "passed"));
      read_opt(cj, "detail", p, check.detail);
      t.checks.push_back(std::move(check));
    }
  }
  if (const Json* w = member(j, "warnings")) t.warnings = strings_at(*w, join(path, "warnings"));
  if (const Json* d = member(j, "details")) t.details = object_at(*d, join(path, "details"));
  return t;
}

}  // namespace

Interval interval_from_json(const Json& j) { return interval_at(j, ""); }

LatencyHistogram histogram_from_json(const Json& j) { return histogram_at(j, ""); }

TestRecord test_record_from_json(const Json& j) { return test_at(j, ""); }

RunRecord run_record_from_json(const Json& j) {
  const std::string reads = "(this drivelab reads " + std::string(kSchema) + ")";
  if (!j.is_object()) {
    throw ConfigError(std::string("not a drivelab result record: expected a JSON object, got ") + j.type_name() + " " +
                      reads);
  }
  const Json* schema = member(j, "schema");
  if (schema == nullptr) throw ConfigError("not a drivelab result record: no 'schema' field " + reads);
  if (!schema->is_string() || schema->get<std::string>() != kSchema) {
    const std::string found = schema->is_string() ? schema->get<std::string>() : schema->dump();
    throw ConfigError("unsupported result schema '" + found + "' " + reads);
  }
  RunRecord r;
  r.schema = std::string(kSchema);
  r.run_id = as_string(required(j, "run_id", ""), "run_id");
  r.status = as_status(required(j, "status", ""), "status");
  read_opt(j, "reason", "", r.reason);
  read_opt(j, "protocol", "", r.protocol);
  read_opt(j, "protocol_file", "", r.protocol_file);
  read_opt(j, "started_at", "", r.started_at);
  read_opt(j, "finished_at", "", r.finished_at);
  if (const Json* s = member(j, "seed")) r.seed = as_uint64(*s, "seed");
  if (const Json* c = member(j, "command_line")) r.command_line = strings_at(*c, "command_line");
  if (const Json* v = member(j, "tool")) r.tool = *v;
  if (const Json* v = member(j, "host")) r.host = *v;
  if (const Json* v = member(j, "target")) r.target = *v;
  if (const Json* v = member(j, "cohort"); v != nullptr && !v->is_null()) r.cohort = object_at(*v, "cohort");
  if (const Json* v = member(j, "config")) r.config = *v;
  if (const Json* v = member(j, "repeat"); v != nullptr && !v->is_null()) r.repeat = object_at(*v, "repeat");
  if (const Json* w = member(j, "warnings")) r.warnings = strings_at(*w, "warnings");
  if (const Json* h = member(j, "hosts")) {
    expect(h->is_array(), *h, "hosts", "an array");
    r.hosts = *h;
  }
  if (const Json* rs = member(j, "repetitions")) {
    expect(rs->is_array(), *rs, "repetitions", "an array");
    r.repetitions = *rs;
  }
  if (const Json* d = member(j, "details")) r.details = object_at(*d, "details");
  const Json& tests = required(j, "tests", "");
  expect(tests.is_array(), tests, "tests", "an array");
  for (std::size_t i = 0; i < tests.size(); ++i) r.tests.push_back(test_at(tests[i], at_index("tests", i)));
  return r;
}

}  // namespace drivelab::results
