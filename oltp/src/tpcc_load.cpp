// Initial population of TPC-C (clause 4.3.3.1), one pass per warehouse. Rows are generated in
// primary-key order so every B-tree insert is an append.
#include <array>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/tpcc_schema.hpp"

namespace drivelab::oltp::tpcc {
namespace {

/// The bulk loaders of every table and reusable text buffers.
class Loader {
 public:
  Loader(Connection& conn, const Scale& scale, const CConstants& c_load)
      : conn_(conn), scale_(scale), c_load_(c_load), now_(sql_timestamp_now()) {
    warehouse_ = conn.bulk_loader("warehouse", {"w_id", "w_name", "w_street_1", "w_street_2",
                                                "w_city", "w_state", "w_zip", "w_tax", "w_ytd"});
    district_ = conn.bulk_loader("district", {"d_id", "d_w_id", "d_name", "d_street_1", "d_street_2",
                                              "d_city", "d_state", "d_zip", "d_tax", "d_ytd",
                                              "d_next_o_id"});
    customer_ = conn.bulk_loader(
        "customer", {"c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last", "c_street_1",
                     "c_street_2", "c_city", "c_state", "c_zip", "c_phone", "c_since", "c_credit",
                     "c_credit_lim", "c_discount", "c_balance", "c_ytd_payment", "c_payment_cnt",
                     "c_delivery_cnt", "c_data"});
    history_ = conn.bulk_loader("history", {"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id",
                                            "h_date", "h_amount", "h_data"});
    new_order_ = conn.bulk_loader("new_order", {"no_o_id", "no_d_id", "no_w_id"});
    orders_ = conn.bulk_loader("orders", {"o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d",
                                          "o_carrier_id", "o_ol_cnt", "o_all_local"});
    order_line_ = conn.bulk_loader(
        "order_line", {"ol_o_id", "ol_d_id", "ol_w_id", "ol_number", "ol_i_id", "ol_supply_w_id",
                       "ol_delivery_d", "ol_quantity", "ol_amount", "ol_dist_info"});
    item_ = conn.bulk_loader("item", {"i_id", "i_im_id", "i_name", "i_price", "i_data"});
    stock_ = conn.bulk_loader(
        "stock", {"s_i_id", "s_w_id", "s_quantity", "s_dist_01", "s_dist_02", "s_dist_03",
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
      if (delivered) orders_->add_int64(rng.uniform(1, 10));
      else orders_->add_null();
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
        if (delivered) order_line_->add_text(now_);
        else order_line_->add_null();
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
    for (BulkLoader* l : {district_.get(), customer_.get(), history_.get(), orders_.get(),
                          order_line_.get()})
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
    const auto name_number =
        c <= kCustomersWithSequentialLastName ? c - 1 : nurand(rng, 255, 0, 999, c_load_.c_last);
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
    if (DbStatus s = conn_.begin(TxMode::read_write); !s.ok())
      throw BackendError("load: begin: " + s.to_string(), s.sqlstate, s.native_code);
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
    if (DbStatus s = conn_.commit(); !s.ok())
      throw BackendError("load: commit: " + s.to_string(), s.sqlstate, s.native_code);
  }

  Connection& conn_;
  Scale scale_;
  CConstants c_load_;
  std::string now_;
  std::array<std::string, 16> buffers_;  // more than the text columns of any table (STOCK: 11)
  std::size_t next_buffer_ = 0;
  std::uint64_t rows_ = 0;
  std::unique_ptr<BulkLoader> warehouse_, district_, customer_, history_, new_order_, orders_,
      order_line_, item_, stock_;
};

}  // namespace

LoadStats load_database(Backend& backend, const Scale& scale, const CConstants& c_load,
                        const Rng& rng, const std::function<void(const LoadProgress&)>& progress,
                        const std::function<bool()>& stop) {
  const std::int64_t t0 = monotonic_ns();
  LoadStats stats;
  {
    auto conn = backend.connect_for_load();
    create_schema(*conn, backend.dialect());
    write_meta(*conn, {.scale = scale, .c_load = c_load, .complete = false});

    Loader loader(*conn, scale, c_load);
    Rng item_rng = rng.split(0);
    loader.items(item_rng);
    for (int w = 1; w <= scale.warehouses; ++w) {
      // One stream per warehouse: the content of warehouse w does not depend on W.
      Rng wrng = rng.split(static_cast<std::uint64_t>(w));
      loader.warehouse_and_stock(wrng, w);
      for (int d = 1; d <= kDistrictsPerWarehouse; ++d) {
        if (stop && stop()) {
          stats.rows = loader.rows();
          stats.seconds = static_cast<double>(monotonic_ns() - t0) / 1e9;
          return stats;
        }
        loader.district(wrng, w, d);
      }
      if (progress) {
        LoadProgress p;
        p.warehouses_done = w;
        p.warehouses_total = scale.warehouses;
        p.elapsed_s = static_cast<double>(monotonic_ns() - t0) / 1e9;
        p.eta_s = p.elapsed_s / w * (scale.warehouses - w);
        progress(p);
      }
    }
    stats.rows = loader.rows();
    create_indexes(*conn);
    write_meta(*conn, {.scale = scale, .c_load = c_load, .complete = true});
  }
  backend.finish_load();
  stats.complete = true;
  stats.seconds = static_cast<double>(monotonic_ns() - t0) / 1e9;
  return stats;
}

}  // namespace drivelab::oltp::tpcc
