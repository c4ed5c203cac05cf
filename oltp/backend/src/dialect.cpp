// The SQL dialect hooks (backend.hpp) and the one function that renders a SELECT through them.
// Sources of each rendering are in docs/backend-odbc.md ("Dialects").
#include "drivelab/oltp/backend/backend.hpp"

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
  Dialect out;  // defaults: the text SQLite, PostgreSQL and MySQL share
  out.name = std::string(to_string(d));
  out.kind = d;
  switch (d) {
    case SqlDialect::sqlite:
      // Writers are serialised by BEGIN IMMEDIATE; rows are clustered on the key.
      // https://www.sqlite.org/withoutrowid.html: worthwhile when rows are well under 1/20 of a
      // page; not for CUSTOMER (~650 bytes) or STOCK (~320 bytes), whose full rows would fill
      // the interior pages of a WITHOUT ROWID B-tree.
      out.clustered_small_table_options = " WITHOUT ROWID";
      break;
    case SqlDialect::postgres:
      out.for_update = " FOR UPDATE";
      out.max_connections_sql = "SELECT CAST(current_setting('max_connections') AS INTEGER)";
      out.auto_increment_key = "SERIAL";
      out.ignorable_sqlstates = {"40P01", "40001", "23505"};
      out.sysbench_driver = "pgsql";
      out.procedures = ProcedureLanguage::plpgsql;
      out.primary_key_sql =
          "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'p' AND conrelid = "
          "to_regclass(?)";
      break;
    case SqlDialect::mysql:
      out.for_update = " FOR UPDATE";
      out.table_options = " ENGINE=InnoDB";
      // TIMESTAMP is 1970..2038 and, with explicit_defaults_for_timestamp off (MySQL < 8.0.2,
      // MariaDB < 10.10), the first one of a table gets ON UPDATE CURRENT_TIMESTAMP: every
      // Payment would rewrite C_SINCE. DATETIME is a plain date-time.
      out.timestamp_type = "DATETIME";
      out.max_connections_sql = "SELECT @@max_connections";
      out.auto_increment_key = "INTEGER NOT NULL AUTO_INCREMENT";
      out.ignorable_native_errors = {1213, 1020, 1205};
      out.sysbench_driver = "mysql";
      out.procedures = ProcedureLanguage::sql_psm;
      break;
    case SqlDialect::sqlserver:
      // T-SQL has no SELECT ... FOR UPDATE (only on cursors): a locking read is the table hint
      // UPDLOCK (update locks, held to the end of the transaction, compatible with readers but
      // not with other UPDLOCK readers, so two New-Orders of one district queue instead of
      // deadlocking on the lock upgrade) with ROWLOCK (row granularity).
      out.lock_hint = " WITH (UPDLOCK, ROWLOCK)";
      out.first_row_prefix = "TOP (1) ";
      out.first_row_suffix.clear();
      // TIMESTAMP is a synonym of rowversion (an 8-byte row version counter) in T-SQL.
      out.timestamp_type = "DATETIME2";
      out.max_connections_sql = "SELECT @@MAX_CONNECTIONS";
      break;
  }
  return out;
}

std::string render_select(const Dialect& d, const SelectSql& s) {
  std::string sql = "SELECT ";
  if (s.first_row_only) sql += d.first_row_prefix;
  sql += s.columns;
  sql += " FROM ";
  sql += s.table;
  if (s.lock_rows) sql += d.lock_hint;
  sql += " WHERE ";
  sql += s.where;
  if (!s.order_by.empty()) {
    sql += " ORDER BY ";
    sql += s.order_by;
  }
  // LIMIT before FOR UPDATE: MySQL accepts only this order, PostgreSQL both.
  if (s.first_row_only) sql += d.first_row_suffix;
  if (s.lock_rows) sql += d.for_update;
  return sql;
}

}  // namespace drivelab::oltp
