#pragma once
/// \file prometheus.hpp
/// `--metrics-listen ADDRESS`: the run's live figures served over HTTP in the Prometheus text
/// exposition format (prometheus-cpp's pull Exposer, GET /metrics), for Prometheus to scrape and
/// Grafana to chart (config/grafana/drivelab.json). Metric names, types and labels: docs/metrics.md.
///
/// The exporter is a runner::LiveMetrics: it is fed by run_protocol's interval closer (the writer
/// thread), never by an emulator, so the hot paths pay nothing. Every series carries the labels
/// `host` (gethostname) and `rank` (the MPI rank; 0 on one host); a test's series add `test` and
/// `kind`, its interval series `phase`.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "drivelab/results/catalogue_types.hpp"
#include "drivelab/runner/live_metrics.hpp"

namespace drivelab::metrics {

/// Where the exporter listens.
struct ListenAddress {
  std::string host;        ///< an IPv4 or IPv6 literal ("127.0.0.1", "::1", "0.0.0.0")
  std::uint16_t port = 0;  ///< 0: a free port chosen by the kernel (PrometheusExporter::port says which)
  /// "127.0.0.1:9464", "[::1]:9464" (civetweb's listening_ports syntax).
  std::string to_string() const;
};

/// Parses `--metrics-listen`: "HOST:PORT", "[IPV6]:PORT", or "PORT" alone, which listens on the
/// loopback address 127.0.0.1 (the default: another address only when given). "localhost" is
/// 127.0.0.1. HOST must be a numeric address (no name lookup); PORT 0..65535. Throws ConfigError
/// naming the text and what is wrong ("--metrics-listen '127.0.0.1': expected HOST:PORT ...").
ListenAddress parse_listen_address(std::string_view text);

/// The named series of one interval value of the runner's device and host telemetry (catalogue
/// declarations with traits kDeviceLine and kInterval: results/catalogue/telemetry.hpp,
/// docs/telemetry.md), derived from its name and unit by Prometheus' conventions (base units, the
/// unit in the name, _total for counters): `drivelab_` + the name without its unit suffix, iostat's
/// abbreviation after `device_` spelled out (r, w, d, f, rrqm, wrqm, rareq, wareq: read, write,
/// discard, flush, read_merged, write_merged, read_request, write_request; promtool reads a lone
/// `d` as days) +
///  - 1/s (`device_r_s`): `_per_second`, and the counter `_total` (the value x the interval's
///    length): drivelab_device_read_per_second, drivelab_device_read_total;
///  - MB/s (`device_rmb_s`, MB = 10^6 bytes): `_bytes_per_second` (x 10^6), and the counter
///    `_bytes_total`: drivelab_device_read_bytes_per_second, drivelab_device_read_bytes_total;
///  - ms (`device_r_await_ms`): `_seconds` (x 10^-3): drivelab_device_read_await_seconds;
///  - % (`device_util_pct`, `host_cpu_iowait_pct`): `_ratio` (x 0.01): drivelab_device_util_ratio;
///  - bytes, and a plain number: the name as is: drivelab_device_read_request_bytes, drivelab_device_aqu_sz.
/// Every value stays served under drivelab_interval_value{name} too.
struct TelemetrySeries {
  std::string gauge;    ///< the last interval's value, in base units
  std::string counter;  ///< "" for a value that is no rate
  double scale = 1;     ///< base units per the record's unit
};
/// The series of `def`; nullopt for a declaration that is not a telemetry interval value, or whose
/// name does not end in its unit's suffix.
std::optional<TelemetrySeries> telemetry_series(const results::MetricDef& def);

/// The drive health series (set per test and drive from the record's details.health, when the
/// run read drive health): what a board may query that a run without health data never serves.
inline constexpr std::array<std::string_view, 6> kDriveHealthSeries{"drivelab_drive_temperature_celsius",
                                                                    "drivelab_drive_warning_temperature_celsius",
                                                                    "drivelab_drive_thermal_management_transitions",
                                                                    "drivelab_drive_thermal_management_seconds",
                                                                    "drivelab_drive_percentage_used_ratio",
                                                                    "drivelab_drive_media_errors"};

/// The labels every series carries.
struct ExporterLabels {
  std::string host;  ///< this host's name
  int rank = 0;      ///< the MPI rank of a multi-host run, 0 on one host
};

class PrometheusExporter final : public runner::LiveMetrics {
 public:
  /// Listens on `address` at once and serves GET /metrics until destroyed. Throws
  /// EnvironmentError naming the address and the cause when it cannot listen (the port is in use,
  /// the address is not one of this host's, a port below 1024 without the privilege, an IPv6
  /// address where civetweb was built without IPv6, as Debian 12's is).
  PrometheusExporter(const ListenAddress& address, ExporterLabels labels);
  ~PrometheusExporter() override;
  PrometheusExporter(const PrometheusExporter&) = delete;
  PrometheusExporter& operator=(const PrometheusExporter&) = delete;

  /// The port it listens on (the kernel's choice when the address gave 0).
  std::uint16_t port() const noexcept;
  /// "http://127.0.0.1:9464/metrics".
  std::string url() const;

  void run_started(std::string_view run_id, std::string_view protocol, std::size_t tests) noexcept override;
  void phase_started(const runner::LiveTest& test, std::string_view phase) noexcept override;
  void interval(const runner::LiveTest& test, std::string_view phase, const results::Interval& iv) noexcept override;
  /// Drive health and the physics checks of the test's record: drivelab_drive_* per drive
  /// read (details.health) and drivelab_test_physics_check per check (docs/metrics.md).
  void test_recorded(const runner::LiveTest& test, const results::TestRecord& record) noexcept override;
  void test_ended(const runner::LiveTest& test, results::Status status) noexcept override;
  void run_ended(results::Status status) noexcept override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace drivelab::metrics
