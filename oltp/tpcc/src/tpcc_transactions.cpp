// How a transaction reaches the database: the choice between the two implementations of
// Transactions (tpcc_statements.cpp, tpcc_procedures.cpp), made once per connection.
#include "drivelab/oltp/tpcc/tpcc_transactions.hpp"

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/tpcc/tpcc_procedures.hpp"
#include "tpcc_protocols.hpp"

namespace drivelab::oltp::tpcc {

std::unique_ptr<Transactions> make_transactions(Connection& conn, const Dialect& dialect, TxProtocol protocol) {
  if (protocol == TxProtocol::statements) return detail::make_statement_transactions(conn, dialect);
  if (!has_procedures(dialect))
    throw InternalError(
        fmt::format("tpcc: transactions: procedures is not available with the {} dialect", dialect.name));
  return detail::make_procedure_transactions(conn, dialect);
}

}  // namespace drivelab::oltp::tpcc
