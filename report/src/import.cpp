// Importers: fio JSON, sysbench text, the published-results CSV, and file-type detection.
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/report/dataset.hpp"
#include "drivelab/results/journal.hpp"

namespace drivelab::report {
namespace {

using results::Json;

double num(const Json& j, const char* key) {
  if (!j.is_object()) return NAN;
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : NAN;
}

/// fio's p99: lat_ns percentiles when fio computed them (lat_percentiles=1), else clat_ns's
/// (fio's default). Returns NaN when neither is there.
double fio_p99_ns(const Json& dir) {
  for (const char* key : {"lat_ns", "clat_ns"}) {
    if (!dir.contains(key) || !dir[key].is_object()) continue;
    const Json& l = dir[key];
    if (l.contains("percentile") && l["percentile"].is_object() && l["percentile"].contains("99.000000"))
      return l["percentile"]["99.000000"].get<double>();
  }
  return NAN;
}

/// The metrics of one direction of a fio job ("read_", "write_" or "" for the job's main one), named
/// like drivelab's (results/catalogue.hpp) so they rank beside them; fio's JSON fields are read by
/// their own names (not our metrics).
void add_fio_direction(Result& r, const Json& dir, const std::string& prefix) {
  const double bw_bytes = num(dir, "bw_bytes");
  const double bw_kib = num(dir, "bw");
  r.metrics.push_back({prefix + "iops", num(dir, "iops"), "1/s", "fio iops"});
  r.metrics.push_back({prefix + "throughput_mb_s", std::isfinite(bw_bytes) ? bw_bytes / 1e6 : bw_kib * 0.001024, "MB/s",
                       "fio bw_bytes / 10^6 (MB = 10^6 bytes)"});
  const double mean_ns = dir.contains("lat_ns") ? num(dir["lat_ns"], "mean") : NAN;
  r.metrics.push_back({prefix + "latency_avg_us", mean_ns / 1000.0, "us", "fio lat_ns mean / 1000"});
  const bool lat_pct = dir.contains("lat_ns") && dir["lat_ns"].contains("percentile");
  r.metrics.push_back({prefix + "latency_p99_us", fio_p99_ns(dir) / 1000.0, "us",
                       lat_pct ? "fio lat_ns p99 / 1000" : "fio clat_ns p99 / 1000 (fio's default percentiles)"});
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(std::move(cur));
  return out;
}

constexpr std::string_view kPublishedHeader = "drive,capacity,source,test,metric,value,unit,vms,note";

}  // namespace

void add_fio_json(Dataset& data, const Json& fio, const std::string& source, const std::string& label) {
  if (!fio.is_object() || !fio.contains("fio version") || !fio.contains("jobs") || !fio["jobs"].is_array())
    throw ConfigError(fmt::format("{}: not fio JSON output (no 'fio version' and 'jobs')", source));
  const std::string version = fio["fio version"].is_string() ? fio["fio version"].get<std::string>() : "fio";
  for (const Json& job : fio["jobs"]) {
    Result r;
    r.drive = label.empty() ? "fio" : label;
    const std::string name = job.value("jobname", std::string("fio"));
    r.test = test_key(name);
    r.kind = "fio";
    r.origin = Origin::fio;
    r.source = source;
    r.run_id = version;
    if (job.value("error", 0) != 0) {
      r.status = "failed";
      r.reason = fmt::format("fio job error {}", job.value("error", 0));
    }
    const bool reads = job.contains("read") && num(job["read"], "total_ios") > 0;
    const bool writes = job.contains("write") && num(job["write"], "total_ios") > 0;
    if (reads && writes) {
      add_fio_direction(r, job["read"], "read_");
      add_fio_direction(r, job["write"], "write_");
    } else if (writes) {
      add_fio_direction(r, job["write"], "");
    } else {
      add_fio_direction(r, job.contains("read") ? job["read"] : Json::object(), "");
    }
    data.results.push_back(std::move(r));
  }
}

void add_sysbench_text(Dataset& data, const std::string& text, const std::string& source, const std::string& label) {
  static const std::regex per_sec(
      R"(^\s*(transactions|queries|events per second):\s+([0-9.]+)\s*(\(([0-9.]+) per sec\.\))?)");
  static const std::regex lat_line(R"(^\s*(min|avg|max|([0-9.]+)th percentile):\s+([0-9.]+)\s*$)");
  static const std::regex interval_line(R"(^\[\s*([0-9.]+)s\s*\]\s*thds:\s*[0-9]+\s+(tps|eps):\s*([0-9.]+)(.*)$)");
  static const std::regex qps_re(R"(qps:\s*([0-9.]+))");
  static const std::regex lat_re(R"(lat \(ms,([0-9.]+)%\):\s*([0-9.]+))");
  Result r;
  r.drive = label.empty() ? "sysbench" : label;
  r.kind = "sysbench";
  r.origin = Origin::sysbench;
  r.source = source;
  bool oltp = false, any = false, in_latency = false;
  double last_t = 0;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.starts_with("SQL statistics:")) oltp = true;
    if (line.starts_with("Latency (ms):")) {
      in_latency = true;
      continue;
    }
    if (std::regex_search(line, m, interval_line)) {
      results::Interval iv;
      const double t = std::stod(m[1]);
      iv.t_s = t;
      iv.duration_s = t - last_t;
      last_t = t;
      iv.values.emplace_back(m[2].str(), std::stod(m[3]));
      const std::string rest = m[4];
      std::smatch mm;
      if (std::regex_search(rest, mm, qps_re)) iv.values.emplace_back("qps", std::stod(mm[1]));
      // sysbench's "lat (ms,NN%)" under the catalogue's latency prefix (results/catalogue.hpp):
      // the name is built from sysbench's text, which is not one of our metrics.
      if (std::regex_search(rest, mm, lat_re))
        iv.values.emplace_back(fmt::format("latency_p{}_ms", mm[1].str()), std::stod(mm[2]));
      r.intervals.push_back(std::move(iv));
      continue;
    }
    if (in_latency && std::regex_search(line, m, lat_line)) {
      const std::string what = m[1];
      const double v = std::stod(m[3]);
      if (what == "min")
        r.metrics.push_back({"latency_min_ms", v, "ms", "sysbench Latency (ms) min"});
      else if (what == "avg")
        r.metrics.push_back({"latency_avg_ms", v, "ms", "sysbench Latency (ms) avg"});
      else if (what == "max")
        r.metrics.push_back({"latency_max_ms", v, "ms", "sysbench Latency (ms) max"});
      else
        r.metrics.push_back({fmt::format("latency_p{}_ms", m[2].str()), v, "ms", fmt::format("sysbench {}", what)});
      any = true;
      continue;
    }
    if (std::regex_search(line, m, per_sec)) {
      const std::string what = m[1];
      if (what == "transactions" && m[4].matched)
        r.metrics.insert(r.metrics.begin(), {"tps", std::stod(m[4]), "1/s", "sysbench transactions per sec."});
      else if (what == "queries" && m[4].matched)
        r.metrics.push_back({"qps", std::stod(m[4]), "1/s", "sysbench queries per sec."});
      else if (what == "events per second")
        r.metrics.insert(r.metrics.begin(), {"eps", std::stod(m[2]), "1/s", "sysbench events per second"});
      any = true;
    }
  }
  if (!any)
    throw ConfigError(fmt::format("{}: no sysbench statistics found (expected sysbench 1.0 text output)", source));
  r.test = oltp ? "sysbench_oltp" : "sysbench";
  data.results.push_back(std::move(r));
}

