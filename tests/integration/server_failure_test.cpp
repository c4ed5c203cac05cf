// Server backends through the real `drivelab` binary when the server cannot be used (issue 3,
// item 8): wrong credentials, an unreachable server and a missing ODBC data source fail before
// anything is built, with exit status 1 and a reason in the record that names the problem; a
// password never reaches the record. (A server that dies mid-run: tests/unit/oltp/tpcc_server_test.)
// A password that cannot be read (variable not set, file missing or empty) is caught earlier, as a
// configuration error of `validate` and `run` (exit status 2).
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

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

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
                                   "    tpcc:\n" +
                                   tpcc_section);
  const auto r = drivelab::testing::run({DRIVELAB_EXE, "run", (dir.path() / "p.yaml").string(), "--target",
                                         target.path().string(), "--out", out.string()},
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
  const auto f = run_expecting_failure("wrong-pg-user",
                                       "      backend: postgres\n      database: " + s->pg_database +
                                           "\n      server:\n        connection: 'host=" + s->pg_socket_dir +
                                           " port=" + std::to_string(s->pg_port) +
                                           "'\n        user: no_such_user\n        password_env: DRIVELAB_IT_PW\n");
  EXPECT_EQ(f.status, 1);
  EXPECT_NE(f.reason.find("no_such_user"), std::string::npos) << f.reason;
  EXPECT_EQ(f.record.find("xyzzy"), std::string::npos) << "the password reached the record";
}

TEST(ServerFailure, WrongMariadbCredentialsAreNamed) {
  const auto s = drivelab::testing::services();
  ASSERT_TRUE(s);
  const auto f =
      run_expecting_failure("wrong-mysql-user", "      backend: mysql\n      database: " + s->mysql_database +
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
      "missing-dsn",
      "      backend: odbc\n      dialect: sqlserver\n      server:\n        connection: 'DSN=drivelab_no_such_dsn'\n");
  EXPECT_EQ(f.status, 1);
  EXPECT_NE(f.reason.find("drivelab_no_such_dsn"), std::string::npos) << f.reason;
}

// A password that cannot be read is a configuration error: `validate` and `run` report each at its
// file:line:column and key path with exit status 2, before any work, and never print a password.
// (No server is contacted: the checks run when the protocol is decoded.)
std::string password_protocol(const std::filesystem::path& dir) {
  return "protocol: pw\n"
         "tests:\n"
         "  - name: a\n"
         "    kind: sysbench\n"
         "    sysbench:\n"
         "      backend: mysql\n"
         "      server:\n"
         "        connection: tcp://127.0.0.1:9\n"
         "        password_env: DRIVELAB_IT_UNSET_PW\n"
         "  - name: b\n"
         "    kind: tpcc\n"
         "    tpcc:\n"
         "      backend: postgres\n"
         "      server:\n"
         "        connection: host=127.0.0.1 port=9\n"
         "        password_file: " +
         (dir / "missing-pw").string() +
         "\n"
         "  - name: c\n"
         "    kind: sysbench\n"
         "    sysbench:\n"
         "      backend: postgres\n"
         "      server:\n"
         "        connection: host=127.0.0.1 port=9\n"
         "        password_file: " +
         (dir / "empty-pw").string() + "\n";
}

void expect_password_errors(const drivelab::testing::Result& r, const std::filesystem::path& dir) {
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(r.err,
            "p.yaml:9:23: tests[0].sysbench.server.password_env: the environment variable DRIVELAB_IT_UNSET_PW is "
            "not set (it must hold the password)\n"
            "p.yaml:16:24: tests[1].tpcc.server.password_file: " +
                (dir / "missing-pw").string() +
                " does not exist\n"
                "p.yaml:23:24: tests[2].sysbench.server.password_file: the first line of " +
                (dir / "empty-pw").string() +
                " is empty (it must hold the password)\n"
                "p.yaml: 3 problems found\n");
  EXPECT_EQ((r.out + r.err).find("hunter2"), std::string::npos) << "a password was printed";
}

TEST(PasswordSource, ValidateReportsAnUnreadablePasswordAtItsKey) {
  ScratchDir dir("pw-validate");
  ::unsetenv("DRIVELAB_IT_UNSET_PW");
  write(dir.path() / "p.yaml", password_protocol(dir.path()));
  write(dir.path() / "empty-pw", "\nhunter2\n");
  const auto r =
      drivelab::testing::run({DRIVELAB_EXE, "validate", "p.yaml"}, dir.path(), std::chrono::seconds(60), dir.path());
  expect_password_errors(r, dir.path());

  // With the variable set and the files holding a password, the same protocol is valid.
  ::setenv("DRIVELAB_IT_UNSET_PW", "hunter2-env", 1);
  write(dir.path() / "missing-pw", "hunter2-file\n");
  write(dir.path() / "empty-pw", "hunter2-file\n");
  const auto ok =
      drivelab::testing::run({DRIVELAB_EXE, "validate", "p.yaml"}, dir.path(), std::chrono::seconds(60), dir.path());
  ::unsetenv("DRIVELAB_IT_UNSET_PW");
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  EXPECT_EQ((ok.out + ok.err).find("hunter2"), std::string::npos) << "a password was printed";
}

TEST(PasswordSource, RunReportsAnUnreadablePasswordBeforeAnyWork) {
  ScratchDir dir("pw-run");
  TmpTarget target;
  ::unsetenv("DRIVELAB_IT_UNSET_PW");
  write(dir.path() / "p.yaml", password_protocol(dir.path()));
  write(dir.path() / "empty-pw", "\nhunter2\n");
  const auto out = dir.path() / "out";
  const auto r =
      drivelab::testing::run({DRIVELAB_EXE, "run", "p.yaml", "--target", target.path().string(), "--out", out.string()},
                             dir.path(), std::chrono::seconds(60), dir.path());
  expect_password_errors(r, dir.path());
  EXPECT_FALSE(std::filesystem::exists(out)) << "the run wrote results";
  EXPECT_TRUE(std::filesystem::is_empty(target.path())) << "the run touched the target";
}

}  // namespace
