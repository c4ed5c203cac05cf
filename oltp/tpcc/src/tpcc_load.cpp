// Initial population of TPC-C (clause 4.3.3.1), one pass per warehouse. Rows are generated in
// primary-key order so every B-tree insert is an append.
#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/tpcc/tpcc_schema.hpp"

namespace drivelab::oltp::tpcc {
namespace {

/// The bulk loaders of every table and reusable text buffers.
class Loader {
 public:
  Loader(Connection& conn, const Scale& scale, const CConstants& c_load)
      : conn_(conn), scale_(scale), c_load_(c_load), now_(sql_timestamp_now()) {
    warehouse_ = conn.bulk_loader(
        "warehouse", {"w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip", "w_tax", "w_ytd"});
    district_ = conn.bulk_loader("district", {"d_id", "d_w_id", "d_name", "d_street_1", "d_street_2", "d_city",
                                              "d_state", "d_zip", "d_tax", "d_ytd", "d_next_o_id"});
    customer_ = conn.bulk_loader(
        "customer",
        {"c_id",         "c_d_id",     "c_w_id",    "c_first",       "c_middle",      "c_last",         "c_street_1",
         "c_street_2",   "c_city",     "c_state",   "c_zip",         "c_phone",       "c_since",        "c_credit",
         "c_credit_lim", "c_discount", "c_balance", "c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_data"});
    history_ = conn.bulk_loader("history",
                                {"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"});
    new_order_ = conn.bulk_loader("new_order", {"no_o_id", "no_d_id", "no_w_id"});
    orders_ = conn.bulk_loader(
        "orders", {"o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"});
    order_line_ =
        conn.bulk_loader("order_line", {"ol_o_id", "ol_d_id", "ol_w_id", "ol_number", "ol_i_id", "ol_supply_w_id",
                                        "ol_delivery_d", "ol_quantity", "ol_amount", "ol_dist_info"});
    item_ = conn.bulk_loader("item", {"i_id", "i_im_id", "i_name", "i_price", "i_data"});
    stock_ = conn.bulk_loader("stock", {"s_i_id", "s_w_id", "s_quantity", "s_dist_01", "s_dist_02", "s_dist_03",
                                        "s_dist_04", "s_dist_05", "s_dist_06", "s_dist_07", "s_dist_08", "s_dist_09",
                                        "s_dist_10", "s_ytd", "s_order_cnt", "s_remote_cnt", "s_data"});
  }

  std::uint64_t rows() const noexcept { return rows_; }

