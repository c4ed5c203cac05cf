#pragma once
// Merged multi-host records as the multi-host spec writes them (results/merge.hpp: run_id =
// job_id, target {"kind": "hosts"}, cohort, hosts[] with each host's own test, groups.lab_conventions),
// built by the reporter's tests as JSON: report_multihost_test and the browser test's page.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "drivelab/results/record.hpp"

namespace drivelab::report::testing {

using results::Json;

/// One host of a fixture: its name, status and figures of the one test.
struct FixtureHost {
  std::string name;
  std::string status = "complete";  ///< a Status word or "missing" (no tests then)
  double tps = 0;
  double latency_avg_ms = 0;
  std::vector<double> interval_tps;  ///< per 1 s interval
};

inline constexpr const char* kTest = "sqlserver-oltp";

/// The test's configuration: the published SQL Server shape (1,500 warehouses, 15,000 users), so
/// the published 4-VM row ranks with a 4-host result of it.
inline Json test_config() { return Json{{"warehouses", 1500}, {"users", 15000}}; }

inline Json metric(double value, const char* unit, const char* description) {
  return Json{{"value", value}, {"unit", unit}, {"description", description}};
}

/// A single-host record of the test (no cohort, no hosts): the record a run without mpirun writes.
inline Json single_host_record(const std::string& run_id, double tps, double latency_avg_ms) {
  results::RunRecord rec;
  rec.run_id = run_id;
  rec.status = results::Status::complete;
  rec.target = Json{{"kind", "directory"}, {"model", "Single drive"}};
  results::TestRecord t;
  t.name = kTest;
  t.kind = "tpcc";
  t.status = results::Status::complete;
  t.config = test_config();
  t.metrics = {{"tps", tps, "1/s", "transactions per second"},
               {"latency_avg_ms", latency_avg_ms, "ms", "average transaction latency"}};
  t.intervals = {{1, 1, {{"tps", tps}, {"lat_avg_ms", latency_avg_ms}}}};
  rec.tests.push_back(std::move(t));
  return results::to_json(rec);
}

/// The merged record of `hosts` (rank = index), as results/merge.hpp writes it: run_id = job_id,
/// target {"kind": "hosts", ...}, cohort {job_id, size, ranks}, the merged test (rates summed,
/// latency from the merged histogram: here `merged_latency_avg_ms`), groups.lab_conventions, and
/// hosts[] with each present host's own test.
inline Json merged_record(const std::string& job_id, const std::vector<FixtureHost>& hosts,
                          double merged_latency_avg_ms, const std::string& status = "complete",
                          const std::string& reason = "") {
  const auto n = hosts.size();
  double tps = 0, mean_latency = 0;
  std::size_t present = 0;
  std::vector<double> interval_tps;
  for (const auto& h : hosts) {
    if (h.status == "missing") continue;
    ++present;
    tps += h.tps;
    mean_latency += h.latency_avg_ms;
    if (interval_tps.empty()) interval_tps.assign(h.interval_tps.size(), 0);
    for (std::size_t k = 0; k < interval_tps.size() && k < h.interval_tps.size(); ++k)
      interval_tps[k] += h.interval_tps[k];
  }
  mean_latency /= static_cast<double>(present);
  Json merged_intervals = Json::array();
  for (std::size_t k = 0; k < interval_tps.size(); ++k)
    merged_intervals.push_back(Json{{"t_s", static_cast<double>(k + 1)},
                                    {"duration_s", 1.0},
                                    {"values", Json{{"tps", interval_tps[k]}, {"lat_avg_ms", merged_latency_avg_ms}}}});
  Json latency = metric(merged_latency_avg_ms, "ms", "average transaction latency");
  latency["of"] = Json{{"histogram", "latency"}, {"figure", "avg"}};
  const Json test{
      {"name", kTest},
      {"kind", "tpcc"},
      {"status", status},
      {"reason", reason},
      {"started_at", "2026-12-02T10:00:00Z"},
      {"finished_at", "2026-12-02T10:01:00Z"},
      {"warmup_s", 0.0},
      {"measured_s", static_cast<double>(interval_tps.size())},
      {"config", test_config()},
      {"metrics", Json{{"tps", metric(tps, "1/s", "transactions per second")}, {"latency_avg_ms", latency}}},
      {"groups",
       Json{{"lab_conventions",
             Json{{"sum_of_hosts_tps", metric(tps, "1/s", "the review labs' convention, not an exact figure")},
                  {"mean_of_hosts_latency_avg_ms",
                   metric(mean_latency, "ms", "the review labs' convention, not an exact figure")}}}}},
      {"histograms", Json::object()},
      {"intervals", merged_intervals},
      {"checks", Json::array()},
      {"warnings", Json::array()},
      {"details", Json{{"start_skew_ns", Json{{"prepare", 1200}, {"warmup", 900}, {"run", 800}}},
                       {"per_host_only", Json::array()}}}};
  Json host_list = Json::array();
  Json ranks = Json::array();
  for (std::size_t k = 0; k < n; ++k) {
    const FixtureHost& h = hosts[k];
    Json entry{
        {"rank", k},
        {"name", h.name},
        {"run_id", fmt::format("{}-r{}", job_id, k)},
        {"status", h.status},
        {"reason", h.status == "missing" ? fmt::format("no record or journal of rank {} (host {})", k, h.name) : ""},
        {"target", Json{{"kind", "directory"}, {"model", "Drive of " + h.name}}},
        {"clock_offset_ns", k == 0 ? 0 : 1000 * static_cast<int>(k)},
        {"tests", Json::array()}};
    if (h.status != "missing") {
      ranks.push_back(k);
      Json intervals = Json::array();
      for (std::size_t i = 0; i < h.interval_tps.size(); ++i)
        intervals.push_back(Json{{"t_s", static_cast<double>(i + 1)},
                                 {"duration_s", 1.0},
                                 {"values", Json{{"tps", h.interval_tps[i]}, {"lat_avg_ms", h.latency_avg_ms}}}});
      entry["tests"].push_back(Json{{"name", kTest},
                                    {"status", h.status},
                                    {"reason", ""},
                                    {"metrics", Json{{"tps", h.tps}, {"latency_avg_ms", h.latency_avg_ms}}},
                                    {"intervals", intervals}});
    }
    host_list.push_back(std::move(entry));
  }
  return Json{{"schema", "drivelab.run/1"},
              {"run_id", job_id},
              {"status", status},
              {"reason", reason},
              {"protocol", "multihost"},
              {"protocol_file", "multihost.yaml"},
              {"started_at", "2026-12-02T10:00:00Z"},
              {"finished_at", "2026-12-02T10:01:00Z"},
              {"seed", 1},
              {"command_line", Json::array({"drivelab", "run", "multihost.yaml"})},
              {"tool", Json{{"name", "drivelab"}}},
              {"host", Json{{"hostname", hosts.front().name}}},
              {"target", Json{{"kind", "hosts"}, {"hosts", n}, {"description", fmt::format("{} hosts", n)}}},
              {"config", Json::object()},
              {"warnings", Json::array()},
              {"cohort", Json{{"job_id", job_id}, {"size", n}, {"ranks", ranks}}},
              {"hosts", host_list},
              {"tests", Json::array({test})}};
}

/// Rank `rank`'s own record of job `job_id` on `hosts` (by rank): a single-host record with
/// run_id `<job_id>-r<rank>` and the cohort every rank writes.
inline Json rank_record(const std::string& job_id, std::size_t rank, const std::vector<std::string>& hosts,
                        double tps) {
  Json rec = single_host_record(fmt::format("{}-r{}", job_id, rank), tps, 5.0);
  rec["cohort"] = Json{{"job_id", job_id},
                       {"rank", rank},
                       {"size", hosts.size()},
                       {"hosts", hosts},
                       {"clock_offset_ns", rank == 0 ? 0 : 2500},
                       {"clock_offset_uncertainty_ns", 400}};
  return rec;
}

inline std::vector<FixtureHost> four_hosts() {
  return {{"a", "complete", 100, 5.0, {98, 102}},
          {"b", "complete", 110, 4.5, {108, 112}},
          {"c", "complete", 90, 5.5, {91, 89}},
          {"d", "complete", 105, 4.8, {104, 106}}};
}

}  // namespace drivelab::report::testing
