#pragma once
/// \file sysbench_transactions.hpp
/// One sysbench "event" (= transaction) of oltp_read_write, oltp_read_only and oltp_write_only,
/// as the Lua scripts of sysbench 1.0.20 run it (/usr/share/sysbench/oltp_common.lua and
/// oltp_<workload>.lua). The model (plan_event) draws exactly what event() draws, in the same
/// order; the executor (execute_event) runs the plan with prepared statements and counts every
/// query the way sysbench's drivers do.
///
/// Statements (oltp_common.lua stmt_defs, text verbatim, %u = the table number):
///   point_selects      SELECT c FROM sbtest%u WHERE id=?
///   simple_ranges      SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ?
///   sum_ranges         SELECT SUM(k) FROM sbtest%u WHERE id BETWEEN ? AND ?
///   order_ranges       SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c
///   distinct_ranges    SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c
///   index_updates      UPDATE sbtest%u SET k=k+1 WHERE id=?
///   non_index_updates  UPDATE sbtest%u SET c=? WHERE id=?
///   deletes            DELETE FROM sbtest%u WHERE id=?
///   inserts            INSERT INTO sbtest%u (id, k, c, pad) VALUES (?, ?, ?, ?)
///
/// event() of each script (BEGIN and COMMIT unless skip_trx; groups in this order):
///   oltp_read_write  point_selects, [simple, sum, order, distinct ranges], index_updates,
///                    non_index_updates, delete_inserts
///   oltp_read_only   point_selects, [simple, sum, order, distinct ranges]
///   oltp_write_only  index_updates, non_index_updates, delete_inserts
/// ([...] only with range_selects). Each GROUP draws its table once, uniformly
/// (get_table_num = sysbench.rand.uniform(1, tables)), even when its count is 0; then each
/// statement of the group draws its id with sysbench.rand.default(1, table_size) (the configured
/// distribution). Ranges are [id, id + range_size - 1]. non_index_updates draws c, then id.
/// delete_inserts draws id, then k (both from the default distribution), then c and pad, and
/// runs DELETE then INSERT of the same id. With the defaults, a read-write transaction is 18
/// statements + BEGIN + COMMIT = 20 queries.
///
/// Counting (sysbench drv_mysql.c / drv_pgsql.c + db_driver.c db_execute): a statement returning
/// a result set is a read; a statement without one is a write when it changed at least one row,
/// else "other" (so BEGIN, COMMIT, and an UPDATE/DELETE that found no row are "other"); a failed
/// statement is an error instead.
///
/// Prepared statements (prepare_statements() of each script, ps mode): every statement kind of
/// the workload for EVERY table, once per connection, whatever its per-transaction count
/// (sysbench prepares point_selects even with --point_selects=0); range kinds only with
/// range_selects. Per connection: tables x 9 (read_write), x 5 (read_only), x 4 (write_only);
/// without range_selects x 5 (read_write) and x 1 (read_only). BEGIN and COMMIT are the
/// backend's Connection::begin/commit (sysbench also prepares COMMIT on MySQL — BEGIN cannot be
/// prepared there — and both on PostgreSQL; see docs/oltp-sysbench.md).
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/sysbench/sysbench_config.hpp"
#include "drivelab/oltp/sysbench/sysbench_random.hpp"
#include "drivelab/oltp/sysbench/sysbench_schema.hpp"

namespace drivelab::oltp::sysbench {

/// The statements of stmt_defs, in its order.
enum class Kind : std::uint8_t {
  point_select,
  simple_range,
  sum_range,
  order_range,
  distinct_range,
  index_update,
  non_index_update,
  delete_row,
  insert_row,
};
inline constexpr std::size_t kKinds = 9;
/// The stmt_defs key of a kind ("point_selects", ..., "deletes", "inserts").
std::string_view to_string(Kind k) noexcept;
/// The Lua text with "%u" in place of the table number.
std::string_view sql_template(Kind k) noexcept;
/// The text prepared for `table`.
std::string statement_sql(Kind k, int table);
/// True for the SELECTs.
bool returns_rows(Kind k) noexcept;

/// The kinds one connection prepares for each table (see file comment).
std::vector<Kind> prepared_kinds(Workload w, const StatementOptions& o);
/// Statements one connection prepares: tables x prepared_kinds().size().
std::int64_t prepared_per_connection(Workload w, const StatementOptions& o, int tables);

/// One statement of an event with its parameters.
struct Step {
  Kind kind = Kind::point_select;
  int table = 1;
  std::int64_t id = 0;   ///< WHERE id=? / range start / inserted id
  std::int64_t arg = 0;  ///< range end (id + range_size - 1) / inserted k
  std::string c;         ///< non_index_update: new c; insert: c
  std::string pad;       ///< insert: pad
};

/// The statements of one event. Reused from event to event (keeps its strings' capacity).
class EventPlan {
 public:
  void clear() noexcept { size_ = 0; }
  Step& add();
  std::size_t size() const noexcept { return size_; }
  const Step& operator[](std::size_t i) const noexcept { return steps_[i]; }
  const Step* begin() const noexcept { return steps_.data(); }
  const Step* end() const noexcept { return steps_.data() + size_; }

 private:
  std::vector<Step> steps_;
  std::size_t size_ = 0;
};

/// Draws one event() of workload `w` into `plan` (cleared first). See the file comment.
void plan_event(Workload w, const StatementOptions& o, const Scale& scale, SbRandom& rnd, EventPlan& plan);

/// The prepared statements of one connection: every prepared kind for every table. Throws
/// BackendError if a statement cannot be prepared (missing table, server's statement limit).
class PreparedSet {
 public:
  PreparedSet(Connection& conn, Workload w, const StatementOptions& o, int tables);
  /// nullptr for a kind the workload does not prepare.
  Statement* get(int table, Kind k) const noexcept {
    return stmts_[static_cast<std::size_t>(table - 1) * kKinds + static_cast<std::size_t>(k)].get();
  }
  std::size_t count() const noexcept { return count_; }

 private:
  std::vector<std::unique_ptr<Statement>> stmts_;
  std::size_t count_ = 0;
};

/// Queries as sysbench counts them (see file comment).
struct QueryCounts {
  std::uint64_t reads = 0;
  std::uint64_t writes = 0;
  std::uint64_t other = 0;
  std::uint64_t errors = 0;
  std::uint64_t total() const noexcept { return reads + writes + other; }
  void add(const QueryCounts& o) noexcept {
    reads += o.reads;
    writes += o.writes;
    other += o.other;
    errors += o.errors;
  }
};

/// Runs `plan` as BEGIN; statements; COMMIT on `conn` with `stmts`, counting into `counts`.
/// Returns ok, or the status of the first call that failed (the transaction is then left for the
/// caller to roll back). `mode`: the BEGIN to send (the driver sends read_write, sysbench's
/// plain BEGIN, except for oltp_read_only on SQLite; see sysbench_driver.cpp).
DbStatus execute_event(Connection& conn, const PreparedSet& stmts, const EventPlan& plan, TxMode mode,
                       QueryCounts& counts);

}  // namespace drivelab::oltp::sysbench
