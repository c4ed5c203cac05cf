// The mysql row (mysql_backend.hpp, backend_row.hpp): it speaks to managed MariaDB and owns no key
// of the database section.
#include "drivelab/oltp/backends/mysql/mysql_backend.hpp"

namespace drivelab::oltp {

const BackendRow& mysql_row() noexcept {
  static constexpr BackendRow kRow = one_server_row<ServerKind::mariadb>("mysql", &mysql_capabilities);
  return kRow;
}

}  // namespace drivelab::oltp
