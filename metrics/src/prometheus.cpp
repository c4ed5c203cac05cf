// The Prometheus exporter of --metrics-listen (docs/metrics.md is the reference of every name below:
// change both together; tests/integration/metrics_test.cpp scrapes a real run and checks them).
#include "drivelab/metrics/prometheus.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <charconv>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/summary.hpp"

namespace drivelab::metrics {
namespace {

using prometheus::Labels;
using results::Interval;
using results::Status;

constexpr std::array<std::string_view, 5> kPhases{"prepare", "warmup", "run", "verify", "done"};
/// The latency percentiles served (drivelab_interval_latency_seconds{percentile}). The label is not
/// "quantile": Prometheus keeps that one for summaries (promtool rejects it on a gauge).
constexpr std::array<double, 3> kPercentiles{50, 95, 99};
/// The outcomes of a physics check (telemetry/physics.hpp outcome_name), one series each.
constexpr std::array<std::string_view, 4> kCheckOutcomes{"passed", "warning", "failed", "not_applicable"};

/// A family the exporter serves besides the telemetry values' own series: its name and help
/// (docs/metrics.md). kCounters and kGauges list them in the order of CounterId and GaugeId, the
/// ids the exporter looks them up by (Impl::at), and register them in that order.
struct FamilySpec {
  const char* name;
  const char* help;
};

enum class CounterId : std::uint8_t { operations, bytes, errors, retries };
constexpr std::array<FamilySpec, 4> kCounters{{
    // Counters of the measured work, per test and phase (docs/metrics.md).
    {"drivelab_operations_total",
     "Operations completed: I/Os (io, vdbench, precondition, replay, vdi), transactions "
     "(tpcc, sysbench), frames (video)"},
    {"drivelab_bytes_total", "Bytes transferred (read + write)"},
    {"drivelab_errors_total", "Operations that failed (tpcc, sysbench)"},
    {"drivelab_retries_total", "Transactions retried after a deadlock or serialization failure (tpcc)"},
}};

enum class GaugeId : std::uint8_t {
  tps,
  tpmc,
  iops,
  bps,
  latency,
  latency_mean,
  lateness,
  value,
  end,
  length,
  run_info,
  run_status,
  run_tests,
  run_finished,
  run_progress,
  test_status,
  test_phase,
  test_progress,
  drive_temperature,
  drive_warning_temperature,
  drive_tmt_transitions,
  drive_tmt_seconds,
  drive_used,
  drive_media_errors,
  physics_check
};
constexpr std::array<FamilySpec, 25> kGauges{{
    // The last closed interval's figures.
    {"drivelab_interval_transactions_per_second", "Transactions per second (TPS) of the last interval"},
    {"drivelab_interval_tpmc", "New-Order transactions per minute (tpmC) of the last interval"},
    {"drivelab_interval_iops", "I/Os per second of the last interval"},
    {"drivelab_interval_bytes_per_second", "Bytes per second of the last interval"},
    {"drivelab_interval_latency_seconds",
     "Latency percentile of the last interval (the latency the interval line shows)"},
    {"drivelab_interval_latency_mean_seconds", "Mean latency of the last interval"},
    {"drivelab_interval_lateness_seconds",
     "Lateness percentile of the last interval: issue time after the intended start (open loop)"},
    {"drivelab_interval_value", "Every value of the last interval as the record names it (unit in the name)"},
    {"drivelab_interval_end_seconds", "End of the last interval, seconds into the measured phase"},
    {"drivelab_interval_duration_seconds", "Length of the last interval"},
    // Status and progress.
    {"drivelab_run_info", "The run: its record's run id and protocol (always 1)"},
    {"drivelab_run_status", "1 for the run's status, 0 for the others"},
    {"drivelab_run_tests", "Tests in the run"},
    {"drivelab_run_tests_finished", "Tests ended (any status)"},
    {"drivelab_run_progress_ratio", "Finished tests plus the running test's progress, over the tests"},
    {"drivelab_test_status", "1 for the test's status, 0 for the others"},
    {"drivelab_test_phase", "1 for the test's phase, 0 for the others"},
    {"drivelab_test_progress_ratio", "Seconds of the measured phase done over its duration (at most 1)"},
    // Drive health over each test (details.health) and the checks that a number is physical
    // (details.telemetry.checks), set when the test ends (docs/metrics.md "Drive health and checks").
    {"drivelab_drive_temperature_celsius",
     "The drive's composite temperature before and after the test's measured phase and the higher of the "
     "two (reading=before|after|max; nvme-cli or smartctl)"},
    {"drivelab_drive_warning_temperature_celsius", "The drive's warning composite temperature threshold (WCTEMP)"},
    {"drivelab_drive_thermal_management_transitions",
     "Thermal-management transitions (TMT1 + TMT2) the drive counted during the test: it throttled"},
    {"drivelab_drive_thermal_management_seconds", "Seconds the drive spent in thermal management during the test"},
    {"drivelab_drive_percentage_used_ratio",
     "NVMe Percentage Used after the test, as a ratio (1 = the rated endurance; may exceed 1)"},
    {"drivelab_drive_media_errors", "Media and data integrity errors the drive counted during the test"},
    {"drivelab_test_physics_check",
     "1 for the outcome of a check that the test's number is physical (check=link|direct_io|"
     "tpmc_per_warehouse|harness_ceiling), 0 for the other outcomes"},
}};
static_assert(kCounters.size() == static_cast<std::size_t>(CounterId::retries) + 1 &&
              kGauges.size() == static_cast<std::size_t>(GaugeId::physics_check) + 1);

// What each interval value is comes from the metric catalogue (results/catalogue.hpp): its kind,
// unit, traits and figure; no value's name is taken apart here. Old names (the catalogue's
// aliases, lat_* before issue 31) are read as their declarations.

std::optional<double> value_of(const Interval& iv, const results::MetricDef& def) {
  return results::value_of(iv.values, def);
}

/// The catalogued values of the interval that have `trait`, with their declarations.
std::vector<std::pair<const results::MetricDef*, double>> with_trait(const Interval& iv, results::Trait trait) {
  std::vector<std::pair<const results::MetricDef*, double>> out;
  for (const auto& [name, v] : iv.values)
    if (const auto* d = results::find_metric_def(name); d != nullptr && d->has(trait) && std::isfinite(v))
      out.emplace_back(d, v);
  return out;
}

/// The sum of the flagged values as counts: a count as is, a rate x the interval's length (a
/// count, when there is one, wins over rates: io's `ios` over its `iops`).
std::optional<double> count_of(const Interval& iv, results::Trait trait) {
  const auto values = with_trait(iv, trait);
  std::optional<double> counted, rates;
  for (const auto& [d, v] : values) {
    if (d->unit == results::Unit::count) counted = counted.value_or(0) + v;
    if (d->unit == results::Unit::per_s) rates = rates.value_or(0) + v;
  }
  if (counted) return counted;
  if (rates) return std::round(*rates * iv.duration_s);
  return std::nullopt;
}

/// The interval's operations: I/Os, transactions or frames (catalogue trait kOperationsFeed).
std::optional<double> operations_of(const Interval& iv) { return count_of(iv, results::kOperationsFeed); }

/// Bytes per second: the values of trait kBytesFeed (MB/s, MB = 10^6 bytes) added.
std::optional<double> bytes_per_second_of(const Interval& iv) {
  std::optional<double> sum;
  for (const auto& [d, v] : with_trait(iv, results::kBytesFeed))
    if (d->unit == results::Unit::mb_s) sum = sum.value_or(0) + v * 1e6;
  return sum;
}

std::optional<double> errors_of(const Interval& iv) { return count_of(iv, results::kErrorsFeed); }

}  // namespace

std::optional<TelemetrySeries> telemetry_series(const results::MetricDef& def) {
  if (!def.has(results::kDeviceLine) || !def.recorded_as(results::kInterval)) return std::nullopt;
  const std::string_view name = def.name;
  // iostat's abbreviations after "device_" spelled out: promtool reads a lone "d" as days.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kWords{{{"r", "read"},
                                                                                        {"w", "write"},
                                                                                        {"d", "discard"},
                                                                                        {"f", "flush"},
                                                                                        {"rrqm", "read_merged"},
                                                                                        {"wrqm", "write_merged"},
                                                                                        {"rareq", "read_request"},
                                                                                        {"wareq", "write_request"}}};
  const auto stem = [&](std::string_view suffix) -> std::optional<std::string> {
    if (!name.ends_with(suffix) || name.size() == suffix.size()) return std::nullopt;
    std::string s(name.substr(0, name.size() - suffix.size()));
    if (s.ends_with('_')) s.pop_back();
    constexpr std::string_view kDevice = "device_";
    if (s.starts_with(kDevice)) {
      const std::size_t end = s.find('_', kDevice.size());
      const std::string_view token = std::string_view(s).substr(kDevice.size(), end - kDevice.size());
      for (const auto& [abbreviation, word] : kWords)
        if (token == abbreviation) {
          s = std::string(kDevice) + std::string(word) + (end == std::string::npos ? "" : s.substr(end));
          break;
        }
    }
    return "drivelab_" + s;
  };
  // The record's unit suffix, the series' suffixes and the scale to base units.
  struct Rule {
    results::Unit unit;
    std::string_view suffix, gauge, counter;
    double scale;
  };
  static constexpr std::array<Rule, 5> kRules{{
      {results::Unit::per_s, "_s", "_per_second", "_total", 1},
      {results::Unit::mb_s, "mb_s", "_bytes_per_second", "_bytes_total", 1e6},
      {results::Unit::ms, "_ms", "_seconds", "", 1e-3},
      {results::Unit::pct, "_pct", "_ratio", "", 0.01},
      {results::Unit::celsius, "_c", "_celsius", "", 1},
  }};
  if (def.unit == results::Unit::bytes || def.unit == results::Unit::none)
    return TelemetrySeries{stem("").value_or("drivelab_" + std::string(name)), "", 1};
  for (const Rule& r : kRules) {
    if (r.unit != def.unit) continue;
    const auto base = stem(r.suffix);
    if (!base) return std::nullopt;
    return TelemetrySeries{*base + std::string(r.gauge), r.counter.empty() ? "" : *base + std::string(r.counter),
                           r.scale};
  }
  return std::nullopt;
}

