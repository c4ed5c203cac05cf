#pragma once
/// \file tpcc_procedures.hpp
/// The five TPC-C transactions as server-side procedures (`transactions: procedures`), the way
/// HammerDB runs them: its PostgreSQL and MySQL/MariaDB drivers call stored code NEWORD, PAYMENT,
/// DELIVERY, OSTAT and SLEV (TPC-Council/HammerDB, src/postgresql/pgoltp.tcl and
/// src/mysql/myoltp.tcl), so that one transaction costs the client ONE round trip instead of
/// one per statement (~28 on average with `transactions: statements`, docs/oltp-tpcc.md).
///
/// Unlike HammerDB, the inputs are drawn in the driver (InputGenerator, clauses 2.x.1) and passed
/// as arguments, so both protocols run the same transactions from the same seed. New-Order's
/// item lines are passed as three packed strings of comma-separated integers (item ids, supply
/// warehouses, quantities; at most 15 each). Each procedure has the effects of its clause x.2.2
/// database profile exactly as the `statements` protocol (tpcc_statements.hpp): the same reads,
/// locking reads, updates and inserts. Most follow it statement by statement; PostgreSQL's
/// New-Order is set-based (one statement reads, updates and turns all lines' stock rows into
/// ORDER-LINE rows; 7 statements for 10 lines instead of 46, as HammerDB's NEWORD is set-based,
/// pgoltp.tcl:479-600), and PostgreSQL's Payment reads WAREHOUSE and DISTRICT with
/// UPDATE ... RETURNING (docs/oltp-tpcc.md section 7).
///
///   PostgreSQL  PL/pgSQL functions drivelab_neword / _payment / _ostat / _delivery / _slev,
///               called as `SELECT drivelab_x(?, ...)` in autocommit: the call IS the
///               transaction (no BEGIN/COMMIT round trips), at READ COMMITTED like the statements
///               path; drivelab_ostat and drivelab_slev are STABLE, so each runs on one snapshot
///               (what REPEATABLE READ READ ONLY gives the statements path).
///   MariaDB     stored FUNCTIONs of the same names, also called as `SELECT drivelab_x(?, ...)`
///               in autocommit. A function rather than a PROCEDURE: a function returns its value
///               in the one row of the SELECT (a CALL needs multi-result handling or a second
///               round trip for OUT parameters), and in autocommit a statement is a transaction,
///               whose failure InnoDB rolls back whole.
///
/// Each function returns one integer: New-Order the new O_ID, Payment and Order-Status the
/// customer's C_ID (chosen by last name where asked), Delivery the number of districts
/// delivered, Stock-Level the low-stock count. The other fields of the terminal screens are read
/// on the server but not sent back.
///
/// Outcomes: New-Order's business rollback (clause 2.4.2.3, an unused item) raises SQLSTATE
/// kRollbackSqlstate, which undoes the whole call; the procedures' Transactions
/// (make_transactions) turn it into TxEnd::rolled_back. A Delivery that finds its oldest
/// NEW-ORDER row taken by a concurrent Delivery raises a serialization failure (PostgreSQL
/// 40001; MariaDB 1020, ER_CHECKREAD), which the backends classify as retryable, as the
/// statements path does. Deadlocks, lock timeouts and
/// cancels inside a function arrive with their usual codes and are classified by the backend.
/// A connection lost during a call is in_doubt: the call is the commit.
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/tpcc/tpcc_transaction_data.hpp"

namespace drivelab::oltp::tpcc {

/// SQLSTATE of New-Order's business rollback raised by the procedures.
inline constexpr std::string_view kRollbackSqlstate = "DLRB1";

/// True when the procedures are written in `dialect`'s procedure language (Dialect::procedures:
/// PL/pgSQL or MySQL's stored procedures).
bool has_procedures(const Dialect& dialect) noexcept;

/// The DDL that (re)creates the five procedures in `dialect`, one statement per element
/// (PostgreSQL: CREATE OR REPLACE FUNCTION, New-Order's helper drivelab_stock_quantity first; MariaDB: DROP FUNCTION IF
/// EXISTS + CREATE FUNCTION). Throws InternalError for a dialect without procedures.
std::vector<std::string> procedure_ddl(const Dialect& dialect);

/// Creates or replaces the procedures (idempotent; cheap, so run before every procedures run,
/// on a fresh or a reused schema). Throws BackendError.
void create_procedures(Connection& conn, const Dialect& dialect);

/// The call of each procedure, with `?` placeholders, in `dialect`.
struct ProcedureCallSql {
  std::string new_order, payment, order_status, delivery, stock_level;
};
ProcedureCallSql procedure_call_sql(const Dialect& dialect);

/// New-Order's item lines as the packed strings the procedures take: "i1,i2,...".
struct PackedLines {
  std::string i_ids, supply_w_ids, quantities;
};
PackedLines pack_lines(const NewOrderInput& in);

}  // namespace drivelab::oltp::tpcc
