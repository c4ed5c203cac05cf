// Every shipped protocol in config/ passes `drivelab validate`, and a short form of each synthetic
// profile (four corners, high-load four corners, database mixes, fio spot checks) runs end to end on
// small files in a scratch target directory and yields a complete record.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "process.hpp"

namespace {

namespace fs = std::filesystem;
using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;
using nlohmann::json;

fs::path config_dir() { return fs::path(DRIVELAB_SOURCE_DIR) / "config"; }

TEST(Profiles, EveryProtocolInConfigValidates) {
  ScratchDir dir("profiles-validate");
  // storagereview-sqlserver.yaml reads the password from DRIVELAB_DB_PASSWORD; validate checks it is set.
  ::setenv("DRIVELAB_DB_PASSWORD", "placeholder", 1);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(config_dir()))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  ASSERT_GE(files.size(), 4u);
  for (const auto& f : files) {
    const auto r = drivelab::testing::run({DRIVELAB_EXE, "validate", f.string()}, dir.path());
    EXPECT_EQ(r.status, 0) << f << "\n" << r.out << r.err;
  }
}

// Runs `profile` shortened by `overrides` and checks the record.
json run_short(const std::string& profile, std::vector<std::string> overrides) {
  ScratchDir dir("profiles-" + profile);
  const fs::path target = dir.path() / "target";
  const fs::path out = dir.path() / "out";
  fs::create_directories(target);
  std::vector<std::string> args{DRIVELAB_EXE, "run",           (config_dir() / (profile + ".yaml")).string(),
                                "--target",   target.string(), "--out",
                                out.string()};
  for (auto& o : overrides) {
    args.push_back("--set");
    args.push_back(std::move(o));
  }
  const auto r = drivelab::testing::run(args, dir.path(), std::chrono::seconds(240));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  if (!fs::exists(out / "latest.json")) {
    ADD_FAILURE() << "no record\n" << r.out << r.err;
    return json::object();
  }
  json rec = json::parse(read_file(out / "latest.json"));
  EXPECT_EQ(rec["status"], "complete") << rec["reason"];
  EXPECT_EQ(rec["protocol"], profile);
  for (const auto& t : rec["tests"]) {
    EXPECT_EQ(t["status"], "complete") << t["name"] << ": " << t["reason"];
    EXPECT_GT(t["metrics"]["iops"]["value"].get<double>(), 0.0) << t["name"];
  }
  for (const auto& e : fs::directory_iterator(target))
    EXPECT_EQ(e.path().filename().string().rfind("drivelab-", 0), 0u) << e.path();
  return rec;
}

// The short form of a curve profile: tiny files, 1 s runs, a one-point curve at 120% (overload).
std::vector<std::string> short_curve(const std::string& file_size) {
  return {"tests[*].warmup=0s",           "tests[*].duration=1s",
          "tests[*].interval=1s",         "tests[*].vdbench.file_size=" + file_size,
          "tests[*].vdbench.curve=[120]", "tests[*].vdbench.jobs=1"};
}

void expect_curve_groups(const json& rec) {
  for (const auto& t : rec["tests"]) {
    const json& g = t["groups"];
    ASSERT_TRUE(g.contains("max")) << t["name"] << " " << g.dump().substr(0, 200);
    ASSERT_TRUE(g.contains("point_120")) << t["name"];
    EXPECT_GT(g["point_120"]["requested_iops"]["value"].get<double>(), 0.0);
    EXPECT_TRUE(g.contains("curve")) << t["name"];
  }
}

TEST(Profiles, FourCornersShortFormRuns) {
  const json rec = run_short("four-corners", short_curve("16MiB"));
  ASSERT_EQ(rec["tests"].size(), 4u);
  expect_curve_groups(rec);
}

TEST(Profiles, FourCornersHighShortFormRuns) {
  const json rec = run_short("four-corners-high", short_curve("16MiB"));
  ASSERT_EQ(rec["tests"].size(), 4u);
  expect_curve_groups(rec);
}

TEST(Profiles, DbMixesShortFormRuns) {
  const json rec = run_short("db-mixes", short_curve("32MiB"));
  ASSERT_EQ(rec["tests"].size(), 6u);
  expect_curve_groups(rec);
}

TEST(Profiles, FioSpotChecksShortFormRuns) {
  const json rec = run_short("fio-spot-checks", {"tests[*].warmup=0s", "tests[*].duration=1s", "tests[*].interval=1s",
                                                 "tests[*].io.file_size=16MiB"});
  ASSERT_EQ(rec["tests"].size(), 6u);
}

// config/vdi.yaml in short form: all six phases of 50 desktops, 400 ms each, a max run and 120%.
TEST(Profiles, VdiShortFormRuns) {
  const json rec = run_short("vdi", {"tests[*].duration=60s", "tests[*].interval=1s", "tests[*].vdi.phase_length=400ms",
                                     "tests[*].vdi.stagger=4ms", "tests[*].vdi.file_size=64MiB",
                                     "tests[*].vdi.image_size=16MiB", "tests[*].vdi.curve=[120]"});
  ASSERT_EQ(rec["tests"].size(), 6u);
  for (const auto& t : rec["tests"]) {
    EXPECT_TRUE(t["groups"].contains("max")) << t["name"];
    EXPECT_TRUE(t["groups"].contains("point_120")) << t["name"];
    for (const auto& c : t["checks"]) EXPECT_TRUE(c["passed"].get<bool>()) << t["name"] << ": " << c.dump();
  }
}

}  // namespace
