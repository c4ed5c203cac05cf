// The five TPC-C transactions as SQL statements (`transactions: statements`, clauses 2.4-2.8).
// Each follows the database profile of its clause x.2.2 step by step; comments cite the steps
// that are easy to get wrong.
#include "drivelab/oltp/tpcc/tpcc_statements.hpp"

#include <fmt/format.h>

#include "drivelab/oltp/tpcc/tpcc_schema.hpp"
#include "tpcc_protocols.hpp"

namespace drivelab::oltp::tpcc {

// ---- SQL text ----------------------------------------------------------------------------------

TransactionSql transaction_sql(const Dialect& dialect) {
  TransactionSql q;
  // New-Order (2.4.2.2)
  q.no_warehouse = "SELECT w_tax FROM warehouse WHERE w_id = ?";
  // D_NEXT_O_ID is read and then incremented: a locking read, so that two New-Orders of one
  // district queue here instead of both reading the same value.
  q.no_district = render_select(
      dialect,
      {.columns = "d_tax, d_next_o_id", .table = "district", .where = "d_w_id = ? AND d_id = ?", .lock_rows = true});
  q.no_district_update = "UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?";
  q.no_customer = "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
  q.no_insert_order =
      "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, "
      "o_all_local) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)";
  q.no_insert_new_order = "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)";
  q.no_item = "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?";
  for (int d = 1; d <= kDistrictsPerWarehouse; ++d) {
    // S_DIST_xx is chosen by the district: one statement per district keeps them static.
    const std::string columns = fmt::format("s_quantity, s_data, s_dist_{:02d}", d);
    q.no_stock[static_cast<std::size_t>(d - 1)] = render_select(
        dialect, {.columns = columns, .table = "stock", .where = "s_i_id = ? AND s_w_id = ?", .lock_rows = true});
  }
  q.no_stock_update =
      "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, "
      "s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?";
  q.no_insert_order_line =
      "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, "
      "ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)";
  // Payment (2.5.2.2)
  q.p_warehouse_update = "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?";
  q.p_warehouse = "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?";
  q.p_district_update = "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?";
  q.p_district =
      "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district "
      "WHERE d_w_id = ? AND d_id = ?";
  q.customers_by_name = "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first";
  q.p_customer =
      render_select(dialect, {.columns = "c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, "
                                         "c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, c_data",
                              .table = "customer",
                              .where = "c_w_id = ? AND c_d_id = ? AND c_id = ?",
                              .lock_rows = true});
  q.p_customer_update =
      "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, "
      "c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
  q.p_customer_update_bc =
      "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, "
      "c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
  q.p_insert_history =
      "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
  // Order-Status (2.6.2.2)
  q.os_customer =
      "SELECT c_balance, c_first, c_middle, c_last FROM customer "
      "WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
  // "The row in the ORDER table with matching O_W_ID, O_D_ID, O_C_ID and the largest O_ID";
  // a MAX subquery keeps the text portable and uses the orders_customer index.
  q.os_order =
      "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND "
      "o_id = (SELECT MAX(o_id) FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ?)";
  q.os_order_lines =
      "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line "
      "WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";
  // Delivery (2.7.4.2): "the row with the lowest NO_O_ID", locked, so that a concurrent Delivery
  // of the same warehouse waits and then takes the next order (PostgreSQL re-checks the locked
  // row and moves on; InnoDB and SQL Server read the latest committed rows under a lock) instead
  // of both picking the same order and one failing on the DELETE.
  q.d_oldest_new_order = render_select(dialect, {.columns = "no_o_id",
                                                 .table = "new_order",
                                                 .where = "no_w_id = ? AND no_d_id = ?",
                                                 .order_by = "no_o_id",
                                                 .first_row_only = true,
                                                 .lock_rows = true});
  q.d_delete_new_order = "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?";
  q.d_order = "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?";
  q.d_order_update = "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?";
  q.d_order_line_update = "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";
  q.d_order_line_sum = "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";
  q.d_customer_update =
      "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 "
      "WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
  // Stock-Level (2.8.2.2)
  q.sl_district = "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?";
  q.sl_count =
      "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? "
      "AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?";
  return q;
}

std::vector<std::pair<std::string, std::string>> TransactionSql::all() const {
  std::vector<std::pair<std::string, std::string>> out;
  for_each(*this, [&](std::string name, const std::string& text) { out.emplace_back(std::move(name), text); });
  return out;
}

namespace detail {
namespace {

DbStatus data_error(std::string message) {
  DbStatus s;
  s.outcome = Outcome::fatal;
  s.message = std::move(message);
  return s;
}

/// Binds `values` to a statement that returns no rows and runs it.
template <class... Values>
DbStatus run(Statement& q, const Values&... values) {
  bind_all(q, values...);
  return q.execute();
}

/// Binds `values`, executes a query and positions on its first row; `found` = whether there is one.
template <class... Values>
DbStatus first_row(Statement& q, bool& found, const Values&... values) {
  DbStatus s = run(q, values...);
  if (!s.ok()) return s;
  found = q.next(s);
  return s;
}

/// Binds `values` and executes a query that must return a row (a missing row means a damaged
/// database).
template <class... Values>
DbStatus one_row(Statement& q, std::string_view what, const Values&... values) {
  bool found = false;
  DbStatus s = first_row(q, found, values...);
  if (s.ok() && !found) return data_error(fmt::format("{} not found", what));
  return s;
}

std::string round2(double v) { return fmt::format("{:.2f}", v); }

/// `transactions: statements`: the statements of TransactionSql, prepared once on the
/// connection, run one by one between BEGIN and COMMIT (one round trip each).
class StatementTransactions final : public Transactions {
 public:
  StatementTransactions(Connection& conn, const Dialect& dialect);

