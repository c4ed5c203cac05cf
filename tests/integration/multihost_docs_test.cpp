// The "One host, N ranks" example of docs/multihost.md is run as written (issue 16): the test reads
// the doc, takes the command block under that heading (its first line starts with
// `    mpirun --oversubscribe`; lines ending in `\` continue it), and runs it with only these
// changes: `mpirun` is /usr/bin/mpirun, with `--allow-run-as-root` when root and
// `-x ASAN_OPTIONS=detect_leaks=0:abort_on_error=1` (every rank of the sanitizer build gets the
// same options, and a sanitizer error aborts the rank, which mpirun reports as a failed job);
// `drivelab` is the built binary; `config/...` the source tree's; `/mnt/drive` a scratch
// directory; and `--set tests[*].duration=3s --set tests[*].warmup=0s --out DIR` are appended.
// Then: exit status 0, the merged record has one host per rank (-np) and is complete, each rank
// used its own `{rank}` target, and each test's tps / iops is the sum of the ranks' records'.
// Skipped when /usr/bin/mpirun is missing (apt-get install openmpi-bin).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "process.hpp"

namespace {

using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kMpirun = "/usr/bin/mpirun";

/// The words of the command block under "## One host, N ranks" in docs/multihost.md, or an empty
/// vector (with `why` set) when the doc has no such block or it needs a shell to split (quotes).
std::vector<std::string> doc_example(const std::string& doc, std::string& why) {
  std::istringstream in(doc);
  std::string line;
  bool in_section = false;
  std::string command;
  bool continued = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      if (in_section) break;
      in_section = line == "## One host, N ranks";
      continue;
    }
    if (!in_section) continue;
    if (command.empty() && line.rfind("    mpirun --oversubscribe", 0) != 0) continue;
    if (!command.empty() && !continued) break;
    continued = !line.empty() && line.back() == '\\';
    command += (continued ? line.substr(0, line.size() - 1) : line) + " ";
    if (!continued) break;
  }
  if (command.empty()) {
    why = "docs/multihost.md: no line starting with '    mpirun --oversubscribe' under '## One host, N ranks'";
    return {};
  }
  if (command.find_first_of("'\"`$;|&") != std::string::npos) {
    why = "docs/multihost.md: the example needs a shell (quotes or shell syntax), which this test does not run: " +
          command;
    return {};
  }
  std::vector<std::string> words;
  std::istringstream ws(command);
  for (std::string w; ws >> w;) words.push_back(w);
  return words;
}

/// A headline metric's value.
double metric(const json& test, const char* name) { return test["metrics"][name]["value"].get<double>(); }

TEST(MultihostDocs, OneHostNRanksExampleRunsAsWrittenAndMergesExactly) {
  if (!fs::exists(kMpirun)) GTEST_SKIP() << kMpirun << " is missing (apt-get install openmpi-bin)";
  const fs::path src(DRIVELAB_SOURCE_DIR);
  std::string why;
  const std::vector<std::string> words = doc_example(read_file(src / "docs" / "multihost.md"), why);
  ASSERT_FALSE(words.empty()) << why;

  ScratchDir dir("multihost-docs");
  const fs::path drive = dir.path() / "drive";  // stands for /mnt/drive
  const fs::path out = dir.path() / "out";
  fs::create_directories(drive);
  std::vector<std::string> args;
  int ranks = 0;
  bool seen_drivelab = false;
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string w = words[i];
    if (i == 0) {
      ASSERT_EQ(w, "mpirun");
      args.push_back(kMpirun);
      if (::geteuid() == 0) args.push_back("--allow-run-as-root");
      args.insert(args.end(), {"-x", "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1"});
      continue;
    }
    if (w == "-np" && i + 1 < words.size()) ranks = std::stoi(words[i + 1]);
    if (w == "drivelab" && !seen_drivelab) {
      seen_drivelab = true;
      w = DRIVELAB_EXE;
    } else if (w.rfind("config/", 0) == 0) {
      w = (src / w).string();
    } else if (const auto at = w.find("/mnt/drive"); at != std::string::npos) {
      w.replace(at, std::string("/mnt/drive").size(), drive.string());
    }
    args.push_back(w);
  }
  ASSERT_TRUE(seen_drivelab) << "the example does not run drivelab";
  ASSERT_GE(ranks, 2) << "the example's -np";
  args.insert(args.end(), {"--set", "tests[*].duration=3s", "--set", "tests[*].warmup=0s", "--out", out.string()});

  const auto r = drivelab::testing::run(args, dir.path(), std::chrono::seconds(480));
  ASSERT_EQ(r.status, 0) << r.out << r.err;

  const json merged = json::parse(read_file(out / "latest.json"));
  EXPECT_EQ(merged["status"], "complete") << merged["reason"];
  ASSERT_EQ(merged["hosts"].size(), static_cast<std::size_t>(ranks));
  EXPECT_EQ(merged["target"]["hosts"], ranks);
  EXPECT_EQ(merged["cohort"]["size"], ranks);
  std::vector<json> per_rank;
  for (int k = 0; k < ranks; ++k) {
    const json& host = merged["hosts"][k];
    EXPECT_EQ(host["rank"], k);
    EXPECT_EQ(host["status"], "complete") << host["reason"];
    per_rank.push_back(json::parse(read_file(out / (host["run_id"].get<std::string>() + ".json"))));
    EXPECT_EQ(per_rank.back()["cohort"]["rank"], k);
    // {rank} in --target: each rank measured its own directory.
    const fs::path target = drive / ("drivelab-" + std::to_string(k));
    EXPECT_EQ(per_rank.back()["target"]["path"], target.string());
    EXPECT_TRUE(fs::is_directory(target)) << target;
  }
  ASSERT_FALSE(merged["tests"].empty());
  for (std::size_t i = 0; i < merged["tests"].size(); ++i) {
    const json& t = merged["tests"][i];
    EXPECT_EQ(t["status"], "complete") << t["name"] << ": " << t["reason"];
    const char* rate = t["metrics"].contains("tps") ? "tps" : "iops";
    ASSERT_TRUE(t["metrics"].contains(rate)) << t["name"] << " has neither tps nor iops";
    double sum = 0;  // in rank order, as the merge sums
    for (const json& rec : per_rank) {
      ASSERT_EQ(rec["tests"][i]["name"], t["name"]);
      EXPECT_GT(metric(rec["tests"][i], rate), 0.0) << t["name"];
      sum += metric(rec["tests"][i], rate);
    }
    EXPECT_DOUBLE_EQ(metric(t, rate), sum) << t["name"] << " " << rate;
  }
}

}  // namespace
