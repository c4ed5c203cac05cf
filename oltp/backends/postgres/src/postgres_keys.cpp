// The postgres row (postgres_backend.hpp, backend_row.hpp): it speaks to managed PostgreSQL and
// owns no key of the database section (libpq's own keywords go in server.connection).
#include "drivelab/oltp/backends/postgres/postgres_backend.hpp"

namespace drivelab::oltp {

const BackendRow& postgres_row() noexcept {
  static constexpr BackendRow kRow = one_server_row<ServerKind::postgres>("postgres", &postgres_capabilities);
  return kRow;
}

}  // namespace drivelab::oltp
