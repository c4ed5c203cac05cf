// sysbench's tables and their population (oltp_common.lua create_table()).
#include "drivelab/oltp/sysbench/sysbench_schema.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"

namespace drivelab::oltp::sysbench {
namespace {

constexpr std::int64_t kRowsPerTransaction = 50'000;
constexpr int kMetaVersion = 1;

void check(const DbStatus& s, std::string_view what) {
  if (!s.ok()) throw_status(fmt::format("sysbench load: {}", what), s);
}

void create_meta_table(Connection& conn, const Dialect& d) {
  // The same bookkeeping table as the TPC-C workload (tpcc_schema.cpp).
  conn.execute_immediate(
      fmt::format("CREATE TABLE drivelab_meta (name VARCHAR(64) NOT NULL, value VARCHAR(200), PRIMARY KEY (name)){}",
                  d.table_options));
}

void write_meta(Connection& conn, const Scale& scale, bool complete) {
  const std::pair<std::string_view, std::string> rows[] = {
      {"version", std::to_string(kMetaVersion)}, {"workload", "sysbench"},
      {"tables", std::to_string(scale.tables)},  {"table_size", std::to_string(scale.table_size)},
      {"complete", complete ? "1" : "0"},
  };
  check(conn.begin(TxMode::read_write), "begin");
  auto del = conn.prepare("DELETE FROM drivelab_meta");
  check(del->execute(), "clear drivelab_meta");
  auto insert = conn.prepare("INSERT INTO drivelab_meta (name, value) VALUES (?, ?)");
  for (const auto& [name, value] : rows) {
    insert->bind_text(1, name);
    insert->bind_text(2, value);
    check(insert->execute(), "write drivelab_meta");
  }
  check(conn.commit(), "commit drivelab_meta");
}

/// Loads one table on `conn`; returns the rows written (fewer than table_size when stopped).
std::int64_t load_one_table(Connection& conn, const Dialect& dialect, int table, const Scale& scale,
                            const RandOptions& rand, Rng rng, const std::function<bool()>& stop) {
  conn.execute_immediate(create_table_sql(dialect, table));
  auto loader = conn.bulk_loader(table_name(table), {"id", "k", "c", "pad"});
  SbRandom rnd(rand, rng);
  const auto n = static_cast<std::uint32_t>(scale.table_size);
  std::string c;
  std::string pad;
  std::int64_t id = 1;
  while (id <= scale.table_size) {
    if (stop && stop()) return id - 1;
    check(conn.begin(TxMode::read_write), "begin");
    const std::int64_t last = std::min(scale.table_size, id + kRowsPerTransaction - 1);
    for (; id <= last; ++id) {
      // oltp_common.lua: c_val, pad_val, then sb_rand(1, table_size) for k — in this order.
      rnd.fill(c, kCTemplate);
      rnd.fill(pad, kPadTemplate);
      loader->add_int64(id);
      loader->add_int64(rnd.pick(1, n));
      loader->add_text(c);
      loader->add_text(pad);
      loader->end_row();
    }
    loader->flush();
    check(conn.commit(), "commit");
  }
  loader.reset();
  conn.execute_immediate(create_index_sql(table));
  return scale.table_size;
}

/// A statement that must return one row; its first column as text ("" if NULL), nullopt on error.
std::optional<std::string> one_value(Statement& s) {
  if (!s.execute().ok()) return std::nullopt;
  DbStatus st;
  std::optional<std::string> out;
  if (s.next(st)) out = s.is_null(0) ? std::string() : std::string(s.column_text(0));
  while (s.next(st)) {
  }
  if (!st.ok()) return std::nullopt;
  return out;
}

}  // namespace

std::string table_name(int table) { return fmt::format("sbtest{}", table); }

std::string create_table_sql(const Dialect& dialect, int table) {
  const std::string& id_def = dialect.auto_increment_key;
  return fmt::format(
      "CREATE TABLE sbtest{}(\n"
      "  id {},\n"
      "  k INTEGER DEFAULT '0' NOT NULL,\n"
      "  c CHAR(120) DEFAULT '' NOT NULL,\n"
      "  pad CHAR(60) DEFAULT '' NOT NULL,\n"
      "  PRIMARY KEY (id)\n"
      "){}",
      table, id_def, dialect.table_options);
}

std::string create_index_sql(int table) { return fmt::format("CREATE INDEX k_{0} ON sbtest{0}(k)", table); }

int load_threads_used(int threads, const Scale& scale, const Capabilities& capabilities) noexcept {
  return std::max(1, std::min({threads, scale.tables, capabilities.max_load_threads}));
}

LoadStats load_tables(Backend& backend, const Scale& scale, const RandOptions& rand, const Rng& rng, int threads,
                      const std::function<void(const LoadProgress&)>& progress, const std::function<bool()>& stop) {
  const std::int64_t t0 = monotonic_ns();
  LoadStats stats;
  stats.threads = load_threads_used(threads, scale, backend.capabilities());
  const Dialect& dialect = backend.dialect();
  {
    auto conn = backend.connect_for_load();
    create_meta_table(*conn, dialect);
    write_meta(*conn, scale, false);
  }

  std::mutex mu;  // guards done, rows, error, the progress callback
  int done = 0;
  std::uint64_t rows = 0;
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  const auto stopping = [&] { return failed.load() || (stop && stop()); };
  const auto worker = [&](int first) {
    try {
      auto conn = backend.connect_for_load();
      // sysbench's cmd_prepare: thread i takes tables i+1, i+1+threads, ...
      for (int t = first; t <= scale.tables; t += stats.threads) {
        const std::int64_t n =
            load_one_table(*conn, dialect, t, scale, rand, rng.split(static_cast<std::uint64_t>(t)), stopping);
        std::lock_guard lock(mu);
        rows += static_cast<std::uint64_t>(n);
        if (n < scale.table_size) return;
        ++done;
        if (progress) {
          LoadProgress p;
          p.tables_done = done;
          p.tables_total = scale.tables;
          p.rows_done = rows;
          p.elapsed_s = static_cast<double>(monotonic_ns() - t0) / 1e9;
          p.eta_s = p.elapsed_s / done * (scale.tables - done);
          progress(p);
        }
      }
    } catch (...) {
      std::lock_guard lock(mu);
      if (!error) error = std::current_exception();
      failed.store(true);
    }
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < stats.threads; ++i) pool.emplace_back(worker, i + 1);
  worker(1);
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);

