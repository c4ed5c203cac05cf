#pragma once
/// \file tpcc_checks.hpp
/// The twelve TPC-C consistency conditions (clause 3.3.2.1 - 3.3.2.12), checked after the load
/// and after a run. All run in one read-only transaction (a consistent snapshot), each as ONE
/// aggregate query over the whole database grouped per warehouse or district, in portable SQL
/// (SQLite, PostgreSQL, MySQL/MariaDB, SQL Server through ODBC). A failure names every
/// offending warehouse/district (the first 10, then a count) and, for per-row conditions, the
/// first offending order or customer of each.
///
///   1  W_YTD = sum(D_YTD)                                        per warehouse
///   2  D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)                per district
///   3  max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER        per district
///   4  sum(O_OL_CNT) = rows in ORDER-LINE                         per district
///   5  O_CARRIER_ID is null <=> the order has a NEW-ORDER row     per order
///   6  O_OL_CNT = the order's rows in ORDER-LINE                  per order
///   7  OL_DELIVERY_D is null <=> its order's O_CARRIER_ID is null per order line
///   8  W_YTD = sum(H_AMOUNT) of the warehouse                     per warehouse
///   9  D_YTD = sum(H_AMOUNT) of the district                      per district
///  10  C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)       per customer
///  11  count(ORDER) - count(NEW-ORDER) = 2100 (+ deliveries)      per district
///  12  C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)       per customer
///
/// Condition 11 as written holds until the first Delivery (each Delivery turns one NEW-ORDER
/// row per district into a delivered order); after that we check the equivalent invariant
/// count(ORDER) - count(NEW-ORDER) = 2100 + sum(C_DELIVERY_CNT) of the district (every delivered
/// order increments exactly one C_DELIVERY_CNT of its district, clause 2.7.4.2), which is the
/// spec's equation when no Delivery ran. Condition 12 is checked for every customer (the spec
/// allows "randomly selected customers").
///
/// Cost (rows read, W warehouses; the largest table, ORDER-LINE, has ~300,000 x W rows and
/// grows by ~10 per New-Order): 1-3 and 11 read DISTRICT, WAREHOUSE and index ranges (cheap);
/// 4-7 scan ORDERS and ORDER-LINE once each; 8-9 scan HISTORY (no index by TPC-C's design);
/// 10 and 12 scan CUSTOMER, ORDERS and ORDER-LINE and aggregate per customer (10 also HISTORY
/// per customer): at review-lab scale (1,500 warehouses) each of 4-7, 10, 12 is a full pass
/// over ~450 M order lines, minutes on a fast drive. Select conditions with
/// ConsistencyOptions::conditions to skip them; skipped ones are reported as not run.
///
/// Money is compared to within 0.005 (DECIMAL(12,2) semantics; SQLite stores these columns as
/// binary doubles).
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/oltp/backend/backend.hpp"

namespace drivelab::oltp::tpcc {

enum class CheckStatus {
  passed,
  failed,
  not_run,  ///< not evaluated: not selected, or nothing to check (detail says which)
};
std::string_view to_string(CheckStatus s) noexcept;

struct ConsistencyCheck {
  std::string name;   ///< "consistency_1" .. "consistency_12"
  int condition = 0;  ///< 1..12: clause 3.3.2.<condition>
  CheckStatus status = CheckStatus::failed;
  bool passed = false;  ///< status == passed
  std::string detail;   ///< what was compared; the offenders when failed; the reason when not run
};

struct ConsistencyOptions {
  /// The conditions to evaluate (1..12); the others are reported as not run.
  std::vector<int> conditions{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
};

/// Evaluates the selected conditions; returns all twelve, in order. Throws BackendError if a
/// query fails, ConfigError for a condition number outside 1..12.
std::vector<ConsistencyCheck> check_consistency(Connection& conn, const ConsistencyOptions& options = {});

}  // namespace drivelab::oltp::tpcc
