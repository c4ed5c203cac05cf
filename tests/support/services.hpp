#pragma once
/// \file services.hpp
/// The real PostgreSQL and MariaDB servers of the tests (started by the ctest fixture
/// db_services, scripts/test-services.sh). Reads the KEY=VALUE file the script writes: the one
/// named by $DRIVELAB_TEST_SERVICES_ENV, else <build dir>/test-services.env.
///
/// A test that needs a server calls services() and FAILS (not skips) when the file is missing:
/// server tests must run in CI. Each test uses a database of its own (unique_database_name) so
/// tests can run in parallel against the same servers.
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace drivelab::testing {

struct Services {
  std::string pg_socket_dir;
  int pg_port = 0;
  std::string pg_user;
  std::string pg_database;  ///< an existing database (drivelab_test)
  std::string mysql_socket;
  std::string mysql_user;
  std::string mysql_database;
};

inline std::string services_env_path() {
  if (const char* p = std::getenv("DRIVELAB_TEST_SERVICES_ENV"); p != nullptr && *p != '\0') return p;
  return DRIVELAB_BINARY_DIR "/test-services.env";
}

/// The running servers, or nullopt (with an ADD_FAILURE naming the file) when not started.
inline std::optional<Services> services() {
  const std::string path = services_env_path();
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "database servers not running: " << path
                  << " is missing. Run the tests through ctest (the db_services fixture starts "
                     "them) or `scripts/test-services.sh start FILE` and set DRIVELAB_TEST_SERVICES_ENV=FILE";
    return std::nullopt;
  }
  std::map<std::string, std::string> kv;
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  Services s;
  s.pg_socket_dir = kv["PG_SOCKET_DIR"];
  s.pg_port = std::atoi(kv["PG_PORT"].c_str());
  s.pg_user = kv["PG_USER"];
  s.pg_database = kv["PG_DATABASE"];
  s.mysql_socket = kv["MYSQL_SOCKET"];
  s.mysql_user = kv["MYSQL_USER"];
  s.mysql_database = kv["MYSQL_DATABASE"];
  return s;
}

/// "dl_<suite>_<test>" in lower case, for a database of the current test's own.
inline std::string unique_database_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = "dl_";
  for (const char* p : {info->test_suite_name(), "_", info->name()})
    for (const char* c = p; *c != '\0'; ++c)
      name += (std::isalnum(static_cast<unsigned char>(*c)) != 0)
                  ? static_cast<char>(std::tolower(static_cast<unsigned char>(*c)))
                  : '_';
  return name.substr(0, 63);
}

}  // namespace drivelab::testing
