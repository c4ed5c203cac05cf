#pragma once
// The Connection of the ODBC backend (odbc_backend.cpp) and what its statements and bulk loaders
// (odbc_statement.cpp, odbc_bulk_loader.cpp) need from it: the handles, the cancel watcher, one open cursor at a time,
// autocommit outside transactions, and the classification of failed calls.
#include <sql.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backends/odbc/odbc_backend.hpp"
#include "drivelab/results/record.hpp"
#include "odbc_util.hpp"
#include "odbc_watcher.hpp"

namespace drivelab::oltp::odbc {

/// How the bulk loaders of a backend insert (for describe()).
enum class BulkMode : int { unknown, multi_row, arrays, rows };

/// State of one backend shared with its sessions (which may be closed after the backend).
struct Shared {
  OdbcOptions options;            ///< as given (password included: never logged)
  std::string connection_string;  ///< what SQLDriverConnect gets: credentials appended
  std::string redacted;           ///< options.connection_string without passwords
  Dialect dialect;
  EnvHandle env;  ///< one ODBC 3 environment for every session
  CancelWatcher watcher;
  std::atomic<BulkMode> bulk_mode{BulkMode::unknown};

  std::mutex info_mu;
  std::optional<results::Json> driver_info;  ///< SQLGetInfo of the first session

  /// "***" in place of the password, for any text that leaves the backend.
  std::string scrub(std::string text) const { return odbc::scrub(std::move(text), options.password); }
};

class OdbcBulkLoader;

/// A statement whose cursor the session may have to close (see OdbcSession::before_execute).
class CursorOwner {
 public:
  /// Closes the cursor (SQLFreeStmt SQL_CLOSE); a later next() reports the lost rows.
  virtual void close_cursor_for_session() noexcept = 0;

 protected:
  ~CursorOwner() = default;
};

/// Thrown by the session constructor when the server says the database does not exist
/// (Backend::exists() turns it into `false`).
class UnknownDatabase : public BackendError {
 public:
  using BackendError::BackendError;
};

/// One HDBC. Not thread-safe (Connection contract); the watcher only touches its Slot.
class OdbcSession final : public Connection {
 public:
  /// Connects (SQLDriverConnect) and switches to manual commit. `query_timeout_s` = 0: none.
  /// Throws BackendError with the pre-flight text of connect_error_message (UnknownDatabase when
  /// the database is missing).
  OdbcSession(std::shared_ptr<Shared> shared, int query_timeout_s);
  ~OdbcSession() override;

  DbStatus begin(TxMode mode) override;
  DbStatus commit() override;
  DbStatus rollback() override;
  std::unique_ptr<Statement> prepare(std::string_view sql) override;
  void execute_immediate(std::string_view sql) override;
  std::unique_ptr<BulkLoader> bulk_loader(std::string_view table, const std::vector<std::string>& columns) override;
  void set_cancel_flag(const std::atomic<bool>* flag) noexcept override;

  // ---- for statements and loaders of this session ----
  SQLHDBC dbc() const noexcept { return dbc_.get(); }
  Shared& shared() noexcept { return *shared_; }
  const Dialect& dialect() const noexcept { return shared_->dialect; }
  CancelWatcher::Slot& slot() noexcept { return *slot_; }
  int query_timeout_s() const noexcept { return query_timeout_s_; }
  /// Monotonic time after which the watcher cancels a call starting now; 0 = never.
  std::int64_t call_deadline_ns() const noexcept;
  /// Before a statement executes: when the driver serves one active statement per connection
  /// (SQL_MAX_CONCURRENT_ACTIVITIES = 1: SQL Server's default result sets without MARS), closes
  /// the cursor open on this session; outside begin()...commit(), switches to autocommit.
  /// Returns a failure status if the mode switch failed.
  DbStatus before_execute();
  /// The cursor of `owner` is open / was closed.
  void cursor_opened(CursorOwner* owner) noexcept;
  void cursor_closed(CursorOwner* owner) noexcept;
  void forget_loader(OdbcBulkLoader* loader) noexcept;
  /// Classifies the failure of a call on `handle`, scrubbed of the password. `why`: the
  /// watcher cancelled the call (then it is retryable unless the connection is gone).
  DbStatus failure(SQLSMALLINT handle_type, SQLHANDLE handle, bool in_commit, CancelReason why);
  /// Throws BackendError for a failed call that is not a per-operation outcome.
  [[noreturn]] void throw_failure(SQLSMALLINT handle_type, SQLHANDLE handle, std::string_view what);

 private:
  DbStatus set_autocommit(bool on);
  void close_open_cursor() noexcept;
  bool connection_dead() const noexcept;

  std::shared_ptr<Shared> shared_;
  DbcHandle dbc_;
  std::shared_ptr<CancelWatcher::Slot> slot_;
  int query_timeout_s_ = 0;
  bool in_tx_ = false;
  bool autocommit_ = false;
  bool read_only_ = false;               ///< SQL_ATTR_ACCESS_MODE currently set
  bool access_mode_supported_ = true;    ///< false once the driver answered 01S02/HYC00
  bool one_active_statement_ = false;    ///< SQL_MAX_CONCURRENT_ACTIVITIES == 1
  CursorOwner* cursor_owner_ = nullptr;  ///< the statement whose cursor is open (one-active mode)
  std::vector<OdbcBulkLoader*> loaders_;
};

/// Factories of odbc_statement.cpp and odbc_bulk_loader.cpp.
std::unique_ptr<Statement> make_statement(OdbcSession& session, std::string_view sql);
/// `raw` receives the loader, for the session's registry (flush at commit, discard at rollback).
std::unique_ptr<BulkLoader> make_bulk_loader(OdbcSession& session, std::string_view table,
                                             const std::vector<std::string>& columns, OdbcBulkLoader*& raw);
/// Flushes / drops the buffered rows of a loader (commit / rollback of its session).
void flush_loader(OdbcBulkLoader& loader);
void discard_loader(OdbcBulkLoader& loader) noexcept;

}  // namespace drivelab::oltp::odbc
