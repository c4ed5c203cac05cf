// Every protocol shipped in config/ whose tests have a database section (kind tpcc or sysbench)
// decodes without a problem to the database settings it always had: the record of each
// (database.hpp to_json) is pinned here, so moving a key between the common keys and a backend's
// own (backend_row.hpp) cannot change what a user's YAML means.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "drivelab/config/document.hpp"
#include "drivelab/oltp/database/database.hpp"
#include "drivelab/oltp/sysbench/sysbench_config.hpp"
#include "drivelab/oltp/tpcc/tpcc_config.hpp"

namespace drivelab::oltp {
namespace {

namespace fs = std::filesystem;

/// "<file>:<test>" -> the database record of that test, for every tpcc or sysbench test in config/.
std::map<std::string, std::string> shipped_database_records(std::string& problems) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(DRIVELAB_SOURCE_DIR) / "config"))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::map<std::string, std::string> out;
  for (const fs::path& file : files) {
    config::Diagnostics diags;
    const auto doc = config::Document::load_file(file, diags);
    for (const config::Node& test : doc.root(diags).child("tests").elements()) {
      const std::string kind = test.child("kind").defined() ? test.child("kind").scalar() : "";
      if (kind != "tpcc" && kind != "sysbench") continue;
      const std::string name = file.filename().string() + ":" + test.child("name").scalar();
      if (kind == "tpcc")
        out[name] = to_json(tpcc::decode_tpcc_config(test.child("tpcc"), 2).database).dump();
      else
        out[name] = to_json(sysbench::decode_sysbench_config(test.child("sysbench")).database).dump();
    }
    problems += diags.to_string();
  }
  return out;
}

TEST(ShippedConfigs, EveryDatabaseSectionDecodesToTheSettingsItAlwaysHad) {
  // storagereview-sqlserver.yaml reads its password from DRIVELAB_DB_PASSWORD, which decoding
  // checks is readable (never recorded).
  const bool set_here = ::getenv("DRIVELAB_DB_PASSWORD") == nullptr;
  if (set_here) ::setenv("DRIVELAB_DB_PASSWORD", "not-recorded", 1);
  std::string problems;
  const auto records = shipped_database_records(problems);
  EXPECT_EQ(problems, "");
  // The records as decoded before the backends owned their keys (issue 31).
  const std::map<std::string, std::string> expected{
      {"quick.yaml:oltp",
       R"({"backend":"sqlite","journal_mode":"wal","synchronous":"full","cache_size":"64 MiB","busy_timeout":"5s"})"},
      {"storagereview-mysql-small.yaml:mysql-oltp",
       R"({"backend":"mysql","database":"sbtest","server":{"managed":"mariadb","buffer":"512 MiB","max_connections":0,"settings":{},"keep":false}})"},
      {"storagereview-mysql.yaml:mysql-oltp",
       R"({"backend":"mysql","database":"sbtest","server":{"managed":"mariadb","buffer":"24 GiB","max_connections":0,"settings":{},"keep":false}})"},
      {"storagereview-sqlserver-small.yaml:sqlserver-oltp-small",
       R"({"backend":"odbc","database":"tpcc","dialect":"postgres","server":{"managed":"postgres","buffer":"512 MiB","max_connections":0,"settings":{},"keep":false}})"},
      {"storagereview-sqlserver.yaml:sqlserver-oltp",
       R"({"backend":"odbc","database":"tpcc","dialect":"sqlserver","server":{"connection":"Driver={ODBC Driver 18 for SQL Server};Server=tcp:sqlvm,1433;Encrypt=yes;TrustServerCertificate=yes","user":"sa","password_env":"DRIVELAB_DB_PASSWORD"}})"},
      {"tpcc-mariadb.yaml:tpcc-mariadb",
       R"({"backend":"mysql","database":"tpcc","server":{"managed":"mariadb","buffer":"1 GiB","max_connections":0,"settings":{},"keep":false}})"},
      {"tpcc-postgres.yaml:tpcc-postgres",
       R"({"backend":"postgres","database":"tpcc","server":{"managed":"postgres","buffer":"1 GiB","max_connections":0,"settings":{},"keep":false}})"}};
  EXPECT_EQ(records, expected);
  if (set_here) ::unsetenv("DRIVELAB_DB_PASSWORD");
}

}  // namespace
}  // namespace drivelab::oltp
