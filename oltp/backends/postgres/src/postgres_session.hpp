#pragma once
// A PostgreSQL session (postgres_session.cpp): the backend's Connection over libpq, with its
// prepared Statements and COPY BulkLoaders. postgres_backend.cpp opens one per connect().
#include <memory>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backends/postgres/postgres_backend.hpp"
#include "postgres_cancel.hpp"

namespace drivelab::oltp::pg {

/// Opens a session of `options` (pg::connect: throws BackendError saying what to fix). `watcher`:
/// where set_cancel_flag registers the session (nullptr: the flag is ignored); it must outlive
/// the session.
std::unique_ptr<Connection> open_session(const PostgresOptions& options, CancelWatcher* watcher);

}  // namespace drivelab::oltp::pg
