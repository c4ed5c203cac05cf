// The postgres row (postgres_backend.hpp, backend_row.hpp): it owns no key of the database
// section (libpq's own keywords go in server.connection).
#include <array>

#include "drivelab/oltp/backends/postgres/postgres_backend.hpp"

namespace drivelab::oltp {
namespace {

constexpr std::array kManaged{ServerKind::postgres};
constexpr BackendRow kRow{.name = "postgres",
                          .capabilities = &postgres_capabilities,
                          .managed_servers = kManaged,
                          .dialect = SqlDialect::postgres,
                          .keys = {}};

}  // namespace

const BackendRow& postgres_row() noexcept { return kRow; }

}  // namespace drivelab::oltp
