// The managed PostgreSQL server: a real cluster in a temporary directory under /tmp (which the
// postgres user can reach when the tests run as root).
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/backends/postgres/postgres_backend.hpp"
#include "drivelab/oltp/backend/server.hpp"
#include "postgres_test_db.hpp"

namespace drivelab::oltp {
namespace {

namespace fs = std::filesystem;

/// A fresh directory in /tmp, mode 0755, removed at the end.
class TmpDir {
 public:
  TmpDir() {
    std::string tmpl = "/tmp/drivelab-pgsrv-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp");
    path_ = tmpl;
    fs::permissions(path_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
  }
  ~TmpDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

ManagedServerOptions small(const fs::path& data_dir) {
  ManagedServerOptions o;
  o.kind = ServerKind::postgres;
  o.data_dir = data_dir;
  o.buffer_bytes = 32ull << 20;
  o.max_connections = 20;
  return o;
}

PostgresOptions to(const Endpoint& e, const std::string& db) {
  PostgresOptions o;
  o.endpoint = e;
  o.database = db;
  return o;
}

TEST(ManagedPostgres, AWhollyFrozenServerStillAbandonsTheSessionWhoseCancelGoesUnanswered) {
  // The postmaster stopped too (a hung host): PQcancel connects to it and waits, without a
  // timeout (libpq 15), for it to read the request. The request is sent from its own thread, so
  // the backend's watcher still shuts the socket down 2 s later. A private server: stopping the
  // shared test server whole would stall the tests running beside this one.
  TmpDir tmp;
  auto server = make_managed_postgres(small(tmp.path() / "drivelab-t-postgres"));
  server->start();
  server->create_database("frozen");
  auto backend = make_postgres_backend(to(server->endpoint(), "frozen"));
  test::expect_abandoned_when_frozen(*backend, true);
  backend.reset();
  server->stop();
}

TEST(ManagedPostgres, StartConnectStopRemovesTheDirectory) {
  TmpDir tmp;
  const fs::path data = tmp.path() / "drivelab-t-postgres";
  auto server = make_managed_postgres(small(data));
  EXPECT_FALSE(server->running());
  server->start();
  ASSERT_TRUE(server->running());
  EXPECT_TRUE(fs::exists(data / "PG_VERSION"));
  EXPECT_TRUE(fs::exists(data / "server.log"));

  server->create_database("bench");
  server->create_database("bench");  // idempotent
  auto backend = make_postgres_backend(to(server->endpoint(), "bench"));
  auto c = backend->connect();
  EXPECT_EQ(test::pg_value(*c, "SELECT 1 + 1"), "2");
  // The profile is in effect: buffer from the options, durability on, socket only.
  EXPECT_EQ(test::pg_value(*c, "SHOW shared_buffers"), "32MB");
  EXPECT_EQ(test::pg_value(*c, "SHOW max_connections"), "20");
  EXPECT_EQ(test::pg_value(*c, "SHOW fsync"), "on");
  EXPECT_EQ(test::pg_value(*c, "SHOW full_page_writes"), "on");
  EXPECT_EQ(test::pg_value(*c, "SHOW listen_addresses"), "");
  EXPECT_EQ(test::pg_value(*c, "SHOW max_wal_size"), "16GB");

  const results::Json d = server->describe();
  EXPECT_EQ(d.at("kind"), "postgres");
  EXPECT_EQ(d.at("data_dir"), data.string());
  EXPECT_EQ(d.at("settings").at("shared_buffers"), "32768kB");
  EXPECT_FALSE(d.at("version").get<std::string>().empty());
  c.reset();

  server->stop();
  EXPECT_FALSE(server->running());
  EXPECT_FALSE(fs::exists(data));
  server->stop();  // twice is harmless
  EXPECT_THROW(backend->connect(), BackendError);
}

TEST(ManagedPostgres, KeepLeavesTheDataDirectoryAndSettingsOverrideTheProfile) {
  TmpDir tmp;
  const fs::path data = tmp.path() / "kept";
  ManagedServerOptions o = small(data);
  o.keep = true;
  o.settings["work_mem"] = "8MB";
  o.settings["checkpoint_timeout"] = "10min";
  {
    auto server = make_managed_postgres(o);
    server->start();
    auto c = make_postgres_backend(to(server->endpoint(), "postgres"))->connect();
    EXPECT_EQ(test::pg_value(*c, "SHOW work_mem"), "8MB");
    EXPECT_EQ(test::pg_value(*c, "SHOW checkpoint_timeout"), "10min");
    EXPECT_EQ(server->describe().at("settings").at("checkpoint_timeout"), "10min");
    // The WAL bounds TPC-C's space check uses, read from the running server (tpcc_growth.hpp).
    const WalSettings wal = server->wal_settings();
    EXPECT_EQ(wal.checkpoint_timeout_s, 600);
    EXPECT_EQ(wal.max_wal_size_bytes, 16ull << 30);  // the profile's 16GB
    EXPECT_EQ(wal.wal_keep_size_bytes, 0u);
    EXPECT_EQ(wal.checkpoint_completion_target, 0.9);
    EXPECT_EQ(server->growth_constants().wal_bytes_per_new_order, 30734);
  }  // the destructor stops the server
  EXPECT_TRUE(fs::exists(data / "PG_VERSION"));
  EXPECT_FALSE(fs::exists(data / "postmaster.pid"));
}

TEST(ManagedPostgres, StaleDirectoryOfAKilledServerIsCleanedByTheNextStart) {
  TmpDir tmp;
  const fs::path data = tmp.path() / "stale";
  ManagedServerOptions o = small(data);
  o.keep = true;
  auto crashed = make_managed_postgres(o);
  crashed->start();
  pid_t pid = 0;
  {
    std::ifstream in(data / "postmaster.pid");
    in >> pid;
  }
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  for (int i = 0; i < 250 && crashed->running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_FALSE(crashed->running());
  ASSERT_TRUE(fs::exists(data / "postmaster.pid"));  // as a crash leaves it
  fs::create_directories(data / "base" / "leftover");

  auto next = make_managed_postgres(small(data));
  next->start();
  EXPECT_TRUE(next->running());
  EXPECT_FALSE(fs::exists(data / "base" / "leftover"));
  next->stop();
  EXPECT_FALSE(fs::exists(data));
}

TEST(ManagedPostgres, ForeignDirectoryIsNeverRemoved) {
  TmpDir tmp;
  const fs::path data = tmp.path() / "photos";
  fs::create_directories(data);
  std::ofstream(data / "holiday.jpg") << "precious";
  auto server = make_managed_postgres(small(data));
  EXPECT_THROW(server->start(), EnvironmentError);
  EXPECT_TRUE(fs::exists(data / "holiday.jpg"));
}

TEST(ManagedPostgres, BadSettingFailsTheStartQuotingTheServerLog) {
  TmpDir tmp;
  ManagedServerOptions o = small(tmp.path() / "bad");
  o.settings["shared_buffers"] = "lots";
  auto server = make_managed_postgres(o);
  try {
    server->start();
    FAIL() << "the server started with shared_buffers = lots";
  } catch (const EnvironmentError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("did not start"), std::string::npos) << what;
    EXPECT_NE(what.find("shared_buffers"), std::string::npos) << what;  // the server's own complaint
    EXPECT_NE(what.find("lots"), std::string::npos) << what;
  }
  EXPECT_FALSE(server->running());
}

TEST(ManagedPostgres, UnreachableDirectoryIsNamedWithItsMode) {
  if (::geteuid() != 0) GTEST_SKIP() << "only as root is the server run as another user";
  TmpDir tmp;
  const fs::path locked = tmp.path() / "locked";
  fs::create_directories(locked);
  ::chmod(locked.c_str(), 0700);
  auto server = make_managed_postgres(small(locked / "pg"));
  try {
    server->start();
    FAIL() << "started under a directory the postgres user cannot enter";
  } catch (const EnvironmentError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(locked.string() + " has mode 0700"), std::string::npos) << what;
    EXPECT_NE(what.find("'postgres'"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace drivelab::oltp
