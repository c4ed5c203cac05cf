#include "drivelab/oltp/backend.hpp"

namespace drivelab::oltp {

std::string_view to_string(SqlDialect d) noexcept {
  switch (d) {
    case SqlDialect::sqlite: return "sqlite";
    case SqlDialect::postgres: return "postgres";
    case SqlDialect::mysql: return "mysql";
    case SqlDialect::sqlserver: return "sqlserver";
  }
  return "unknown";
}

Dialect make_dialect(SqlDialect d) {
  Dialect out;
  out.name = std::string(to_string(d));
  switch (d) {
    case SqlDialect::sqlite:
      // Writers are serialised by BEGIN IMMEDIATE; rows are clustered on the key.
      out.clustered_small_table_options = " WITHOUT ROWID";
      break;
    case SqlDialect::postgres:
      out.for_update = " FOR UPDATE";
      break;
    case SqlDialect::mysql:
      out.for_update = " FOR UPDATE";
      out.table_options = " ENGINE=InnoDB";
      break;
    case SqlDialect::sqlserver:
      // T-SQL has no FOR UPDATE; its row locks are table hints (see odbc_backend.hpp).
      break;
  }
  return out;
}

}  // namespace drivelab::oltp
