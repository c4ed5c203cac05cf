#include "drivelab/oltp/tpcc_checks.hpp"

#include <cmath>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"

namespace drivelab::oltp::tpcc {
namespace {

constexpr std::size_t kMaxListed = 10;

/// Collects offenders of one condition and formats the check.
class Offenders {
 public:
  void add(std::string what) {
    if (items_.size() < kMaxListed) items_.push_back(std::move(what));
    ++count_;
  }
  ConsistencyCheck result(std::string name, std::string_view rule, std::size_t checked) const {
    ConsistencyCheck c;
    c.name = std::move(name);
    c.passed = count_ == 0 && checked > 0;
    if (checked == 0) {
      c.detail = fmt::format("{}: nothing to check (empty tables)", rule);
    } else if (count_ == 0) {
      c.detail = fmt::format("{}: holds for {} rows checked", rule, checked);
    } else {
      c.detail = fmt::format("{}: violated for {} of {}: {}", rule, count_, checked,
                             fmt::join(items_, "; "));
      if (count_ > items_.size()) c.detail += fmt::format("; ... {} more", count_ - items_.size());
    }
    return c;
  }

 private:
  std::vector<std::string> items_;
  std::size_t count_ = 0;
};

void must(const DbStatus& s, std::string_view what) {
  if (!s.ok()) throw BackendError(fmt::format("consistency check {}: {}", what, s.to_string()),
                                  s.sqlstate, s.native_code);
}

/// Runs `sql` and calls `row(stmt)` for each row; returns the number of rows.
template <class F>
std::size_t for_each_row(Connection& conn, std::string_view sql, F&& row) {
  auto q = conn.prepare(sql);
  must(q->execute(), sql);
  std::size_t n = 0;
  DbStatus s;
  while (q->next(s)) {
    row(*q);
    ++n;
  }
  must(s, sql);
  return n;
}

}  // namespace

std::vector<ConsistencyCheck> check_consistency(Connection& conn) {
  std::vector<ConsistencyCheck> out;
  must(conn.begin(TxMode::read_only), "begin");

  {  // 1: W_YTD = sum(D_YTD)
    Offenders bad;
    const auto n = for_each_row(
        conn,
        "SELECT w_id, w_ytd, (SELECT SUM(d_ytd) FROM district WHERE d_w_id = w_id) "
        "FROM warehouse ORDER BY w_id",
        [&](Statement& r) {
          const double w_ytd = r.column_double(1);
          const double d_sum = r.is_null(2) ? 0.0 : r.column_double(2);
          if (std::fabs(w_ytd - d_sum) > 0.005)
            bad.add(fmt::format("warehouse {}: w_ytd={:.2f} sum(d_ytd)={:.2f}", r.column_int64(0),
                                w_ytd, d_sum));
        });
    out.push_back(bad.result("consistency_1", "W_YTD = sum(D_YTD) (clause 3.3.2.1)", n));
  }
  {  // 2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)
    Offenders bad;
    const auto n = for_each_row(
        conn,
        "SELECT d_w_id, d_id, d_next_o_id, "
        "(SELECT MAX(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id), "
        "(SELECT MAX(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id) "
        "FROM district ORDER BY d_w_id, d_id",
        [&](Statement& r) {
          const auto next_minus_1 = r.column_int64(2) - 1;
          const auto max_o = r.is_null(3) ? std::int64_t{0} : r.column_int64(3);
          const bool no_empty = r.is_null(4);
          const auto max_no = no_empty ? std::int64_t{0} : r.column_int64(4);
          if (next_minus_1 != max_o || (!no_empty && max_no != max_o))
            bad.add(fmt::format("warehouse {} district {}: d_next_o_id-1={} max(o_id)={} max(no_o_id)={}",
                                r.column_int64(0), r.column_int64(1), next_minus_1, max_o,
                                no_empty ? std::string("none") : std::to_string(max_no)));
        });
    out.push_back(bad.result("consistency_2", "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) (clause 3.3.2.2)", n));
  }
  {  // 3: max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW_ORDER)
    Offenders bad;
    const auto n = for_each_row(
        conn,
        "SELECT no_w_id, no_d_id, MAX(no_o_id) - MIN(no_o_id) + 1, COUNT(*) FROM new_order "
        "GROUP BY no_w_id, no_d_id ORDER BY no_w_id, no_d_id",
        [&](Statement& r) {
          if (r.column_int64(2) != r.column_int64(3))
            bad.add(fmt::format("warehouse {} district {}: max-min+1={} rows={}", r.column_int64(0),
                                r.column_int64(1), r.column_int64(2), r.column_int64(3)));
        });
    out.push_back(bad.result("consistency_3",
                             "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER (clause 3.3.2.3)", n));
  }
  {  // 4: sum(O_OL_CNT) = count(ORDER_LINE)
    Offenders bad;
    const auto n = for_each_row(
        conn,
        "SELECT a.w, a.d, a.s, b.c FROM "
        "(SELECT o_w_id AS w, o_d_id AS d, SUM(o_ol_cnt) AS s FROM orders GROUP BY o_w_id, o_d_id) a "
        "LEFT JOIN "
        "(SELECT ol_w_id AS w, ol_d_id AS d, COUNT(*) AS c FROM order_line GROUP BY ol_w_id, ol_d_id) b "
        "ON a.w = b.w AND a.d = b.d ORDER BY a.w, a.d",
        [&](Statement& r) {
          const auto lines = r.is_null(3) ? std::int64_t{0} : r.column_int64(3);
          if (r.column_int64(2) != lines)
            bad.add(fmt::format("warehouse {} district {}: sum(o_ol_cnt)={} order_line rows={}",
                                r.column_int64(0), r.column_int64(1), r.column_int64(2), lines));
        });
    out.push_back(bad.result("consistency_4", "sum(O_OL_CNT) = rows in ORDER-LINE (clause 3.3.2.4)", n));
  }

  must(conn.commit(), "commit");
  return out;
}

}  // namespace drivelab::oltp::tpcc