  stats.rows = rows;
  stats.seconds = static_cast<double>(monotonic_ns() - t0) / 1e9;
  if (done < scale.tables) return stats;  // stopped: drivelab_meta still says incomplete
  {
    auto conn = backend.connect_for_load();
    write_meta(*conn, scale, true);
  }
  backend.finish_load();
  stats.complete = true;
  stats.seconds = static_cast<double>(monotonic_ns() - t0) / 1e9;
  return stats;
}

bool has_drivelab_meta(Connection& conn) {
  try {
    conn.prepare("SELECT name, value FROM drivelab_meta");
    return true;
  } catch (const BackendError&) {
    return false;
  }
}

std::optional<std::string> check_reusable(Connection& conn, const Scale& scale) {
  if (has_drivelab_meta(conn)) {
    auto q = conn.prepare("SELECT name, value FROM drivelab_meta");
    std::string workload, complete;
    std::int64_t tables = -1, table_size = -1;
    check(conn.begin(TxMode::read_only), "begin");
    if (!q->execute().ok()) {
      conn.rollback();
      return "drivelab_meta cannot be read";
    }
    DbStatus st;
    while (q->next(st)) {
      const std::string name(q->column_text(0));
      const std::string value = q->is_null(1) ? std::string() : std::string(q->column_text(1));
      if (name == "workload")
        workload = value;
      else if (name == "complete")
        complete = value;
      else if (name == "tables")
        tables = std::atoll(value.c_str());
      else if (name == "table_size")
        table_size = std::atoll(value.c_str());
    }
    conn.rollback();
    if (workload != "sysbench") return "it holds another drivelab workload's tables";
    if (complete != "1") return "its load did not finish";
    if (tables != scale.tables || table_size != scale.table_size)
      return fmt::format("it has {} table(s) of {} rows, not {} of {}", tables, table_size, scale.tables,
                         scale.table_size);
    return std::nullopt;
  }
  // No drivelab_meta: tables made by sysbench prepare (or someone else). Check each.
  std::vector<std::unique_ptr<Statement>> max_id;
  for (int t = 1; t <= scale.tables; ++t) {
    try {
      max_id.push_back(conn.prepare(fmt::format("SELECT MAX(id) FROM {}", table_name(t))));
    } catch (const BackendError&) {
      return fmt::format("table {} is missing", table_name(t));
    }
  }
  check(conn.begin(TxMode::read_only), "begin");
  for (int t = 1; t <= scale.tables; ++t) {
    const auto v = one_value(*max_id[static_cast<std::size_t>(t - 1)]);
    if (!v || std::atoll(v->c_str()) != scale.table_size) {
      conn.rollback();
      return fmt::format("{} has MAX(id) = {}, not table_size = {}", table_name(t), v && !v->empty() ? *v : "NULL",
                         scale.table_size);
    }
  }
  conn.rollback();
  return std::nullopt;
}

}  // namespace drivelab::oltp::sysbench
