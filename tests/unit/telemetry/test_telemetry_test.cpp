// One test's telemetry (telemetry/test_telemetry.hpp): the catalogue values of iostat's figures,
// the demand per unit of the application's work, a target on a real block-backed filesystem (the
// build tree) sampled at interval boundaries through a results::TestRecorder, and a target
// without a block device (tmpfs), whose reason is said once.
#include "drivelab/telemetry/test_telemetry.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "drivelab/results/summary.hpp"

namespace drivelab::telemetry {
namespace {

namespace cat = results::catalogue;
namespace fs = std::filesystem;

std::optional<double> find(const std::vector<Figure>& figures, const results::MetricDef& def) {
  for (const auto& [d, v] : figures)
    if (d == &def) return v;
  return std::nullopt;
}

std::optional<double> value(const results::Interval& iv, const results::MetricDef& def) {
  for (const auto& [n, v] : iv.values)
    if (n == def.name) return v;
  return std::nullopt;
}

TEST(DeviceFigures, AreIostatsColumnsUnderTheirCatalogueNames) {
  BlockStat a, b;
  a.fields = b.fields = 17;
  b.read_ios = 200;
  b.read_sectors = 200 * 8;  // 4 KiB reads
  b.read_ms = 100;
  b.write_ios = 50;
  b.write_merges = 50;
  b.write_sectors = 50 * 16;
  b.write_ms = 25;
  b.flush_ios = 10;
  b.flush_ms = 5;
  b.time_in_queue_ms = 500;
  b.io_ticks_ms = 1000;
  const std::vector<Figure> f = device_figures(block_rates(a, b, 2.0));
  EXPECT_EQ(find(f, cat::device_r_s), 100.0);
  EXPECT_EQ(find(f, cat::device_w_s), 25.0);
  EXPECT_EQ(find(f, cat::device_f_s), 5.0);
  EXPECT_EQ(find(f, cat::device_d_s), 0.0);
  EXPECT_DOUBLE_EQ(*find(f, cat::device_rmb_s), 200 * 4096 / 1e6 / 2) << "MB = 10^6 bytes";
  EXPECT_EQ(find(f, cat::device_rareq_bytes), 4096.0);
  EXPECT_EQ(find(f, cat::device_wareq_bytes), 8192.0);
  EXPECT_EQ(find(f, cat::device_wrqm_s), 25.0);
  EXPECT_EQ(find(f, cat::device_r_await_ms), 0.5);
  EXPECT_EQ(find(f, cat::device_w_await_ms), 0.5);
  EXPECT_EQ(find(f, cat::device_f_await_ms), 0.5);
  EXPECT_EQ(find(f, cat::device_aqu_sz), 0.25);
  EXPECT_EQ(find(f, cat::device_util_pct), 50.0);
  // A kernel before 4.18 counts neither discards nor flushes: no figure for them, not a 0.
  a.fields = b.fields = 11;
  const std::vector<Figure> old = device_figures(block_rates(a, b, 2.0));
  EXPECT_FALSE(find(old, cat::device_d_s));
  EXPECT_FALSE(find(old, cat::device_f_s));
  EXPECT_FALSE(find(old, cat::device_f_await_ms));
}

/// A headline metric as an emulator records it.
results::Metric work(std::string name, double value, std::string unit) {
  results::Metric m;
  m.name = std::move(name);
  m.value = value;
  m.unit = std::move(unit);
  return m;
}

TEST(DemandMetrics, DividesTheDevicesCountsByTheApplicationsWork) {
  const DeviceTotals dev{
      .read_ios = 30, .write_ios = 600, .flush_ios = 100, .read_bytes = 30 * 4096, .write_bytes = 600 * 8192};
  results::TestRecord tpcc;
  tpcc.kind = "tpcc";
  tpcc.metrics = {work("transactions", 200, "count"), work("new_orders", 90, "count")};
  const std::vector<Figure> t = demand_metrics(tpcc, dev, 10);
  EXPECT_DOUBLE_EQ(*find(t, cat::device_write_bytes_per_txn), 600 * 8192 / 200.0);
  EXPECT_DOUBLE_EQ(*find(t, cat::device_write_ios_per_txn), 3.0);
  EXPECT_DOUBLE_EQ(*find(t, cat::device_flush_ios_per_txn), 0.5);
  EXPECT_DOUBLE_EQ(*find(t, cat::device_write_bytes_per_new_order), 600 * 8192 / 90.0);
  EXPECT_DOUBLE_EQ(*find(t, cat::device_read_ios_per_new_order), 30 / 90.0);
  EXPECT_FALSE(find(t, cat::device_write_ios_per_io)) << "a tpcc test did no application I/Os";

  results::TestRecord io;
  io.kind = "io";
  io.metrics = {work("ios", 600, "count"), work("bytes", 600 * 4096, "bytes")};
  const std::vector<Figure> i = demand_metrics(io, dev, 10);
  EXPECT_DOUBLE_EQ(*find(i, cat::device_write_ios_per_io), 1.0);
  EXPECT_DOUBLE_EQ(*find(i, cat::device_write_bytes_per_byte), 2.0) << "8 KiB on the device per 4 KiB written";
  EXPECT_FALSE(find(i, cat::device_write_bytes_per_txn));

  results::TestRecord vdbench;  // no `bytes`: MB/s x the window
  vdbench.kind = "vdbench";
  vdbench.metrics = {work("mb_s", 0.4096, "MB/s")};
  EXPECT_DOUBLE_EQ(*find(demand_metrics(vdbench, dev, 10), cat::device_read_bytes_per_byte), 30 * 4096 / 4.096e6);

  // Video: per the frames the measured phase moved (details.frames), not per write_fps/read_fps x
  // the window (rates per second of pass time: the figure came out about half a frame's cost).
  results::TestRecord video;
  video.kind = "video";
  video.metrics = {work("write_fps", 24, "1/s"), work("read_fps", 6, "1/s")};
  video.details["frames"] = {{"written", 75}, {"read", 30}};
  const std::vector<Figure> v = demand_metrics(video, dev, 10);
  EXPECT_DOUBLE_EQ(*find(v, cat::device_write_bytes_per_frame), 600 * 8192 / 75.0);
  EXPECT_DOUBLE_EQ(*find(v, cat::device_read_bytes_per_frame), 30 * 4096 / 30.0);
  video.details["frames"] = {{"written", 75}, {"read", 0}};
  EXPECT_FALSE(find(demand_metrics(video, dev, 10), cat::device_read_bytes_per_frame)) << "no frame read: no figure";

  results::TestRecord idle;  // no work, or none counted: no ratio (not an infinity)
  idle.kind = "tpcc";
  idle.metrics = {work("transactions", 0, "count")};
  EXPECT_TRUE(demand_metrics(idle, dev, 10).empty());
}

/// The build tree's filesystem: a real block device (the CI's and this project's machines), or
/// a reason to skip.
std::string block_backed_reason(const fs::path& dir) {
  TestTelemetry t(dir);
  return t.stack() ? std::string{} : t.reason();
}

TEST(TestTelemetry, SamplesTheTargetsDeviceAndTheHostAtEachIntervalAndOverTheTest) {
  const fs::path dir = fs::path(DRIVELAB_BINARY_DIR) / "test-scratch" / "test_telemetry";
  fs::remove_all(dir);
  fs::create_directories(dir);
  if (const std::string why = block_backed_reason(dir); !why.empty()) GTEST_SKIP() << why;

  results::TestRecord tr;
  tr.kind = "io";
  results::TestRecorder rec(tr, nullptr);
  TestTelemetry tel(dir);
  ASSERT_TRUE(tel.stack());
  tel.begin();
  rec.set_interval_sampler([&](results::Interval& iv) { tel.close_interval(iv); });
  // 1 MiB written and made durable: the device writes at least that much in this window.
  const fs::path file = dir / "data";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  const std::string block(1 << 20, 'x');
  ASSERT_EQ(::write(fd, block.data(), block.size()), static_cast<ssize_t>(block.size()));
  ASSERT_EQ(::fsync(fd), 0);
  ::close(fd);
  rec.interval({.t_s = 1, .duration_s = 1, .values = {results::interval_value(cat::iops, 1)}});
  rec.interval({.t_s = 2, .duration_s = 1, .values = {results::interval_value(cat::iops, 2)}});
  tel.end();
  rec.set_interval_sampler({});
  rec.interval({.t_s = 3, .duration_s = 1, .values = {results::interval_value(cat::iops, 3)}});
  rec.metric(cat::ios, 256);
  tel.record(rec);

  ASSERT_EQ(tr.intervals.size(), 3u);
  EXPECT_EQ(tr.intervals[0].values.front().first, "iops") << "the emulator's values first";
  EXPECT_TRUE(value(tr.intervals[0], cat::device_w_s));
  EXPECT_TRUE(value(tr.intervals[1], cat::device_aqu_sz));
  EXPECT_TRUE(value(tr.intervals[0], cat::host_cpu_iowait_pct));
  EXPECT_FALSE(value(tr.intervals[2], cat::device_w_s)) << "no sample after the measured phase";
  const results::Metric* written = tr.find_metric("device_write_bytes");
  ASSERT_NE(written, nullptr);
  EXPECT_GE(written->value, 1 << 20);
  ASSERT_NE(tr.find_metric("device_write_ios"), nullptr);
  EXPECT_GT(tr.find_metric("device_write_ios")->value, 0);
  ASSERT_NE(tr.find_metric("device_write_ios_per_io"), nullptr) << "the demand per application I/O";
  EXPECT_DOUBLE_EQ(tr.find_metric("device_write_ios_per_io")->value, tr.find_metric("device_write_ios")->value / 256);
  ASSERT_NE(tr.find_metric("host_cpu_user_pct"), nullptr);
  const results::Json& d = tr.details.at("telemetry");
  EXPECT_EQ(d.at("devices").at(0).at("role"), "headline");
  EXPECT_EQ(d.at("devices").at(0).at("name"), tel.stack()->headline().block.name);
  EXPECT_EQ(d.at("stack"), tel.stack()->describe());
  EXPECT_GT(d.at("window_s").get<double>(), 0);
  for (std::size_t i = 1; i < d.at("devices").size(); ++i) {
    EXPECT_EQ(d["devices"][i].at("intervals").size(), 2u) << d["devices"][i];
    EXPECT_TRUE(d["devices"][i].at("test").contains("device_w_s"));
  }
  // The console summary: one device line, and no device figure among the headline metrics.
  results::RunRecord run;
  tr.name = "t";
  tr.status = results::Status::complete;
  run.tests.push_back(tr);
  const std::string summary = results::format_summary(run);
  EXPECT_NE(summary.find("devices (iostat -x"), std::string::npos) << summary;
  EXPECT_NE(summary.find("  t: " + tel.stack()->headline().block.name + "  r/s "), std::string::npos) << summary;
  EXPECT_NE(summary.find("writes per I/O"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("device_write_bytes"), std::string::npos) << summary;
  const std::string line = results::format_interval_line("t", tr.intervals[0]);
  EXPECT_EQ(line.find("device_"), std::string::npos) << line;
  fs::remove_all(dir);
}

TEST(TestTelemetry, ATargetWithoutABlockDeviceSaysWhyOnceAndStillSamplesTheHost) {
  if (!fs::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm";
  results::TestRecord tr;
  tr.name = "shm";
  tr.kind = "io";
  results::TestRecorder rec(tr, nullptr);
  TestTelemetry tel("/dev/shm");
  if (tel.stack()) GTEST_SKIP() << "/dev/shm has a block device here: " << tel.stack()->describe();
  EXPECT_NE(tel.reason().find("has no block device"), std::string::npos) << tel.reason();
  tel.begin();
  rec.set_interval_sampler([&](results::Interval& iv) { tel.close_interval(iv); });
  for (int i = 1; i <= 3; ++i)
    rec.interval({.t_s = static_cast<double>(i), .duration_s = 1, .values = {results::interval_value(cat::iops, 1)}});
  tel.end();
  tel.record(rec);
  for (const auto& iv : tr.intervals) {
    EXPECT_FALSE(value(iv, cat::device_r_s));
    EXPECT_TRUE(value(iv, cat::host_cpu_system_pct));
  }
  EXPECT_EQ(tr.find_metric("device_read_ios"), nullptr);
  EXPECT_TRUE(tr.warnings.empty()) << "a note in details, not a warning";
  EXPECT_EQ(tr.details.at("telemetry").at("no_device"), tel.reason());
  results::RunRecord run;
  tr.status = results::Status::complete;
  run.tests.push_back(tr);
  const std::string summary = results::format_summary(run);
  EXPECT_NE(summary.find("  shm: no block device: " + tel.reason() + "\n"), std::string::npos) << summary;
}

}  // namespace
}  // namespace drivelab::telemetry
