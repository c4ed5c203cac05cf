#include "drivelab/emulators/vdbench_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/emulators/region.hpp"
#include "drivelab/results/config_json.hpp"
#include "drivelab/runner/engine_key.hpp"

namespace drivelab::emulators {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kSector = 512;
constexpr std::uint64_t kMaxXfer = std::uint64_t{64} << 20;
constexpr std::uint64_t kMaxBufferBytes = std::uint64_t{4} << 30;  // threads x largest xfersize
constexpr double kPctTolerance = 0.01;

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::optional<double> to_number(std::string_view text) {
  std::string t = trim(text);
  if (!t.empty() && t.back() == '%') t.pop_back();
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// A number from a scalar node, or an error at the node.
std::optional<double> number_at(const config::Node& n, std::string_view what) {
  if (!n.is_scalar()) {
    n.error(fmt::format("expected {}, found {}", what,
                        n.is_map()        ? "a mapping"
                        : n.is_sequence() ? "a sequence"
                                          : "nothing"));
    return std::nullopt;
  }
  const auto v = to_number(n.scalar());
  if (!v) n.error(fmt::format("expected {}, found '{}'", what, n.scalar()));
  return v;
}

// [lo, hi] in % of the region (vdbench range=(lo,hi) / hotband=(lo,hi)).
bool decode_range(const config::Node& n, double& lo, double& hi) {
  const auto e = n.elements();
  if (!n.is_sequence() || e.size() != 2) {
    n.error("expected [low, high] in % of the region, e.g. [0, 10]");
    return false;
  }
  const auto a = number_at(e[0], "a percentage");
  const auto b = number_at(e[1], "a percentage");
  if (!a || !b) return false;
  if (*a < 0 || *b > 100 || *a >= *b) {
    n.error(fmt::format("expected 0 <= low < high <= 100, found [{}, {}]", *a, *b));
    return false;
  }
  lo = *a;
  hi = *b;
  return true;
}

void check_xfer_sizes(const config::Node& n, const std::vector<XferShare>& shares) {
  double total = 0;
  for (const auto& s : shares) {
    total += s.pct;
    if (s.size_bytes < kSector || s.size_bytes > kMaxXfer || s.size_bytes % kSector != 0)
      n.error(fmt::format("xfersize must be a multiple of 512 bytes between 512 B and 64 MiB, found {}",
                          format_size(s.size_bytes)));
    if (!(s.pct > 0)) n.error(fmt::format("every xfersize share must be above 0%, found {}", s.pct));
  }
  if (std::abs(total - 100.0) > kPctTolerance)
    n.error(fmt::format("xfersize shares must add up to 100, found {}", total));
}

std::vector<XferShare> decode_xfersize(const config::Node& n) {
  std::vector<XferShare> out;
  if (n.is_sequence()) {
    for (const config::Node& e : n.elements()) {
      XferShare s;
      config::MapReader r(e);
      r.size("size", s.size_bytes, {}, /*required=*/true);
      r.number("pct", s.pct, {.min = 0.0, .max = 100.0}, /*required=*/true);
      r.finish();
      out.push_back(s);
    }
  } else if (n.is_scalar()) {
    try {
      out = parse_xfersize(n.scalar());
    } catch (const std::invalid_argument& e) {
      n.error(e.what());
      return {XferShare{}};
    }
  } else {
    n.error("expected a size, a distribution \"(4k,25,8k,75)\" or a list of {size, pct}");
    return {XferShare{}};
  }
  if (out.empty()) {
    n.error("the xfersize distribution is empty");
    return {XferShare{}};
  }
  check_xfer_sizes(n, out);
  return out;
}

WorkloadDef decode_workload(const config::Node& n, std::size_t index) {
  WorkloadDef w;
  w.name = fmt::format("wd{}", index + 1);
  config::MapReader r(n);
  r.string("name", w.name);
  if (const config::Node x = r.section("xfersize"); x.defined()) w.xfersize = decode_xfersize(x);
  r.percent("rdpct", w.rdpct);
  if (const config::Node s = r.section("seekpct"); s.defined()) {
    const std::string word = s.is_scalar() ? trim(s.scalar()) : std::string();
    if (word == "random") {
      w.seekpct = 100;
    } else if (word == "sequential" || word == "seq") {
      w.seekpct = 0;
    } else if (const auto v = number_at(s, "a percentage, 'random' or 'sequential'"); v) {
      if (*v < 0 || *v > 100)
        s.error(fmt::format("seekpct must be between 0 and 100, found {}", *v));
      else
        w.seekpct = *v;
    }
  }
  const config::Node range = r.section("range");
  const config::Node hotband = r.section("hotband");
  if (range.defined() && hotband.defined()) {
    hotband.error("range and hotband are mutually exclusive (both limit the workload to a part of the region)");
  } else if (range.defined()) {
    decode_range(range, w.range_lo_pct, w.range_hi_pct);
  } else if (hotband.defined()) {
    w.hotband = decode_range(hotband, w.range_lo_pct, w.range_hi_pct);
  }
  if (const config::Node s = r.section("skew"); s.defined()) {
    if (const auto v = number_at(s, "a percentage"); v) {
      if (!(*v > 0) || *v > 100)
        s.error(fmt::format("skew must be above 0 and at most 100, found {}", *v));
      else
        w.skew = v;
    }
  }
  r.number("compratio", w.compratio, {.min = 1.0, .max = 1000.0});
  r.number("dedupratio", w.dedupratio, {.min = 1.0, .max = 1'000'000.0});
  r.finish();
  return w;
}

// `slo: {p99_ms: 5, mean_ms: 2}`: either bound or both.
void decode_slo(const config::Node& n, VdbenchConfig& c) {
  if (!n.defined()) return;
  config::MapReader r(n);
  double p99 = 0, mean = 0;
  if (r.number("p99_ms", p99, {.min = 0.001, .max = 1e7})) c.slo_p99_ms = p99;
  if (r.number("mean_ms", mean, {.min = 0.001, .max = 1e7})) c.slo_mean_ms = mean;
  const bool given = n.is_map() && (n.child("p99_ms").defined() || n.child("mean_ms").defined());
  r.finish();
  if (!given && (n.is_map() || n.is_null()))  // anything else: MapReader said what it is
    n.error("slo needs p99_ms, mean_ms or both (ms of latency the curve's IOPS must stay within), e.g. {p99_ms: 5}");
}

}  // namespace

double WorkloadDef::mean_xfersize_bytes() const noexcept {
  double m = 0;
  for (const auto& s : xfersize) m += static_cast<double>(s.size_bytes) * s.pct / 100.0;
  return m;
}

std::vector<XferShare> parse_xfersize(std::string_view text) {
  std::string t = trim(text);
  if (t.empty()) throw std::invalid_argument("expected a size or a distribution such as (4k,25,8k,75), found nothing");
  if (t.front() != '(') return {XferShare{parse_size(t), 100.0}};
  if (t.back() != ')') throw std::invalid_argument(fmt::format("unbalanced parenthesis in '{}'", t));
  std::vector<std::string> parts;
  std::string cur;
  for (char c : t.substr(1, t.size() - 2)) {
    if (c == ',') {
      parts.push_back(trim(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  parts.push_back(trim(cur));
  if (parts.size() == 3)
    throw std::invalid_argument(
        "xfersize=(min,max,align) is not supported; give pairs of size and percentage, e.g. (4k,25,8k,75)");
  if (parts.size() % 2 != 0)
    throw std::invalid_argument(
        fmt::format("an xfersize distribution is pairs of size and percentage, e.g. "
                    "(4k,25,8k,75); found {} values",
                    parts.size()));
  std::vector<XferShare> out;
  for (std::size_t i = 0; i < parts.size(); i += 2) {
    XferShare s;
    s.size_bytes = parse_size(parts[i]);
    const auto pct = to_number(parts[i + 1]);
    if (!pct) throw std::invalid_argument(fmt::format("'{}' is not a percentage", parts[i + 1]));
    s.pct = *pct;
    out.push_back(s);
  }
  return out;
}

std::vector<double> effective_skews(const std::vector<WorkloadDef>& workloads) {
  double given = 0;
  std::size_t unset = 0;
  for (const auto& w : workloads) {
    if (w.skew)
      given += *w.skew;
    else
      ++unset;
  }
  const double each = unset > 0 ? std::max(0.0, 100.0 - given) / static_cast<double>(unset) : 0.0;
  std::vector<double> out;
  out.reserve(workloads.size());
  for (const auto& w : workloads) out.push_back(w.skew ? *w.skew : each);
  return out;
}

VdbenchConfig decode_vdbench(const config::Node& section) {
  VdbenchConfig c;
  config::MapReader r(section);
  runner::decode_engine(r, c.engine);
  const bool threads_ok = r.integer("threads", c.threads, {.min = 1, .max = 65536});
  if (const config::Node jobs = section.defined() ? section.child("jobs") : section;
      jobs.defined() && jobs.is_scalar() && trim(jobs.scalar()) == "auto") {
    r.accept("jobs");
    c.jobs = 0;
  } else {
    r.integer("jobs", c.jobs, {.min = 1, .max = 1024});
  }
  if (r.size("file_size", c.file_size_bytes, {.min = std::uint64_t{1} << 20}) && c.file_size_bytes % 4096 != 0)
    section.child("file_size")
        .error(fmt::format("file_size must be a multiple of 4 KiB, found {}", format_size(c.file_size_bytes)));
  c.region = decode_region(r.section("region"));
  r.boolean("direct", c.direct);
  r.boolean("keep_file", c.keep_file);
  if (const config::Node rate = r.section("iorate"); rate.defined()) {
    const std::string word = rate.is_scalar() ? trim(rate.scalar()) : std::string();
    if (word == "max") {
      c.iorate = IorateMode::max;
    } else if (word == "curve") {
      c.iorate = IorateMode::curve;
    } else if (const auto v = number_at(rate, "'max', 'curve' or a number of IOPS"); v) {
      if (!(*v > 0) || *v > 1e9) {
        rate.error(fmt::format("iorate must be 'max', 'curve' or between 1 and 1e9 IOPS, found {}", *v));
      } else {
        c.iorate = IorateMode::fixed;
        c.iorate_iops = *v;
      }
    }
  }
  if (const config::Node curve = r.section("curve"); curve.defined()) {
    if (std::vector<double> pts = runner::decode_curve(curve); !pts.empty()) c.curve = std::move(pts);
  }
  // curve, stopcurve and slo are kept but unused with iorate max or N, so that a curve profile can be
  // turned into a max run with one override (--set 'tests[*].vdbench.iorate=max').
  r.number("stopcurve", c.stopcurve_ms, {.min = 0.001, .max = 1e7});
  decode_slo(r.section("slo"), c);
  r.choice("distribution", c.distribution, kArrivalDistributionNames);
  std::string ss;
  if (r.string("ss", ss)) {
    try {
      c.ss = SteadyStateCriterion::parse(ss);
    } catch (const std::invalid_argument& e) {
      section.child("ss").error(e.what());
    }
  }
  r.duration("ss_dur", c.ss_dur, {.min = 2s, .max = std::chrono::hours(24)});
  r.duration("ss_ramp", c.ss_ramp, {.min = 0s, .max = std::chrono::hours(24)});
  r.boolean("ss_stop", c.ss_stop);
  std::uint64_t unit = c.dedupunit_bytes;
  if (r.size("dedupunit", unit, {.min = kSector, .max = std::uint64_t{1} << 20})) {
    if (unit % kSector != 0)
      section.child("dedupunit")
          .error(fmt::format("dedupunit must be a multiple of 512 bytes, found {}", format_size(unit)));
    else
      c.dedupunit_bytes = static_cast<std::uint32_t>(unit);
  }
  const std::vector<config::Node> wds = r.sequence("workloads");
  r.finish();
  // `workloads: []`, `workloads: ~` and a `workloads:` whose items are all commented out ran the
  // default workload as if the key were absent: a read test where a write mix was meant.
  if (const config::Node wn = section.child("workloads"); wds.empty() && (wn.is_sequence() || wn.is_null()))
    wn.error(
        fmt::format("workloads {}: give at least one workload (rdpct, seekpct, xfersize, skew), or leave the key "
                    "out for the default (one workload: 100% random 4 KiB reads)",
                    wn.is_sequence() ? "is an empty list" : "has no value (an empty key or '~', YAML's null)"));

  if (!wds.empty()) {
    c.workloads.clear();
    for (std::size_t i = 0; i < wds.size(); ++i) c.workloads.push_back(decode_workload(wds[i], i));
    const config::Node wn = section.child("workloads");
    for (std::size_t i = 0; i < c.workloads.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (c.workloads[i].name == c.workloads[j].name)
          wds[i].error(fmt::format("duplicate workload name '{}'", c.workloads[i].name));
    double given = 0;
    std::size_t unset = 0;
    for (const auto& w : c.workloads) {
      if (w.skew)
        given += *w.skew;
      else
        ++unset;
    }
    if (given > 100 + kPctTolerance)
      wn.error(fmt::format("the skews add up to {}%, more than 100%", given));
    else if (unset == 0 && std::abs(given - 100) > kPctTolerance)
      wn.error(fmt::format("the skews add up to {}%; when every workload has a skew they must add up to 100", given));
    else if (unset > 0 && given > 100 - kPctTolerance)
      wn.error(fmt::format("the skews given add up to {}%, leaving nothing for the {} workload(s) without a skew",
                           given, unset));
  }
  if (!c.ss && section.defined() && (section.child("ss_dur").defined() || section.child("ss_stop").defined()))
    section.error("ss_dur and ss_stop need a steady-state criterion (ss: iops_slope:1%)");

  std::uint64_t largest = 0;
  for (const auto& w : c.workloads)
    for (const auto& x : w.xfersize) largest = std::max(largest, x.size_bytes);
  if (threads_ok && largest * c.threads > kMaxBufferBytes)
    section.error(fmt::format("threads x largest xfersize = {} of I/O buffers is more than {}; lower one of them",
                              format_size(largest * c.threads), format_size(kMaxBufferBytes)));
  if (c.iorate == IorateMode::fixed && c.jobs > 0 && c.jobs > c.threads)
    section.child("jobs").error(fmt::format("jobs ({}) cannot exceed threads ({})", c.jobs, c.threads));
  return c;
}

results::Json to_json(const VdbenchConfig& c) {
  using results::Json;
  using results::size_json;
  Json rate;
  switch (c.iorate) {
    case IorateMode::max: rate = "max"; break;
    case IorateMode::curve: rate = "curve"; break;
    case IorateMode::fixed: rate = c.iorate_iops; break;
  }
  Json j{{"engine", c.engine},
         {"threads", c.threads},
         {"jobs", c.jobs == 0 ? Json("auto") : Json(c.jobs)},
         {"file_size", size_json(c.file_size_bytes)},
         {"direct", c.direct},
         {"keep_file", c.keep_file},
         {"iorate", rate}};
  if (c.region) j["region"] = region_json(c.region);
  if (c.iorate == IorateMode::curve) {
    j["curve"] = c.curve;
    if (c.stopcurve_ms > 0) j["stopcurve"] = c.stopcurve_ms;
    if (c.slo_p99_ms || c.slo_mean_ms) {
      Json slo = Json::object();
      if (c.slo_p99_ms) slo["p99_ms"] = *c.slo_p99_ms;
      if (c.slo_mean_ms) slo["mean_ms"] = *c.slo_mean_ms;
      j["slo"] = std::move(slo);
    }
  }
  j["distribution"] = to_string(c.distribution);
  if (c.ss) {
    j["ss"] = c.ss->to_string();
    j["ss_dur"] = format_duration(c.ss_dur);
    j["ss_ramp"] = format_duration(c.ss_ramp);
    j["ss_stop"] = c.ss_stop;
  }
  j["dedupunit"] = size_json(c.dedupunit_bytes);
  Json wds = Json::array();
  const std::vector<double> skews = effective_skews(c.workloads);
  for (std::size_t i = 0; i < c.workloads.size(); ++i) {
    const WorkloadDef& w = c.workloads[i];
    Json xs = Json::array();
    for (const auto& x : w.xfersize) xs.push_back(Json{{"size", size_json(x.size_bytes)}, {"pct", x.pct}});
    Json wj{{"name", w.name}, {"xfersize", xs}, {"rdpct", w.rdpct}, {"seekpct", w.seekpct}};
    wj[w.hotband ? "hotband" : "range"] = Json::array({w.range_lo_pct, w.range_hi_pct});
    wj["skew"] = skews[i];
    wj["compratio"] = w.compratio;
    wj["dedupratio"] = w.dedupratio;
    wds.push_back(std::move(wj));
  }
  j["workloads"] = std::move(wds);
  return j;
}

}  // namespace drivelab::emulators