std::string ListenAddress::to_string() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

ListenAddress parse_listen_address(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return ConfigError(
        fmt::format("--metrics-listen '{}': {} (expected HOST:PORT, e.g. 127.0.0.1:9464 or [::1]:9464, "
                    "or PORT alone for the loopback address)",
                    text, why));
  };
  ListenAddress a;
  std::string_view host, port;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      throw bad("an IPv6 address in brackets must be followed by :PORT");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) throw bad("an IPv6 address goes in brackets");
  } else {
    host = "127.0.0.1";
    port = text;
  }
  if (host == "localhost") host = "127.0.0.1";
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535)
    throw bad(fmt::format("'{}' is not a port number (0 to 65535)", port));
  a.port = static_cast<std::uint16_t>(value);
  in6_addr v6{};
  in_addr v4{};
  const std::string h(host);
  if (h.empty()) throw bad("the address is missing");
  if (::inet_pton(AF_INET, h.c_str(), &v4) != 1 && ::inet_pton(AF_INET6, h.c_str(), &v6) != 1)
    throw bad(fmt::format("'{}' is not a numeric IPv4 or IPv6 address", h));
  a.host = h;
  return a;
}

struct PrometheusExporter::Impl {
  explicit Impl(ExporterLabels l) : labels(std::move(l)) {
    for (const results::MetricDef* d : results::metric_defs()) {
      const auto s = telemetry_series(*d);
      if (!s) continue;
      // "record: device_aqu_sz" for a plain number, never "in " with nothing after it.
      const std::string record =
          d->unit_string().empty() ? std::string(d->name) : fmt::format("{} in {}", d->name, d->unit_string());
      const std::string help = fmt::format("{} ({} of the last interval; record: {})", d->description,
                                           s->scale == 1 ? "the value" : "in base units", record);
      Named n{&prometheus::BuildGauge().Name(s->gauge).Help(help).Labels(common()).Register(*registry), nullptr,
              s->scale};
      if (!s->counter.empty())
        n.counter =
            &prometheus::BuildCounter()
                 .Name(s->counter)
                 .Help(fmt::format("The {} behind {}, added up over the intervals: each interval's {} x its length, "
                                   "rounded to a whole count (record: {})",
                                   d->unit == results::Unit::mb_s ? "bytes" : "requests", s->gauge,
                                   d->unit == results::Unit::mb_s ? "byte rate" : "rate", record))
                 .Labels(common())
                 .Register(*registry);
      named.emplace(d, n);
    }
  }
  ExporterLabels labels;  ///< first: the families below carry them
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::unique_ptr<prometheus::Exposer> exposer;
  std::uint16_t port = 0;
  std::string host;