  void items(Rng& rng) {
    begin();
    for (int i = 1; i <= scale_.items; ++i) {
      item_->add_int64(i);
      item_->add_int64(rng.uniform(1, 10'000));
      text(rng, 14, 24, item_.get());
      item_->add_double(fixed_point(rng, 1.00, 100.00, 2));
      data_with_original(rng, buffer());
      item_->add_text(last_buffer());
      end(item_.get());
    }
    commit(item_.get());
  }

  void warehouse_and_stock(Rng& rng, int w) {
    begin();
    warehouse_->add_int64(w);
    text(rng, 6, 10, warehouse_.get());
    address(rng, warehouse_.get());
    warehouse_->add_double(fixed_point(rng, 0.0, 0.2, 4));
    warehouse_->add_double(300'000.00);
    end(warehouse_.get());
    for (int i = 1; i <= scale_.items; ++i) {
      stock_->add_int64(i);
      stock_->add_int64(w);
      stock_->add_int64(rng.uniform(10, 100));
      for (int d = 0; d < kDistrictsPerWarehouse; ++d) text(rng, 24, 24, stock_.get());
      stock_->add_int64(0);
      stock_->add_int64(0);
      stock_->add_int64(0);
      data_with_original(rng, buffer());
      stock_->add_text(last_buffer());
      end(stock_.get());
    }
    commit(stock_.get());
  }

  /// DISTRICT, its CUSTOMERs and HISTORY, ORDERS with their ORDER-LINEs, NEW-ORDER: one transaction.
  void district(Rng& rng, int w, int d) {
    begin();
    district_->add_int64(d);
    district_->add_int64(w);
    text(rng, 6, 10, district_.get());
    address(rng, district_.get());
    district_->add_double(fixed_point(rng, 0.0, 0.2, 4));
    district_->add_double(30'000.00);
    district_->add_int64(kOrdersPerDistrict + 1);
    end(district_.get());

    for (int c = 1; c <= kCustomersPerDistrict; ++c) customer(rng, w, d, c);
    for (int c = 1; c <= kCustomersPerDistrict; ++c) {
      history_->add_int64(c);
      history_->add_int64(d);
      history_->add_int64(w);
      history_->add_int64(d);
      history_->add_int64(w);
      history_->add_text(now_);
      history_->add_double(10.00);
      text(rng, 12, 24, history_.get());
      end(history_.get());
    }

    const std::vector<int> customer_of_order = permutation(rng, kCustomersPerDistrict);
    for (int o = 1; o <= kOrdersPerDistrict; ++o) {
      const bool delivered = o < kFirstUndeliveredOrder;
      const auto ol_cnt = rng.uniform(5, 15);
      orders_->add_int64(o);
      orders_->add_int64(d);
      orders_->add_int64(w);
      orders_->add_int64(customer_of_order[static_cast<std::size_t>(o - 1)]);
      orders_->add_text(now_);
      if (delivered)
        orders_->add_int64(rng.uniform(1, 10));
      else
        orders_->add_null();
      orders_->add_int64(ol_cnt);
      orders_->add_int64(1);
      end(orders_.get());
      for (std::int64_t n = 1; n <= ol_cnt; ++n) {
        order_line_->add_int64(o);
        order_line_->add_int64(d);
        order_line_->add_int64(w);
        order_line_->add_int64(n);
        order_line_->add_int64(rng.uniform(1, scale_.items));
        order_line_->add_int64(w);
        if (delivered)
          order_line_->add_text(now_);
        else
          order_line_->add_null();
        order_line_->add_int64(5);
        order_line_->add_double(delivered ? 0.00 : fixed_point(rng, 0.01, 9'999.99, 2));
        text(rng, 24, 24, order_line_.get());
        end(order_line_.get());
      }
    }
    for (int o = kFirstUndeliveredOrder; o <= kOrdersPerDistrict; ++o) {
      new_order_->add_int64(o);
      new_order_->add_int64(d);
      new_order_->add_int64(w);
      end(new_order_.get());
    }
    for (BulkLoader* l : {district_.get(), customer_.get(), history_.get(), orders_.get(), order_line_.get()})
      l->flush();
    commit(new_order_.get());
  }

 private:
  void customer(Rng& rng, int w, int d, int c) {
    BulkLoader* l = customer_.get();
    l->add_int64(c);
    l->add_int64(d);
    l->add_int64(w);
    text(rng, 8, 16, l);  // c_first
    l->add_text("OE");
    const auto name_number = c <= kCustomersWithSequentialLastName ? c - 1 : nurand(rng, 255, 0, 999, c_load_.c_last);
    buffer() = last_name(static_cast<int>(name_number));
    l->add_text(last_buffer());
    address(rng, l);
    n_string(rng, 16, 16, buffer());
    l->add_text(last_buffer());
    l->add_text(now_);
    l->add_text(rng.uniform(1, 10) == 1 ? "BC" : "GC");
    l->add_double(50'000.00);
    l->add_double(fixed_point(rng, 0.0, 0.5, 4));
    l->add_double(-10.00);
    l->add_double(10.00);
    l->add_int64(1);
    l->add_int64(0);
    text(rng, 300, 500, l);
    end(l);
  }

  /// street_1, street_2, city, state, zip (clause 4.3.3.1).
  void address(Rng& rng, BulkLoader* l) {
    text(rng, 10, 20, l);
    text(rng, 10, 20, l);
    text(rng, 10, 20, l);
    std::string& state = buffer();
    state.assign(2, 'A');
    for (char& ch : state) ch = static_cast<char>('A' + rng.uniform(0, 25));
    l->add_text(state);
    zip_code(rng, buffer());
    l->add_text(last_buffer());
  }

  void text(Rng& rng, int min_len, int max_len, BulkLoader* l) {
    a_string(rng, min_len, max_len, buffer());
    l->add_text(last_buffer());
  }

  void begin() {
    if (DbStatus s = conn_.begin(TxMode::read_write); !s.ok()) throw_status("load: begin", s);
  }
  void end(BulkLoader* l) {
    l->end_row();
    ++rows_;
    next_buffer_ = 0;
  }
  /// A text buffer that stays untouched until end_row() (BulkLoader binds text without copying).
  std::string& buffer() { return buffers_[next_buffer_++]; }
  std::string& last_buffer() { return buffers_[next_buffer_ - 1]; }
  void commit(BulkLoader* last) {
    last->flush();
    if (DbStatus s = conn_.commit(); !s.ok()) throw_status("load: commit", s);
  }

  Connection& conn_;
  Scale scale_;
  CConstants c_load_;
  std::string now_;
  std::array<std::string, 16> buffers_;  // more than the text columns of any table (STOCK: 11)
  std::size_t next_buffer_ = 0;
  std::uint64_t rows_ = 0;
  std::unique_ptr<BulkLoader> warehouse_, district_, customer_, history_, new_order_, orders_, order_line_, item_,
      stock_;
};

/// Seconds since `t0_ns`.
double seconds_since(std::int64_t t0_ns) { return static_cast<double>(monotonic_ns() - t0_ns) / 1e9; }

/// The tables whose primary key is built after the load on PostgreSQL, biggest first (the
/// builds run in parallel; starting the longest first finishes soonest).
constexpr std::array<std::string_view, 8> kKeyedTablesBySize{"order_line", "stock", "customer", "orders",
                                                             "new_order",  "item",  "district", "warehouse"};

/// PostgreSQL: drops the primary keys of the TPC-C tables just created and returns the
/// statements that add them back (names and definitions from the catalog, so the DDL stays
/// the one of create_schema()). COPY into a table without indexes only appends to the heap; one
/// sorted build per key at the end replaces ~10 random B-tree descents per row (measured:
/// docs/backend-postgres.md). Other dialects keep their keys (InnoDB and SQLite WITHOUT ROWID
/// tables are clustered on them, and rows arrive in key order anyway).
std::vector<std::string> defer_primary_keys(Connection& conn, const Dialect& dialect) {
  std::vector<std::string> add;
  if (dialect.primary_key_sql.empty()) return add;
  auto q = conn.prepare(dialect.primary_key_sql);
  for (std::string_view table : kKeyedTablesBySize) {
    q->bind_text(1, table);
    DbStatus st = q->execute();
    if (!st.ok()) throw_status("load: read the primary key of " + std::string(table), st);
    std::string name, definition;
    if (q->next(st)) {
      name = std::string(q->column_text(0));
      definition = std::string(q->column_text(1));
    }
    if (name.empty()) continue;
    conn.execute_immediate(fmt::format("ALTER TABLE {} DROP CONSTRAINT {}", table, name));
    add.push_back(fmt::format("ALTER TABLE {} ADD CONSTRAINT {} {}", table, name, definition));
  }
  return add;
}

/// Shared state of the loader threads.
struct LoadShared {
  LoadShared(const Scale& s, const CConstants& c, const Rng& r, const LoadOptions& o, std::int64_t t0)
      : scale(s), c_load(c), rng(r), options(o), t0_ns(t0) {}
  const Scale& scale;
  const CConstants& c_load;
  const Rng& rng;
  const LoadOptions& options;
  std::int64_t t0_ns;
  std::atomic<int> next_job{0};  // 0 = ITEM, w = warehouse w
  std::atomic<bool> abort{false};
  std::atomic<std::uint64_t> rows{0};
  std::mutex mu;  // guards the rest and serialises the callbacks
  int warehouses_done = 0;
  bool stopped = false;
  std::exception_ptr error;

  /// Polls `stop` (serialised); true once any worker saw a stop or an error.
  bool should_stop() {
    if (abort.load()) return true;
    std::lock_guard lock(mu);
    if (options.stop && options.stop()) {
      stopped = true;
      abort = true;
    }
    return abort.load();
  }
  void warehouse_finished() {
    std::lock_guard lock(mu);
    ++warehouses_done;
    if (!options.progress) return;
    LoadProgress p;
    p.warehouses_done = warehouses_done;
    p.warehouses_total = scale.warehouses;
    p.elapsed_s = seconds_since(t0_ns);
    p.eta_s = p.elapsed_s / warehouses_done * (scale.warehouses - warehouses_done);
    options.progress(p);
  }
  void fail(std::exception_ptr e) {
    std::lock_guard lock(mu);
    if (!error) error = std::move(e);
    abort = true;
  }
};

/// One loader connection: takes jobs (ITEM, then warehouses) until none are left.
void load_worker(Connection& conn, LoadShared& sh) {
  try {
    Loader loader(conn, sh.scale, sh.c_load);
    for (;;) {
      const int job = sh.next_job++;
      if (job > sh.scale.warehouses || sh.abort.load()) break;
      if (job == 0) {
        Rng item_rng = sh.rng.split(0);
        loader.items(item_rng);
        continue;
      }
      // One stream per warehouse: its content depends neither on W nor on the thread count.
      Rng wrng = sh.rng.split(static_cast<std::uint64_t>(job));
      loader.warehouse_and_stock(wrng, job);
      bool stopped = false;
      for (int d = 1; d <= kDistrictsPerWarehouse && !stopped; ++d) {
        stopped = sh.should_stop();
        if (!stopped) loader.district(wrng, job, d);
      }
      if (stopped) break;
      sh.warehouse_finished();
    }
    sh.rows += loader.rows();
  } catch (...) {
    sh.fail(std::current_exception());
  }
}

/// Runs `statements` on the connections in parallel (each takes the next one). Throws the first
/// error after all have finished.
void run_in_parallel(std::vector<std::unique_ptr<Connection>>& conns, const std::vector<std::string>& statements) {
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::exception_ptr error;
  const auto work = [&](Connection& c) {
    try {
      for (std::size_t i = next++; i < statements.size(); i = next++) c.execute_immediate(statements[i]);
    } catch (...) {
      std::lock_guard lock(mu);
      if (!error) error = std::current_exception();
      next = statements.size();
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < conns.size(); ++t) threads.emplace_back(work, std::ref(*conns[t]));
  work(*conns[0]);
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

int load_threads_used(int threads, const Scale& scale, const Capabilities& capabilities) noexcept {
  return std::clamp(std::min(threads, capabilities.max_load_threads), 1, std::max(scale.warehouses, 1));
}

LoadStats load_database(Backend& backend, const Scale& scale, const CConstants& c_load, const Rng& rng,
                        const LoadOptions& options) {
  const std::int64_t t0 = monotonic_ns();
  LoadStats stats;
  stats.threads = load_threads_used(options.threads, scale, backend.capabilities());
  {
    std::vector<std::unique_ptr<Connection>> conns;
    conns.push_back(backend.connect_for_load());
    create_schema(*conns[0], backend.dialect());
    write_meta(*conns[0], {.scale = scale, .c_load = c_load, .complete = false});
    std::vector<std::string> finish = defer_primary_keys(*conns[0], backend.dialect());
    for (int t = 1; t < stats.threads; ++t) conns.push_back(backend.connect_for_load());

    LoadShared sh(scale, c_load, rng, options, t0);
    std::vector<std::thread> threads;
    for (std::size_t t = 1; t < conns.size(); ++t) threads.emplace_back(load_worker, std::ref(*conns[t]), std::ref(sh));
    load_worker(*conns[0], sh);  // the calling thread is worker 0 (the only one for SQLite)
    for (std::thread& t : threads) t.join();
    if (sh.error) std::rethrow_exception(sh.error);
    stats.rows = sh.rows.load();
    if (sh.stopped) {
      stats.seconds = seconds_since(t0);
      return stats;
    }

    // Keys first (the biggest tables' first), then the secondary indexes.
    for (const std::string& sql : index_ddl()) finish.push_back(sql);
    run_in_parallel(conns, finish);
    write_meta(*conns[0], {.scale = scale, .c_load = c_load, .complete = true});
  }
  backend.finish_load();
  stats.complete = true;
  stats.seconds = seconds_since(t0);
  return stats;
}

std::string reuse_problem(Connection& conn, const Scale& scale, std::optional<LoadMeta>& meta) {
  meta = read_meta(conn);
  if (!meta) return "not a complete drivelab database (no readable drivelab_meta)";
  if (!meta->complete) return "its load did not finish";
  if (meta->scale.warehouses != scale.warehouses || meta->scale.items != scale.items)
    return fmt::format("it has {} warehouses and {} items", meta->scale.warehouses, meta->scale.items);
  const std::pair<std::string_view, std::int64_t> expected[] = {
      {"warehouse", scale.warehouses},
      {"district", std::int64_t{kDistrictsPerWarehouse} * scale.warehouses},
      {"item", scale.items}};
  for (const auto& [table, rows] : expected) {
    std::unique_ptr<Statement> q;
    try {
      q = conn.prepare(fmt::format("SELECT COUNT(*) FROM {}", table));
    } catch (const BackendError&) {
      return fmt::format("table {} is missing", table);
    }
    DbStatus st = q->execute();
    if (!st.ok() || !q->next(st)) return fmt::format("table {} cannot be read ({})", table, st.to_string());
    const std::int64_t n = q->column_int64(0);
    if (n != rows) return fmt::format("table {} has {} rows instead of {}", table, n, rows);
  }
  return {};
}

std::uint64_t estimated_database_bytes(const Scale& scale, const Capabilities& capabilities) {
  // Fitted to complete loads of 1 and 2 warehouses with 1,000 and 100,000 items (tables +
  // indexes; docs/backend-postgres.md "Database size"): a fixed part, per warehouse everything
  // but STOCK, STOCK per item and warehouse, ITEM per item. Fits the measurements within 1.5%.
  struct Size {
    double base_bytes, per_warehouse_bytes, stock_per_item_bytes, item_per_item_bytes;
  };
  constexpr Size kSqlite{0, 44.68e6, 336, 87};          // file + WAL after the load (WAL mode)
  constexpr Size kPostgres{8.22e6, 66.67e6, 379, 129};  // pg_database_size (incl. ~8 MB catalog)
  const Size& s = capabilities.embedded ? kSqlite : kPostgres;
  const double w = std::max(scale.warehouses, 0);
  const double items = std::max(scale.items, 0);
  return static_cast<std::uint64_t>(s.base_bytes + w * (s.per_warehouse_bytes + items * s.stock_per_item_bytes) +
                                    items * s.item_per_item_bytes);
}

LoadStats load_database(Backend& backend, const Scale& scale, const CConstants& c_load, const Rng& rng,
                        const std::function<void(const LoadProgress&)>& progress, const std::function<bool()>& stop) {
  LoadOptions o;
  o.progress = progress;
  o.stop = stop;
  return load_database(backend, scale, c_load, rng, o);
}

}  // namespace drivelab::oltp::tpcc
