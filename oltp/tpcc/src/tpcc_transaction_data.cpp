// The inputs of the five TPC-C transactions (clauses 2.4.1-2.8.1), drawn for one terminal.
#include "drivelab/oltp/tpcc/tpcc_transaction_data.hpp"

#include <algorithm>

namespace drivelab::oltp::tpcc {

int InputGenerator::remote_warehouse(Rng& rng, int home) const {
  // Uniform over the other W - 1 warehouses.
  auto w = static_cast<int>(rng.uniform(1, scale_.warehouses - 1));
  return w >= home ? w + 1 : w;
}

int InputGenerator::customer_id(Rng& rng) const {
  // HammerDB: RandomNumber 1 3000 (pgoltp.tcl 3014, 3060, 3102; mariaoltp.tcl 2341, 2386, 2426).
  if (profile_ == Profile::hammerdb) return static_cast<int>(rng.uniform(1, kCustomersPerDistrict));
  return static_cast<int>(nurand(rng, 1023, 1, kCustomersPerDistrict, c_.c_id));
}

void InputGenerator::choose_customer(Rng& rng, bool& by_last_name, std::string& c_last, int& c_id) const {
  by_last_name = rng.uniform(1, 100) <= 60;
  if (by_last_name)
    c_last = last_name(static_cast<int>(nurand(rng, 255, 0, 999, c_.c_last)));
  else
    c_id = customer_id(rng);
}

NewOrderInput InputGenerator::new_order(Rng& rng, int w_id) const {
  const bool hdb = profile_ == Profile::hammerdb;
  const bool maria = script_ == HammerDbScript::mariadb;
  const int w = scale_.warehouses;
  NewOrderInput in;
  in.w_id = w_id;
  in.d_id = static_cast<int>(rng.uniform(1, kDistrictsPerWarehouse));
  in.c_id = customer_id(rng);
  in.ol_cnt = static_cast<int>(rng.uniform(5, 15));
  // HammerDB: rbk := DBMS_RANDOM(1,100) (pgoltp.tcl 1050); rbk = FLOOR(1 + RAND() * 99) (mariaoltp.tcl 102).
  in.will_roll_back = rng.uniform(1, hdb && maria ? 99 : 100) == 1;
  for (int i = 0; i < in.ol_cnt; ++i) {
    auto& line = in.lines[static_cast<std::size_t>(i)];
    if (hdb) {
      // pgoltp.tcl 1058-1071, mariaoltp.tcl 109-122: uniform items; 1% remote lines whatever W.
      line.i_id = static_cast<int>(rng.uniform(1, scale_.items));
      const bool remote = rng.uniform(1, 100) == 1;
      if (!remote)
        line.supply_w_id = w_id;
      else if (maria)
        line.supply_w_id = w > 1 ? remote_warehouse(rng, w_id) : w_id;
      else
        line.supply_w_id = 1 + static_cast<int>((w_id + rng.uniform(0, w - 1)) % w);
    } else {
      line.i_id = static_cast<int>(nurand(rng, 8191, 1, scale_.items, c_.ol_i_id));
      const bool remote = rng.uniform(1, 100) == 1 && w > 1;
      line.supply_w_id = remote ? remote_warehouse(rng, w_id) : w_id;
    }
    line.quantity = static_cast<int>(rng.uniform(1, 10));
  }
  // Clause 2.4.1.4: an "unused" item id makes the last line fail and the order roll back.
  if (in.will_roll_back) in.lines[static_cast<std::size_t>(in.ol_cnt - 1)].i_id = scale_.items + 1;
  return in;
}

PaymentInput InputGenerator::payment(Rng& rng, int w_id) const {
  PaymentInput in;
  in.w_id = w_id;
  in.d_id = static_cast<int>(rng.uniform(1, kDistrictsPerWarehouse));
  const bool hdb = profile_ == Profile::hammerdb;
  // HammerDB (pgoltp.tcl 3047-3057): the remote branch is taken 15% of the time even when W = 1,
  // where its warehouse loop ends at once on the home warehouse and only the district is random.
  const bool home = rng.uniform(1, 100) <= 85 || (!hdb && scale_.warehouses == 1);
  if (home) {
    in.c_w_id = w_id;
    in.c_d_id = in.d_id;
  } else {
    in.c_d_id = static_cast<int>(rng.uniform(1, kDistrictsPerWarehouse));
    in.c_w_id = scale_.warehouses > 1 ? remote_warehouse(rng, w_id) : w_id;
  }
  choose_customer(rng, in.by_last_name, in.c_last, in.c_id);
  // HammerDB: RandomNumber 1 5000, whole units (pgoltp.tcl 3071, mariaoltp.tcl 2397).
  in.h_amount = hdb ? static_cast<double>(rng.uniform(1, 5'000)) : fixed_point(rng, 1.00, 5'000.00, 2);
  return in;
}

OrderStatusInput InputGenerator::order_status(Rng& rng, int w_id) const {
  OrderStatusInput in;
  in.w_id = w_id;
  in.d_id = static_cast<int>(rng.uniform(1, kDistrictsPerWarehouse));
  choose_customer(rng, in.by_last_name, in.c_last, in.c_id);
  return in;
}

DeliveryInput InputGenerator::delivery(Rng& rng, int w_id) const {
  return {.w_id = w_id, .o_carrier_id = static_cast<int>(rng.uniform(1, 10))};
}

StockLevelInput InputGenerator::stock_level(Rng& rng, int w_id, int d_id) const {
  return {.w_id = w_id, .d_id = d_id, .threshold = static_cast<int>(rng.uniform(10, 20))};
}

TerminalHome TerminalHome::make(Profile profile, bool all_warehouses, int number, int job_users, int warehouses,
                                Rng& rng) {
  TerminalHome h;
  h.warehouses_ = warehouses;
  if (profile == Profile::hammerdb) {
    // pgoltp.tcl 3212, 3216 (mariaoltp.tcl 2522, 2524): RandomNumber 1 max(w_id), 1 max(d_id).
    h.w_id_ = static_cast<int>(rng.uniform(1, warehouses));
    h.d_id_ = static_cast<int>(rng.uniform(1, kDistrictsPerWarehouse));
    if (all_warehouses) {
      // gentpcc.tcl 9-22: myWarehouses = ((j + k V) mod W) + 1, k < ceil(W / V), j = myposition - 2.
      const int v = std::max(job_users, 1);
      h.all_first_ = number % v;
      h.all_step_ = v;
      h.all_count_ = (warehouses + v - 1) / v;
    }
  } else {
    h.w_id_ = (number % warehouses) + 1;
    h.d_id_ = ((number / warehouses) % kDistrictsPerWarehouse) + 1;
  }
  return h;
}

int TerminalHome::warehouse(Rng& rng) const noexcept {
  if (all_count_ == 0) return w_id_;
  // gentpcc.tcl 27: lindex $myWarehouses [RandomNumber 1 $myWhCount] - 1, before each transaction.
  const auto k = rng.uniform(0, all_count_ - 1);
  return static_cast<int>((all_first_ + k * all_step_) % warehouses_) + 1;
}

bool all_local(const NewOrderInput& in) noexcept {
  bool local = true;
  for (int i = 0; i < in.ol_cnt; ++i) local = local && in.lines[static_cast<std::size_t>(i)].supply_w_id == in.w_id;
  return local;
}

}  // namespace drivelab::oltp::tpcc
