// The exporter of --metrics-listen (docs/metrics.md): the address parser, and what each kind's
// interval becomes (counters from rates x length, bytes from MB/s, latency from the interval's
// histogram or its lat_* values, lateness, status and progress), scraped over HTTP from the real
// server on a kernel-chosen loopback port.
#include "drivelab/metrics/prometheus.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "drivelab/core/errors.hpp"
#include "drivelab/results/catalogue.hpp"
#include "http_get.hpp"  // tests/support

namespace drivelab::metrics {
namespace {

/// The served text ("" when the scrape fails).
std::string scrape(std::uint16_t port) { return test_support::http_get(port, "/metrics").value_or(""); }

/// True when `text` has the sample line `line` ("name{labels} value") exactly.
bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(MetricsListen, ParsesAddressesLoopbackByDefault) {
  EXPECT_EQ(parse_listen_address("9464").to_string(), "127.0.0.1:9464");
  EXPECT_EQ(parse_listen_address("localhost:9464").to_string(), "127.0.0.1:9464");
  EXPECT_EQ(parse_listen_address("0.0.0.0:80").to_string(), "0.0.0.0:80");
  EXPECT_EQ(parse_listen_address("[::1]:9464").to_string(), "[::1]:9464");
  EXPECT_EQ(parse_listen_address("127.0.0.1:0").port, 0);
  for (const char* bad : {"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "host:9464", "::1:9464",
                          "[::1]", "[::1]9464", ":9464", "300.1.1.1:9464"}) {
    try {
      parse_listen_address(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("--metrics-listen '" + std::string(bad) + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST(MetricsListen, EachKindsIntervalAsServed) {
  PrometheusExporter ex(parse_listen_address("127.0.0.1:0"), ExporterLabels{"h1", 2});
  ASSERT_NE(ex.port(), 0);
  EXPECT_EQ(ex.url(), "http://127.0.0.1:" + std::to_string(ex.port()) + "/metrics");
  ex.run_started("run-1", "quick", 4);
  const runner::LiveTest tpcc{"oltp", "tpcc", 0, 10};
  ex.phase_started(tpcc, "run");
  LatencyHistogram h;
  for (int i = 1; i <= 100; ++i) h.record(std::int64_t{i} * 1'000'000);  // 1..100 ms
  results::Interval iv{.t_s = 5,
                       .duration_s = 2,
                       .values = {{"tps", 150.5}, {"tpm_c", 3000}, {"lat_p99_ms", 99}, {"retries", 3}, {"errors", 1}},
                       .histograms = {{"latency", h}}};
  ex.interval(tpcc, "run", iv);
  ex.interval(tpcc, "run", iv);  // counters add up, gauges hold the last
  const runner::LiveTest sysbench{"mysql", "sysbench", 1, 10};
  ex.interval(sysbench, "run",
              {.t_s = 1,
               .duration_s = 0.5,
               .values = {{"tps", 10}, {"err_s", 4}, {"lat_p95_ms", 7}, {"lat_avg_ms", 2}},
               .histograms = {}});
  const runner::LiveTest video{"video", "video", 2, 10};
  ex.interval(video, "run",
              {.t_s = 1,
               .duration_s = 2,
               .values = {{"write_mb_s", 100}, {"read_mb_s", 50}, {"write_fps", 20}, {"read_fps", 10}},
               .histograms = {}});
  const runner::LiveTest vdi{"boot", "vdi", 3, 10};
  ex.interval(vdi, "run",
              {.t_s = 1,
               .duration_s = 1,
               .values = {{"iops", 1000}, {"mb_s", 4.096}, {"lateness_p99_us", 250}, {"ios", 1000}},
               .histograms = {}});
  ex.test_ended(tpcc, results::Status::complete);

  const std::string text = scrape(ex.port());
  ASSERT_FALSE(text.empty());
  const std::string oltp = R"(host="h1",rank="2",kind="tpcc",phase="run",test="oltp")";
  EXPECT_TRUE(has_line(text, "drivelab_operations_total{" + oltp + "} 602")) << text;  // 2 x round(150.5 x 2)
  EXPECT_TRUE(has_line(text, "drivelab_retries_total{" + oltp + "} 6")) << text;
  EXPECT_TRUE(has_line(text, "drivelab_errors_total{" + oltp + "} 2")) << text;
  EXPECT_TRUE(has_line(text, "drivelab_interval_transactions_per_second{" + oltp + "} 150.5")) << text;
  EXPECT_TRUE(has_line(text, "drivelab_interval_tpmc{" + oltp + "} 3000")) << text;
  EXPECT_TRUE(has_line(text, "drivelab_interval_end_seconds{" + oltp + "} 5")) << text;
  EXPECT_TRUE(has_line(
      text, R"(drivelab_interval_value{host="h1",rank="2",kind="tpcc",name="retries",phase="run",test="oltp"} 3)"))
      << text;
  // From the histogram: p50 of 1..100 ms within its 0.2% error.
  const auto p50 = text.find(
      R"(drivelab_interval_latency_seconds{host="h1",rank="2",kind="tpcc",percentile="50",phase="run",test="oltp"} )");
  ASSERT_NE(p50, std::string::npos) << text;
  EXPECT_NEAR(std::stod(text.substr(text.find("} ", p50) + 2)), 0.050, 0.050 * 0.005);
  const std::string sb = R"(host="h1",rank="2",kind="sysbench",phase="run",test="mysql")";
  EXPECT_TRUE(has_line(text, "drivelab_errors_total{" + sb + "} 2")) << text;  // 4/s x 0.5 s
  EXPECT_TRUE(has_line(text, "drivelab_operations_total{" + sb + "} 5")) << text;
  EXPECT_TRUE(has_line(
      text,
      R"(drivelab_interval_latency_seconds{host="h1",rank="2",kind="sysbench",percentile="95",phase="run",test="mysql"} 0.007)"))
      << text;
  EXPECT_TRUE(has_line(text, "drivelab_interval_latency_mean_seconds{" + sb + "} 0.002")) << text;
  // Issue 31: a value renamed lat_* -> latency_* is served under both names, whichever it came in.
  for (const char* name : {"lat_p95_ms", "latency_p95_ms"})
    EXPECT_TRUE(has_line(text, fmt::format(R"(drivelab_interval_value{{host="h1",rank="2",kind="sysbench",name="{}",)"
                                           R"(phase="run",test="mysql"}} 7)",
                                           name)))
        << name << "\n"
        << text;
  const std::string vid = R"(host="h1",rank="2",kind="video",phase="run",test="video")";
  EXPECT_TRUE(has_line(text, "drivelab_bytes_total{" + vid + "} 300000000")) << text;
  EXPECT_TRUE(has_line(text, "drivelab_interval_bytes_per_second{" + vid + "} 150000000")) << text;
  EXPECT_TRUE(has_line(text, "drivelab_operations_total{" + vid + "} 60")) << text;  // frames
  const std::string boot = R"(host="h1",rank="2",kind="vdi",phase="run",test="boot")";
  EXPECT_TRUE(has_line(text, "drivelab_operations_total{" + boot + "} 1000")) << text;
  EXPECT_TRUE(has_line(text, "drivelab_interval_iops{" + boot + "} 1000")) << text;
  EXPECT_TRUE(has_line(
      text,
      R"(drivelab_interval_lateness_seconds{host="h1",rank="2",kind="vdi",percentile="99",phase="run",test="boot"} 0.00025)"))
      << text;
  EXPECT_EQ(text.find("drivelab_interval_tpmc{" + boot), std::string::npos)
      << "no series for a quantity the kind lacks";
  // Status and progress.
  EXPECT_TRUE(has_line(text, R"(drivelab_run_info{host="h1",rank="2",protocol="quick",run_id="run-1"} 1)")) << text;
  EXPECT_TRUE(has_line(text, R"(drivelab_test_status{host="h1",rank="2",kind="tpcc",status="complete",test="oltp"} 1)"))
      << text;
  EXPECT_TRUE(has_line(text, R"(drivelab_test_phase{host="h1",rank="2",kind="tpcc",phase="done",test="oltp"} 1)"))
      << text;
  EXPECT_TRUE(has_line(text, R"(drivelab_run_tests_finished{host="h1",rank="2"} 1)")) << text;
  EXPECT_TRUE(has_line(text, R"(drivelab_run_progress_ratio{host="h1",rank="2"} 0.25)")) << text;
  ex.run_ended(results::Status::failed);
  const std::string after = scrape(ex.port());
  EXPECT_TRUE(has_line(after, R"(drivelab_run_status{host="h1",rank="2",status="failed"} 1)")) << after;
  EXPECT_TRUE(has_line(after, R"(drivelab_run_status{host="h1",rank="2",status="running"} 0)")) << after;
}

TEST(MetricsListen, TelemetryValuesHaveNamedSeriesInBaseUnits) {
  // Derived from the catalogue: every telemetry interval value has a series of its own, no two
  // share a name, and each name carries its base unit.
  std::set<std::string> names;
  std::size_t n = 0;
  for (const results::MetricDef* d : results::metric_defs()) {
    const auto s = telemetry_series(*d);
    if (!d->has(results::kDeviceLine) || !d->recorded_as(results::kInterval)) {
      EXPECT_FALSE(s) << d->name;
      continue;
    }
    ASSERT_TRUE(s) << d->name << " is a telemetry interval value without a series";
    ++n;
    EXPECT_TRUE(names.insert(s->gauge).second) << s->gauge;
    if (!s->counter.empty()) {
      EXPECT_TRUE(names.insert(s->counter).second) << s->counter;
    }
  }
  EXPECT_GE(n, 20u);
  namespace cat = results::catalogue;
  EXPECT_EQ(telemetry_series(cat::device_r_s)->gauge, "drivelab_device_read_per_second");
  EXPECT_EQ(telemetry_series(cat::device_r_s)->counter, "drivelab_device_read_total");
  EXPECT_EQ(telemetry_series(cat::device_wmb_s)->gauge, "drivelab_device_write_bytes_per_second");
  EXPECT_EQ(telemetry_series(cat::device_w_await_ms)->gauge, "drivelab_device_write_await_seconds");
  EXPECT_EQ(telemetry_series(cat::device_util_pct)->gauge, "drivelab_device_util_ratio");
  EXPECT_EQ(telemetry_series(cat::host_cpu_iowait_pct)->gauge, "drivelab_host_cpu_iowait_ratio");
  EXPECT_EQ(telemetry_series(cat::device_aqu_sz)->gauge, "drivelab_device_aqu_sz");
  EXPECT_FALSE(telemetry_series(cat::device_write_ios_per_txn));  // a test's figure, not an interval's

  PrometheusExporter ex(parse_listen_address("127.0.0.1:0"), ExporterLabels{"h1", 0});
  const runner::LiveTest io{"io", "io", 0, 10};
  const results::Interval iv{.t_s = 2,
                             .duration_s = 2,
                             .values = {{"iops", 1500},
                                        {"device_r_s", 1500},
                                        {"device_rmb_s", 6.144},
                                        {"device_r_await_ms", 0.25},
                                        {"device_aqu_sz", 0.375},
                                        {"device_util_pct", 37.5},
                                        {"host_cpu_iowait_pct", 12.5}},
                             .histograms = {}};
  ex.interval(io, "run", iv);
  ex.interval(io, "run", iv);  // counters add up, gauges hold the last
  const std::string text = scrape(ex.port());
  const std::string l = R"({host="h1",rank="0",kind="io",phase="run",test="io"})";
  EXPECT_TRUE(has_line(text, "drivelab_device_read_per_second" + l + " 1500")) << text;
  EXPECT_TRUE(has_line(text, "drivelab_device_read_total" + l + " 6000")) << text;  // 2 x 1500/s x 2 s
  EXPECT_TRUE(has_line(text, "drivelab_device_read_bytes_per_second" + l + " 6144000")) << text;
  EXPECT_TRUE(has_line(text, "drivelab_device_read_bytes_total" + l + " 24576000")) << text;
  EXPECT_TRUE(has_line(text, "drivelab_device_read_await_seconds" + l + " 0.00025")) << text;
  EXPECT_TRUE(has_line(text, "drivelab_device_aqu_sz" + l + " 0.375")) << text;
  EXPECT_TRUE(has_line(text, "drivelab_device_util_ratio" + l + " 0.375")) << text;
  EXPECT_TRUE(has_line(text, "drivelab_host_cpu_iowait_ratio" + l + " 0.125")) << text;
  // The generic series stays (users' queries read it).
  EXPECT_TRUE(has_line(text, R"(drivelab_interval_value{host="h1",rank="0",kind="io",name="device_r_await_ms",)"
                             R"(phase="run",test="io"} 0.25)"))
      << text;
  EXPECT_NE(text.find("# TYPE drivelab_device_read_total counter"), std::string::npos) << text;
  // A counter's help says what it counts, not the gauge's "per second".
  const auto help = text.find("# HELP drivelab_device_read_total ");
  ASSERT_NE(help, std::string::npos) << text;
  const std::string help_line = text.substr(help, text.find('\n', help) - help);
  EXPECT_EQ(help_line.find("per second"), std::string::npos) << help_line;
  EXPECT_NE(help_line.find("requests"), std::string::npos) << help_line;

  // The counters count whole requests and bytes: each interval's increment is rounded from the
  // counts its rate came from (1500.4 r/s over 0.5 s: 750 reads, not 750.2).
  const runner::LiveTest odd{"odd", "io", 1, 10};
  const results::Interval half{
      .t_s = 0.5, .duration_s = 0.5, .values = {{"device_r_s", 1500.4}, {"device_wmb_s", 0.0081926}}, .histograms = {}};
  ex.interval(odd, "run", half);
  ex.interval(odd, "run", half);
  const std::string whole = scrape(ex.port());
  const std::string o = R"({host="h1",rank="0",kind="io",phase="run",test="odd"})";
  EXPECT_TRUE(has_line(whole, "drivelab_device_read_total" + o + " 1500")) << whole;         // 2 x 750
  EXPECT_TRUE(has_line(whole, "drivelab_device_write_bytes_total" + o + " 8192")) << whole;  // 2 x 4096
  EXPECT_TRUE(has_line(whole, "drivelab_device_read_per_second" + o + " 1500.4")) << whole;
  EXPECT_NE(text.find("# TYPE drivelab_device_read_await_seconds gauge"), std::string::npos) << text;
}

TEST(MetricsListen, MetricsPageListsEveryTelemetrySeries) {
  std::string expected = "| Value | Series | Counter | Scale |\n|---|---|---|---|\n";
  for (const results::MetricDef* d : results::metric_defs())
    if (const auto s = telemetry_series(*d))
      expected += fmt::format("| `{}` | `{}` | {} | {:g} |\n", d->name, s->gauge,
                              s->counter.empty() ? "" : "`" + s->counter + "`", s->scale);
  std::ifstream in(std::string(DRIVELAB_SOURCE_DIR) + "/docs/metrics.md");
  std::stringstream page;
  page << in.rdbuf();
  const std::string text = page.str();
  const std::string begin = "<!-- telemetry-series:begin -->\n";
  const auto b = text.find(begin);
  const auto e = text.find("<!-- telemetry-series:end -->");
  ASSERT_TRUE(b != std::string::npos && e != std::string::npos && e > b)
      << "docs/metrics.md: no block telemetry-series";
  EXPECT_EQ(text.substr(b + begin.size(), e - b - begin.size()), expected)
      << "docs/metrics.md, the block telemetry-series:\n"
      << expected;
}

TEST(MetricsListen, APortInUseIsAnEnvironmentErrorWithItsCause) {
  PrometheusExporter first(parse_listen_address("127.0.0.1:0"), {});
  try {
    PrometheusExporter second(parse_listen_address("127.0.0.1:" + std::to_string(first.port())), {});
    ADD_FAILURE() << "two exporters on one port";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen there: Address already in use (EADDRINUSE)"), std::string::npos)
        << e.what();
  }
}

TEST(MetricsListen, IPv6ServesOrSaysWhyNot) {
  // Debian 12's civetweb has no IPv6: the exporter says so rather than "did not start".
  try {
    PrometheusExporter ex(parse_listen_address("[::1]:0"), {});
    EXPECT_NE(ex.port(), 0);
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("has no IPv6 support on this system; give an IPv4 address"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace drivelab::metrics