void add_published_csv(Dataset& data, const std::string& text, const std::string& source) {
  static const std::map<std::string, std::pair<std::string, std::string>, std::less<>> rename{
      {"peak_iops", {"iops", "1/s"}},
      {"iops", {"iops", "1/s"}},
      {"latency_avg_at_peak", {"latency_avg_us", "us"}},
      {"tps", {"tps", "1/s"}},
      {"latency_avg", {"latency_avg_ms", "ms"}},
      {"latency_p99", {"latency_p99_ms", "ms"}},
      {"throughput", {"throughput_mb_s", "MB/s"}},
      {"seconds", {"seconds", "s"}},
      {"read_mb_s", {"read_mb_s", "MB/s"}},
      {"write_mb_s", {"write_mb_s", "MB/s"}}};
  std::istringstream in(text);
  std::string line;
  std::size_t line_no = 0;
  std::map<std::pair<std::string, std::string>, std::size_t> index;  // (drive, test) -> result
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_no == 1) {
      if (line != kPublishedHeader)
        throw ConfigError(
            fmt::format("{}:1: not the published-results header (expected '{}')", source, kPublishedHeader));
      continue;
    }
    if (line.empty()) continue;
    const auto f = split_csv_line(line);
    if (f.size() != 9) throw ConfigError(fmt::format("{}:{}: expected 9 fields, got {}", source, line_no, f.size()));
    double value = 0;
    try {
      std::size_t used = 0;
      value = std::stod(f[5], &used);
      if (used != f[5].size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw ConfigError(fmt::format("{}:{}: value '{}' is not a number", source, line_no, f[5]));
    }
    if (!std::isfinite(value) || value < 0)
      throw ConfigError(fmt::format("{}:{}: value '{}' must be a finite number >= 0 (published rates, times and sizes)",
                                    source, line_no, f[5]));
    std::string metric = f[4], unit = f[6];
    if (const auto it = rename.find(metric); it != rename.end()) {
      metric = it->second.first;
      unit = it->second.second;
    }
    if (better_for(metric, unit) == Better::unranked)
      data.notes.push_back(fmt::format("{}:{}: {} in unit '{}' is neither a rate nor a time: shown, not ranked", source,
                                       line_no, metric, unit));
    unsigned vms = 1;
    if (!f[7].empty()) {
      const auto [end, ec] = std::from_chars(f[7].data(), f[7].data() + f[7].size(), vms);
      if (ec != std::errc() || end != f[7].data() + f[7].size() || vms == 0)
        throw ConfigError(fmt::format("{}:{}: vms '{}' is not a count of VMs (empty, or a whole number >= 1)", source,
                                      line_no, f[7]));
    }
    const std::string test = hosts_test_key(test_key(f[3]), vms);
    const std::string drive = f[1].empty() ? f[0] : f[0] + " " + f[1];
    auto [it, inserted] = index.try_emplace({drive, test}, data.results.size());
    if (inserted) {
      Result r;
      r.drive = drive;
      r.test = test;
      r.kind = "published";
      r.origin = Origin::published;
      r.source = fmt::format("{}:{} ({})", source, line_no, f[2]);
      r.published = published_configuration(test_key(f[3]), f[2]);
      r.hosts = vms;
      data.results.push_back(std::move(r));
    }
    Result& r = data.results[it->second];
    r.metrics.push_back({metric, value, unit, f[8]});
  }
  // A published peak (IOPS with the average latency at the peak) is one point of the curve.
  for (auto& r : data.results) {
    if (r.origin != Origin::published || !r.curve.empty()) continue;
    const auto* iops = r.find_metric("iops");
    const auto* lat = r.find_metric("latency_avg_us");
    if (iops != nullptr && lat != nullptr) r.curve.push_back({iops->value, lat->value});
  }
}