  /// The telemetry values' own series (telemetry_series), by declaration.
  struct Named {
    prometheus::Family<prometheus::Gauge>* gauge = nullptr;
    prometheus::Family<prometheus::Counter>* counter = nullptr;
    double scale = 1;
  };
  std::map<const results::MetricDef*, Named> named;

  std::mutex mu;  ///< the run's progress below (Families and metrics are thread-safe themselves)
  std::size_t tests = 0;
  std::size_t finished = 0;
  double current_progress = 0;

  Labels common() const { return {{"host", labels.host}, {"rank", std::to_string(labels.rank)}}; }

  /// One family of each spec, registered in the specs' order (`build`: prometheus::BuildCounter or BuildGauge).
  template <class Metric, std::size_t N>
  std::array<prometheus::Family<Metric>*, N> register_all(const std::array<FamilySpec, N>& specs,
                                                          prometheus::detail::Builder<Metric> (*build)()) {
    std::array<prometheus::Family<Metric>*, N> out{};
    for (std::size_t i = 0; i < N; ++i)
      out[i] = &build().Name(specs[i].name).Help(specs[i].help).Labels(common()).Register(*registry);
    return out;
  }
  std::array<prometheus::Family<prometheus::Counter>*, kCounters.size()> counters =
      register_all(kCounters, prometheus::BuildCounter);
  std::array<prometheus::Family<prometheus::Gauge>*, kGauges.size()> gauges =
      register_all(kGauges, prometheus::BuildGauge);
  /// The family of `c` (kCounters) or `g` (kGauges).
  prometheus::Family<prometheus::Counter>& at(CounterId c) { return *counters[static_cast<std::size_t>(c)]; }
  prometheus::Family<prometheus::Gauge>& at(GaugeId g) { return *gauges[static_cast<std::size_t>(g)]; }

