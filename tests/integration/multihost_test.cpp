// Multi-host runs on Open MPI (issue 16, docs/multihost.md): 4 ranks of the real drivelab binary
// started by the real mpirun on this host over TCP on lo (the transport real hosts use), with a
// TPC-C test on SQLite per rank, an io test and a short vdbench curve. The merged record written
// online by rank 0 must be the exact merge of the four per-rank records (histograms bin by bin,
// TPS and IOPS summed) and byte for byte what `drivelab results merge` makes of the four files.
// A rank killed with SIGKILL mid-test ends the whole run within 30 s, leaves no process behind,
// every survivor's record valid, and `results merge` of the survivors names the lost host.
// With --metrics-listen each rank serves its own live figures on the port plus its rank.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "http_get.hpp"  // tests/support
#include "mpirun.hpp"
#include "process.hpp"

namespace {

namespace fs = std::filesystem;
using drivelab::testing::Child;
using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;
using nlohmann::json;

using drivelab::testing::kMpirun;

/// mpirun on this host: N ranks over TCP on lo, as root when the tests run as root; on Open MPI
/// 4.1 a rank that dies is answered by SIGTERM to the others 8 s later and SIGKILL 8 s after that
/// (odls_base_sigkill_timeout 8, docs/multihost.md "When a host or rank dies"): time for them to
/// write their records (tests/support/mpirun.hpp: the options of each Open MPI release).
std::vector<std::string> mpirun(int ranks, const std::vector<std::string>& command) {
  return drivelab::testing::mpirun_local(ranks, command);
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
}

json read_json(const fs::path& p) { return json::parse(read_file(p)); }

/// The record files in `out`: per-rank ("<job>-r<k>.json") by rank, and the merged one.
struct Records {
  std::map<int, fs::path> ranks;
  fs::path merged;
};
Records find_records(const fs::path& out) {
  Records r;
  static const std::regex rank_re(R"((.*)-r(\d+)\.json)");
  for (const auto& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    if (e.is_symlink() || !name.ends_with(".json")) continue;
    std::smatch m;
    if (std::regex_match(name, m, rank_re))
      r.ranks[std::stoi(m[2])] = e.path();
    else if (name.starts_with("20"))
      r.merged = e.path();
  }
  return r;
}

/// lower_ns -> count of a histogram as written (bins: [[lower_ns, upper_ns, count], ...]).
std::map<std::int64_t, std::uint64_t> bins_of(const json& h) {
  std::map<std::int64_t, std::uint64_t> out;
  for (const auto& b : h.at("bins")) out[b.at(0).get<std::int64_t>()] += b.at(2).get<std::uint64_t>();
  return out;
}

double metric(const json& test, const std::string& name) {
  return test.at("metrics").at(name).at("value").get<double>();
}

bool have_mpirun() { return fs::exists(kMpirun); }

TEST(Multihost, FourRanksOverTcpMergeExactlyAndOfflineMergeIsByteIdentical) {
  if (!have_mpirun()) GTEST_SKIP() << "no mpirun (apt-get install openmpi-bin)";
  ScratchDir dir("multihost4");
  const fs::path protocol = dir.path() / "p.yaml";
  write_text(protocol, R"(protocol: multihost-ci
seed: 7
defaults:
  interval: 1s
tests:
  - name: oltp
    kind: tpcc
    warmup: 1s
    duration: 4s
    tpcc: {backend: sqlite, warehouses: 1, users: 2, think: none}
  - name: rand-read
    kind: io
    warmup: 0s
    duration: 3s
    io: {engine: psync, rw: randread, xfersize: 4k, iodepth: 1, jobs: 1, file_size: 16MiB, direct: false}
  - name: curve
    kind: vdbench
    warmup: 1s
    duration: 2s
    vdbench:
      engine: psync
      threads: 2
      file_size: 16MiB
      direct: false
      iorate: curve
      curve: [50]
      workloads:
        - {name: rr, xfersize: 4k, rdpct: 100, seekpct: 100}
)");
  const fs::path out = dir.path() / "out";
  const auto r =
      drivelab::testing::run(mpirun(4, {DRIVELAB_EXE, "run", protocol.string(), "--target",
                                        (dir.path() / "t{rank}").string(), "--out", out.string(), "--quiet"}),
                             dir.path(), std::chrono::seconds(600));
  ASSERT_EQ(r.status, 0) << r.out << r.err;

  const Records recs = find_records(out);
  ASSERT_EQ(recs.ranks.size(), 4u) << r.out;
  ASSERT_FALSE(recs.merged.empty()) << r.out;
  const json merged = read_json(recs.merged);
  std::vector<json> ranks;
  for (const auto& [k, p] : recs.ranks) ranks.push_back(read_json(p));

  EXPECT_EQ(merged["status"], "complete") << merged.dump(1).substr(0, 2000);
  ASSERT_EQ(merged["hosts"].size(), 4u);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(ranks[k]["cohort"]["rank"], k);
    EXPECT_EQ(ranks[k]["cohort"]["size"], 4);
    EXPECT_EQ(ranks[k]["cohort"]["job_id"], merged["run_id"]);
    EXPECT_EQ(merged["hosts"][k]["rank"], k);
    EXPECT_EQ(merged["hosts"][k]["status"], "complete");
    for (const auto& t : ranks[k]["tests"]) {
      EXPECT_EQ(t["status"], "complete") << "rank " << k << " " << t["name"] << ": " << t["reason"];
      for (const char* phase : {"prepare", "warmup", "run"}) EXPECT_TRUE(t["barriers"].contains(phase)) << t["name"];
    }
  }
  ASSERT_EQ(merged["tests"].size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const json& mt = merged["tests"][i];
    SCOPED_TRACE(mt["name"].get<std::string>());
    // every histogram: the bin-by-bin sum of the four
    ASSERT_FALSE(mt["histograms"].empty());
    for (const auto& [name, h] : mt["histograms"].items()) {
      std::map<std::int64_t, std::uint64_t> sum;
      std::uint64_t count = 0;
      for (const auto& rk : ranks) {
        ASSERT_TRUE(rk["tests"][i]["histograms"].contains(name)) << name;
        for (const auto& [lo, c] : bins_of(rk["tests"][i]["histograms"][name])) sum[lo] += c;
        count += rk["tests"][i]["histograms"][name]["count"].get<std::uint64_t>();
      }
      EXPECT_EQ(bins_of(h), sum) << name;
      EXPECT_EQ(h["count"].get<std::uint64_t>(), count) << name;
    }
    // TPS and IOPS: the sums of the ranks'
    const std::string rate = mt["kind"] == "tpcc" ? "tps" : "iops";
    double total = 0;
    for (const auto& rk : ranks) total += metric(rk["tests"][i], rate);
    EXPECT_GT(total, 0);
    EXPECT_NEAR(metric(mt, rate), total, 1e-9 * total) << rate;
  }
  // The curve's point ran at its share of the aggregate max run on each rank.
  const json& curve = merged["tests"][2];
  EXPECT_TRUE(curve["details"].contains("start_skew_ns")) << curve["details"].dump();
  // The merged curve's points: the aggregate's (requested and achieved IOPS the ranks' sums,
  // the mean latency from the merged per-point histogram), what `report` draws.
  ASSERT_TRUE(curve["details"].contains("points")) << curve["details"].dump();
  const json& points = curve["details"]["points"];
  ASSERT_EQ(points.size(), ranks.front()["tests"][2]["details"]["points"].size());
  for (std::size_t k = 0; k < points.size(); ++k) {
    double requested = 0, achieved = 0;
    for (const auto& rk : ranks) {
      requested += rk["tests"][2]["details"]["points"][k]["requested_iops"].get<double>();
      achieved += rk["tests"][2]["details"]["points"][k]["achieved_iops"].get<double>();
    }
    EXPECT_NEAR(points[k]["requested_iops"].get<double>(), requested, 1e-9 * (requested + 1)) << k;
    EXPECT_NEAR(points[k]["achieved_iops"].get<double>(), achieved, 1e-9 * achieved) << k;
    const std::string g = points[k]["group"];
    EXPECT_GT(points[k]["latency_avg_us"].get<double>(), 0) << g;
  }

