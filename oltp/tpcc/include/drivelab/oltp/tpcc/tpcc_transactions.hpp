#pragma once
/// \file tpcc_transactions.hpp
/// The five TPC-C transactions (clauses 2.4-2.8) over the Backend interface: their database
/// profile (2.x.2), with the real business logic; their inputs ("terminal input", clauses 2.x.1)
/// and outputs are in tpcc_transaction_data.hpp. SQL is portable text prepared once per
/// connection.
///
/// Two protocols (`transactions:` in the tpcc config, TxProtocol): `statements` prepares the
/// statements below and runs them one by one between BEGIN and COMMIT (one client/server round
/// trip each); `procedures` calls one server-side procedure per transaction
/// (tpcc_procedures.hpp: PostgreSQL and MariaDB only).
///
/// A transaction function runs BEGIN ... COMMIT (or the one call) and returns a TxResult:
///   committed    done;
///   rolled_back  the business rollback of New-Order (clause 2.4.1.4: 1% of orders name an
///                unused item on their last line); the function has rolled back itself;
///   failed       a database call failed; `status` says how (retryable / in_doubt / fatal). The
///                transaction is left open: the caller (the driver's retry loop) rolls back and
///                decides whether to rerun it.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/tpcc/tpcc_random.hpp"
#include "drivelab/oltp/tpcc/tpcc_transaction_data.hpp"

namespace drivelab::oltp::tpcc {

/// How a transaction reaches the database (see the file comment).
enum class TxProtocol { statements, procedures };
std::string_view to_string(TxProtocol p) noexcept;

// ---- SQL text ----------------------------------------------------------------------------------

/// The text of every statement of the five transactions in one dialect, with `?` placeholders.
/// Portable SQL except where a Dialect hook renders it (render_select): the locking reads of
/// New-Order (DISTRICT, STOCK), Payment (CUSTOMER) and Delivery (the oldest NEW-ORDER row, first
/// row only). Pure function: tests render it for every dialect without a server.
struct TransactionSql {
  // New-Order (2.4.2.2)
  std::string no_warehouse, no_district, no_district_update, no_customer, no_insert_order,
      no_insert_new_order, no_item, no_stock_update, no_insert_order_line;
  std::array<std::string, kDistrictsPerWarehouse> no_stock;  ///< by district: S_DIST_01 .. S_DIST_10
  // Payment (2.5.2.2)
  std::string p_warehouse_update, p_warehouse, p_district_update, p_district, customers_by_name,
      p_customer, p_customer_update, p_customer_update_bc, p_insert_history;
  // Order-Status (2.6.2.2)
  std::string os_customer, os_order, os_order_lines;
  // Delivery (2.7.4.2)
  std::string d_oldest_new_order, d_delete_new_order, d_order, d_order_update, d_order_line_update,
      d_order_line_sum, d_customer_update;
  // Stock-Level (2.8.2.2)
  std::string sl_district, sl_count;

  /// (name, text) of every statement above, in declaration order.
  std::vector<std::pair<std::string, std::string>> all() const;
};

/// Renders the statements of the five transactions for `dialect`.
TransactionSql transaction_sql(const Dialect& dialect);

class ProcedureCalls;

/// The prepared statements (or procedure calls) of one connection and the five transactions
/// over them. Not thread-safe (one terminal). Throws BackendError from the constructor if a
/// statement does not prepare (schema or procedures missing), InternalError for `procedures`
/// in a dialect without them.
///
/// With `procedures` the outputs hold only what the procedures return (tpcc_procedures.hpp):
/// NewOrderOutput o_id and all_local, Payment/OrderStatusOutput c_id, DeliveryOutput delivered
/// and skipped, StockLevelOutput low_stock; the rest stays at its default.
class Transactions {
 public:
  Transactions(Connection& conn, const Dialect& dialect, TxProtocol protocol = TxProtocol::statements);
  ~Transactions();
  Transactions(const Transactions&) = delete;
  Transactions& operator=(const Transactions&) = delete;

  TxResult new_order(const NewOrderInput& in, NewOrderOutput& out);
  TxResult payment(const PaymentInput& in, PaymentOutput& out);
  TxResult order_status(const OrderStatusInput& in, OrderStatusOutput& out);
  TxResult delivery(const DeliveryInput& in, DeliveryOutput& out);
  TxResult stock_level(const StockLevelInput& in, StockLevelOutput& out);

  Connection& connection() noexcept { return conn_; }
  TxProtocol protocol() const noexcept { return calls_ ? TxProtocol::procedures : TxProtocol::statements; }

 private:
  struct Prepared;
  Connection& conn_;
  std::unique_ptr<Prepared> p_;               // statements
  std::unique_ptr<ProcedureCalls> calls_;     // procedures
};

}  // namespace drivelab::oltp::tpcc