  static Labels of(const runner::LiveTest& t) { return {{"test", std::string(t.name)}, {"kind", std::string(t.kind)}}; }
  static Labels of(const runner::LiveTest& t, std::string_view phase) {
    Labels l = of(t);
    l.emplace("phase", std::string(phase));
    return l;
  }
  static Labels with(Labels l, const char* key, std::string v) {
    l.emplace(key, std::move(v));
    return l;
  }

  void set_run_status(Status s) {
    for (const auto& [word, status] : results::kStatusNames)
      at(GaugeId::run_status).Add({{"status", std::string(word)}}).Set(status == s ? 1 : 0);
  }
  void set_status(const runner::LiveTest& t, Status s) {
    for (const auto& [word, status] : results::kStatusNames)
      at(GaugeId::test_status).Add(with(of(t), "status", std::string(word))).Set(status == s ? 1 : 0);
  }
  void set_phase(const runner::LiveTest& t, std::string_view phase) {
    for (std::string_view p : kPhases)
      at(GaugeId::test_phase).Add(with(of(t), "phase", std::string(p))).Set(p == phase ? 1 : 0);
  }
  void set_run_progress() {  // under mu
    at(GaugeId::run_finished).Add({}).Set(static_cast<double>(finished));
    at(GaugeId::run_progress)
        .Add({})
        .Set(tests > 0 ? std::min(1.0, (static_cast<double>(finished) + current_progress) / static_cast<double>(tests))
                       : 0.0);
  }
};

