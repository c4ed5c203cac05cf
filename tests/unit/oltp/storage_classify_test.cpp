// Which codes and messages of each backend are storage failures (issue 15): the pure classifiers
// of backend.hpp (is_storage_error, is_storage_message, throw_status), SQLite's result codes,
// MySQL/MariaDB's error numbers and ODBC's diagnostic records. No server.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backends/sqlite/sqlite_backend.hpp"
#include "mysql_common.hpp"
#include "odbc_util.hpp"

namespace drivelab::oltp {
namespace {

TEST(StorageClassify, ServerMessagesThatNameTheStorageCause) {
  // PostgreSQL md.c / xlog.c, MariaDB errmsg-utf8.txt, strerror(ENOSPC / EIO / EROFS).
  EXPECT_TRUE(is_storage_message("could not extend file \"base/16384/16402\": No space left on device"));
  EXPECT_TRUE(is_storage_message("could not write to file \"pg_wal/xlogtemp.123\": No space left on device"));
  EXPECT_TRUE(is_storage_message("Got error 28 \"No space left on device\" from storage engine InnoDB"));
  EXPECT_TRUE(
      is_storage_message("Error writing file './tpcc/order_line.ibd' (Errcode: 28 \"No space left on device\")"));
  EXPECT_TRUE(is_storage_message("Disk full (/tmp/#sql_1.MAI); waiting for someone to free some space..."));
  EXPECT_TRUE(is_storage_message("could not fsync file \"base/1/2\": Input/output error"));
  EXPECT_TRUE(is_storage_message("NO SPACE LEFT ON DEVICE"));
  EXPECT_FALSE(is_storage_message("duplicate key value violates unique constraint \"x_pkey\""));
  EXPECT_FALSE(is_storage_message("Got error 2813 from somewhere"));  // not errno 28
  EXPECT_FALSE(is_storage_message("checkpoint request failed"));      // the cause is only in the server log
  EXPECT_FALSE(is_storage_message(""));
}

TEST(StorageClassify, EachDialectsOwnCodes) {
  EXPECT_TRUE(is_storage_error(SqlDialect::postgres, "53100", 0, "could not extend"));
  EXPECT_TRUE(is_storage_error(SqlDialect::postgres, "58030", 0, "could not read block"));
  EXPECT_FALSE(is_storage_error(SqlDialect::postgres, "53200", 0, "out of memory"));
  EXPECT_FALSE(is_storage_error(SqlDialect::postgres, "40001", 0, "could not serialize access"));
  EXPECT_TRUE(is_storage_error(SqlDialect::postgres, "XX000", 0,
                               "could not write to file \"pg_wal/x\": No space left on device"));
  EXPECT_TRUE(is_storage_error(SqlDialect::mysql, "HY000", 1021, "Disk full"));
  EXPECT_TRUE(is_storage_error(SqlDialect::mysql, "HY000", 1114, "The table 'order_line' is full"));
  EXPECT_TRUE(is_storage_error(SqlDialect::mysql, "HY000", 1030,
                               "Got error 28 \"No space left on device\" from storage engine"));
  EXPECT_FALSE(is_storage_error(SqlDialect::mysql, "HY000", 1030, "Got error 168 from storage engine"));
  EXPECT_FALSE(is_storage_error(SqlDialect::mysql, "40001", 1213, "Deadlock found"));
  EXPECT_FALSE(is_storage_error(SqlDialect::postgres, "", 1114, "x"));  // MySQL's number means nothing to PostgreSQL
  for (int native : {1101, 1105, 9002, 823})
    EXPECT_TRUE(is_storage_error(SqlDialect::sqlserver, "42000", native, "")) << native;
  EXPECT_FALSE(is_storage_error(SqlDialect::sqlserver, "40001", 1205, "deadlock victim"));
}

TEST(StorageClassify, SqliteFullAndEveryIoErrorAreStorageFailuresEvenInCommit) {
  for (bool in_commit : {false, true}) {
    EXPECT_EQ(classify_sqlite_result(SQLITE_FULL, in_commit), Outcome::storage_failure);
    EXPECT_EQ(classify_sqlite_result(SQLITE_IOERR, in_commit), Outcome::storage_failure);
    EXPECT_EQ(classify_sqlite_result(SQLITE_IOERR_WRITE, in_commit), Outcome::storage_failure);
    EXPECT_EQ(classify_sqlite_result(SQLITE_IOERR_FSYNC, in_commit), Outcome::storage_failure);
    EXPECT_EQ(classify_sqlite_result(SQLITE_IOERR_SHORT_READ, in_commit), Outcome::storage_failure);
    EXPECT_EQ(classify_sqlite_result(SQLITE_BUSY, in_commit), Outcome::retryable);
  }
  // Not the drive: a corrupt file in COMMIT stays in doubt, a constraint is fatal.
  EXPECT_EQ(classify_sqlite_result(SQLITE_CORRUPT, true), Outcome::in_doubt);
  EXPECT_EQ(classify_sqlite_result(SQLITE_CONSTRAINT_PRIMARYKEY, true), Outcome::fatal);
  EXPECT_EQ(classify_sqlite_result(SQLITE_DONE, true), Outcome::ok);
}

TEST(StorageClassify, MysqlDiskFullTableFullAndErrno28) {
  for (bool in_commit : {false, true}) {
    EXPECT_EQ(mysql::classify(1021, "Disk full (x); waiting for someone to free some space...", in_commit),
              Outcome::storage_failure);
    EXPECT_EQ(mysql::classify(1114, "The table 'order_line' is full", in_commit), Outcome::storage_failure);
    EXPECT_EQ(mysql::classify(1030, "Got error 28 \"No space left on device\" from storage engine InnoDB", in_commit),
              Outcome::storage_failure);
    EXPECT_EQ(mysql::classify(3, "Error writing file 'x' (Errcode: 28 \"No space left on device\")", in_commit),
              Outcome::storage_failure);
    EXPECT_EQ(mysql::classify(1213, "Deadlock found when trying to get lock", in_commit), Outcome::retryable);
  }
  EXPECT_EQ(mysql::classify(2013, "Lost connection to server during query", true), Outcome::in_doubt);
  EXPECT_EQ(mysql::classify(1062, "Duplicate entry '1' for key 'PRIMARY'", false), Outcome::fatal);
}

TEST(StorageClassify, OdbcRecordsOfEachDialect) {
  using odbc::DiagRecord;
  const auto outcome = [](const std::vector<DiagRecord>& r, SqlDialect d, bool in_commit = false, bool dead = false) {
    return odbc::classify(r, d, in_commit, dead).outcome;
  };
  // psqlODBC passes the server's SQLSTATE; its natives are the driver's own numbers.
  EXPECT_EQ(outcome({{"53100", 7, "ERROR: could not extend file"}}, SqlDialect::postgres, true),
            Outcome::storage_failure);
  EXPECT_EQ(outcome({{"58030", 7, "ERROR: could not read block"}}, SqlDialect::postgres), Outcome::storage_failure);
  // MariaDB Connector/ODBC: HY000 with the server's errno as native.
  EXPECT_EQ(outcome({{"HY000", 1114, "[ma-3.1.17]The table 'stock' is full"}}, SqlDialect::mysql, true),
            Outcome::storage_failure);
  EXPECT_EQ(
      outcome({{"HY000", 1030, "Got error 28 \"No space left on device\" from storage engine"}}, SqlDialect::mysql),
      Outcome::storage_failure);
  // A storage failure that also cut the session is still one, not an in-doubt commit.
  const DbStatus s = odbc::classify({{"HY000", 0, "could not write to file: No space left on device"}},
                                    SqlDialect::postgres, true, true);
  EXPECT_EQ(s.outcome, Outcome::storage_failure);
  EXPECT_TRUE(s.connection_lost);
  EXPECT_EQ(outcome({{"HY000", 1105, "Could not allocate space for object"}}, SqlDialect::sqlserver),
            Outcome::storage_failure);
  EXPECT_EQ(outcome({{"40001", 1213, "Deadlock"}}, SqlDialect::mysql), Outcome::retryable);
  EXPECT_EQ(outcome({{"08S01", 0, "Communication link failure"}}, SqlDialect::sqlserver, true), Outcome::in_doubt);
}

TEST(StorageClassify, ThrowStatusThrowsStorageFailureOnceNamed) {
  DbStatus s;
  s.outcome = Outcome::storage_failure;
  s.native_code = SQLITE_FULL;
  s.message = "database or disk is full";
  try {
    throw_status("load: commit", s);
    FAIL() << "no exception";
  } catch (const StorageFailure& e) {
    EXPECT_STREQ(e.what(), "storage failure: load: commit: database or disk is full (native 13)");
    EXPECT_EQ(e.native_code(), SQLITE_FULL);
  }
  s.outcome = Outcome::fatal;
  s.message = "no such table: x";
  try {
    throw_status("load: commit", s);
    FAIL() << "no exception";
  } catch (const StorageFailure&) {
    FAIL() << "not a storage failure";
  } catch (const BackendError& e) {
    EXPECT_STREQ(e.what(), "load: commit: fatal: no such table: x (native 13)");
  }
  EXPECT_EQ(to_string(Outcome::storage_failure), "storage failure");
}

}  // namespace
}  // namespace drivelab::oltp
