// The device figures of merge_host_records (results/src/merge_devices.hpp, docs/results.md
// "Merging hosts", issue 33): ranks on one host that measured one device count it once, ranks on
// different hosts (or devices) add up, and devices of one stack (a partition and its disk) are
// never added (TPC-Council/HammerDB#913).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "drivelab/results/merge.hpp"

namespace drivelab::results {
namespace {

/// Rank `rank` of `size` on host `host`, whose target is on device `stack[0]` (the devices below
/// it after): a test with the runner's telemetry figures (per rank: writes 1000 x (rank + 1)) and
/// three 1 s intervals of device_w_s 100 x (rank + 1).
RunRecord device_rank(int rank, int size, const std::string& host, const std::vector<std::string>& stack) {
  RunRecord r;
  r.run_id = "20261207T090000Z-dev-r" + std::to_string(rank);
  r.tool = Json{{"name", "drivelab"}};
  r.host = Json{{"hostname", host}};
  r.protocol = "quick";
  r.status = Status::complete;
  r.cohort = Json{{"job_id", "20261207T090000Z-dev"}, {"rank", rank}, {"size", size}, {"clock_offset_ns", 0}};
  TestRecord t;
  t.name = "oltp";
  t.kind = "tpcc";
  t.status = Status::complete;
  t.measured_s = 3;
  t.barriers = Json{{"run", 1'000'000'000}};
  const double f = rank + 1;
  for (int k = 1; k <= 3; ++k)
    t.intervals.push_back(Interval{.t_s = double(k),
                                   .duration_s = 1,
                                   .values = {{"tps", 50 * f}, {"device_w_s", 100 * f}, {"device_w_await_ms", f}}});
  t.metrics = {{"tps", 50 * f, "1/s", ""},
               {"transactions", 150 * f, "count", ""},
               {"device_w_s", 100 * f, "1/s", ""},
               {"device_read_ios", 10 * f, "count", ""},
               {"device_read_bytes", 40960 * f, "bytes", ""},
               {"device_write_ios", 1000 * f, "count", ""},
               {"device_write_bytes", 4096000 * f, "bytes", ""},
               {"device_w_await_ms", f, "ms", ""},
               {"device_write_ios_per_txn", 1000 / 150.0, "ratio", ""}};
  Json devices = Json::array();
  for (std::size_t i = 0; i < stack.size(); ++i) {
    Json d{{"name", stack[i]}, {"role", i == 0 ? "headline" : "whole_disk"}};
    if (i > 0) d["below"] = stack[0];
    devices.push_back(std::move(d));
  }
  t.details = Json{{"telemetry", Json{{"window_s", 3.0}, {"devices", std::move(devices)}}}};
  r.tests = {t};
  return r;
}

struct Rank {
  std::string host;
  std::vector<std::string> stack;
};

RunRecord merged(const std::vector<Rank>& ranks) {
  std::vector<MergeInput> in;
  Json names = Json::array();
  for (const Rank& r : ranks) names.push_back(r.host);
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    in.push_back({device_rank(static_cast<int>(k), static_cast<int>(ranks.size()), ranks[k].host, ranks[k].stack),
                  "rank" + std::to_string(k) + ".json"});
    in.back().record.cohort["hosts"] = names;
  }
  return merge_host_records(std::move(in));
}

std::optional<double> metric(const TestRecord& t, std::string_view name) {
  for (const Metric& m : t.metrics)
    if (m.name == name) return m.value;
  return std::nullopt;
}

std::optional<double> interval_value(const Interval& iv, std::string_view name) {
  for (const auto& [n, v] : iv.values)
    if (n == name) return v;
  return std::nullopt;
}

bool per_host_only(const TestRecord& t, const std::string& name) {
  const Json& p = t.details.at("per_host_only");
  return std::find(p.begin(), p.end(), Json(name)) != p.end();
}

TEST(MergeDevices, TwoRanksOnOneHostAndOneDeviceCountItOnce) {
  const RunRecord m = merged({{"a", {"vda"}}, {"a", {"vda"}}});
  const TestRecord& t = m.tests.at(0);
  // The application's figures add up; the device's are rank 0's, once.
  EXPECT_DOUBLE_EQ(*metric(t, "tps"), 150);
  EXPECT_DOUBLE_EQ(*metric(t, "device_write_ios"), 1000);
  EXPECT_DOUBLE_EQ(*metric(t, "device_write_bytes"), 4096000);
  EXPECT_DOUBLE_EQ(*metric(t, "device_w_s"), 100);
  EXPECT_FALSE(metric(t, "device_w_await_ms"));  // per host, as before
  EXPECT_TRUE(per_host_only(t, "device_w_await_ms"));
  // The demand: the device's I/O once, per unit of both ranks' work (150 + 300 transactions).
  EXPECT_FALSE(per_host_only(t, "device_write_ios_per_txn"));
  EXPECT_DOUBLE_EQ(*metric(t, "device_write_ios_per_txn"), 1000 / 450.0);
  EXPECT_DOUBLE_EQ(*metric(t, "device_write_bytes_per_txn"), 4096000 / 450.0);
  EXPECT_DOUBLE_EQ(*metric(t, "device_read_ios_per_txn"), 10 / 450.0);
  EXPECT_EQ(t.details.at("demand").at("shared"),
            "rank 1 (host a) measured vda of rank 0: the device's I/O is counted once, per unit of every rank's work");
  EXPECT_NE(t.details.at("demand").at("window").get<std::string>().find("each rank's measured phase"),
            std::string::npos);
  ASSERT_EQ(t.intervals.size(), 3u);
  for (const Interval& iv : t.intervals) {
    EXPECT_DOUBLE_EQ(*interval_value(iv, "tps"), 150);
    EXPECT_DOUBLE_EQ(*interval_value(iv, "device_w_s"), 100);
  }
  const Json& d = t.details.at("devices");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], (Json{{"rank", 0}, {"host", "a"}, {"device", "vda"}, {"counted", true}}));
  EXPECT_EQ(d[1], (Json{{"rank", 1}, {"host", "a"}, {"device", "vda"}, {"same_as_rank", 0}, {"counted", false}}));
  // Each host's own figures stay in hosts[].
  EXPECT_DOUBLE_EQ(m.hosts[1]["tests"][0]["metrics"]["device_write_ios"].get<double>(), 2000);
  EXPECT_TRUE(t.warnings.empty());
}

TEST(MergeDevices, TwoHostsOrTwoDevicesAddUp) {
  for (const auto& ranks : {std::vector<Rank>{{"a", {"vda"}}, {"b", {"vda"}}},
                            std::vector<Rank>{{"a", {"sda1", "sda"}}, {"a", {"sda2", "sda"}}}}) {
    const RunRecord m = merged(ranks);
    const TestRecord& t = m.tests.at(0);
    EXPECT_DOUBLE_EQ(*metric(t, "device_write_ios"), 3000);
    EXPECT_DOUBLE_EQ(*metric(t, "device_w_s"), 300);
    EXPECT_DOUBLE_EQ(*metric(t, "device_write_ios_per_txn"), 3000 / 450.0);  // the distinct devices' sum
    EXPECT_FALSE(t.details.at("demand").contains("shared"));
    for (const Interval& iv : t.intervals) EXPECT_DOUBLE_EQ(*interval_value(iv, "device_w_s"), 300);
    for (const Json& row : t.details.at("devices")) EXPECT_TRUE(row.at("counted").get<bool>()) << row;
  }
  // Three ranks: two on host a's vda, one on host b's: a's once, plus b's.
  const RunRecord three = merged({{"a", {"vda"}}, {"a", {"vda"}}, {"b", {"vda"}}});
  const TestRecord& t = three.tests.at(0);
  EXPECT_DOUBLE_EQ(*metric(t, "device_write_ios"), 1000 + 3000);
  EXPECT_DOUBLE_EQ(*metric(t, "tps"), 300);
  for (const Interval& iv : t.intervals) EXPECT_DOUBLE_EQ(*interval_value(iv, "device_w_s"), 400);
}

TEST(MergeDevices, APartitionAndItsDiskAreNeverAddedUp) {
  const RunRecord m = merged({{"a", {"sda1", "sda"}}, {"a", {"sda"}}});
  const TestRecord& t = m.tests.at(0);
  EXPECT_FALSE(metric(t, "device_write_ios"));
  EXPECT_FALSE(metric(t, "device_w_s"));
  EXPECT_TRUE(per_host_only(t, "device_write_ios"));
  EXPECT_DOUBLE_EQ(*metric(t, "tps"), 150);
  for (const Interval& iv : t.intervals) {
    EXPECT_FALSE(interval_value(iv, "device_w_s"));
    EXPECT_TRUE(interval_value(iv, "tps"));
  }
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].find("devices of one stack (sda1 and sda)"), std::string::npos) << t.warnings[0];
  // The demand is per host then: each rank's own, under the same warning.
  EXPECT_FALSE(metric(t, "device_write_ios_per_txn"));
  EXPECT_TRUE(per_host_only(t, "device_write_ios_per_txn"));
  EXPECT_TRUE(t.details.at("demand").contains("per_host"));
  EXPECT_DOUBLE_EQ(m.hosts[1]["tests"][0]["metrics"]["device_write_ios_per_txn"].get<double>(), 1000 / 150.0);
  for (const Json& row : t.details.at("devices")) EXPECT_FALSE(row.at("counted").get<bool>()) << row;
}