void add_file(Dataset& data, const std::filesystem::path& path, const std::string& label) {
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (type == std::filesystem::file_type::character || type == std::filesystem::file_type::block ||
      type == std::filesystem::file_type::socket)  // /dev/zero would never end
    throw ConfigError(fmt::format("{}: a device or socket, not a result file", path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw EnvironmentError(fmt::format("{}: cannot read", path.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const std::string source = path.string();
  if (text.starts_with(kPublishedHeader)) {
    add_published_csv(data, text, source);
    return;
  }
  if (text.find("SQL statistics:") != std::string::npos || text.find("General statistics:") != std::string::npos) {
    add_sysbench_text(data, text, source, label);
    return;
  }
  results::refuse_journal_as_record(source, text);
  // fio may print notes before its JSON on the same stream: start at the first '{'.
  const auto brace = text.find('{');
  if (brace == std::string::npos)
    throw ConfigError(
        fmt::format("{}: not a drivelab record, fio JSON, sysbench output or published-results CSV", source));
  Json j;
  try {
    j = Json::parse(text.substr(brace));
  } catch (const Json::parse_error& e) {
    throw ConfigError(fmt::format("{}: invalid JSON: {}", source, e.what()));
  }
  if (j.is_object() && j.contains("fio version")) {
    add_fio_json(data, j, source, label);
    return;
  }
  add_record_json(data, j, source, label);
}

void add_record_json(Dataset& data, const Json& record, const std::string& source, const std::string& label) {
  try {
    // The multi-host keys `hosts` and `cohort` (docs/results.md) are read from the JSON itself.
    const auto key = [&record](const char* k) { return record.is_object() && record.contains(k) ? record[k] : Json(); };
    add_record(data, results::run_record_from_json(record), source, label, key("hosts"), key("cohort"));
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: {}", source, e.what()));
  }
}

}  // namespace drivelab::report
