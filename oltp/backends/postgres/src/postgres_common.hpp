#pragma once
// libpq plumbing shared by the PostgreSQL backend (postgres_backend.cpp) and the managed server
// (postgres_server.cpp): RAII owners, conninfo text, connecting with errors a person can act on,
// waiting for results (cancelled from outside by the backend's watcher, postgres_cancel.hpp),
// and SQLSTATE classification.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <libpq-fe.h>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backends/postgres/postgres_backend.hpp"
#include "drivelab/core/handle.hpp"
#include "postgres_cancel.hpp"

namespace drivelab::oltp::pg {

using ConnHandle = CHandle<PGconn, PQfinish>;
using ResultHandle = CHandle<PGresult, PQclear>;

/// `value` as a conninfo value: single-quoted, with \ and ' escaped (libpq's rule).
std::string conninfo_quote(std::string_view value);
/// SQL identifier in double quotes ("a""b").
std::string quote_ident(std::string_view name);
/// SQL string literal in single quotes ('it''s'); standard_conforming_strings is on since 9.1.
std::string quote_literal(std::string_view text);

/// Where a connection goes, for messages: `socket directory /dir port 5432` or `host db1 port 5432`,
/// from the endpoint and the `connection` string alike (host, hostaddr, port as libpq reads them);
/// "libpq's default server (PGHOST or the default socket)" only when neither names a host.
std::string describe_target(const PostgresOptions& o);

/// The full conninfo of `o` (password included: never log it). TCP keepalives are on so a
/// vanished remote server is noticed within ~30 s even while a call waits for a result.
std::string conninfo(const PostgresOptions& o);

/// Opens a session. Throws BackendError whose message says what to fix: authentication failed
/// for user "u" (SQLSTATE 28P01/28000), server unreachable at <target> (08001), database "d"
/// does not exist (3D000); libpq's own text is appended (it never contains the password).
ConnHandle connect(const PostgresOptions& o);

/// How a wait for results may be cancelled.
struct Wait {
  /// The session's slot in its backend's CancelWatcher (postgres_cancel.hpp), which cancels the
  /// call when the session's flag is set and abandons the session when the server does not
  /// answer the cancel. nullptr: never cancelled (COPY, ROLLBACK, sessions without a cancel
  /// flag: loads, the managed server's own). COMMIT is waited for with the slot, as every
  /// statement (PgConnection::commit).
  CallSlot* slot = nullptr;
};

/// Outcome of collecting the results of one sent command.
struct Collected {
  ResultHandle result;  ///< the last result (or the first error result)
  bool lost = false;    ///< the session is unusable (socket closed, abandoned after a cancel)
  std::string lost_message;
};

/// After a PQsend* call: waits (poll(-1) on PQsocket, as libpq's blocking calls do; the call is
/// marked on `wait.slot` for the watcher) and
/// collects every result until PQgetResult returns null, keeping the first error result, else
/// the last one. Stops at PGRES_COPY_IN (the caller then streams the data).
Collected collect(PGconn* conn, const Wait& wait);

/// True for SQLSTATEs that mean the session is gone: class 08 (connection exception), 57P01
/// admin_shutdown (pg_terminate_backend), 57P02 crash_shutdown, 57P03 cannot_connect_now.
bool is_connection_loss(std::string_view sqlstate) noexcept;
/// True for 40001, 40P01, 55P03, 57014 (see postgres_backend.hpp).
bool is_retryable(std::string_view sqlstate) noexcept;

/// A DbStatus for `c` (ok when its result is a success). `in_commit`: losing the session now
/// leaves the outcome unknown. A storage error (is_storage_error: 53100, 58030, or the text;
/// a checkpointer's failure reaches a client as XX000 quoting errno) is storage_failure, even
/// with the session lost.
DbStatus status_of(const Collected& c, bool in_commit);

/// Runs `sql` (simple query protocol; several statements allowed) and throws BackendError with
/// `what` and the server's message on failure. Returns the last result.
ResultHandle exec_or_throw(PGconn* conn, std::string_view sql, std::string_view what);

}  // namespace drivelab::oltp::pg