  TxResult new_order(const NewOrderInput& in, NewOrderOutput& out) override;
  TxResult payment(const PaymentInput& in, PaymentOutput& out) override;
  TxResult order_status(const OrderStatusInput& in, OrderStatusOutput& out) override;
  TxResult delivery(const DeliveryInput& in, DeliveryOutput& out) override;
  TxResult stock_level(const StockLevelInput& in, StockLevelOutput& out) override;
  TxProtocol protocol() const noexcept override { return TxProtocol::statements; }

 private:
  using Prepared = TransactionStatements<std::unique_ptr<Statement>>;
  DbStatus customer_by_last_name(int w_id, int d_id, const std::string& c_last, int& c_id);

  Connection& conn_;
  Prepared p_;
  std::vector<int> ids_;  // scratch for by-last-name lookups
};

StatementTransactions::StatementTransactions(Connection& conn, const Dialect& dialect) : conn_(conn) {
  const TransactionSql q = transaction_sql(dialect);
  std::vector<const std::string*> texts;
  TransactionSql::for_each(q, [&](const std::string&, const std::string& text) { texts.push_back(&text); });
  std::size_t k = 0;
  Prepared::for_each(p_, [&](const std::string&, std::unique_ptr<Statement>& s) { s = conn.prepare(*texts[k++]); });
}

/// Clause 2.5.2.2 / 2.6.2.2: the customers with that last name, sorted by C_FIRST; the one at
/// position ceil(n/2) (1-based) is chosen. Result in `c_id`.
DbStatus StatementTransactions::customer_by_last_name(int w_id, int d_id, const std::string& c_last, int& c_id) {
  Statement& q = *p_.customers_by_name;
  DbStatus s = run(q, w_id, d_id, c_last);
  if (!s.ok()) return s;
  ids_.clear();
  while (q.next(s)) ids_.push_back(static_cast<int>(q.column_int64(0)));
  if (!s.ok()) return s;
  if (ids_.empty())
    return data_error(fmt::format("no customer named {} in warehouse {} district {}", c_last, w_id, d_id));
  c_id = ids_[(ids_.size() - 1) / 2];  // ceil(n/2)-th, 1-based
  return s;
}

// ---- New-Order (clause 2.4.2.2) ----------------------------------------------------------------

TxResult StatementTransactions::new_order(const NewOrderInput& in, NewOrderOutput& out) {
  Prepared& p = p_;
  out = {};
  if (DbStatus s = conn_.begin(TxMode::read_write); !s.ok()) return failed(std::move(s));

  if (DbStatus s = one_row(*p.no_warehouse, "warehouse", in.w_id); !s.ok()) return failed(std::move(s));
  const double w_tax = p.no_warehouse->column_double(0);

  if (DbStatus s = one_row(*p.no_district, "district", in.w_id, in.d_id); !s.ok()) return failed(std::move(s));
  const double d_tax = p.no_district->column_double(0);
  const std::int64_t o_id = p.no_district->column_int64(1);
  if (DbStatus s = run(*p.no_district_update, o_id + 1, in.w_id, in.d_id); !s.ok()) return failed(std::move(s));

  if (DbStatus s = one_row(*p.no_customer, "customer", in.w_id, in.d_id, in.c_id); !s.ok()) return failed(std::move(s));
  const double c_discount = p.no_customer->column_double(0);

  const bool local = all_local(in);
  // A copy: sql_timestamp_now()'s text changes at this thread's next call.
  const std::string entry_d = sql_timestamp_now();  // NOLINT(performance-unnecessary-copy-initialization)
  if (DbStatus s = run(*p.no_insert_order, o_id, in.d_id, in.w_id, in.c_id, entry_d, in.ol_cnt, local ? 1 : 0); !s.ok())
    return failed(std::move(s));
  if (DbStatus s = run(*p.no_insert_new_order, o_id, in.d_id, in.w_id); !s.ok()) return failed(std::move(s));

  double sum_amount = 0;
  std::string dist_info;
  for (int n = 1; n <= in.ol_cnt; ++n) {
    const OrderLineInput& line = in.lines[static_cast<std::size_t>(n - 1)];
    bool found = false;
    if (DbStatus s = first_row(*p.no_item, found, line.i_id); !s.ok()) return failed(std::move(s));
    if (!found) {
      // Clause 2.4.2.3: an unused item id -> the whole transaction is rolled back.
      if (DbStatus s = conn_.rollback(); !s.ok()) return failed(std::move(s));
      return {TxEnd::rolled_back, {}};
    }
    const double i_price = p.no_item->column_double(0);
    const bool item_original = p.no_item->column_text(2).find("ORIGINAL") != std::string_view::npos;

    Statement& sq = *p.no_stock[static_cast<std::size_t>(in.d_id - 1)];
    if (DbStatus s = one_row(sq, "stock", line.i_id, line.supply_w_id); !s.ok()) return failed(std::move(s));
    const std::int64_t s_quantity = sq.column_int64(0);
    const bool stock_original = sq.column_text(1).find("ORIGINAL") != std::string_view::npos;
    dist_info.assign(sq.column_text(2));

    // Clause 2.4.2.2: decrease by the ordered quantity, restocking by 91 when fewer than 10 remain.
    const std::int64_t new_quantity =
        s_quantity - line.quantity >= 10 ? s_quantity - line.quantity : s_quantity - line.quantity + 91;
    if (DbStatus s = run(*p.no_stock_update, new_quantity, line.quantity, line.supply_w_id != in.w_id ? 1 : 0,
                         line.i_id, line.supply_w_id);
        !s.ok())
      return failed(std::move(s));

    const double ol_amount = line.quantity * i_price;
    sum_amount += ol_amount;
    if (item_original && stock_original) ++out.brand_generic_b;  // 'B'rand, else 'G'eneric

    if (DbStatus s = run(*p.no_insert_order_line, o_id, in.d_id, in.w_id, n, line.i_id, line.supply_w_id, line.quantity,
                         ol_amount, dist_info);
        !s.ok())
      return failed(std::move(s));
  }

  if (DbStatus s = conn_.commit(); !s.ok()) return failed(std::move(s));
  out.o_id = static_cast<int>(o_id);
  out.all_local = local;
  out.total_amount = sum_amount * (1 - c_discount) * (1 + w_tax + d_tax);
  return {};
}

// ---- Payment (clause 2.5.2.2) ------------------------------------------------------------------

TxResult StatementTransactions::payment(const PaymentInput& in, PaymentOutput& out) {
  Prepared& p = p_;
  out = {};
  if (DbStatus s = conn_.begin(TxMode::read_write); !s.ok()) return failed(std::move(s));

  if (DbStatus s = run(*p.p_warehouse_update, in.h_amount, in.w_id); !s.ok()) return failed(std::move(s));
  if (DbStatus s = one_row(*p.p_warehouse, "warehouse", in.w_id); !s.ok()) return failed(std::move(s));
  const std::string w_name(p.p_warehouse->column_text(0));

  if (DbStatus s = run(*p.p_district_update, in.h_amount, in.w_id, in.d_id); !s.ok()) return failed(std::move(s));
  if (DbStatus s = one_row(*p.p_district, "district", in.w_id, in.d_id); !s.ok()) return failed(std::move(s));
  const std::string d_name(p.p_district->column_text(0));

  int c_id = in.c_id;
  if (in.by_last_name) {
    if (DbStatus s = customer_by_last_name(in.c_w_id, in.c_d_id, in.c_last, c_id); !s.ok()) return failed(std::move(s));
  }
  Statement& cq = *p.p_customer;
  if (DbStatus s = one_row(cq, "customer", in.c_w_id, in.c_d_id, c_id); !s.ok()) return failed(std::move(s));
  out.c_credit.assign(cq.column_text(10));
  const double c_balance = cq.column_double(13);

  if (out.c_credit == "BC") {
    // Clause 2.5.2.2: C_ID, C_D_ID, C_W_ID, D_ID, W_ID and H_AMOUNT are inserted at the left of
    // C_DATA, shifting it right; the result is truncated to 500 characters.
    std::string c_data =
        fmt::format("{} {} {} {} {} {} ", c_id, in.c_d_id, in.c_w_id, in.d_id, in.w_id, round2(in.h_amount));
    c_data += cq.column_text(14);
    if (c_data.size() > 500) c_data.resize(500);
    if (DbStatus s = run(*p.p_customer_update_bc, in.h_amount, in.h_amount, c_data, in.c_w_id, in.c_d_id, c_id);
        !s.ok())
      return failed(std::move(s));
  } else {
    if (DbStatus s = run(*p.p_customer_update, in.h_amount, in.h_amount, in.c_w_id, in.c_d_id, c_id); !s.ok())
      return failed(std::move(s));
  }

  // H_DATA: W_NAME and D_NAME separated by 4 spaces.
  const std::string h_data = w_name + "    " + d_name;
  // A copy: sql_timestamp_now()'s text changes at this thread's next call.
  const std::string h_date = sql_timestamp_now();  // NOLINT(performance-unnecessary-copy-initialization)
  if (DbStatus s = run(*p.p_insert_history, c_id, in.c_d_id, in.c_w_id, in.d_id, in.w_id, h_date, in.h_amount, h_data);
      !s.ok())
    return failed(std::move(s));

  if (DbStatus s = conn_.commit(); !s.ok()) return failed(std::move(s));
  out.c_id = c_id;
  out.c_balance = c_balance - in.h_amount;
  return {};
}

// ---- Order-Status (clause 2.6.2.2) -------------------------------------------------------------

TxResult StatementTransactions::order_status(const OrderStatusInput& in, OrderStatusOutput& out) {
  Prepared& p = p_;
  out = {};
  if (DbStatus s = conn_.begin(TxMode::read_only); !s.ok()) return failed(std::move(s));

  int c_id = in.c_id;
  if (in.by_last_name) {
    if (DbStatus s = customer_by_last_name(in.w_id, in.d_id, in.c_last, c_id); !s.ok()) return failed(std::move(s));
  }
  if (DbStatus s = one_row(*p.os_customer, "customer", in.w_id, in.d_id, c_id); !s.ok()) return failed(std::move(s));
  out.c_balance = p.os_customer->column_double(0);

  Statement& oq = *p.os_order;
  bool has_order = false;
  if (DbStatus s = first_row(oq, has_order, in.w_id, in.d_id, in.w_id, in.d_id, c_id); !s.ok())
    return failed(std::move(s));
  if (has_order) {
    out.o_id = static_cast<int>(oq.column_int64(0));
    out.o_carrier_id = oq.is_null(2) ? 0 : static_cast<int>(oq.column_int64(2));
    Statement& lq = *p.os_order_lines;
    DbStatus s = run(lq, in.w_id, in.d_id, out.o_id);
    if (!s.ok()) return failed(std::move(s));
    while (lq.next(s)) ++out.lines;
    if (!s.ok()) return failed(std::move(s));
  }

  if (DbStatus s = conn_.commit(); !s.ok()) return failed(std::move(s));
  out.c_id = c_id;
  return {};
}

// ---- Delivery (clause 2.7.4.2) -----------------------------------------------------------------

TxResult StatementTransactions::delivery(const DeliveryInput& in, DeliveryOutput& out) {
  Prepared& p = p_;
  out = {};
  // All ten districts in one database transaction (clause 2.7.4.1 allows one to ten).
  if (DbStatus s = conn_.begin(TxMode::read_write); !s.ok()) return failed(std::move(s));
  // A copy: sql_timestamp_now()'s text changes at this thread's next call.
  const std::string delivery_d = sql_timestamp_now();  // NOLINT(performance-unnecessary-copy-initialization)

  for (int d = 1; d <= kDistrictsPerWarehouse; ++d) {
    Statement& nq = *p.d_oldest_new_order;
    bool found = false;
    if (DbStatus s = first_row(nq, found, in.w_id, d); !s.ok()) return failed(std::move(s));
    if (!found) {
      ++out.skipped;  // no undelivered order in this district: skipped (clause 2.7.4.2)
      continue;
    }
    const std::int64_t o_id = nq.column_int64(0);

    Statement& del = *p.d_delete_new_order;
    if (DbStatus s = run(del, in.w_id, d, o_id); !s.ok()) return failed(std::move(s));
    if (del.affected_rows() != 1) {
      // Another Delivery took this order between our SELECT and DELETE (the SELECT locks the row
      // where the dialect can; this is the safety net where it cannot): rerun the transaction.
      DbStatus s;
      s.outcome = Outcome::retryable;
      s.message = fmt::format("new order {}/{}/{} delivered concurrently", in.w_id, d, o_id);
      return failed(std::move(s));
    }

    if (DbStatus s = one_row(*p.d_order, "order", in.w_id, d, o_id); !s.ok()) return failed(std::move(s));
    const std::int64_t c_id = p.d_order->column_int64(0);
    if (DbStatus s = run(*p.d_order_update, in.o_carrier_id, in.w_id, d, o_id); !s.ok()) return failed(std::move(s));
    if (DbStatus s = run(*p.d_order_line_update, delivery_d, in.w_id, d, o_id); !s.ok()) return failed(std::move(s));

    Statement& ls = *p.d_order_line_sum;
    if (DbStatus s = one_row(ls, "SUM(ol_amount)", in.w_id, d, o_id); !s.ok()) return failed(std::move(s));
    const double amount = ls.is_null(0) ? 0.0 : ls.column_double(0);
    if (DbStatus s = run(*p.d_customer_update, amount, in.w_id, d, c_id); !s.ok()) return failed(std::move(s));
    ++out.delivered;
  }

  if (DbStatus s = conn_.commit(); !s.ok()) return failed(std::move(s));
  return {};
}

// ---- Stock-Level (clause 2.8.2.2) --------------------------------------------------------------

TxResult StatementTransactions::stock_level(const StockLevelInput& in, StockLevelOutput& out) {
  Prepared& p = p_;
  out = {};
  // Read-only; clause 3.4 lets Stock-Level run at a weaker isolation level.
  if (DbStatus s = conn_.begin(TxMode::read_only); !s.ok()) return failed(std::move(s));

  if (DbStatus s = one_row(*p.sl_district, "district", in.w_id, in.d_id); !s.ok()) return failed(std::move(s));
  const std::int64_t next_o_id = p.sl_district->column_int64(0);

  // The last 20 orders of the district: O_ID in [D_NEXT_O_ID - 20, D_NEXT_O_ID).
  Statement& q = *p.sl_count;
  if (DbStatus s = one_row(q, "COUNT", in.w_id, in.d_id, next_o_id, next_o_id - 20, in.w_id, in.threshold); !s.ok())
    return failed(std::move(s));
  out.low_stock = static_cast<int>(q.column_int64(0));

  if (DbStatus s = conn_.commit(); !s.ok()) return failed(std::move(s));
  return {};
}

}  // namespace

std::unique_ptr<Transactions> make_statement_transactions(Connection& conn, const Dialect& dialect) {
  return std::make_unique<StatementTransactions>(conn, dialect);
}

}  // namespace detail
}  // namespace drivelab::oltp::tpcc
