// Issue 16: `shared_database: true` — two ranks under the real mpirun drive ONE PostgreSQL server
// (the test services' server): rank 0 loads the schema once and rank 1 waits for it and reads its
// C-Load; the job's 4 terminals are split 2 + 2 (terminal i on rank i mod 2); the consistency
// conditions are checked once, by rank 0, after both ranks' terminals stopped (the runner's
// verify barrier); the merged record's New-Orders are the sum of the ranks'. Issue 34: with three
// ranks, the whole server's counters (server_commits, server_wal_bytes, ...) are in the merged
// record once, the lowest rank's reading, not three times.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "mpirun.hpp"
#include "process.hpp"
#include "services.hpp"

namespace {

namespace fs = std::filesystem;
using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;
using nlohmann::json;

/// The job of one test: a fresh database on the test services' PostgreSQL, a tpcc test with
/// `shared_database: true` run by `ranks` ranks under the real mpirun, the database dropped.
class SharedJob {
 public:
  explicit SharedJob(const char* name) : dir_(name), database_(drivelab::testing::unique_database_name()) {}

  /// psql on the services' maintenance database, unaligned tuples only (-t -A).
  drivelab::testing::Result psql(const std::string& sql) const {
    return drivelab::testing::run({"/usr/bin/psql", "-X", "-q", "-t", "-A", "-h", s_->pg_socket_dir, "-p",
                                   std::to_string(s_->pg_port), "-U", s_->pg_user, "-d", s_->pg_database, "-c", sql},
                                  dir_.path(), std::chrono::seconds(60));
  }
  /// The server's own count of the database's commits (pg_stat_database, flushed by each session).
  double server_commits() const {
    const auto r =
        psql("SELECT coalesce(sum(xact_commit), 0) FROM pg_stat_database WHERE datname = '" + database_ + "'");
    EXPECT_EQ(r.status, 0) << r.err;
    return std::stod(r.out.empty() ? "0" : r.out);
  }
  /// Creates the database (false with a test failure when it cannot).
  bool create() {
    psql("DROP DATABASE IF EXISTS \"" + database_ + "\"");
    const auto created = psql("CREATE DATABASE \"" + database_ + "\"");
    EXPECT_EQ(created.status, 0) << created.err;
    return created.status == 0;
  }
  /// Runs the job (`before_drop` sees the database before it is dropped) and reads its records.
  template <class BeforeDrop>
  drivelab::testing::Result run(int ranks, int warehouses, int users, BeforeDrop&& before_drop) {
    const fs::path protocol = dir_.path() / "p.yaml";
    std::ofstream(protocol) << "protocol: shared\n"
                               "tests:\n"
                               "  - name: oltp\n"
                               "    kind: tpcc\n"
                               "    warmup: 1s\n"
                               "    duration: 3s\n"
                               "    interval: 1s\n"
                               "    tpcc:\n"
                               "      backend: postgres\n"
                               "      database: "
                            << database_ << "\n      server: {connection: 'host=" << s_->pg_socket_dir
                            << " port=" << s_->pg_port << "', user: " << s_->pg_user
                            << "}\n      warehouses: " << warehouses << "\n      users: " << users
                            << "\n      scale_items: 1000\n      shared_database: true\n";
    std::vector<std::string> args = drivelab::testing::mpirun_local(ranks, {});
    for (const std::string& a : {std::string(DRIVELAB_EXE), std::string("run"), protocol.string(),
                                 std::string("--target"), (dir_.path() / "t{rank}").string(), std::string("--out"),
                                 (dir_.path() / "out").string(), std::string("--quiet")})
      args.push_back(a);
    auto r = drivelab::testing::run(args, dir_.path(), std::chrono::seconds(300));
    before_drop();
    psql("DROP DATABASE IF EXISTS \"" + database_ + "\"");
    if (r.status != 0) return r;
    for (const auto& e : fs::directory_iterator(dir_.path() / "out")) {
      const std::string name = e.path().filename().string();
      if (e.is_symlink() || !name.ends_with(".json")) continue;
      const json rec = json::parse(read_file(e.path()));
      if (rec.contains("cohort") && rec["cohort"].contains("rank"))
        ranks_[rec["cohort"]["rank"]] = rec;
      else
        merged_ = rec;
    }
    return r;
  }

  std::map<int, json>& ranks() { return ranks_; }
  const json& merged() const { return merged_; }

 private:
  std::optional<drivelab::testing::Services> s_ = drivelab::testing::services();
  ScratchDir dir_;
  std::string database_;
  std::map<int, json> ranks_;
  json merged_;