PrometheusExporter::PrometheusExporter(const ListenAddress& address, ExporterLabels labels)
    : impl_(std::make_unique<Impl>(std::move(labels))) {
  impl_->host = address.host;
  try {
    impl_->exposer = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", address.to_string(), "num_threads", "2"});
  } catch (const std::exception&) {
    // civetweb says only "null context when constructing CivetServer": bind a socket the same way
    // for the reason (EADDRINUSE, EADDRNOTAVAIL, EACCES).
    int err = 0;
    const bool v6 = address.host.find(':') != std::string::npos;
    UniqueFd s(::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!s) {
      err = errno;
    } else if (v6) {
      sockaddr_in6 sa{};
      sa.sin6_family = AF_INET6;
      sa.sin6_port = htons(address.port);
      ::inet_pton(AF_INET6, address.host.c_str(), &sa.sin6_addr);
      if (::bind(s.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) err = errno;
    } else {
      sockaddr_in sa{};
      sa.sin_family = AF_INET;
      sa.sin_port = htons(address.port);
      ::inet_pton(AF_INET, address.host.c_str(), &sa.sin_addr);
      if (::bind(s.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) err = errno;
    }
    // Debian 12's civetweb is built without IPv6 (mg_check_feature(8) is 0): the address itself is fine.
    const std::string cause = err != 0 ? errno_text(err)
                              : v6     ? std::string(
                                             "the HTTP server prometheus-cpp uses (civetweb) has no IPv6 support "
                                             "on this system; give an IPv4 address such as 127.0.0.1:PORT")
                                       : std::string("the HTTP server did not start");
    throw EnvironmentError(fmt::format("--metrics-listen {}: cannot listen there: {}", address.to_string(), cause));
  }
  const std::vector<int> ports = impl_->exposer->GetListeningPorts();
  impl_->port = ports.empty() ? address.port : static_cast<std::uint16_t>(ports.front());
  impl_->exposer->RegisterCollectable(impl_->registry);
}

PrometheusExporter::~PrometheusExporter() = default;

std::uint16_t PrometheusExporter::port() const noexcept { return impl_->port; }

std::string PrometheusExporter::url() const {
  return fmt::format("http://{}/metrics", ListenAddress{impl_->host, impl_->port}.to_string());
}

void PrometheusExporter::run_started(std::string_view run_id, std::string_view protocol, std::size_t tests) noexcept {
  try {
    Impl& m = *impl_;
    m.at(GaugeId::run_info).Add({{"run_id", std::string(run_id)}, {"protocol", std::string(protocol)}}).Set(1);
    m.set_run_status(Status::running);
    m.at(GaugeId::run_tests).Add({}).Set(static_cast<double>(tests));
    std::lock_guard lock(m.mu);
    m.tests = tests;
    m.set_run_progress();
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): a figure not published does not stop a run
  }
}

void PrometheusExporter::phase_started(const runner::LiveTest& test, std::string_view phase) noexcept {
  try {
    Impl& m = *impl_;
    m.set_phase(test, phase);
    m.set_status(test, Status::running);
    if (phase == "prepare") {
      m.at(GaugeId::test_progress).Add(Impl::of(test)).Set(0);
      std::lock_guard lock(m.mu);
      m.current_progress = 0;
      m.set_run_progress();
    }
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): noexcept: a lost update of the exporter
  }
}

void PrometheusExporter::interval(const runner::LiveTest& test, std::string_view phase, const Interval& iv) noexcept {
  try {
    Impl& m = *impl_;
    const Labels l = Impl::of(test, phase);
    if (const auto n = operations_of(iv)) m.at(CounterId::operations).Add(l).Increment(*n);
    const auto bps = bytes_per_second_of(iv);
    if (bps) {
      m.at(CounterId::bytes).Add(l).Increment(std::round(*bps * iv.duration_s));
      m.at(GaugeId::bps).Add(l).Set(*bps);
    }
    if (const auto e = errors_of(iv)) m.at(CounterId::errors).Add(l).Increment(*e);
    namespace cat = results::catalogue;
    if (const auto r = value_of(iv, cat::retries)) m.at(CounterId::retries).Add(l).Increment(*r);
    if (const auto v = value_of(iv, cat::tps)) m.at(GaugeId::tps).Add(l).Set(*v);
    if (const auto v = value_of(iv, cat::tpm_c)) m.at(GaugeId::tpmc).Add(l).Set(*v);
    if (const auto v = value_of(iv, cat::iops)) m.at(GaugeId::iops).Add(l).Set(*v);
    // Latency: the interval's "latency" histogram, whose figures the catalogue's interval latency
    // values are (MetricDef::of_interval_latency); without one, those values.
    const auto h = iv.histograms.find("latency");
    const bool from_histogram = h != iv.histograms.end() && h->second.count() > 0;
    if (from_histogram) {
      for (double p : kPercentiles)
        m.at(GaugeId::latency)
            .Add(Impl::with(l, "percentile", fmt::format("{:g}", p)))
            .Set(static_cast<double>(h->second.percentile(p)) * 1e-9);
      m.at(GaugeId::latency_mean).Add(l).Set(h->second.mean() * 1e-9);
    }
    for (const auto& [name, v] : iv.values) {
      if (!std::isfinite(v)) continue;
      m.at(GaugeId::value).Add(Impl::with(l, "name", name)).Set(v);
      const results::MetricDef* d = results::find_metric_def(name);
      if (d == nullptr) continue;  // not ours: served under its name only
      // A value renamed by issue 31 (lat_* -> latency_*) is served under both names.
      if (d->name != name) m.at(GaugeId::value).Add(Impl::with(l, "name", std::string(d->name))).Set(v);
      if (const auto n = m.named.find(d); n != m.named.end()) {
        n->second.gauge->Add(l).Set(v * n->second.scale);
        // The rate came from whole counts over the interval (Δcompleted / s, Δsectors x 512 / s):
        // its increment is that count again, a whole number.
        if (n->second.counter != nullptr && v >= 0)
          n->second.counter->Add(l).Increment(std::round(v * n->second.scale * iv.duration_s));
      }
      for (const results::MetricAlias& a : results::metric_aliases())
        if (a.name == name) m.at(GaugeId::value).Add(Impl::with(l, "name", std::string(a.old_name))).Set(v);
      const double scale = results::seconds_per(d->unit);
      if (scale == 0) continue;
      const auto q = results::figure_percentile(*d);
      if (d->of_interval_latency && !from_histogram) {
        if (d->figure == "avg")
          m.at(GaugeId::latency_mean).Add(l).Set(v * scale);
        else if (q)
          m.at(GaugeId::latency).Add(Impl::with(l, "percentile", fmt::format("{:g}", *q))).Set(v * scale);
      } else if (d->kind == results::MetricKind::lateness && q && !d->family.empty()) {
        m.at(GaugeId::lateness).Add(Impl::with(l, "percentile", fmt::format("{:g}", *q))).Set(v * scale);
      }
    }
    m.at(GaugeId::end).Add(l).Set(iv.t_s);
    m.at(GaugeId::length).Add(l).Set(iv.duration_s);
    const double progress = test.duration_s > 0 ? std::clamp(iv.t_s / test.duration_s, 0.0, 1.0) : 0.0;
    m.at(GaugeId::test_progress).Add(Impl::of(test)).Set(progress);
    std::lock_guard lock(m.mu);
    m.current_progress = progress;
    m.set_run_progress();
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): noexcept: a lost update of the exporter
  }
}

