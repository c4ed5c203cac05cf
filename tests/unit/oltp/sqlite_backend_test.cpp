#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <sqlite3.h>

#include "drivelab/core/errors.hpp"
#include "test_db.hpp"

namespace drivelab::oltp {
namespace {

using test::TempDir;

std::unique_ptr<Backend> backend_in(const TempDir& dir,
                                    std::chrono::milliseconds busy = std::chrono::milliseconds(5000)) {
  SqliteOptions o;
  o.path = dir.path() / "b.db";
  o.busy_timeout = busy;
  return make_sqlite_backend(o);
}

TEST(SqliteBackend, StatementsBindExecuteFetchAndCountChanges) {
  TempDir dir;
  auto b = backend_in(dir);
  EXPECT_FALSE(b->exists());
  auto c = b->connect();
  EXPECT_TRUE(b->exists());
  c->execute_immediate("CREATE TABLE t (k INTEGER PRIMARY KEY, v DOUBLE, s VARCHAR(10), n INTEGER)");
  auto ins = c->prepare("INSERT INTO t (k, v, s, n) VALUES (?, ?, ?, ?)");
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  for (int k = 1; k <= 5; ++k) {
    ins->bind_int64(1, k);
    ins->bind_double(2, k * 1.5);
    const std::string s = "row" + std::to_string(k);
    ins->bind_text(3, s);
    ins->bind_null(4);
    ASSERT_TRUE(ins->execute().ok());
    EXPECT_EQ(ins->affected_rows(), 1);
  }
  ASSERT_TRUE(c->commit().ok());

  auto upd = c->prepare("UPDATE t SET n = ? WHERE k >= ?");
  upd->bind_int64(1, 7);
  upd->bind_int64(2, 4);
  ASSERT_TRUE(upd->execute().ok());
  EXPECT_EQ(upd->affected_rows(), 2);

  auto q = c->prepare("SELECT k, v, s, n FROM t WHERE k > ? ORDER BY k");
  q->bind_int64(1, 2);
  ASSERT_TRUE(q->execute().ok());
  DbStatus st;
  std::vector<std::int64_t> keys;
  while (q->next(st)) {
    keys.push_back(q->column_int64(0));
    EXPECT_DOUBLE_EQ(q->column_double(1), static_cast<double>(q->column_int64(0)) * 1.5);
    EXPECT_EQ(q->column_text(2), "row" + std::to_string(q->column_int64(0)));
    EXPECT_EQ(q->is_null(3), q->column_int64(0) < 4);
  }
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(keys, (std::vector<std::int64_t>{3, 4, 5}));

  // Rebinding a statement left mid-result (one row read of three) must work.
  q->bind_int64(1, 0);
  ASSERT_TRUE(q->execute().ok());
  ASSERT_TRUE(q->next(st));
  q->bind_int64(1, 4);
  ASSERT_TRUE(q->execute().ok());
  ASSERT_TRUE(q->next(st));
  EXPECT_EQ(q->column_int64(0), 5);
  EXPECT_FALSE(q->next(st));
  EXPECT_TRUE(st.ok());

  // discard_rows() (the default: next() to the end) leaves the statement at its end.
  q->bind_int64(1, 0);
  ASSERT_TRUE(q->execute().ok());
  EXPECT_TRUE(q->discard_rows().ok());
  EXPECT_FALSE(q->next(st));
  EXPECT_TRUE(st.ok());
}

TEST(SqliteBackend, BadSqlAndDdlThrowBackendErrorWithNativeCode) {
  TempDir dir;
  auto c = backend_in(dir)->connect();
  try {
    c->prepare("SELEC nonsense");
    FAIL() << "expected BackendError";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.native_code() & 0xff, SQLITE_ERROR);
    EXPECT_NE(std::string(e.what()).find("SELEC"), std::string::npos);
  }
  EXPECT_THROW(c->execute_immediate("CREATE TABLE x (a INTEGER); CREATE TABLE x (a INTEGER)"), BackendError);
}

TEST(SqliteBackend, ConstraintViolationIsFatalNotRetryable) {
  TempDir dir;
  auto c = backend_in(dir)->connect();
  c->execute_immediate("CREATE TABLE t (k INTEGER PRIMARY KEY)");
  auto ins = c->prepare("INSERT INTO t (k) VALUES (?)");
  ins->bind_int64(1, 1);
  ASSERT_TRUE(ins->execute().ok());
  const DbStatus s = ins->execute();
  EXPECT_EQ(s.outcome, Outcome::fatal);
  EXPECT_EQ(s.native_code & 0xff, SQLITE_CONSTRAINT);
  EXPECT_NE(s.to_string().find("UNIQUE"), std::string::npos) << s.to_string();
}

TEST(SqliteBackend, WriterLockContentionIsRetryableAndReadersDoNotWait) {
  TempDir dir;
  auto b = backend_in(dir, std::chrono::milliseconds(20));
  auto a = b->connect();
  auto c = b->connect();
  a->execute_immediate("CREATE TABLE t (k INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)");

  ASSERT_TRUE(a->begin(TxMode::read_write).ok());  // BEGIN IMMEDIATE: a holds the writer lock
  const DbStatus busy = c->begin(TxMode::read_write);
  EXPECT_EQ(busy.outcome, Outcome::retryable);
  EXPECT_EQ(busy.native_code & 0xff, SQLITE_BUSY);

  // WAL: a reader is not blocked by the writer and sees the last committed state.
  ASSERT_TRUE(c->begin(TxMode::read_only).ok());
  EXPECT_EQ(test::query_int(*c, "SELECT COUNT(*) FROM t"), 1);
  ASSERT_TRUE(c->commit().ok());
  ASSERT_TRUE(a->commit().ok());
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  ASSERT_TRUE(c->rollback().ok());
  EXPECT_TRUE(c->rollback().ok()) << "rollback without a transaction is harmless";
}

TEST(SqliteBackend, ContentionFromAnotherBackendObjectGoesThroughTheBusyHandler) {
  // Two Backend objects on one file stand for two processes: no shared writer queue, so the
  // second writer meets SQLite's own lock and its busy handler, which gives up after 20 ms.
  TempDir dir;
  auto b1 = backend_in(dir, std::chrono::milliseconds(20));
  auto b2 = backend_in(dir, std::chrono::milliseconds(20));
  auto a = b1->connect();
  auto c = b2->connect();
  a->execute_immediate("CREATE TABLE t (k INTEGER)");
  ASSERT_TRUE(a->begin(TxMode::read_write).ok());
  const DbStatus busy = c->begin(TxMode::read_write);
  EXPECT_EQ(busy.outcome, Outcome::retryable);
  EXPECT_EQ(busy.native_code & 0xff, SQLITE_BUSY);
  EXPECT_EQ(busy.message.find("queue"), std::string::npos) << busy.message;
  ASSERT_TRUE(a->commit().ok());
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  ASSERT_TRUE(c->commit().ok());
}

TEST(SqliteBackend, QueuedWritersOfOneBackendGetTheLockInTurn) {
  TempDir dir;
  auto b = backend_in(dir);
  auto a = b->connect();
  a->execute_immediate("CREATE TABLE t (k INTEGER)");
  auto c = b->connect();
  ASSERT_TRUE(a->begin(TxMode::read_write).ok());
  std::atomic<bool> c_began{false};
  std::thread waiter([&] {
    EXPECT_TRUE(c->begin(TxMode::read_write).ok());  // waits in the queue, not failing
    c_began = true;
    EXPECT_TRUE(c->commit().ok());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(c_began.load());
  ASSERT_TRUE(a->commit().ok());  // hands the turn to c
  waiter.join();
  EXPECT_TRUE(c_began.load());
}

TEST(SqliteBackend, CancelFlagEndsALockWaitEarly) {
  TempDir dir;
  auto b = backend_in(dir, std::chrono::milliseconds(600'000));  // would wait 10 minutes
  auto a = b->connect();
  auto c = b->connect();
  std::atomic<bool> cancel{true};
  c->set_cancel_flag(&cancel);
  a->execute_immediate("CREATE TABLE t (k INTEGER)");
  ASSERT_TRUE(a->begin(TxMode::read_write).ok());
  EXPECT_EQ(c->begin(TxMode::read_write).outcome, Outcome::retryable);
  ASSERT_TRUE(a->rollback().ok());
}

TEST(SqliteBackend, DestroyRemovesTheFilesAndSizeIsReported) {
  TempDir dir;
  auto b = backend_in(dir);
  EXPECT_FALSE(b->size_bytes().has_value());
  {
    auto c = b->connect();
    c->execute_immediate("CREATE TABLE t (k INTEGER)");
  }
  ASSERT_TRUE(b->size_bytes().has_value());
  EXPECT_GT(*b->size_bytes(), 0u);
  const auto d = b->describe();
  EXPECT_EQ(d["backend"], "sqlite");
  EXPECT_EQ(d["journal_mode"], "WAL");
  EXPECT_EQ(d["synchronous"], "FULL");
  b->destroy();
  EXPECT_FALSE(b->exists());
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "b.db-wal"));
}

TEST(SqliteBackend, DialectAndCapabilities) {
  TempDir dir;
  auto b = backend_in(dir);
  EXPECT_EQ(b->dialect().name, "sqlite");
  EXPECT_EQ(b->dialect().for_update, "");  // writers are serialised by BEGIN IMMEDIATE
  EXPECT_TRUE(b->capabilities().serialized_writers);
  EXPECT_EQ(b->capabilities().max_load_threads, 1);
  EXPECT_TRUE(is_valid_journal_mode("wal"));
  EXPECT_FALSE(is_valid_journal_mode("fast"));
  EXPECT_TRUE(is_valid_synchronous("normal"));
  EXPECT_FALSE(is_valid_synchronous("2"));
}

}  // namespace
}  // namespace drivelab::oltp
