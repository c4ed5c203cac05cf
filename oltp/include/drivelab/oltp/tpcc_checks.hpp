#pragma once
/// \file tpcc_checks.hpp
/// The TPC-C consistency conditions 1-4 (clause 3.3.2.1 - 3.3.2.4), checked after the load and
/// after a run. Each is evaluated per warehouse or district with portable SQL in one read-only
/// transaction (a consistent snapshot); a failure names every offending warehouse/district (the
/// first 10, then a count).
///
///   1  W_YTD = sum(D_YTD) of its districts                                  (per warehouse)
///   2  D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)                           (per district)
///   3  max(NO_O_ID) - min(NO_O_ID) + 1 = number of NEW-ORDER rows            (per district)
///   4  sum(O_OL_CNT) = number of ORDER-LINE rows                              (per district)
///
/// Condition 2 with an empty NEW-ORDER district (every order delivered) compares only
/// D_NEXT_O_ID - 1 and max(O_ID). Money is compared to within 0.01 (DECIMAL(12,2) semantics;
/// SQLite stores these columns as binary doubles).
#include <string>
#include <vector>

#include "drivelab/oltp/backend.hpp"

namespace drivelab::oltp::tpcc {

struct ConsistencyCheck {
  std::string name;    ///< "consistency_1" .. "consistency_4"
  bool passed = false;
  std::string detail;  ///< what was compared, and the offenders when it failed
};

/// Runs conditions 1-4. Throws BackendError if a query fails.
std::vector<ConsistencyCheck> check_consistency(Connection& conn);

}  // namespace drivelab::oltp::tpcc
