// The five TPC-C transactions (clauses 2.4-2.8). Each follows the database profile of its clause
// x.2.2 step by step; comments cite the steps that are easy to get wrong.
#include "drivelab/oltp/tpcc/tpcc_transactions.hpp"

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/tpcc/tpcc_procedures.hpp"
#include "drivelab/oltp/tpcc/tpcc_schema.hpp"

namespace drivelab::oltp::tpcc {
namespace {

TxResult failed(DbStatus s) { return {TxEnd::failed, std::move(s)}; }

DbStatus data_error(std::string message) {
  DbStatus s;
  s.outcome = Outcome::fatal;
  s.message = std::move(message);
  return s;
}

/// Executes a query and positions on its first row; `found` = whether there is one.
DbStatus first_row(Statement& q, bool& found) {
  DbStatus s = q.execute();
  if (!s.ok()) return s;
  found = q.next(s);
  return s;
}

/// Executes a query that must return a row (a missing row means a damaged database).
DbStatus one_row(Statement& q, std::string_view what) {
  bool found = false;
  DbStatus s = first_row(q, found);
  if (s.ok() && !found) return data_error(fmt::format("{} not found", what));
  return s;
}

std::string round2(double v) { return fmt::format("{:.2f}", v); }

}  // namespace

// ---- SQL text ----------------------------------------------------------------------------------

TransactionSql transaction_sql(const Dialect& dialect) {
  TransactionSql q;
  // New-Order (2.4.2.2)
  q.no_warehouse = "SELECT w_tax FROM warehouse WHERE w_id = ?";
  // D_NEXT_O_ID is read and then incremented: a locking read, so that two New-Orders of one
  // district queue here instead of both reading the same value.
  q.no_district = render_select(dialect, {.columns = "d_tax, d_next_o_id",
                                          .table = "district",
                                          .where = "d_w_id = ? AND d_id = ?",
                                          .lock_rows = true});
  q.no_district_update = "UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?";
  q.no_customer =
      "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
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
  q.p_warehouse =
      "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?";
  q.p_district_update = "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?";
  q.p_district =
      "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district "
      "WHERE d_w_id = ? AND d_id = ?";
  q.customers_by_name =
      "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first";
  q.p_customer = render_select(
      dialect, {.columns = "c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, "
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
  q.d_order_line_update =
      "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";
  q.d_order_line_sum =
      "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";
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
  std::vector<std::pair<std::string, std::string>> out{
      {"no_warehouse", no_warehouse}, {"no_district", no_district},
      {"no_district_update", no_district_update}, {"no_customer", no_customer},
      {"no_insert_order", no_insert_order}, {"no_insert_new_order", no_insert_new_order},
      {"no_item", no_item}};
  for (std::size_t d = 0; d < no_stock.size(); ++d) out.emplace_back(fmt::format("no_stock[{}]", d + 1), no_stock[d]);
  const std::pair<std::string, std::string> rest[] = {
      {"no_stock_update", no_stock_update}, {"no_insert_order_line", no_insert_order_line},
      {"p_warehouse_update", p_warehouse_update}, {"p_warehouse", p_warehouse},
      {"p_district_update", p_district_update}, {"p_district", p_district},
      {"customers_by_name", customers_by_name}, {"p_customer", p_customer},
      {"p_customer_update", p_customer_update}, {"p_customer_update_bc", p_customer_update_bc},
      {"p_insert_history", p_insert_history}, {"os_customer", os_customer}, {"os_order", os_order},
      {"os_order_lines", os_order_lines}, {"d_oldest_new_order", d_oldest_new_order},
      {"d_delete_new_order", d_delete_new_order}, {"d_order", d_order},
      {"d_order_update", d_order_update}, {"d_order_line_update", d_order_line_update},
      {"d_order_line_sum", d_order_line_sum}, {"d_customer_update", d_customer_update},
      {"sl_district", sl_district}, {"sl_count", sl_count}};
  out.insert(out.end(), std::begin(rest), std::end(rest));
  return out;
}

// ---- prepared statements -----------------------------------------------------------------------

struct Transactions::Prepared {
  Prepared(Connection& c, const Dialect& dialect) {
    const TransactionSql q = transaction_sql(dialect);
    no_warehouse = c.prepare(q.no_warehouse);
    no_district = c.prepare(q.no_district);
    no_district_update = c.prepare(q.no_district_update);
    no_customer = c.prepare(q.no_customer);
    no_insert_order = c.prepare(q.no_insert_order);
    no_insert_new_order = c.prepare(q.no_insert_new_order);
    no_item = c.prepare(q.no_item);
    for (std::size_t d = 0; d < no_stock.size(); ++d) no_stock[d] = c.prepare(q.no_stock[d]);
    no_stock_update = c.prepare(q.no_stock_update);
    no_insert_order_line = c.prepare(q.no_insert_order_line);
    p_warehouse_update = c.prepare(q.p_warehouse_update);
    p_warehouse = c.prepare(q.p_warehouse);
    p_district_update = c.prepare(q.p_district_update);
    p_district = c.prepare(q.p_district);
    customers_by_name = c.prepare(q.customers_by_name);
    p_customer = c.prepare(q.p_customer);
    p_customer_update = c.prepare(q.p_customer_update);
    p_customer_update_bc = c.prepare(q.p_customer_update_bc);
    p_insert_history = c.prepare(q.p_insert_history);
    os_customer = c.prepare(q.os_customer);
    os_order = c.prepare(q.os_order);
    os_order_lines = c.prepare(q.os_order_lines);
    d_oldest_new_order = c.prepare(q.d_oldest_new_order);
    d_delete_new_order = c.prepare(q.d_delete_new_order);
    d_order = c.prepare(q.d_order);
    d_order_update = c.prepare(q.d_order_update);
    d_order_line_update = c.prepare(q.d_order_line_update);
    d_order_line_sum = c.prepare(q.d_order_line_sum);
    d_customer_update = c.prepare(q.d_customer_update);
    sl_district = c.prepare(q.sl_district);
    sl_count = c.prepare(q.sl_count);
  }

  std::unique_ptr<Statement> no_warehouse, no_district, no_district_update, no_customer,
      no_insert_order, no_insert_new_order, no_item, no_stock_update, no_insert_order_line;
  std::array<std::unique_ptr<Statement>, kDistrictsPerWarehouse> no_stock;
  std::unique_ptr<Statement> p_warehouse_update, p_warehouse, p_district_update, p_district,
      customers_by_name, p_customer, p_customer_update, p_customer_update_bc, p_insert_history;
  std::unique_ptr<Statement> os_customer, os_order, os_order_lines;
  std::unique_ptr<Statement> d_oldest_new_order, d_delete_new_order, d_order, d_order_update,
      d_order_line_update, d_order_line_sum, d_customer_update;
  std::unique_ptr<Statement> sl_district, sl_count;
  std::vector<int> ids;  // scratch for by-last-name lookups
};

std::string_view to_string(TxProtocol p) noexcept {
  return p == TxProtocol::procedures ? "procedures" : "statements";
}

Transactions::Transactions(Connection& conn, const Dialect& dialect, TxProtocol protocol) : conn_(conn) {
  if (protocol == TxProtocol::statements) {
    p_ = std::make_unique<Prepared>(conn, dialect);
  } else {
    if (!has_procedures(dialect))
      throw InternalError(fmt::format("tpcc: transactions: procedures is not available with the {} dialect",
                                      dialect.name));
    calls_ = std::make_unique<ProcedureCalls>(conn, dialect);
  }
}

Transactions::~Transactions() = default;

namespace {

/// Clause 2.5.2.2 / 2.6.2.2: the customers with that last name, sorted by C_FIRST; the one at
/// position ceil(n/2) (1-based) is chosen. Result in `c_id`.
DbStatus customer_by_last_name(Statement& q, std::vector<int>& ids, int w_id, int d_id,
                               const std::string& c_last, int& c_id) {
  q.bind_int64(1, w_id);
  q.bind_int64(2, d_id);
  q.bind_text(3, c_last);
  DbStatus s = q.execute();
  if (!s.ok()) return s;
  ids.clear();
  while (q.next(s)) ids.push_back(static_cast<int>(q.column_int64(0)));
  if (!s.ok()) return s;
  if (ids.empty())
    return data_error(fmt::format("no customer named {} in warehouse {} district {}", c_last, w_id, d_id));
  c_id = ids[(ids.size() - 1) / 2];  // ceil(n/2)-th, 1-based
  return s;
}

}  // namespace

// ---- New-Order (clause 2.4.2.2) ----------------------------------------------------------------

TxResult Transactions::new_order(const NewOrderInput& in, NewOrderOutput& out) {
  if (calls_) return calls_->new_order(in, out);
  Prepared& p = *p_;
  out = {};
  if (DbStatus s = conn_.begin(TxMode::read_write); !s.ok()) return failed(std::move(s));

  p.no_warehouse->bind_int64(1, in.w_id);
  if (DbStatus s = one_row(*p.no_warehouse, "warehouse"); !s.ok()) return failed(std::move(s));
  const double w_tax = p.no_warehouse->column_double(0);

  p.no_district->bind_int64(1, in.w_id);
  p.no_district->bind_int64(2, in.d_id);
  if (DbStatus s = one_row(*p.no_district, "district"); !s.ok()) return failed(std::move(s));
  const double d_tax = p.no_district->column_double(0);
  const std::int64_t o_id = p.no_district->column_int64(1);

  p.no_district_update->bind_int64(1, o_id + 1);
  p.no_district_update->bind_int64(2, in.w_id);
  p.no_district_update->bind_int64(3, in.d_id);
  if (DbStatus s = p.no_district_update->execute(); !s.ok()) return failed(std::move(s));

  p.no_customer->bind_int64(1, in.w_id);
  p.no_customer->bind_int64(2, in.d_id);
  p.no_customer->bind_int64(3, in.c_id);
  if (DbStatus s = one_row(*p.no_customer, "customer"); !s.ok()) return failed(std::move(s));
  const double c_discount = p.no_customer->column_double(0);

  bool all_local = true;
  for (int i = 0; i < in.ol_cnt; ++i)
    all_local = all_local && in.lines[static_cast<std::size_t>(i)].supply_w_id == in.w_id;
  const std::string entry_d = sql_timestamp_now();

  Statement& io = *p.no_insert_order;
  io.bind_int64(1, o_id);
  io.bind_int64(2, in.d_id);
  io.bind_int64(3, in.w_id);
  io.bind_int64(4, in.c_id);
  io.bind_text(5, entry_d);
  io.bind_int64(6, in.ol_cnt);
  io.bind_int64(7, all_local ? 1 : 0);
  if (DbStatus s = io.execute(); !s.ok()) return failed(std::move(s));

  p.no_insert_new_order->bind_int64(1, o_id);
  p.no_insert_new_order->bind_int64(2, in.d_id);
  p.no_insert_new_order->bind_int64(3, in.w_id);
  if (DbStatus s = p.no_insert_new_order->execute(); !s.ok()) return failed(std::move(s));

  double sum_amount = 0;
  std::string dist_info;
  for (int n = 1; n <= in.ol_cnt; ++n) {
    const OrderLineInput& line = in.lines[static_cast<std::size_t>(n - 1)];
    p.no_item->bind_int64(1, line.i_id);
    bool found = false;
    if (DbStatus s = first_row(*p.no_item, found); !s.ok()) return failed(std::move(s));
    if (!found) {
      // Clause 2.4.2.3: an unused item id -> the whole transaction is rolled back.
      if (DbStatus s = conn_.rollback(); !s.ok()) return failed(std::move(s));
      return {TxEnd::rolled_back, {}};
    }
    const double i_price = p.no_item->column_double(0);
    const bool item_original = p.no_item->column_text(2).find("ORIGINAL") != std::string_view::npos;

    Statement& sq = *p.no_stock[static_cast<std::size_t>(in.d_id - 1)];
    sq.bind_int64(1, line.i_id);
    sq.bind_int64(2, line.supply_w_id);
    if (DbStatus s = one_row(sq, "stock"); !s.ok()) return failed(std::move(s));
    const std::int64_t s_quantity = sq.column_int64(0);
    const bool stock_original = sq.column_text(1).find("ORIGINAL") != std::string_view::npos;
    dist_info.assign(sq.column_text(2));

    // Clause 2.4.2.2: decrease by the ordered quantity, restocking by 91 when fewer than 10 remain.
    const std::int64_t new_quantity = s_quantity - line.quantity >= 10
                                          ? s_quantity - line.quantity
                                          : s_quantity - line.quantity + 91;
    Statement& su = *p.no_stock_update;
    su.bind_int64(1, new_quantity);
    su.bind_int64(2, line.quantity);
    su.bind_int64(3, line.supply_w_id != in.w_id ? 1 : 0);
    su.bind_int64(4, line.i_id);
    su.bind_int64(5, line.supply_w_id);
    if (DbStatus s = su.execute(); !s.ok()) return failed(std::move(s));

    const double ol_amount = line.quantity * i_price;
    sum_amount += ol_amount;
    if (item_original && stock_original) ++out.brand_generic_b;  // 'B'rand, else 'G'eneric

    Statement& il = *p.no_insert_order_line;
    il.bind_int64(1, o_id);
    il.bind_int64(2, in.d_id);
    il.bind_int64(3, in.w_id);
    il.bind_int64(4, n);
    il.bind_int64(5, line.i_id);
    il.bind_int64(6, line.supply_w_id);
    il.bind_int64(7, line.quantity);
    il.bind_double(8, ol_amount);
    il.bind_text(9, dist_info);
    if (DbStatus s = il.execute(); !s.ok()) return failed(std::move(s));
  }

  if (DbStatus s = conn_.commit(); !s.ok()) return failed(std::move(s));
  out.o_id = static_cast<int>(o_id);
  out.all_local = all_local;
  out.total_amount = sum_amount * (1 - c_discount) * (1 + w_tax + d_tax);
  return {};
}

// ---- Payment (clause 2.5.2.2) ------------------------------------------------------------------

TxResult Transactions::payment(const PaymentInput& in, PaymentOutput& out) {
  if (calls_) return calls_->payment(in, out);
  Prepared& p = *p_;
  out = {};
  if (DbStatus s = conn_.begin(TxMode::read_write); !s.ok()) return failed(std::move(s));

  p.p_warehouse_update->bind_double(1, in.h_amount);
  p.p_warehouse_update->bind_int64(2, in.w_id);
  if (DbStatus s = p.p_warehouse_update->execute(); !s.ok()) return failed(std::move(s));
  p.p_warehouse->bind_int64(1, in.w_id);
  if (DbStatus s = one_row(*p.p_warehouse, "warehouse"); !s.ok()) return failed(std::move(s));
  const std::string w_name(p.p_warehouse->column_text(0));

  p.p_district_update->bind_double(1, in.h_amount);
  p.p_district_update->bind_int64(2, in.w_id);
  p.p_district_update->bind_int64(3, in.d_id);
  if (DbStatus s = p.p_district_update->execute(); !s.ok()) return failed(std::move(s));
  p.p_district->bind_int64(1, in.w_id);
  p.p_district->bind_int64(2, in.d_id);
  if (DbStatus s = one_row(*p.p_district, "district"); !s.ok()) return failed(std::move(s));
  const std::string d_name(p.p_district->column_text(0));

  int c_id = in.c_id;
  if (in.by_last_name) {
    if (DbStatus s = customer_by_last_name(*p.customers_by_name, p.ids, in.c_w_id, in.c_d_id,
                                           in.c_last, c_id);
        !s.ok())
      return failed(std::move(s));
  }
  Statement& cq = *p.p_customer;
  cq.bind_int64(1, in.c_w_id);
  cq.bind_int64(2, in.c_d_id);
  cq.bind_int64(3, c_id);
  if (DbStatus s = one_row(cq, "customer"); !s.ok()) return failed(std::move(s));
  out.c_credit.assign(cq.column_text(10));
  const double c_balance = cq.column_double(13);

  if (out.c_credit == "BC") {
    // Clause 2.5.2.2: C_ID, C_D_ID, C_W_ID, D_ID, W_ID and H_AMOUNT are inserted at the left of
    // C_DATA, shifting it right; the result is truncated to 500 characters.
    std::string c_data = fmt::format("{} {} {} {} {} {} ", c_id, in.c_d_id, in.c_w_id, in.d_id,
                                     in.w_id, round2(in.h_amount));
    c_data += cq.column_text(14);
    if (c_data.size() > 500) c_data.resize(500);
    Statement& u = *p.p_customer_update_bc;
    u.bind_double(1, in.h_amount);
    u.bind_double(2, in.h_amount);
    u.bind_text(3, c_data);
    u.bind_int64(4, in.c_w_id);
    u.bind_int64(5, in.c_d_id);
    u.bind_int64(6, c_id);
    if (DbStatus s = u.execute(); !s.ok()) return failed(std::move(s));
  } else {
    Statement& u = *p.p_customer_update;
    u.bind_double(1, in.h_amount);
    u.bind_double(2, in.h_amount);
    u.bind_int64(3, in.c_w_id);
    u.bind_int64(4, in.c_d_id);
    u.bind_int64(5, c_id);
    if (DbStatus s = u.execute(); !s.ok()) return failed(std::move(s));
  }

  // H_DATA: W_NAME and D_NAME separated by 4 spaces.
  const std::string h_data = w_name + "    " + d_name;
  const std::string h_date = sql_timestamp_now();
  Statement& h = *p.p_insert_history;
  h.bind_int64(1, c_id);
  h.bind_int64(2, in.c_d_id);
  h.bind_int64(3, in.c_w_id);
  h.bind_int64(4, in.d_id);
  h.bind_int64(5, in.w_id);
  h.bind_text(6, h_date);
  h.bind_double(7, in.h_amount);
  h.bind_text(8, h_data);
  if (DbStatus s = h.execute(); !s.ok()) return failed(std::move(s));

  if (DbStatus s = conn_.commit(); !s.ok()) return failed(std::move(s));
  out.c_id = c_id;
  out.c_balance = c_balance - in.h_amount;
  return {};
}

// ---- Order-Status (clause 2.6.2.2) -------------------------------------------------------------

TxResult Transactions::order_status(const OrderStatusInput& in, OrderStatusOutput& out) {
  if (calls_) return calls_->order_status(in, out);
  Prepared& p = *p_;
  out = {};
  if (DbStatus s = conn_.begin(TxMode::read_only); !s.ok()) return failed(std::move(s));

  int c_id = in.c_id;
  if (in.by_last_name) {
    if (DbStatus s = customer_by_last_name(*p.customers_by_name, p.ids, in.w_id, in.d_id,
                                           in.c_last, c_id);
        !s.ok())
      return failed(std::move(s));
  }
  p.os_customer->bind_int64(1, in.w_id);
  p.os_customer->bind_int64(2, in.d_id);
  p.os_customer->bind_int64(3, c_id);
  if (DbStatus s = one_row(*p.os_customer, "customer"); !s.ok()) return failed(std::move(s));
  out.c_balance = p.os_customer->column_double(0);

  Statement& oq = *p.os_order;
  oq.bind_int64(1, in.w_id);
  oq.bind_int64(2, in.d_id);
  oq.bind_int64(3, in.w_id);
  oq.bind_int64(4, in.d_id);
  oq.bind_int64(5, c_id);
  bool has_order = false;
  if (DbStatus s = first_row(oq, has_order); !s.ok()) return failed(std::move(s));
  if (has_order) {
    out.o_id = static_cast<int>(oq.column_int64(0));
    out.o_carrier_id = oq.is_null(2) ? 0 : static_cast<int>(oq.column_int64(2));
    Statement& lq = *p.os_order_lines;
    lq.bind_int64(1, in.w_id);
    lq.bind_int64(2, in.d_id);
    lq.bind_int64(3, out.o_id);
    DbStatus s = lq.execute();
    if (!s.ok()) return failed(std::move(s));
    while (lq.next(s)) ++out.lines;
    if (!s.ok()) return failed(std::move(s));
  }

  if (DbStatus s = conn_.commit(); !s.ok()) return failed(std::move(s));
  out.c_id = c_id;
  return {};
}

// ---- Delivery (clause 2.7.4.2) -----------------------------------------------------------------

TxResult Transactions::delivery(const DeliveryInput& in, DeliveryOutput& out) {
  if (calls_) return calls_->delivery(in, out);
  Prepared& p = *p_;
  out = {};
  // All ten districts in one database transaction (clause 2.7.4.1 allows one to ten).
  if (DbStatus s = conn_.begin(TxMode::read_write); !s.ok()) return failed(std::move(s));
  const std::string delivery_d = sql_timestamp_now();

  for (int d = 1; d <= kDistrictsPerWarehouse; ++d) {
    Statement& nq = *p.d_oldest_new_order;
    nq.bind_int64(1, in.w_id);
    nq.bind_int64(2, d);
    bool found = false;
    if (DbStatus s = first_row(nq, found); !s.ok()) return failed(std::move(s));
    if (!found) {
      ++out.skipped;  // no undelivered order in this district: skipped (clause 2.7.4.2)
      continue;
    }
    const std::int64_t o_id = nq.column_int64(0);

    Statement& del = *p.d_delete_new_order;
    del.bind_int64(1, in.w_id);
    del.bind_int64(2, d);
    del.bind_int64(3, o_id);
    if (DbStatus s = del.execute(); !s.ok()) return failed(std::move(s));
    if (del.affected_rows() != 1) {
      // Another Delivery took this order between our SELECT and DELETE (the SELECT locks the row
      // where the dialect can; this is the safety net where it cannot): rerun the transaction.
      DbStatus s;
      s.outcome = Outcome::retryable;
      s.message = fmt::format("new order {}/{}/{} delivered concurrently", in.w_id, d, o_id);
      return failed(std::move(s));
    }

    p.d_order->bind_int64(1, in.w_id);
    p.d_order->bind_int64(2, d);
    p.d_order->bind_int64(3, o_id);
    if (DbStatus s = one_row(*p.d_order, "order"); !s.ok()) return failed(std::move(s));
    const std::int64_t c_id = p.d_order->column_int64(0);

    Statement& ou = *p.d_order_update;
    ou.bind_int64(1, in.o_carrier_id);
    ou.bind_int64(2, in.w_id);
    ou.bind_int64(3, d);
    ou.bind_int64(4, o_id);
    if (DbStatus s = ou.execute(); !s.ok()) return failed(std::move(s));

    Statement& lu = *p.d_order_line_update;
    lu.bind_text(1, delivery_d);
    lu.bind_int64(2, in.w_id);
    lu.bind_int64(3, d);
    lu.bind_int64(4, o_id);
    if (DbStatus s = lu.execute(); !s.ok()) return failed(std::move(s));

    Statement& ls = *p.d_order_line_sum;
    ls.bind_int64(1, in.w_id);
    ls.bind_int64(2, d);
    ls.bind_int64(3, o_id);
    if (DbStatus s = one_row(ls, "SUM(ol_amount)"); !s.ok()) return failed(std::move(s));
    const double amount = ls.is_null(0) ? 0.0 : ls.column_double(0);

    Statement& cu = *p.d_customer_update;
    cu.bind_double(1, amount);
    cu.bind_int64(2, in.w_id);
    cu.bind_int64(3, d);
    cu.bind_int64(4, c_id);
    if (DbStatus s = cu.execute(); !s.ok()) return failed(std::move(s));
    ++out.delivered;
  }

  if (DbStatus s = conn_.commit(); !s.ok()) return failed(std::move(s));
  return {};
}

// ---- Stock-Level (clause 2.8.2.2) --------------------------------------------------------------

TxResult Transactions::stock_level(const StockLevelInput& in, StockLevelOutput& out) {
  if (calls_) return calls_->stock_level(in, out);
  Prepared& p = *p_;
  out = {};
  // Read-only; clause 3.4 lets Stock-Level run at a weaker isolation level.
  if (DbStatus s = conn_.begin(TxMode::read_only); !s.ok()) return failed(std::move(s));

  p.sl_district->bind_int64(1, in.w_id);
  p.sl_district->bind_int64(2, in.d_id);
  if (DbStatus s = one_row(*p.sl_district, "district"); !s.ok()) return failed(std::move(s));
  const std::int64_t next_o_id = p.sl_district->column_int64(0);

  // The last 20 orders of the district: O_ID in [D_NEXT_O_ID - 20, D_NEXT_O_ID).
  Statement& q = *p.sl_count;
  q.bind_int64(1, in.w_id);
  q.bind_int64(2, in.d_id);
  q.bind_int64(3, next_o_id);
  q.bind_int64(4, next_o_id - 20);
  q.bind_int64(5, in.w_id);
  q.bind_int64(6, in.threshold);
  if (DbStatus s = one_row(q, "COUNT"); !s.ok()) return failed(std::move(s));
  out.low_stock = static_cast<int>(q.column_int64(0));

  if (DbStatus s = conn_.commit(); !s.ok()) return failed(std::move(s));
  return {};
}

}  // namespace drivelab::oltp::tpcc
