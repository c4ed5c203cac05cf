// Runs the shipped config/quick.yaml end to end (shortened with --set) and checks the record.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "process.hpp"

namespace {

using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;
using nlohmann::json;

TEST(QuickProtocol, RunsAndWritesACompleteRecord) {
  ScratchDir dir("quick-protocol");
  const auto target = dir.path() / "target";
  const auto out = dir.path() / "out";
  std::filesystem::create_directories(target);
  const auto r = drivelab::testing::run({DRIVELAB_EXE,
                                         "run",
                                         std::string(DRIVELAB_SOURCE_DIR) + "/config/quick.yaml",
                                         "--target",
                                         target.string(),
                                         "--out",
                                         out.string(),
                                         "--set",
                                         "tests[*].warmup=1s",
                                         "--set",
                                         "tests[*].duration=4s",
                                         "--set",
                                         "tests[*].interval=1s",
                                         "--set",
                                         "tests[0].tpcc.warehouses=1",
                                         "--set",
                                         "tests[0].tpcc.users=2",
                                         "--set",
                                         "tests[1].io.file_size=64MiB",
                                         "--set",
                                         "tests[2].io.file_size=64MiB",
                                         "--set",
                                         "tests[3].vdbench.file_size=64MiB",
                                         "--set",
                                         "tests[4].vdbench.file_size=64MiB",
                                         "--set",
                                         "tests[5].video.file_size=256MiB",
                                         "--set",
                                         "tests[6].render.memory_budget=16MiB",
                                         "--set",
                                         "tests[7].vdi.phase_length=1s",
                                         "--set",
                                         "tests[7].vdi.stagger=20ms",
                                         "--set",
                                         "tests[7].vdi.file_size=64MiB"},
                                        dir.path());
  ASSERT_EQ(r.status, 0) << r.out << r.err;

  const json rec = json::parse(read_file(out / "latest.json"));
  EXPECT_EQ(rec["schema"], "drivelab.run/1");
  EXPECT_EQ(rec["status"], "complete");
  EXPECT_EQ(rec["protocol"], "quick");
  EXPECT_FALSE(rec["tool"]["version"].get<std::string>().empty());
  EXPECT_GT(rec["host"]["cpu_cores"].get<int>(), 0);
  EXPECT_EQ(rec["target"]["kind"], "directory");
  EXPECT_FALSE(rec["target"]["filesystem"].is_null());
  // The effective config shows the overrides.
  EXPECT_EQ(rec["config"]["tests"][0]["tpcc"]["warehouses"], 1);
  ASSERT_EQ(rec["tests"].size(), 8u);

  const json& oltp = rec["tests"][0];
  EXPECT_EQ(oltp["kind"], "tpcc");
  EXPECT_EQ(oltp["status"], "complete") << oltp["reason"];
  EXPECT_GT(oltp["metrics"]["tps"]["value"].get<double>(), 0.0);
  EXPECT_GT(oltp["metrics"]["tpm_c"]["value"].get<double>(), 0.0);
  EXPECT_GE(oltp["intervals"].size(), 3u);
  ASSERT_GE(oltp["checks"].size(), 4u);
  for (const auto& c : oltp["checks"]) EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();

  for (int i = 1; i <= 2; ++i) {
    const json& io = rec["tests"][i];
    EXPECT_EQ(io["kind"], "io");
    EXPECT_EQ(io["status"], "complete") << io["reason"];
    EXPECT_GT(io["metrics"]["iops"]["value"].get<double>(), 0.0);
    EXPECT_GT(io["metrics"]["latency_p99_us"]["value"].get<double>(), 0.0);
    EXPECT_GT(io["histograms"]["latency"]["count"].get<double>(), 0.0);
  }

  // The short synthetic forms: a curve (max run + 3 points), a mix at max, a video test.
  const json& curve = rec["tests"][3];
  EXPECT_EQ(curve["kind"], "vdbench");
  EXPECT_EQ(curve["status"], "complete") << curve["reason"];
  EXPECT_GT(curve["metrics"]["iops"]["value"].get<double>(), 0.0);
  EXPECT_EQ(curve["details"]["points"].size(), 4u) << curve["details"]["points"].dump();
  const json& mix = rec["tests"][4];
  EXPECT_EQ(mix["status"], "complete") << mix["reason"];
  EXPECT_GT(mix["metrics"]["iops"]["value"].get<double>(), 0.0);
  const json& video = rec["tests"][5];
  EXPECT_EQ(video["kind"], "video");
  EXPECT_EQ(video["status"], "complete") << video["reason"];
  EXPECT_GT(video["metrics"]["write_mb_s"]["value"].get<double>(), 0.0);
  EXPECT_GT(video["metrics"]["read_mb_s"]["value"].get<double>(), 0.0);
  const json& render = rec["tests"][6];
  EXPECT_EQ(render["kind"], "render");
  EXPECT_EQ(render["status"], "complete") << render["reason"];
  EXPECT_GT(render["metrics"]["total_s"]["value"].get<double>(), 0.0);
  for (const auto& c : render["checks"]) EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();
  // The short VDI boot storm: replayed whole, counts and bytes equal the model's.
  const json& vdi = rec["tests"][7];
  EXPECT_EQ(vdi["kind"], "vdi");
  EXPECT_EQ(vdi["status"], "complete") << vdi["reason"];
  EXPECT_GT(vdi["metrics"]["iops"]["value"].get<double>(), 0.0);
  EXPECT_EQ(vdi["details"]["trace"]["ios"], 50 * 150);  // 150 IOPS x 1 s per linked clone
  ASSERT_GE(vdi["checks"].size(), 3u);
  for (const auto& c : vdi["checks"]) EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();

  // The journal ends with run_end, and the summary names every test.
  const std::string run_id = rec["run_id"];
  const std::string journal = read_file(out / (run_id + ".journal.jsonl"));
  EXPECT_NE(journal.find("\"run_end\""), std::string::npos);
  for (const char* name :
       {"oltp", "4k-random-read", "4k-random-write", "4k-random-read-curve", "sql-mix", "video", "render", "vdi-boot"})
    EXPECT_NE(r.out.find(name), std::string::npos);
  // Files were created only inside the target directory, with the drivelab- prefix.
  for (const auto& e : std::filesystem::directory_iterator(target))
    EXPECT_EQ(e.path().filename().string().rfind("drivelab-", 0), 0u) << e.path();
}

}  // namespace