 public:
  bool have_services() const { return s_.has_value(); }
};

double metric(const json& t, const char* name) { return t.at("metrics").at(name).at("value").get<double>(); }

TEST(SharedDatabase, TwoRanksLoadOnceSplitTheTerminalsAndCheckOnce) {
  if (::access("/usr/bin/mpirun", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/mpirun (apt-get install openmpi-bin)";
  SharedJob job("shared-db");
  ASSERT_TRUE(job.have_services());
  ASSERT_TRUE(job.create());
  const auto r = job.run(2, 2, 4, [] {});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::map<int, json>& ranks = job.ranks();
  const json& merged = job.merged();
  ASSERT_EQ(ranks.size(), 2u);
  ASSERT_FALSE(merged.is_null());
  const json& t0 = ranks[0]["tests"][0];
  const json& t1 = ranks[1]["tests"][0];
  EXPECT_EQ(t0["status"], "complete") << t0["reason"];
  EXPECT_EQ(t1["status"], "complete") << t1["reason"];
  // Loaded once: rank 0 loaded, rank 1 used rank 0's load (same C-Load).
  EXPECT_EQ(t0["details"]["database_reused"], false);
  EXPECT_TRUE(t0["details"].contains("load"));
  EXPECT_EQ(t1["details"]["database_reused"], true);
  EXPECT_FALSE(t1["details"].contains("load"));
  EXPECT_EQ(t0["details"]["nurand_c_load"], t1["details"]["nurand_c_load"]);
  // The job's 4 terminals, 2 on each rank.
  EXPECT_EQ(t0["details"]["terminals"]["users"], 2);
  EXPECT_EQ(t1["details"]["terminals"]["users"], 2);
  EXPECT_EQ(t1["details"]["shared_database"]["terminals"], "1 + k x 2");
  // Checked once, by rank 0, and every condition holds.
  ASSERT_FALSE(t0["checks"].empty());
  for (const auto& c : t0["checks"]) EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();
  EXPECT_TRUE(t1["checks"].empty()) << t1["checks"].dump();
  EXPECT_EQ(t1["details"]["consistency_checked_by"], "rank 0 (shared_database)");
  EXPECT_TRUE(t0["barriers"].contains("verify"));
  // The job's New-Orders are both ranks'.
  EXPECT_GT(metric(t0, "tpm_c"), 0);
  EXPECT_GT(metric(t1, "tpm_c"), 0);
  EXPECT_NEAR(metric(merged["tests"][0], "tpm_c"), metric(t0, "tpm_c") + metric(t1, "tpm_c"), 1e-6);
}

TEST(SharedDatabase, ThreeRanksServerCountersAreOneServersNotThreeTimesIt) {
  if (::access("/usr/bin/mpirun", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/mpirun (apt-get install openmpi-bin)";
  SharedJob job("shared-db-3");
  ASSERT_TRUE(job.have_services());
  ASSERT_TRUE(job.create());
  // The server's own count over the whole run (load and verify included).
  const double before = job.server_commits();
  double whole_run = 0;
  const auto r = job.run(3, 3, 6, [&] { whole_run = job.server_commits() - before; });
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::map<int, json>& ranks = job.ranks();
  const json& merged = job.merged();
  ASSERT_EQ(ranks.size(), 3u);
  ASSERT_FALSE(merged.is_null());
  const json& m = merged["tests"][0];
  ASSERT_TRUE(m["metrics"].contains("server_commits")) << m["metrics"].dump();
  double transactions = 0;
  for (const auto& [rank, rec] : ranks) {
    const json& t = rec["tests"][0];
    ASSERT_EQ(t["status"], "complete") << t["reason"];
    ASSERT_TRUE(t["details"].contains("shared_database")) << rank;
    transactions += metric(t, "transactions");
  }
  const double merged_commits = metric(m, "server_commits");
  std::cout << "server_commits: merged " << merged_commits << ", rank 0 "
            << metric(ranks[0]["tests"][0], "server_commits") << ", rank 1 "
            << metric(ranks[1]["tests"][0], "server_commits") << ", rank 2 "
            << metric(ranks[2]["tests"][0], "server_commits") << "; the ranks' committed transactions " << transactions
            << "; the server's pg_stat_database over the whole run " << whole_run << "\n";
  // One server's: the lowest rank's reading, once.
  EXPECT_EQ(merged_commits, metric(ranks[0]["tests"][0], "server_commits"));
  EXPECT_EQ(metric(m, "server_wal_bytes"), metric(ranks[0]["tests"][0], "server_wal_bytes"));
  // Within what the server itself counted over the whole run (a sum of three readings was about
  // three times the measured phase's commits, more than the whole run's), and about the commits
  // of every rank's terminals (each rank read the server over the same measured phase).
  EXPECT_LE(merged_commits, whole_run);
  EXPECT_GE(merged_commits, 0.5 * transactions);
  EXPECT_LE(merged_commits, 2.0 * transactions);
  // The terminals' own counts still add up over the ranks.
  EXPECT_EQ(metric(m, "transactions"), transactions);
}

}  // namespace
