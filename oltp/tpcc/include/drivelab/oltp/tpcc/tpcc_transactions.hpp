#pragma once
/// \file tpcc_transactions.hpp
/// The five TPC-C transactions (clauses 2.4-2.8) over the Backend interface: their database
/// profile (2.x.2), with the real business logic; their inputs ("terminal input", clauses 2.x.1)
/// and outputs are in tpcc_transaction_data.hpp.
///
/// Two protocols (`transactions:` in the tpcc config, TxProtocol), two implementations of
/// Transactions, chosen once per connection by make_transactions:
///   statements  the SQL statements of tpcc_statements.hpp, prepared once per connection (portable
///               text) and run one by one between BEGIN and COMMIT (one client/server round trip
///               each);
///   procedures  one call of a server-side procedure per transaction (tpcc_procedures.hpp:
///               PostgreSQL and MariaDB only).
///
/// A transaction function runs BEGIN ... COMMIT (or the one call) and returns a TxResult:
///   committed    done;
///   rolled_back  the business rollback of New-Order (clause 2.4.1.4: 1% of orders name an
///                unused item on their last line); the function has rolled back itself;
///   failed       a database call failed; `status` says how (retryable / in_doubt / fatal). The
///                transaction is left open: the caller (the driver's retry loop) rolls back and
///                decides whether to rerun it.
#include <memory>
#include <string_view>

#include "drivelab/core/names.hpp"
#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/tpcc/tpcc_transaction_data.hpp"

namespace drivelab::oltp::tpcc {

/// How a transaction reaches the database (see the file comment).
enum class TxProtocol { statements, procedures };
/// The `transactions:` words, in the order the key's error lists them.
inline constexpr EnumNames<TxProtocol, 2> kTxProtocolNames{
    {{"procedures", TxProtocol::procedures}, {"statements", TxProtocol::statements}}};
inline std::string_view to_string(TxProtocol p) noexcept { return name_of(kTxProtocolNames, p); }

/// The five transactions on one connection. Not thread-safe (one terminal). Each function resets
/// its output first.
///
/// With `procedures` the outputs hold only what the procedures return (tpcc_procedures.hpp):
/// NewOrderOutput o_id and all_local, Payment/OrderStatusOutput c_id, DeliveryOutput delivered
/// and skipped, StockLevelOutput low_stock; the rest stays at its default.
class Transactions {
 public:
  virtual ~Transactions() = default;
  Transactions(const Transactions&) = delete;
  Transactions& operator=(const Transactions&) = delete;

  /// Clause 2.4.2.2: the order, its NEW-ORDER row and its lines, each line taking stock; an
  /// unused item (clause 2.4.2.3) rolls the whole order back.
  virtual TxResult new_order(const NewOrderInput& in, NewOrderOutput& out) = 0;
  /// Clause 2.5.2.2: the payment booked on warehouse, district and customer, and its HISTORY row.
  virtual TxResult payment(const PaymentInput& in, PaymentOutput& out) = 0;
  /// Clause 2.6.2.2 (read-only): the customer's balance, last order and its lines.
  virtual TxResult order_status(const OrderStatusInput& in, OrderStatusOutput& out) = 0;
  /// Clause 2.7.4.2: the oldest undelivered order of each of the warehouse's ten districts, in
  /// one database transaction.
  virtual TxResult delivery(const DeliveryInput& in, DeliveryOutput& out) = 0;
  /// Clause 2.8.2.2 (read-only): the items of the district's last 20 orders whose stock is
  /// below the threshold.
  virtual TxResult stock_level(const StockLevelInput& in, StockLevelOutput& out) = 0;

  virtual TxProtocol protocol() const noexcept = 0;

 protected:
  Transactions() = default;
};

/// The transactions of `protocol` on `conn` (which must outlive them), their statements or
/// procedure calls prepared. Throws BackendError if a statement does not prepare (schema or
/// procedures missing), InternalError for `procedures` in a dialect without them.
std::unique_ptr<Transactions> make_transactions(Connection& conn, const Dialect& dialect, TxProtocol protocol);

}  // namespace drivelab::oltp::tpcc