namespace {

TEST(QuickProtocol, OnlyRunsTheNamedTestsAndRejectsAnUnknownName) {
  ScratchDir dir("quick-only");
  const auto target = dir.path() / "target";
  const auto out = dir.path() / "out";
  std::filesystem::create_directories(target);
  const std::string quick = std::string(DRIVELAB_SOURCE_DIR) + "/config/quick.yaml";
  // An unknown name: exit 2 before anything runs, naming the protocol's tests.
  const auto bad = drivelab::testing::run(
      {DRIVELAB_EXE, "run", quick, "--target", target.string(), "--out", out.string(), "--only", "video,no-such-test"},
      dir.path());
  EXPECT_EQ(bad.status, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("no test named 'no-such-test'"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("vdi-boot"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(out / "latest.json"));
  // One test by name: the record holds it alone, its effective config too.
  const auto r =
      drivelab::testing::run({DRIVELAB_EXE, "run", quick, "--target", target.string(), "--out", out.string(), "--only",
                              "video", "--set", "tests[5].video.file_size=64MiB", "--set", "tests[*].warmup=0s",
                              "--set", "tests[*].duration=2s", "--set", "tests[*].interval=1s"},
                             dir.path());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json rec = json::parse(read_file(out / "latest.json"));
  ASSERT_EQ(rec["tests"].size(), 1u);
  EXPECT_EQ(rec["tests"][0]["name"], "video");
  EXPECT_EQ(rec["tests"][0]["status"], "complete") << rec["tests"][0]["reason"];
  EXPECT_EQ(rec["config"]["tests"].size(), 1u);
}

}  // namespace
