#include "drivelab/oltp/tpcc/tpcc_checks.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/tpcc/tpcc_random.hpp"

namespace drivelab::oltp::tpcc {
namespace {

constexpr std::size_t kMaxListed = 10;
constexpr double kMoneyTolerance = 0.005;
constexpr int kConditions = 12;

/// Counts what one condition compared, collects its offenders and formats the check.
class Offenders {
 public:
  /// `n` more `unit`s compared (ConsistencyCheck::detail: "holds for N <unit>").
  void checked(std::uint64_t n = 1) { checked_ += n; }
  void add(std::string what) {
    if (items_.size() < kMaxListed) items_.push_back(std::move(what));
    ++count_;
  }
  ConsistencyCheck result(std::string_view rule, std::string_view unit, std::string_view note = {}) const {
    ConsistencyCheck c;
    if (checked_ == 0) {
      c.status = CheckStatus::not_run;
      c.detail = fmt::format("{}: not run: nothing to check (no {} in the database)", rule, unit);
    } else if (count_ == 0) {
      c.status = CheckStatus::passed;
      c.detail = fmt::format("{}: holds for {} {}{}", rule, checked_, unit, note);
    } else {
      c.status = CheckStatus::failed;
      c.detail = fmt::format("{}: violated in {} places ({} {} checked): {}", rule, count_, checked_, unit,
                             fmt::join(items_, "; "));
      if (count_ > items_.size()) c.detail += fmt::format("; ... {} more", count_ - items_.size());
    }
    return c;
  }

