#pragma once
// A PostgreSQL database of the current test's own on the test server (tests/support/services.hpp):
// created with the superuser connection before the test, dropped (WITH (FORCE)) after it.
#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "drivelab/oltp/backends/postgres/postgres_backend.hpp"
#include "services.hpp"

namespace drivelab::oltp::test {

inline PostgresOptions pg_options(const testing::Services& s, const std::string& database) {
  PostgresOptions o;
  o.endpoint.socket_path = s.pg_socket_dir;
  o.endpoint.port = s.pg_port;
  o.endpoint.user = s.pg_user;
  o.database = database;
  return o;
}

/// Runs a single-value query and returns it as text (throws on failure).
inline std::string pg_value(Connection& c, const std::string& sql) {
  auto q = c.prepare(sql);
  DbStatus s = q->execute();
  if (!s.ok() || !q->next(s)) throw std::runtime_error("query failed: " + sql + " " + s.to_string());
  return std::string(q->column_text(0));
}

/// Fixture: `backend` on a fresh database named after the test; `admin` on the server's
/// existing database (for CREATE/DROP DATABASE and pg_terminate_backend).
class PgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = testing::services();
    ASSERT_TRUE(s.has_value());
    svc = *s;
    name = testing::unique_database_name();
    admin_backend = make_postgres_backend(pg_options(svc, svc.pg_database));
    admin = admin_backend->connect();
    admin->execute_immediate("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
    admin->execute_immediate("CREATE DATABASE \"" + name + "\"");
    backend = make_postgres_backend(pg_options(svc, name));
  }
  void TearDown() override {
    backend.reset();
    if (admin) admin->execute_immediate("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
  }

  testing::Services svc;
  std::string name;
  std::unique_ptr<Backend> admin_backend;
  std::unique_ptr<Connection> admin;
  std::unique_ptr<Backend> backend;
};

/// Stops the server process of a session of `backend` (SIGSTOP; with `whole_server` its
/// postmaster too, so a cancel request is never read either), raises the session's cancel flag
/// 150 ms into a call, and checks that the call ends as an abandoned session 2-10 s later (the
/// cancel request 100 ms into the wait, the socket shut down 2 s after it: about 2.3 s; without
/// the watcher it never ends). Then the session reports the loss at once and a new one works.
/// The whole server stopped stalls every other session of it: only on a server of the test's own.
inline void expect_abandoned_when_frozen(Backend& backend, bool whole_server) {
  auto waiter = backend.connect();
  std::atomic<bool> stop{false};
  waiter->set_cancel_flag(&stop);
  const pid_t pid = static_cast<pid_t>(std::stoll(pg_value(*waiter, "SELECT pg_backend_pid()")));
  pid_t postmaster = 0;
  if (whole_server) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::ostringstream whole;  // not istreambuf_iterator: GCC 14 -Wnull-dereference in libstdc++
    whole << stat.rdbuf();
    const std::string text = whole.str();
    ASSERT_NE(text.rfind(')'), std::string::npos) << "the test server must run on this host";
    std::istringstream rest(text.substr(text.rfind(')') + 1));
    std::string state;
    rest >> state >> postmaster;  // proc(5): state, then ppid
    ASSERT_GT(postmaster, 1);
  }
  auto q = waiter->prepare("SELECT 1");
  // Stopped server processes stall the server's other sessions (DROP DATABASE waits for every
  // backend; a stopped postmaster takes no connection): they are resumed however the test ends,
  // and if this process dies first, a detached shell resumes them 20 s later.
  const std::string pids = std::to_string(pid) + (whole_server ? " " + std::to_string(postmaster) : "");
  struct Resume {
    pid_t a, b;
    ~Resume() {
      ::kill(a, SIGCONT);
      if (b > 0) ::kill(b, SIGCONT);
    }
  };
  ASSERT_EQ(std::system(("(sleep 20; kill -CONT " + pids + ") >/dev/null 2>&1 &").c_str()), 0);
  if (whole_server) {
    ASSERT_EQ(::kill(postmaster, SIGSTOP), 0);
  }
  const Resume resume{pid, postmaster};
  ASSERT_EQ(::kill(pid, SIGSTOP), 0) << "the test server must run on this host";
  std::thread raiser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    stop = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  const DbStatus s = q->execute();
  const auto waited = std::chrono::steady_clock::now() - t0;
  raiser.join();
  ::kill(pid, SIGCONT);  // at once (the guard is for an early exit)
  if (whole_server) ::kill(postmaster, SIGCONT);
  EXPECT_TRUE(s.connection_lost) << s.to_string();
  EXPECT_NE(s.message.find("within 2 s of a cancel request; session abandoned"), std::string::npos) << s.message;
  EXPECT_GE(waited, std::chrono::seconds(2));
  EXPECT_LT(waited, std::chrono::seconds(10));
  EXPECT_TRUE(waiter->begin(TxMode::read_write).connection_lost);
  auto fresh = backend.connect();
  EXPECT_EQ(pg_value(*fresh, "SELECT 3"), "3");
}

}  // namespace drivelab::oltp::test
