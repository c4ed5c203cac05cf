// Issue 16: `shared_database: true` — two ranks under the real mpirun drive ONE PostgreSQL server
// (the test services' server): rank 0 loads the schema once and rank 1 waits for it and reads its
// C-Load; the job's 4 terminals are split 2 + 2 (terminal i on rank i mod 2); the consistency
// conditions are checked once, by rank 0, after both ranks' terminals stopped (the runner's
// verify barrier); the merged record's New-Orders are the sum of the ranks'.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "mpirun.hpp"
#include "process.hpp"
#include "services.hpp"

namespace {

namespace fs = std::filesystem;
using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;
using nlohmann::json;

TEST(SharedDatabase, TwoRanksLoadOnceSplitTheTerminalsAndCheckOnce) {
  if (::access("/usr/bin/mpirun", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/mpirun (apt-get install openmpi-bin)";
  const auto s = drivelab::testing::services();
  ASSERT_TRUE(s);
  ScratchDir dir("shared-db");
  const std::string database = drivelab::testing::unique_database_name();
  const auto psql = [&](const std::string& sql) {
    return drivelab::testing::run({"/usr/bin/psql", "-X", "-q", "-h", s->pg_socket_dir, "-p",
                                   std::to_string(s->pg_port), "-U", s->pg_user, "-d", s->pg_database, "-c", sql},
                                  dir.path(), std::chrono::seconds(60));
  };
  psql("DROP DATABASE IF EXISTS \"" + database + "\"");
  const auto created = psql("CREATE DATABASE \"" + database + "\"");
  ASSERT_EQ(created.status, 0) << created.err;
  const fs::path protocol = dir.path() / "p.yaml";
  std::ofstream(protocol) << "protocol: shared\n"
                             "tests:\n"
                             "  - name: oltp\n"
                             "    kind: tpcc\n"
                             "    warmup: 1s\n"
                             "    duration: 3s\n"
                             "    interval: 1s\n"
                             "    tpcc:\n"
                             "      backend: postgres\n"
                             "      database: " +
                                 database +
                                 "\n"
                                 "      server: {connection: 'host=" +
                                 s->pg_socket_dir + " port=" + std::to_string(s->pg_port) + "', user: " + s->pg_user +
                                 "}\n"
                                 "      warehouses: 2\n"
                                 "      users: 4\n"
                                 "      scale_items: 1000\n"
                                 "      shared_database: true\n";
  std::vector<std::string> args = drivelab::testing::mpirun_local(2, {});
  for (const std::string& a :
       {std::string(DRIVELAB_EXE), std::string("run"), protocol.string(), std::string("--target"),
        (dir.path() / "t{rank}").string(), std::string("--out"), (dir.path() / "out").string(), std::string("--quiet")})
    args.push_back(a);
  const auto r = drivelab::testing::run(args, dir.path(), std::chrono::seconds(300));
  psql("DROP DATABASE IF EXISTS \"" + database + "\"");
  ASSERT_EQ(r.status, 0) << r.out << r.err;

  std::map<int, json> ranks;
  json merged;
  for (const auto& e : fs::directory_iterator(dir.path() / "out")) {
    const std::string name = e.path().filename().string();
    if (e.is_symlink() || !name.ends_with(".json")) continue;
    const json rec = json::parse(read_file(e.path()));
    if (rec.contains("cohort") && rec["cohort"].contains("rank"))
      ranks[rec["cohort"]["rank"]] = rec;
    else
      merged = rec;
  }
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
  const auto metric = [](const json& t, const char* name) {
    return t.at("metrics").at(name).at("value").get<double>();
  };
  EXPECT_GT(metric(t0, "tpm_c"), 0);
  EXPECT_GT(metric(t1, "tpm_c"), 0);
  EXPECT_NEAR(metric(merged["tests"][0], "tpm_c"), metric(t0, "tpm_c") + metric(t1, "tpm_c"), 1e-6);
}

}  // namespace
