#pragma once
/// \file tpcc_transactions.hpp
/// The five TPC-C transactions (clauses 2.4-2.8) over the Backend interface: their input
/// generation (the "terminal input" of clauses 2.x.1) and their database profile (2.x.2), with
/// the real business logic. SQL is portable text prepared once per connection.
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

#include "drivelab/core/rng.hpp"
#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/tpcc/tpcc_random.hpp"

namespace drivelab::oltp::tpcc {

// ---- inputs (clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1) -----------------------------------------

struct OrderLineInput {
  int i_id = 0;
  int supply_w_id = 0;
  int quantity = 0;
};

struct NewOrderInput {
  int w_id = 0, d_id = 0, c_id = 0;
  int ol_cnt = 0;                           ///< 5..15
  std::array<OrderLineInput, 15> lines{};   ///< first ol_cnt are used
  bool will_roll_back = false;              ///< last line names an unused item (2.4.1.4)
};

struct PaymentInput {
  int w_id = 0, d_id = 0;
  int c_w_id = 0, c_d_id = 0;
  bool by_last_name = false;
  int c_id = 0;          ///< when !by_last_name
  std::string c_last;    ///< when by_last_name
  double h_amount = 0;   ///< 1.00 .. 5,000.00
};

struct OrderStatusInput {
  int w_id = 0, d_id = 0;
  bool by_last_name = false;
  int c_id = 0;
  std::string c_last;
};

struct DeliveryInput {
  int w_id = 0;
  int o_carrier_id = 0;  ///< 1..10
};

struct StockLevelInput {
  int w_id = 0, d_id = 0;
  int threshold = 0;     ///< 10..20
};

/// Draws transaction inputs for one terminal. `c_run` are the run's NURand constants (shared by
/// every terminal of the run); `scale` bounds the ids.
class InputGenerator {
 public:
  InputGenerator(const Scale& scale, const CConstants& c_run) : scale_(scale), c_(c_run) {}

  /// Clause 2.4.1: d_id random(1,10); c_id NURand(1023,1,3000); ol_cnt random(5,15); 1% of
  /// orders roll back (unused item id on the last line); each line: i_id NURand(8191,1,items),
  /// supplied by a remote warehouse with probability 1% when W > 1, quantity random(1,10).
  NewOrderInput new_order(Rng& rng, int w_id) const;
  /// Clause 2.5.1: 85% home / 15% remote customer (remote only when W > 1; remote district
  /// random(1,10)); 60% by last name (NURand(255,0,999)), 40% by id (NURand(1023,1,3000));
  /// h_amount random(1.00, 5,000.00).
  PaymentInput payment(Rng& rng, int w_id) const;
  /// Clause 2.6.1: d_id random(1,10); 60% by last name, 40% by id.
  OrderStatusInput order_status(Rng& rng, int w_id) const;
  /// Clause 2.7.1: o_carrier_id random(1,10).
  DeliveryInput delivery(Rng& rng, int w_id) const;
  /// Clause 2.8.1: d_id fixed per terminal; threshold random(10,20).
  StockLevelInput stock_level(Rng& rng, int w_id, int d_id) const;

  const Scale& scale() const noexcept { return scale_; }

 private:
  int remote_warehouse(Rng& rng, int home) const;
  Scale scale_;
  CConstants c_;
};

// ---- outputs (what the terminal would display; used by tests) ----------------------------------

struct NewOrderOutput {
  int o_id = 0;
  bool all_local = true;
  double total_amount = 0;  ///< sum(ol_amount) * (1 - c_discount) * (1 + w_tax + d_tax)
  int brand_generic_b = 0;  ///< lines marked 'B' (both I_DATA and S_DATA contain "ORIGINAL")
};

struct PaymentOutput {
  int c_id = 0;
  std::string c_credit;
  double c_balance = 0;  ///< after the payment
};

struct OrderStatusOutput {
  int c_id = 0;
  double c_balance = 0;
  int o_id = 0;
  int o_carrier_id = 0;  ///< 0 when not delivered
  int lines = 0;
};

struct DeliveryOutput {
  int delivered = 0;  ///< districts whose oldest undelivered order was delivered
  int skipped = 0;    ///< districts without an undelivered order (clause 2.7.4.2 note)
};

struct StockLevelOutput {
  int low_stock = 0;
};

enum class TxEnd { committed, rolled_back, failed };

/// How a transaction reaches the database (see the file comment).
enum class TxProtocol { statements, procedures };
std::string_view to_string(TxProtocol p) noexcept;

struct TxResult {
  TxEnd end = TxEnd::committed;
  DbStatus status;  ///< meaningful when end == failed
};

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