 private:
  std::vector<std::string> items_;
  std::size_t count_ = 0;
  std::uint64_t checked_ = 0;
};

void must(const DbStatus& s, std::string_view what) {
  if (!s.ok()) throw_status(fmt::format("consistency check {}", what), s);
}

/// Runs `sql` and calls `row(stmt)` for each row.
template <class F>
void for_each_row(Connection& conn, std::string_view sql, F&& row) {
  auto q = conn.prepare(sql);
  must(q->execute(), sql);
  DbStatus s;
  while (q->next(s)) row(*q);
  must(s, sql);
}

std::int64_t int_or_zero(const Statement& r, int column) { return r.is_null(column) ? 0 : r.column_int64(column); }
double money_or_zero(const Statement& r, int column) { return r.is_null(column) ? 0.0 : r.column_double(column); }
bool money_differs(double a, double b) { return std::fabs(a - b) > kMoneyTolerance; }

/// What a condition's query returns a row for, in its first columns: a warehouse (w_id) or a
/// district (w_id, d_id).
enum class Place { warehouse, district };

/// "warehouse W" or "warehouse W district D": where an offending row is.
std::string place_of(const Statement& r, Place place) {
  if (place == Place::warehouse) return fmt::format("warehouse {}", r.column_int64(0));
  return fmt::format("warehouse {} district {}", r.column_int64(0), r.column_int64(1));
}

/// Runs a condition's query, one row per `place`, and compares each: `offence(row)` says what is
/// wrong with it (empty when the relationship holds). Returns the collected offenders.
template <class F>
Offenders per_place(Connection& conn, std::string_view sql, Place place, F&& offence) {
  Offenders bad;
  for_each_row(conn, sql, [&](Statement& r) {
    bad.checked();
    std::string what = offence(r);
    if (!what.empty()) bad.add(fmt::format("{}: {}", place_of(r, place), what));
  });
  return bad;
}

/// Conditions 1, 8 and 9: a money column equal to a sum, per warehouse or district. The query
/// returns the place, the column and the sum (NULL when nothing is summed); `column` and `sum`
/// name them in the offenders ("w_ytd", "sum(d_ytd)").
ConsistencyCheck money_equals_sum(Connection& conn, std::string_view sql, Place place, std::string_view column,
                                  std::string_view sum, std::string_view rule) {
  const int at = place == Place::warehouse ? 1 : 2;
  return per_place(conn, sql, place,
                   [&](Statement& r) {
                     const double value = r.column_double(at);
                     const double total = money_or_zero(r, at + 1);
                     if (!money_differs(value, total)) return std::string();
                     return fmt::format("{}={:.2f} {}={:.2f}", column, value, sum, total);
                   })
      .result(rule, place == Place::warehouse ? "warehouses" : "districts");
}

/// Conditions whose query returns, per district: w, d, rows compared, rows violating, the id of
/// the first violating row (NULL when none). `what`: "orders", `id_name`: "o_id".
ConsistencyCheck per_district_counts(Connection& conn, std::string_view sql, std::string_view rule,
                                     std::string_view what, std::string_view id_name) {
  Offenders bad;
  for_each_row(conn, sql, [&](Statement& r) {
    const auto rows = int_or_zero(r, 2);
    const auto violations = int_or_zero(r, 3);
    bad.checked(static_cast<std::uint64_t>(rows));
    if (violations > 0)
      bad.add(fmt::format("{}: {} of {} {} (first {} {})", place_of(r, Place::district), violations, rows, what,
                          id_name, int_or_zero(r, 4)));
  });
  return bad.result(rule, what);
}

/// Conditions 5, 6, 10 and 12: the rows of `from` that satisfy `bad`, counted per district
/// (`district`: its two key columns in `from`), with the first by `id` (named `id_name`).
ConsistencyCheck rows_violating(Connection& conn, std::string_view district, std::string_view id, std::string_view bad,
                                std::string_view from, std::string_view rule, std::string_view what,
                                std::string_view id_name) {
  return per_district_counts(conn,
                             fmt::format("SELECT {0}, COUNT(*), SUM(CASE WHEN {1} THEN 1 ELSE 0 END), "
                                         "MIN(CASE WHEN {1} THEN {2} END) FROM {3} GROUP BY {0} ORDER BY {0}",
                                         district, bad, id, from),
                             rule, what, id_name);
}

// Each condition: the clause text (TPC-C 5.11, clause 3.3.2.N) and its query.

// 3.3.2.1: Entries in the WAREHOUSE and DISTRICT tables must satisfy the relationship
// W_YTD = sum(D_YTD) for each warehouse defined by (W_ID = D_W_ID).
ConsistencyCheck condition_1(Connection& conn) {
  return money_equals_sum(conn,
                          "SELECT w_id, w_ytd, (SELECT SUM(d_ytd) FROM district WHERE d_w_id = w_id) "
                          "FROM warehouse ORDER BY w_id",
                          Place::warehouse, "w_ytd", "sum(d_ytd)", "W_YTD = sum(D_YTD) (clause 3.3.2.1)");
}

// 3.3.2.2: Entries in the DISTRICT, ORDER, and NEW-ORDER tables must satisfy the relationship
// D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for each district defined by (D_W_ID = O_W_ID =
// NO_W_ID) and (D_ID = O_D_ID = NO_D_ID). This condition does not apply to the NEW-ORDER table
// for any districts which have no outstanding new orders (i.e., the number of rows is zero).
ConsistencyCheck condition_2(Connection& conn) {
  return per_place(conn,
                   "SELECT d_w_id, d_id, d_next_o_id, "
                   "(SELECT MAX(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id), "
                   "(SELECT MAX(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id) "
                   "FROM district ORDER BY d_w_id, d_id",
                   Place::district,
                   [](Statement& r) {
                     const auto next_minus_1 = r.column_int64(2) - 1;
                     const auto max_o = int_or_zero(r, 3);
                     const bool no_empty = r.is_null(4);
                     const auto max_no = int_or_zero(r, 4);
                     if (next_minus_1 == max_o && (no_empty || max_no == max_o)) return std::string();
                     return fmt::format("d_next_o_id-1={} max(o_id)={} max(no_o_id)={}", next_minus_1, max_o,
                                        no_empty ? std::string("none") : std::to_string(max_no));
                   })
      .result("D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) (clause 3.3.2.2)", "districts");
}

// 3.3.2.3: Entries in the NEW-ORDER table must satisfy the relationship
// max(NO_O_ID) - min(NO_O_ID) + 1 = [number of rows in the NEW-ORDER table for this district]
// for each district defined by NO_W_ID and NO_D_ID. This condition does not apply to any
// districts which have no outstanding new orders (i.e., the number of rows is zero).
ConsistencyCheck condition_3(Connection& conn) {
  return per_place(conn,
                   "SELECT no_w_id, no_d_id, MAX(no_o_id) - MIN(no_o_id) + 1, COUNT(*) FROM new_order "
                   "GROUP BY no_w_id, no_d_id ORDER BY no_w_id, no_d_id",
                   Place::district,
                   [](Statement& r) {
                     if (r.column_int64(2) == r.column_int64(3)) return std::string();
                     return fmt::format("max-min+1={} rows={}", r.column_int64(2), r.column_int64(3));
                   })
      .result("max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER (clause 3.3.2.3)", "districts with new orders");
}

// 3.3.2.4: Entries in the ORDER and ORDER-LINE tables must satisfy the relationship
// sum(O_OL_CNT) = [number of rows in the ORDER-LINE table for this district] for each district
// defined by (O_W_ID = OL_W_ID) and (O_D_ID = OL_D_ID).
ConsistencyCheck condition_4(Connection& conn) {
  return per_place(conn,
                   "SELECT a.w, a.d, a.s, b.c FROM "
                   "(SELECT o_w_id AS w, o_d_id AS d, SUM(o_ol_cnt) AS s FROM orders GROUP BY o_w_id, o_d_id) a "
                   "LEFT JOIN "
                   "(SELECT ol_w_id AS w, ol_d_id AS d, COUNT(*) AS c FROM order_line GROUP BY ol_w_id, ol_d_id) b "
                   "ON a.w = b.w AND a.d = b.d ORDER BY a.w, a.d",
                   Place::district,
                   [](Statement& r) {
                     const auto lines = int_or_zero(r, 3);
                     if (r.column_int64(2) == lines) return std::string();
                     return fmt::format("sum(o_ol_cnt)={} order_line rows={}", r.column_int64(2), lines);
                   })
      .result("sum(O_OL_CNT) = rows in ORDER-LINE (clause 3.3.2.4)", "districts");
}

// 3.3.2.5: Entries in the ORDER and NEW-ORDER tables must satisfy the relationship: For any row
// in the ORDER table, O_CARRIER_ID is set to a null value if and only if there is a
// corresponding row in the NEW-ORDER table defined by (O_W_ID, O_D_ID, O_ID) =
// (NO_W_ID, NO_D_ID, NO_O_ID).
ConsistencyCheck condition_5(Connection& conn) {
  return rows_violating(
      conn, "o_w_id, o_d_id", "o_id",
      "((o_carrier_id IS NULL AND no_o_id IS NULL) OR (o_carrier_id IS NOT NULL AND no_o_id IS NOT NULL))",
      "orders LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id",
      "O_CARRIER_ID is null <=> the order is in NEW-ORDER (clause 3.3.2.5)", "orders", "o_id");
}

// 3.3.2.6: Entries in the ORDER and ORDER-LINE tables must satisfy the relationship: For any
// row in the ORDER table, O_OL_CNT must equal the number of rows in the ORDER-LINE table for the
// corresponding order defined by (O_W_ID, O_D_ID, O_ID) = (OL_W_ID, OL_D_ID, OL_O_ID).
ConsistencyCheck condition_6(Connection& conn) {
  return rows_violating(conn, "o_w_id, o_d_id", "o_id", "(o_ol_cnt <> COALESCE(l.n, 0))",
                        "orders LEFT JOIN (SELECT ol_w_id AS w, ol_d_id AS d, ol_o_id AS o, COUNT(*) AS n "
                        "FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id) l "
                        "ON l.w = o_w_id AND l.d = o_d_id AND l.o = o_id",
                        "O_OL_CNT = the order's rows in ORDER-LINE (clause 3.3.2.6)", "orders", "o_id");
}

// 3.3.2.7: Entries in the ORDER and ORDER-LINE tables must satisfy the relationship: For any
// row in the ORDER-LINE table, OL_DELIVERY_D is set to a null value if and only if the
// corresponding row in the ORDER table defined by (O_W_ID, O_D_ID, O_ID) =
// (OL_W_ID, OL_D_ID, OL_O_ID) has O_CARRIER_ID set to a null value.
ConsistencyCheck condition_7(Connection& conn) {
  // Per order: its lines and how many of them are delivered, in one pass over ORDER-LINE in key
  // order; an order's lines are all wrong or right together with its O_CARRIER_ID.
  constexpr std::string_view kWrongLines =
      "(CASE WHEN o_carrier_id IS NULL THEN l.delivered ELSE l.n - l.delivered END)";
  return per_district_counts(
      conn,
      fmt::format("SELECT o_w_id, o_d_id, SUM(l.n), SUM({0}), MIN(CASE WHEN {0} > 0 THEN o_id END) "
                  "FROM orders JOIN (SELECT ol_w_id AS w, ol_d_id AS d, ol_o_id AS o, COUNT(*) AS n, "
                  "COUNT(ol_delivery_d) AS delivered FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id) l "
                  "ON l.w = o_w_id AND l.d = o_d_id AND l.o = o_id "
                  "GROUP BY o_w_id, o_d_id ORDER BY o_w_id, o_d_id",
                  kWrongLines),
      "OL_DELIVERY_D is null <=> O_CARRIER_ID is null (clause 3.3.2.7)", "order lines", "o_id");
}

// 3.3.2.8: Entries in the WAREHOUSE and HISTORY tables must satisfy the relationship
// W_YTD = sum(H_AMOUNT) for each warehouse defined by (W_ID = H_W_ID).
ConsistencyCheck condition_8(Connection& conn) {
  return money_equals_sum(conn,
                          "SELECT w_id, w_ytd, h.s FROM warehouse LEFT JOIN "
                          "(SELECT h_w_id AS w, SUM(h_amount) AS s FROM history GROUP BY h_w_id) h ON h.w = w_id "
                          "ORDER BY w_id",
                          Place::warehouse, "w_ytd", "sum(h_amount)", "W_YTD = sum(H_AMOUNT) (clause 3.3.2.8)");
}

// 3.3.2.9: Entries in the DISTRICT and HISTORY tables must satisfy the relationship
// D_YTD = sum(H_AMOUNT) for each district defined by (D_W_ID, D_ID) = (H_W_ID, H_D_ID).
ConsistencyCheck condition_9(Connection& conn) {
  return money_equals_sum(
      conn,
      "SELECT d_w_id, d_id, d_ytd, h.s FROM district LEFT JOIN "
      "(SELECT h_w_id AS w, h_d_id AS d, SUM(h_amount) AS s FROM history GROUP BY h_w_id, h_d_id) h "
      "ON h.w = d_w_id AND h.d = d_id ORDER BY d_w_id, d_id",
      Place::district, "d_ytd", "sum(h_amount)", "D_YTD = sum(H_AMOUNT) (clause 3.3.2.9)");
}

/// Per customer: C_BALANCE (b), C_YTD_PAYMENT (p) and the sum of its delivered OL_AMOUNT (s),
/// where OL_AMOUNT is selected by (OL_W_ID, OL_D_ID, OL_O_ID) = (O_W_ID, O_D_ID, O_ID) and
/// (O_W_ID, O_D_ID, O_C_ID) = (C_W_ID, C_D_ID, C_ID) and OL_DELIVERY_D is not null. One level of
/// joins grouped on CUSTOMER's key, so the engines stream it in key order (customer, then its
/// orders through the orders_customer index, then their lines through ORDER-LINE's key);
/// nested derived tables made MariaDB 10.11 materialise one temporary table per order.
constexpr std::string_view kDeliveredPerCustomer =
    "(SELECT c_w_id AS w, c_d_id AS d, c_id AS c, MAX(c_balance) AS b, MAX(c_ytd_payment) AS p, "
    "COALESCE(SUM(CASE WHEN ol_delivery_d IS NOT NULL THEN ol_amount END), 0) AS s FROM customer "
    "LEFT JOIN orders ON o_w_id = c_w_id AND o_d_id = c_d_id AND o_c_id = c_id "
    "LEFT JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id "
    "GROUP BY c_w_id, c_d_id, c_id) x";

// 3.3.2.10: Entries in the CUSTOMER, HISTORY, ORDER, and ORDER-LINE tables must satisfy the
// relationship C_BALANCE = sum(OL_AMOUNT) - sum(H_AMOUNT) where H_AMOUNT is selected by
// (C_W_ID, C_D_ID, C_ID) = (H_C_W_ID, H_C_D_ID, H_C_ID) and OL_AMOUNT is selected by
// (OL_W_ID, OL_D_ID, OL_O_ID) = (O_W_ID, O_D_ID, O_ID) and (O_W_ID, O_D_ID, O_C_ID) =
// (C_W_ID, C_D_ID, C_ID) and (OL_DELIVERY_D is not a null value).
ConsistencyCheck condition_10(Connection& conn) {
  return rows_violating(
      conn, "x.w, x.d", "x.c", fmt::format("(ABS(x.b - (x.s - COALESCE(h.s, 0))) > {})", kMoneyTolerance),
      fmt::format("{} LEFT JOIN (SELECT h_c_w_id AS w, h_c_d_id AS d, h_c_id AS c, SUM(h_amount) AS s "
                  "FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id) h ON h.w = x.w AND h.d = x.d AND h.c = x.c",
                  kDeliveredPerCustomer),
      "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) (clause 3.3.2.10)", "customers", "c_id");
}

// 3.3.2.11: Entries in the CUSTOMER, ORDER and NEW-ORDER tables must satisfy the relationship
// (count(*) from ORDER) - (count(*) from NEW-ORDER) = 2100 for each district defined by
// (O_W_ID, O_D_ID) = (NO_W_ID, NO_D_ID) = (C_W_ID, C_D_ID).
// As written it holds until the first Delivery; see the header for the invariant checked after.
ConsistencyCheck condition_11(Connection& conn) {
  constexpr int kDeliveredAtLoad = kFirstUndeliveredOrder - 1;  // 2100 (clause 4.3.3.1)
  std::uint64_t untouched = 0;  // districts where no Delivery ran: the spec's form applies as is
  const Offenders bad =
      per_place(conn,
                "SELECT d_w_id, d_id, "
                "(SELECT COUNT(*) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id), "
                "(SELECT COUNT(*) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id), "
                "(SELECT SUM(c_delivery_cnt) FROM customer WHERE c_w_id = d_w_id AND c_d_id = d_id) "
                "FROM district ORDER BY d_w_id, d_id",
                Place::district, [&](Statement& r) {
                  const auto orders = int_or_zero(r, 2);
                  const auto new_orders = int_or_zero(r, 3);
                  const auto deliveries = int_or_zero(r, 4);
                  if (deliveries == 0) ++untouched;
                  if (orders - new_orders == kDeliveredAtLoad + deliveries) return std::string();
                  return fmt::format("count(orders)-count(new_order)={} expected {} + sum(c_delivery_cnt) {}",
                                     orders - new_orders, kDeliveredAtLoad, deliveries);
                });
  return bad.result(
      fmt::format("count(ORDER) - count(NEW-ORDER) = {} + sum(C_DELIVERY_CNT) (clause 3.3.2.11)", kDeliveredAtLoad),
      "districts",
      fmt::format(" ({} of them without a Delivery since the load, where it is the "
                  "clause's = {} exactly)",
                  untouched, kDeliveredAtLoad));
}

// 3.3.2.12: Entries in the CUSTOMER and ORDER-LINE tables must satisfy the relationship
// C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT) for any randomly selected customers and where
// OL_AMOUNT is selected by (OL_W_ID, OL_D_ID, OL_O_ID) = (O_W_ID, O_D_ID, O_ID) and
// (O_W_ID, O_D_ID, O_C_ID) = (C_W_ID, C_D_ID, C_ID) and (OL_DELIVERY_D is not a null value).
ConsistencyCheck condition_12(Connection& conn) {
  return rows_violating(
      conn, "x.w, x.d", "x.c", fmt::format("(ABS(x.b + x.p - x.s) > {})", kMoneyTolerance), kDeliveredPerCustomer,
      "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) (clause 3.3.2.12, every customer)", "customers", "c_id");
}

using ConditionFn = ConsistencyCheck (*)(Connection&);
constexpr ConditionFn kConditionFns[kConditions] = {condition_1, condition_2,  condition_3,  condition_4,
                                                    condition_5, condition_6,  condition_7,  condition_8,
                                                    condition_9, condition_10, condition_11, condition_12};

}  // namespace

std::string_view to_string(CheckStatus s) noexcept {
  switch (s) {
    case CheckStatus::passed: return "passed";
    case CheckStatus::failed: return "failed";
    case CheckStatus::not_run: return "not_run";
  }
  return "unknown";
}

std::vector<ConsistencyCheck> check_consistency(Connection& conn, const ConsistencyOptions& options) {
  bool selected[kConditions] = {};
  for (int c : options.conditions) {
    if (c < 1 || c > kConditions)
      throw ConfigError(fmt::format("consistency condition {} does not exist (TPC-C has 1..12)", c));
    selected[c - 1] = true;
  }
  std::vector<ConsistencyCheck> out;
  must(conn.begin(TxMode::read_only), "begin");
  for (int i = 0; i < kConditions; ++i) {
    ConsistencyCheck c;
    if (selected[i]) {
      c = kConditionFns[i](conn);
    } else {
      c.status = CheckStatus::not_run;
      c.detail = fmt::format("clause 3.3.2.{}: not run: not selected (ConsistencyOptions)", i + 1);
    }
    c.condition = i + 1;
    c.name = fmt::format("consistency_{}", i + 1);
    c.passed = c.status == CheckStatus::passed;
    out.push_back(std::move(c));
  }
  must(conn.commit(), "commit");
  return out;
}

}  // namespace drivelab::oltp::tpcc
