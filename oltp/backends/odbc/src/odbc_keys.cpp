// The odbc row and the key it owns in the database section (odbc_backend.hpp, backend_row.hpp).
#include <array>

#include "drivelab/oltp/backends/odbc/odbc_backend.hpp"

namespace drivelab::oltp {
namespace {

// The dialects the workloads are written for that a server behind ODBC may speak (backend.hpp SqlDialect).
constexpr std::array<std::string_view, 3> kDialects{"sqlserver", "postgres", "mysql"};

constexpr std::array kKeys{
    OptionKey{.name = "dialect",
              .type = OptionType::word,
              .doc = "the SQL dialect of the server behind the driver; a managed server's own by default, "
                     "required with an existing one",
              .noun = "dialect",
              .words = kDialects,
              .any_case = false,
              .default_word = "sqlserver"},
};

constexpr std::array kManaged{ServerKind::postgres, ServerKind::mariadb};
constexpr BackendRow kRow{.name = "odbc",
                          .capabilities = &odbc_capabilities,
                          .managed_servers = kManaged,
                          .dialect = std::nullopt,
                          .keys = kKeys};

}  // namespace

const BackendRow& odbc_row() noexcept { return kRow; }

}  // namespace drivelab::oltp