  // Offline: the same merged record, byte for byte.
  std::vector<std::string> merge_args{DRIVELAB_EXE, "results", "merge"};
  for (const auto& [k, p] : recs.ranks) merge_args.push_back(p.string());
  merge_args.push_back("-o");
  merge_args.push_back((dir.path() / "offline.json").string());
  const auto m = drivelab::testing::run(merge_args, dir.path(), std::chrono::seconds(120));
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  EXPECT_EQ(read_file(dir.path() / "offline.json"), read_file(recs.merged));
}

TEST(Multihost, EachRankServesItsLiveMetricsOnThePortPlusItsRank) {
  if (!have_mpirun()) GTEST_SKIP() << "no mpirun (apt-get install openmpi-bin)";
  ScratchDir dir("multihost-metrics");
  const int port = drivelab::test_support::free_loopback_ports(2);
  Child job(
      mpirun(2, {DRIVELAB_EXE, "io", "--engine", "null", "--rw", "randread", "--warmup", "0s", "--duration", "8s",
                 "--interval", "1s", "--target", (dir.path() / "t{rank}").string(), "--out",
                 (dir.path() / "out").string(), "--quiet", "--metrics-listen", "127.0.0.1:" + std::to_string(port)}),
      dir.path() / "stdout.txt", dir.path() / "stderr.txt");
  std::map<int, std::string> served;  // rank -> its scrape once it has an interval
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (served.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (int rank : {0, 1}) {
      const auto body = drivelab::test_support::http_get(port + rank, "/metrics");
      if (body && body->find("\ndrivelab_interval_iops{") != std::string::npos) served[rank] = *body;
    }
  }
  ASSERT_EQ(served.size(), 2u) << job.out() << job.err();
  for (const auto& [rank, body] : served) {
    static const std::regex iops_re(
        R"re(\ndrivelab_interval_iops\{host="[^"]+",rank="(\d+)",kind="io",phase="run",test="io"\} (\S+)\n)re");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(body, m, iops_re)) << body;
    EXPECT_EQ(m[1], std::to_string(rank));
    EXPECT_GT(std::stod(m[2]), 0);
  }
  EXPECT_EQ(job.wait(std::chrono::seconds(120)), 0) << job.out() << job.err();
}

