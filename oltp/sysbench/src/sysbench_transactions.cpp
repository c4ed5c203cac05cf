#include "drivelab/oltp/sysbench/sysbench_transactions.hpp"

#include <fmt/format.h>

namespace drivelab::oltp::sysbench {
namespace {

struct KindInfo {
  std::string_view name;
  std::string_view sql;
};

// oltp_common.lua, stmt_defs (verbatim).
constexpr std::array<KindInfo, kKinds> kInfo{{
    {"point_selects", "SELECT c FROM sbtest%u WHERE id=?"},
    {"simple_ranges", "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ?"},
    {"sum_ranges", "SELECT SUM(k) FROM sbtest%u WHERE id BETWEEN ? AND ?"},
    {"order_ranges", "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c"},
    {"distinct_ranges", "SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c"},
    {"index_updates", "UPDATE sbtest%u SET k=k+1 WHERE id=?"},
    {"non_index_updates", "UPDATE sbtest%u SET c=? WHERE id=?"},
    {"deletes", "DELETE FROM sbtest%u WHERE id=?"},
    {"inserts", "INSERT INTO sbtest%u (id, k, c, pad) VALUES (?, ?, ?, ?)"},
}};

constexpr std::array<Kind, 4> kRangeKinds{Kind::simple_range, Kind::sum_range, Kind::order_range, Kind::distinct_range};

bool reads(Workload w) noexcept { return w != Workload::oltp_write_only; }
bool writes(Workload w) noexcept { return w != Workload::oltp_read_only; }

int count_of(const StatementOptions& o, Kind k) noexcept {
  switch (k) {
    case Kind::simple_range: return o.simple_ranges;
    case Kind::sum_range: return o.sum_ranges;
    case Kind::order_range: return o.order_ranges;
    case Kind::distinct_range: return o.distinct_ranges;
    default: return 0;
  }
}

}  // namespace

std::string_view to_string(Kind k) noexcept { return kInfo[static_cast<std::size_t>(k)].name; }
std::string_view sql_template(Kind k) noexcept { return kInfo[static_cast<std::size_t>(k)].sql; }

std::string statement_sql(Kind k, int table) {
  const std::string_view t = sql_template(k);
  const auto at = t.find("%u");
  return fmt::format("{}{}{}", t.substr(0, at), table, t.substr(at + 2));
}

bool returns_rows(Kind k) noexcept { return k <= Kind::distinct_range; }

std::vector<Kind> prepared_kinds(Workload w, const StatementOptions& o) {
  // prepare_statements() of oltp_read_write.lua / oltp_read_only.lua / oltp_write_only.lua.
  std::vector<Kind> out;
  if (reads(w)) {
    out.push_back(Kind::point_select);
    if (o.range_selects)
      for (const Kind k : kRangeKinds) out.push_back(k);
  }
  if (writes(w))
    for (const Kind k : {Kind::index_update, Kind::non_index_update, Kind::delete_row, Kind::insert_row})
      out.push_back(k);
  return out;
}

std::int64_t prepared_per_connection(Workload w, const StatementOptions& o, int tables) {
  return static_cast<std::int64_t>(prepared_kinds(w, o).size()) * tables;
}

Step& EventPlan::add() {
  if (size_ == steps_.size()) steps_.emplace_back();
  return steps_[size_++];
}

void plan_event(Workload w, const StatementOptions& o, const Scale& scale, SbRandom& rnd, EventPlan& plan) {
  plan.clear();
  const auto tables = static_cast<std::uint32_t>(scale.tables);
  const auto size = static_cast<std::uint32_t>(scale.table_size);
  const auto table = [&] { return static_cast<int>(rnd.uniform(1, tables)); };   // get_table_num()
  const auto id = [&] { return static_cast<std::int64_t>(rnd.pick(1, size)); };  // get_id()
  const auto add_step = [&](Kind kind, int t) -> Step& {                         // a step on table t; its keys follow
    Step& s = plan.add();
    s.kind = kind;
    s.table = t;
    return s;
  };

  if (reads(w)) {
    // execute_point_selects()
    const int t = table();
    for (int i = 0; i < o.point_selects; ++i) {
      Step& s = add_step(Kind::point_select, t);
      s.id = id();
    }
    if (o.range_selects) {
      // execute_simple_ranges() .. execute_distinct_ranges(): execute_range(key)
      for (Kind k : kRangeKinds) {
        const int rt = table();
        for (int i = 0; i < count_of(o, k); ++i) {
          Step& s = add_step(k, rt);
          s.id = id();
          s.arg = s.id + o.range_size - 1;
        }
      }
    }
  }
  if (writes(w)) {
    {  // execute_index_updates()
      const int t = table();
      for (int i = 0; i < o.index_updates; ++i) {
        Step& s = add_step(Kind::index_update, t);
        s.id = id();
      }
    }
    {  // execute_non_index_updates(): c first, then id
      const int t = table();
      for (int i = 0; i < o.non_index_updates; ++i) {
        Step& s = add_step(Kind::non_index_update, t);
        rnd.fill(s.c, kCTemplate);
        s.id = id();
      }
    }
    {  // execute_delete_inserts(): id, k, then c and pad
      const int t = table();
      for (int i = 0; i < o.delete_inserts; ++i) {
        const std::int64_t del_id = id();
        const std::int64_t k = id();
        Step& d = add_step(Kind::delete_row, t);
        d.id = del_id;
        Step& ins = add_step(Kind::insert_row, t);
        ins.id = del_id;
        ins.arg = k;
        rnd.fill(ins.c, kCTemplate);
        rnd.fill(ins.pad, kPadTemplate);
      }
    }
  }
}

PreparedSet::PreparedSet(Connection& conn, Workload w, const StatementOptions& o, int tables)
    : stmts_(static_cast<std::size_t>(tables) * kKinds) {
  const std::vector<Kind> kinds = prepared_kinds(w, o);
  for (int t = 1; t <= tables; ++t) {
    for (Kind k : kinds) {
      stmts_[static_cast<std::size_t>(t - 1) * kKinds + static_cast<std::size_t>(k)] =
          conn.prepare(statement_sql(k, t));
      ++count_;
    }
  }
}

DbStatus execute_event(Connection& conn, const PreparedSet& stmts, const EventPlan& plan, TxMode mode,
                       QueryCounts& counts) {
  DbStatus st = conn.begin(mode);
  if (!st.ok()) {
    ++counts.errors;
    return st;
  }
  ++counts.other;  // BEGIN
  for (const Step& s : plan) {
    Statement& q = *stmts.get(s.table, s.kind);
    switch (s.kind) {
      case Kind::point_select:
      case Kind::index_update:
      case Kind::delete_row: q.bind_int64(1, s.id); break;
      case Kind::simple_range:
      case Kind::sum_range:
      case Kind::order_range:
      case Kind::distinct_range:
        q.bind_int64(1, s.id);
        q.bind_int64(2, s.arg);
        break;
      case Kind::non_index_update:
        q.bind_text(1, s.c);
        q.bind_int64(2, s.id);
        break;
      case Kind::insert_row:
        q.bind_int64(1, s.id);
        q.bind_int64(2, s.arg);
        q.bind_text(3, s.c);
        q.bind_text(4, s.pad);
        break;
    }
    st = q.execute();
    if (!st.ok()) {
      ++counts.errors;
      return st;
    }
    if (returns_rows(s.kind)) {
      // sysbench buffers the whole result (mysql_stmt_store_result / PGresult) and walks it
      // without decoding a value (mysql_stmt_fetch with no bound buffers): discard_rows.
      st = q.discard_rows();
      if (!st.ok()) {
        ++counts.errors;
        return st;
      }
      ++counts.reads;
    } else if (q.affected_rows() > 0) {
      ++counts.writes;
    } else {
      ++counts.other;
    }
  }
  st = conn.commit();
  if (!st.ok()) {
    ++counts.errors;
    return st;
  }
  ++counts.other;  // COMMIT
  return st;
}

}  // namespace drivelab::oltp::sysbench
