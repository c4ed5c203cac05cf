#pragma once
// The two implementations of Transactions, one per TxProtocol (make_transactions chooses), and
// what both use to talk to a prepared Statement.
#include <concepts>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/tpcc/tpcc_transactions.hpp"

namespace drivelab::oltp::tpcc::detail {

/// `transactions: statements` (tpcc_statements.cpp).
std::unique_ptr<Transactions> make_statement_transactions(Connection& conn, const Dialect& dialect);
/// `transactions: procedures` (tpcc_procedures.cpp); `dialect` has procedures.
std::unique_ptr<Transactions> make_procedure_transactions(Connection& conn, const Dialect& dialect);

inline TxResult failed(DbStatus s) { return {TxEnd::failed, std::move(s)}; }

/// Binds `values` to the parameters 1, 2, ... of `q`: integers and bools as int64, floating
/// point as double, anything else as text. Text is bound without a copy: it must stay valid
/// until the statement has run (and, for a query, until its rows are read).
template <class... Values>
void bind_all(Statement& q, const Values&... values) {
  int index = 1;
  const auto bind = [&](const auto& v) {
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::integral<V>)
      q.bind_int64(index++, static_cast<std::int64_t>(v));
    else if constexpr (std::floating_point<V>)
      q.bind_double(index++, static_cast<double>(v));
    else
      q.bind_text(index++, std::string_view(v));
  };
  (bind(values), ...);
}

}  // namespace drivelab::oltp::tpcc::detail