/// Processes whose command line names `marker` (the test's own directory).
std::set<pid_t> processes_naming(const std::string& marker) {
  std::set<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = read_file(e.path() / "cmdline");
    for (char& c : cmd)
      if (c == '\0') c = ' ';
    if (cmd.find(marker) != std::string::npos && std::stoi(name) != ::getpid()) out.insert(std::stoi(name));
  }
  return out;
}

/// The drivelab process of rank `rank` among `pids` (its environment has OMPI_COMM_WORLD_RANK).
pid_t rank_pid(const std::set<pid_t>& pids, int rank) {
  const std::string want = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  for (pid_t p : pids) {
    std::string env = read_file(fs::path("/proc") / std::to_string(p) / "environ");
    for (std::size_t at = 0; at < env.size();) {
      const std::size_t end = env.find('\0', at);
      if (env.compare(at, (end == std::string::npos ? env.size() : end) - at, want) == 0) return p;
      if (end == std::string::npos) break;
      at = end + 1;
    }
  }
  return -1;
}

TEST(Multihost, SigkillOfOneRankEndsTheRunWithin30sAndSurvivorsMergeNamingTheLostHost) {
  if (!have_mpirun()) GTEST_SKIP() << "no mpirun (apt-get install openmpi-bin)";
  ScratchDir dir("multihost-kill");
  const fs::path out = dir.path() / "out";
  Child job(
      mpirun(4, {DRIVELAB_EXE, "io", "--engine", "null", "--rw", "randread", "--warmup", "0s", "--duration", "300s",
                 "--interval", "1s", "--target", (dir.path() / "t{rank}").string(), "--out", out.string(), "--quiet"}),
      dir.path() / "stdout.txt", dir.path() / "stderr.txt");
  // Wait until every rank is in its measured phase (its record has intervals).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool measuring = false;
  while (!measuring && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (!fs::exists(out)) continue;
    const Records recs = find_records(out);
    if (recs.ranks.size() < 4) continue;
    measuring = true;
    for (const auto& [k, p] : recs.ranks) {
      const json j = json::parse(read_file(p), nullptr, false);
      measuring = measuring && !j.is_discarded() && !j["tests"].empty() && j["tests"][0]["intervals"].size() >= 2;
    }
  }
  ASSERT_TRUE(measuring) << job.out() << job.err();
  const std::string marker = dir.path().string();
  const pid_t victim = rank_pid(processes_naming(marker), 2);
  ASSERT_GT(victim, 0);
  const auto killed_at = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  const int status = job.wait(std::chrono::seconds(60));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  EXPECT_NE(status, -1) << "mpirun still running 60 s after the kill";
  EXPECT_LT(took, 30.0) << job.out() << job.err();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(processes_naming(marker).empty()) << "processes left behind";

  const Records recs = find_records(out);
  ASSERT_EQ(recs.ranks.size(), 4u);
  std::vector<std::string> merge_args{DRIVELAB_EXE, "results", "merge"};
  for (const auto& [k, p] : recs.ranks) {
    const json j = json::parse(read_file(p), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << p;  // valid, the victim's too (rewritten every interval)
    EXPECT_NE(j["status"], "complete") << p;
    EXPECT_FALSE(j["reason"].get<std::string>().empty()) << p;
    if (k != 2) merge_args.push_back(p.string());
  }
  merge_args.push_back("-o");
  merge_args.push_back((dir.path() / "survivors.json").string());
  const auto m = drivelab::testing::run(merge_args, dir.path(), std::chrono::seconds(120));
  EXPECT_EQ(m.status, 1) << m.out << m.err;  // a partial merged record
  const json merged = read_json(dir.path() / "survivors.json");
  ASSERT_EQ(merged["hosts"].size(), 4u);
  EXPECT_EQ(merged["hosts"][2]["status"], "missing");
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  EXPECT_NE(merged["hosts"][2]["reason"].get<std::string>().find(std::string("rank 2 (host ") + host),
            std::string::npos)
      << merged["hosts"][2].dump();
  EXPECT_NE(merged["reason"].get<std::string>().find("rank 2"), std::string::npos) << merged["reason"];
}

}  // namespace
