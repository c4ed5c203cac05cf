// Server backends through the real `drivelab` binary when the server cannot be used (issue 3,
// item 8): wrong credentials, an unreachable server and a missing ODBC data source fail before
// anything is built, with exit status 1 and a reason in the record that names the problem; a
// password never reaches the record. (A server that dies mid-run: tests/unit/oltp/tpcc_server_test.)
// Runs against the real servers of the db_services fixture.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "process.hpp"
#include "services.hpp"

namespace {

using drivelab::testing::Child;
using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;
using nlohmann::json;

/// A target directory under /tmp: managed servers run as the postgres/mysql users, which must be
/// able to reach it (the build tree may sit below a directory they cannot enter).
class TmpTarget {
 public:
  TmpTarget() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "drivelab-it-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                            std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                            std::filesystem::perms::others_exec);
  }
  ~TmpTarget() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

struct Failed {
  int status;
  std::string reason;
  std::string record;
};

Failed run_expecting_failure(const std::string& name, const std::string& tpcc_section) {
  ScratchDir dir(name);
  TmpTarget target;
  const auto out = dir.path() / "out";
  write(dir.path() / "p.yaml", "protocol: " + name +
                                   "\ntests:\n  - name: t\n    kind: tpcc\n    warmup: 0s\n    duration: 5s\n"
                                   "    tpcc:\n" + tpcc_section);
  const auto r = drivelab::testing::run(
      {DRIVELAB_EXE, "run", (dir.path() / "p.yaml").string(), "--target", target.path().string(), "--out", out.string()},
      dir.path(), std::chrono::seconds(120));
  Failed f{r.status, "", ""};
  if (std::filesystem::exists(out / "latest.json")) {
    f.record = read_file(out / "latest.json");
    const json rec = json::parse(f.record);
    f.reason = rec["tests"][0].value("reason", "");
  }
  return f;
}

TEST(ServerFailure, WrongPostgresCredentialsAreNamed) {
  const auto s = drivelab::testing::services();
  ASSERT_TRUE(s);
  ::setenv("DRIVELAB_IT_PW", "not-the-password-xyzzy", 1);
  const auto f = run_expecting_failure(
      "wrong-pg-user",
      "      backend: postgres\n      database: " + s->pg_database + "\n      server:\n        connection: 'host=" +
          s->pg_socket_dir + " port=" + std::to_string(s->pg_port) +
          "'\n        user: no_such_user\n        password_env: DRIVELAB_IT_PW\n");
  EXPECT_EQ(f.status, 1);
  EXPECT_NE(f.reason.find("no_such_user"), std::string::npos) << f.reason;
  EXPECT_EQ(f.record.find("xyzzy"), std::string::npos) << "the password reached the record";
}

TEST(ServerFailure, WrongMariadbCredentialsAreNamed) {
  const auto s = drivelab::testing::services();
  ASSERT_TRUE(s);
  const auto f = run_expecting_failure(
      "wrong-mysql-user", "      backend: mysql\n      database: " + s->mysql_database +
                              "\n      server:\n        connection: 'unix://" + s->mysql_socket +
                              "'\n        user: no_such_user\n");
  EXPECT_EQ(f.status, 1);
  EXPECT_NE(f.reason.find("no_such_user"), std::string::npos) << f.reason;
}

TEST(ServerFailure, UnreachableServerIsNamed) {
  const auto f = run_expecting_failure(
      "unreachable-pg",
      "      backend: postgres\n      server:\n        connection: 'host=/nonexistent-socket-dir port=5999'\n");
  EXPECT_EQ(f.status, 1);
  EXPECT_NE(f.reason.find("/nonexistent-socket-dir"), std::string::npos) << f.reason;
}

TEST(ServerFailure, MissingOdbcDataSourceIsNamed) {
  const auto f = run_expecting_failure(
      "missing-dsn", "      backend: odbc\n      dialect: sqlserver\n      server:\n        connection: 'DSN=drivelab_no_such_dsn'\n");
  EXPECT_EQ(f.status, 1);
  EXPECT_NE(f.reason.find("drivelab_no_such_dsn"), std::string::npos) << f.reason;
}

}  // namespace