TEST(MergeDevices, RecordsWithoutTelemetryMergeAsBefore) {
  std::vector<MergeInput> in;
  for (int k = 0; k < 2; ++k) {
    in.push_back({device_rank(k, 2, "a", {"vda"}), "r" + std::to_string(k)});
    in.back().record.tests[0].details = Json::object();
  }
  const RunRecord m = merge_host_records(std::move(in));
  const TestRecord& t = m.tests.at(0);
  EXPECT_DOUBLE_EQ(*metric(t, "device_write_ios"), 3000);
  EXPECT_FALSE(t.details.contains("devices"));
  EXPECT_FALSE(t.details.contains("demand"));
}

/// Rank `rank` of an io test on host "h<rank>"'s nvme0n1, `interval_s` 1 and `duration:` 14 s:
/// intervals [a, b] of `ios` I/Os each, the device reading twice per I/O (8 KiB reads for 4 KiB).
RunRecord windowed_rank(int rank, const std::vector<std::tuple<double, double, int>>& pieces) {
  RunRecord r = device_rank(rank, 2, "h" + std::to_string(rank), {"nvme0n1"});
  r.config = Json{{"tests", Json::array({Json{{"name", "oltp"}, {"interval_s", 1.0}, {"duration_s", 14.0}}})}};
  r.cohort["hosts"] = Json::array({"h0", "h1"});
  TestRecord& t = r.tests[0];
  t.kind = "io";
  t.intervals.clear();
  double ios = 0;
  for (const auto& [a, b, n] : pieces) {
    const double rate = n / (b - a);
    t.intervals.push_back(Interval{.t_s = b,
                                   .duration_s = b - a,
                                   .values = {{"iops", rate},
                                              {"device_r_s", 2 * rate},
                                              {"device_w_s", 0},
                                              {"device_rmb_s", 2 * rate * 4096 / 1e6},
                                              {"device_wmb_s", 0}}});
    ios += n;
  }
  const double s = std::get<1>(pieces.back());
  t.measured_s = s;
  t.metrics = {{"iops", ios / s, "1/s", ""},
               {"ios", ios, "count", ""},
               {"device_r_s", 2 * ios / s, "1/s", ""},
               {"device_w_s", 0, "1/s", ""},
               {"device_rmb_s", 2 * ios * 4096 / 1e6 / s, "MB/s", ""},
               {"device_wmb_s", 0, "MB/s", ""},
               {"device_read_ios", 2 * ios, "count", ""},
               {"device_read_bytes", 2 * ios * 4096, "bytes", ""},
               {"device_write_ios", 0, "count", ""},
               {"device_write_bytes", 0, "bytes", ""}};
  return r;
}

