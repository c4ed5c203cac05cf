// SIGINT during the OLTP test leaves a record marked interrupted that holds the finished intervals;
// SIGKILL leaves a valid record and a journal that `drivelab results recover` turns into one.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "process.hpp"

namespace {

using drivelab::testing::Child;
using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;
using nlohmann::json;

/// Polls the live record until the running test has at least `n` intervals (or times out).
json wait_for_intervals(const std::filesystem::path& out, std::size_t n, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::error_code ec;
    if (!std::filesystem::exists(out / "latest.json", ec)) continue;
    const json rec = json::parse(read_file(out / "latest.json"), nullptr, /*allow_exceptions=*/false);
    if (rec.is_discarded() || rec["tests"].empty()) continue;
    if (rec["tests"][0]["intervals"].size() >= n) return rec;
  }
  return json();
}

std::vector<std::string> long_oltp(const std::filesystem::path& target, const std::filesystem::path& out) {
  return {DRIVELAB_EXE, "oltp", "tpcc", "--target", target.string(), "--out", out.string(), "--warehouses", "1",
          "--users", "2", "--warmup", "0s", "--duration", "300s", "--interval", "1s"};
}

TEST(Interrupt, SigintKeepsFinishedIntervals) {
  ScratchDir dir("interrupt-sigint");
  const auto target = dir.path() / "target";
  const auto out = dir.path() / "out";
  std::filesystem::create_directories(target);
  Child child(long_oltp(target, out), dir.path() / "stdout.txt", dir.path() / "stderr.txt");
  const json live = wait_for_intervals(out, 2, std::chrono::seconds(240));
  ASSERT_FALSE(live.is_null()) << child.out() << child.err();
  // While running, the record on disk is already valid and says it is not complete.
  EXPECT_EQ(live["status"], "interrupted");
  child.signal(SIGINT);
  const int status = child.wait(std::chrono::seconds(120));
  EXPECT_EQ(status, 130) << child.out() << child.err();

  const json rec = json::parse(read_file(out / "latest.json"));
  EXPECT_EQ(rec["status"], "interrupted");
  ASSERT_EQ(rec["tests"].size(), 1u);
  const json& t = rec["tests"][0];
  EXPECT_EQ(t["status"], "interrupted");
  EXPECT_GE(t["intervals"].size(), 2u);
  EXPECT_GT(t["metrics"]["tps"]["value"].get<double>(), 0.0);
  EXPECT_LT(t["measured_s"].get<double>(), 300.0);
  // Consistency is still verified after an interrupt.
  ASSERT_GE(t["checks"].size(), 4u);
  for (const auto& c : t["checks"]) EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();
}

TEST(Interrupt, SigkillLeavesAValidRecordAndARecoverableJournal) {
  ScratchDir dir("interrupt-sigkill");
  const auto target = dir.path() / "target";
  const auto out = dir.path() / "out";
  std::filesystem::create_directories(target);
  std::string run_id;
  {
    Child child(long_oltp(target, out), dir.path() / "stdout.txt", dir.path() / "stderr.txt");
    const json live = wait_for_intervals(out, 2, std::chrono::seconds(240));
    ASSERT_FALSE(live.is_null()) << child.out() << child.err();
    run_id = live["run_id"];
    child.signal(SIGKILL);
    EXPECT_EQ(child.wait(std::chrono::seconds(30)), 128 + SIGKILL);
  }
  const json rec = json::parse(read_file(out / "latest.json"));
  EXPECT_EQ(rec["status"], "interrupted");
  EXPECT_GE(rec["tests"][0]["intervals"].size(), 2u);

  const auto journal = out / (run_id + ".journal.jsonl");
  const auto recovered = dir.path() / "recovered.json";
  const auto r = drivelab::testing::run({DRIVELAB_EXE, "results", "recover", journal.string(), "-o", recovered.string()},
                                        dir.path());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json rj = json::parse(read_file(recovered));
  EXPECT_EQ(rj["schema"], "drivelab.run/1");
  EXPECT_EQ(rj["status"], "interrupted");
  ASSERT_EQ(rj["tests"].size(), 1u);
  EXPECT_EQ(rj["tests"][0]["status"], "interrupted");
  EXPECT_GE(rj["tests"][0]["intervals"].size(), 2u);
}

}  // namespace
