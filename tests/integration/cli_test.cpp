// The command line itself, through the real binary (issue 15 part 7): a --target that is neither a
// directory nor a block device is a bad option (exit 2, README "Exit status"), an unknown
// subcommand names itself and the valid ones, and `--backend help` lists every backend from the
// one list the protocol key decodes with (oltp::kBackendKindNames).
#include <gtest/gtest.h>

#include <fstream>

#include "drivelab/oltp/database/database.hpp"
#include "process.hpp"

namespace {

using drivelab::testing::ScratchDir;

TEST(Cli, TargetThatIsARegularFileExitsWithBadOptions) {
  ScratchDir dir("cli-target-file");
  const auto file = dir.path() / "not-a-directory";
  std::ofstream(file) << "x";
  for (const std::vector<std::string>& cmd :
       {std::vector<std::string>{DRIVELAB_EXE, "io", "--target", file.string(), "--rw", "randread", "--duration", "1s"},
        std::vector<std::string>{DRIVELAB_EXE, "oltp", "tpcc", "--target", file.string(), "--duration", "1s"}}) {
    const auto r = drivelab::testing::run(cmd, dir.path(), std::chrono::seconds(60));
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("is neither a directory nor a block device"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(file.string()), std::string::npos) << r.err;
  }
  const auto missing = drivelab::testing::run(
      {DRIVELAB_EXE, "io", "--target", (dir.path() / "nowhere").string(), "--duration", "1s"}, dir.path(),
      std::chrono::seconds(60));
  EXPECT_EQ(missing.status, 2) << missing.err;
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
  // Nothing was created beside the file: no run started.
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "drivelab-results"));
}

TEST(Cli, UnknownSubcommandNamesItselfAndTheValidOnes) {
  ScratchDir dir("cli-subcommand");
  const auto top = drivelab::testing::run({DRIVELAB_EXE, "rnu", "config/quick.yaml"}, dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(top.status, 2);
  EXPECT_NE(top.err.find("unknown subcommand 'rnu'"), std::string::npos) << top.err;
  for (const char* sub : {"run", "validate", "io", "oltp", "results", "report", "trace", "list", "version"})
    EXPECT_NE(top.err.find(sub), std::string::npos) << sub << " missing from: " << top.err;
  const auto nested = drivelab::testing::run({DRIVELAB_EXE, "trace", "stats", "x"}, dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(nested.status, 2);
  EXPECT_NE(nested.err.find("unknown subcommand 'stats' of drivelab trace"), std::string::npos) << nested.err;
  EXPECT_NE(nested.err.find("stat, convert"), std::string::npos) << nested.err;
}

TEST(Cli, BackendHelpListsEveryBackend) {
  ScratchDir dir("cli-backend-help");
  const auto r = drivelab::testing::run({DRIVELAB_EXE, "oltp", "tpcc", "--backend", "help"}, dir.path(),
                                        std::chrono::seconds(60));
  EXPECT_EQ(r.status, 0) << r.err;
  for (const auto& [word, kind] : drivelab::oltp::kBackendKindNames)
    EXPECT_NE(r.out.find(std::string(word)), std::string::npos) << word << " missing from: " << r.out;
  const auto help = drivelab::testing::run({DRIVELAB_EXE, "oltp", "tpcc", "--help"}, dir.path(), std::chrono::seconds(60));
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("sqlite, postgres, mysql, odbc"), std::string::npos) << help.out;
}

}  // namespace
