#pragma once
/// \file tpcc_statements.hpp
/// The SQL statements of the five TPC-C transactions (`transactions: statements`,
/// tpcc_transactions.hpp): portable text with `?` placeholders, prepared once per connection and
/// run one by one between BEGIN and COMMIT, following the database profile of each clause
/// x.2.2 statement by statement (tpcc_statements.cpp).
#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/tpcc/tpcc_random.hpp"

namespace drivelab::oltp::tpcc {

/// One `T` per statement of the five transactions: the text (TransactionSql) or, on a
/// connection, the prepared Statement.
template <class T>
struct TransactionStatements {
  // New-Order (2.4.2.2)
  T no_warehouse, no_district, no_district_update, no_customer, no_insert_order, no_insert_new_order, no_item,
      no_stock_update, no_insert_order_line;
  std::array<T, kDistrictsPerWarehouse> no_stock;  ///< by district: S_DIST_01 .. S_DIST_10
  // Payment (2.5.2.2)
  T p_warehouse_update, p_warehouse, p_district_update, p_district, customers_by_name, p_customer, p_customer_update,
      p_customer_update_bc, p_insert_history;
  // Order-Status (2.6.2.2)
  T os_customer, os_order, os_order_lines;
  // Delivery (2.7.4.2)
  T d_oldest_new_order, d_delete_new_order, d_order, d_order_update, d_order_line_update, d_order_line_sum,
      d_customer_update;
  // Stock-Level (2.8.2.2)
  T sl_district, sl_count;

  /// Calls `f(name, statement)` for every statement above, in declaration order; New-Order's
  /// stock reads are named "no_stock[1]" .. "no_stock[10]". `self` is this struct, const or not.
  template <class Self, class F>
  static void for_each(Self& self, F&& f) {
    using S = TransactionStatements;
    // nullptr stands for New-Order's stock reads, one statement per district (no_stock).
    static constexpr std::pair<const char*, T S::*> kMembers[] = {{"no_warehouse", &S::no_warehouse},
                                                                  {"no_district", &S::no_district},
                                                                  {"no_district_update", &S::no_district_update},
                                                                  {"no_customer", &S::no_customer},
                                                                  {"no_insert_order", &S::no_insert_order},
                                                                  {"no_insert_new_order", &S::no_insert_new_order},
                                                                  {"no_item", &S::no_item},
                                                                  {"no_stock", nullptr},
                                                                  {"no_stock_update", &S::no_stock_update},
                                                                  {"no_insert_order_line", &S::no_insert_order_line},
                                                                  {"p_warehouse_update", &S::p_warehouse_update},
                                                                  {"p_warehouse", &S::p_warehouse},
                                                                  {"p_district_update", &S::p_district_update},
                                                                  {"p_district", &S::p_district},
                                                                  {"customers_by_name", &S::customers_by_name},
                                                                  {"p_customer", &S::p_customer},
                                                                  {"p_customer_update", &S::p_customer_update},
                                                                  {"p_customer_update_bc", &S::p_customer_update_bc},
                                                                  {"p_insert_history", &S::p_insert_history},
                                                                  {"os_customer", &S::os_customer},
                                                                  {"os_order", &S::os_order},
                                                                  {"os_order_lines", &S::os_order_lines},
                                                                  {"d_oldest_new_order", &S::d_oldest_new_order},
                                                                  {"d_delete_new_order", &S::d_delete_new_order},
                                                                  {"d_order", &S::d_order},
                                                                  {"d_order_update", &S::d_order_update},
                                                                  {"d_order_line_update", &S::d_order_line_update},
                                                                  {"d_order_line_sum", &S::d_order_line_sum},
                                                                  {"d_customer_update", &S::d_customer_update},
                                                                  {"sl_district", &S::sl_district},
                                                                  {"sl_count", &S::sl_count}};
    for (const auto& [name, member] : kMembers) {
      if (member != nullptr) {
        f(std::string(name), self.*member);
        continue;
      }
      for (std::size_t d = 0; d < self.no_stock.size(); ++d)
        f(std::string(name) + "[" + std::to_string(d + 1) + "]", self.no_stock[d]);
    }
  }
};

/// The text of every statement of the five transactions in one dialect, with `?` placeholders.
/// Portable SQL except where a Dialect hook renders it (render_select): the locking reads of
/// New-Order (DISTRICT, STOCK), Payment (CUSTOMER) and Delivery (the oldest NEW-ORDER row, first
/// row only). Pure function: tests render it for every dialect without a server.
struct TransactionSql : TransactionStatements<std::string> {
  /// (name, text) of every statement, in declaration order (for_each).
  std::vector<std::pair<std::string, std::string>> all() const;
};

/// Renders the statements of the five transactions for `dialect`.
TransactionSql transaction_sql(const Dialect& dialect);

}  // namespace drivelab::oltp::tpcc