TEST(MergeDevices, TheDemandOfRanksThatMeasuredDifferentWindowsIsOverTheCommonWindow) {
  // Rank 1 stopped 2-8.3 s, so its measured phase ran on to 20 s; the common window is 0-14 s.
  // Its last 6 s (6,000 I/Os, 12,000 device reads) are outside it: a ratio of the ranks' whole
  // counts would still be 2, so rank 1's device reads outside the window are doubled here to show
  // which window the figure is over.
  std::vector<std::tuple<double, double, int>> p0, p1{{0, 1, 1000}, {1, 2, 1000}, {2, 8.3, 300}, {8.3, 9, 650}};
  for (int k = 0; k < 14; ++k) p0.emplace_back(k, k + 1, 1000);
  for (int k = 9; k < 20; ++k) p1.emplace_back(k, k + 1, 1000);
  RunRecord r1 = windowed_rank(1, p1);
  for (Interval& iv : r1.tests[0].intervals)
    if (iv.t_s > 14)
      for (auto& [n, v] : iv.values)
        if (n == "device_r_s" || n == "device_rmb_s") v *= 2;
  r1.tests[0].metrics[6].value += 12000;  // device_read_ios: the reads outside the window
  std::vector<MergeInput> in{{windowed_rank(0, p0), "r0"}, {std::move(r1), "r1"}};
  const RunRecord m = merge_host_records(std::move(in));
  const TestRecord& t = m.tests.at(0);
  ASSERT_TRUE(t.details.at("intervals").contains("headline_over_common_window")) << t.details.dump();
  EXPECT_NE(t.details.at("demand").at("window").get<std::string>().find("the common window (14.000 s)"),
            std::string::npos)
      << t.details.at("demand");
  ASSERT_TRUE(metric(t, "device_read_ios_per_io"));
  EXPECT_NEAR(*metric(t, "device_read_ios_per_io"), 2.0, 1e-3) << "2 device reads per I/O inside the window";
  EXPECT_DOUBLE_EQ(*metric(t, "device_write_ios_per_io"), 0);
}

}  // namespace
}  // namespace drivelab::results