void PrometheusExporter::test_ended(const runner::LiveTest& test, Status status) noexcept {
  try {
    Impl& m = *impl_;
    m.set_status(test, status);
    m.set_phase(test, "done");
    if (status == Status::complete) m.at(GaugeId::test_progress).Add(Impl::of(test)).Set(1);
    std::lock_guard lock(m.mu);
    ++m.finished;
    m.current_progress = 0;
    m.set_run_progress();
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): noexcept: a lost update of the exporter
  }
}

void PrometheusExporter::test_recorded(const runner::LiveTest& test, const results::TestRecord& record) noexcept {
  try {
    Impl& m = *impl_;
    const Labels l = Impl::of(test);
    for (const results::DriveHealthSeen& d : results::drive_health_seen(record)) {
      if (!d.reason.empty()) continue;  // no reading: nothing to serve
      const Labels dl = Impl::with(l, "device", d.device);
      for (const auto& [reading, v] :
           {std::pair{"before", d.temperature_before_c}, std::pair{"after", d.temperature_after_c},
            std::pair{"max", d.temperature_max_c}})
        if (v) m.at(GaugeId::drive_temperature).Add(Impl::with(dl, "reading", reading)).Set(*v);
      const auto set = [&dl](prometheus::Family<prometheus::Gauge>& g, const std::optional<double>& v, double scale) {
        if (v) g.Add(dl).Set(*v * scale);
      };
      set(m.at(GaugeId::drive_warning_temperature), d.warning_temp_c, 1);
      set(m.at(GaugeId::drive_tmt_transitions), d.tmt_transitions, 1);
      set(m.at(GaugeId::drive_tmt_seconds), d.tmt_seconds, 1);
      set(m.at(GaugeId::drive_used), d.percentage_used, 0.01);
      set(m.at(GaugeId::drive_media_errors), d.media_errors, 1);
    }
    for (const results::CheckSeen& c : results::checks_seen(record))
      for (const std::string_view outcome : kCheckOutcomes)
        m.at(GaugeId::physics_check)
            .Add(Impl::with(Impl::with(l, "check", c.check), "outcome", std::string(outcome)))
            .Set(c.outcome == outcome ? 1 : 0);
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): noexcept: a lost update of the exporter
  }
}

void PrometheusExporter::run_ended(Status status) noexcept {
  try {
    impl_->set_run_status(status);
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): noexcept: a lost update of the exporter
  }
}

}  // namespace drivelab::metrics
