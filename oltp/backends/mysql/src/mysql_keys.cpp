// The mysql row (mysql_backend.hpp, backend_row.hpp): it owns no key of the database section.
#include <array>

#include "drivelab/oltp/backends/mysql/mysql_backend.hpp"

namespace drivelab::oltp {
namespace {

constexpr std::array kManaged{ServerKind::mariadb};
constexpr BackendRow kRow{.name = "mysql",
                          .capabilities = &mysql_capabilities,
                          .managed_servers = kManaged,
                          .dialect = SqlDialect::mysql,
                          .keys = {}};

}  // namespace

const BackendRow& mysql_row() noexcept { return kRow; }

}  // namespace drivelab::oltp
