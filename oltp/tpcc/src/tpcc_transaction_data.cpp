// The inputs of the five TPC-C transactions (clauses 2.4.1-2.8.1), drawn for one terminal.
#include "drivelab/oltp/tpcc/tpcc_transaction_data.hpp"

namespace drivelab::oltp::tpcc {

int InputGenerator::remote_warehouse(Rng& rng, int home) const {
  // Uniform over the other W - 1 warehouses.
  auto w = static_cast<int>(rng.uniform(1, scale_.warehouses - 1));
  return w >= home ? w + 1 : w;
}

void InputGenerator::choose_customer(Rng& rng, bool& by_last_name, std::string& c_last, int& c_id) const {
  by_last_name = rng.uniform(1, 100) <= 60;
  if (by_last_name) c_last = last_name(static_cast<int>(nurand(rng, 255, 0, 999, c_.c_last)));
  else c_id = static_cast<int>(nurand(rng, 1023, 1, kCustomersPerDistrict, c_.c_id));
}

NewOrderInput InputGenerator::new_order(Rng& rng, int w_id) const {
  NewOrderInput in;
  in.w_id = w_id;
  in.d_id = static_cast<int>(rng.uniform(1, kDistrictsPerWarehouse));
  in.c_id = static_cast<int>(nurand(rng, 1023, 1, kCustomersPerDistrict, c_.c_id));
  in.ol_cnt = static_cast<int>(rng.uniform(5, 15));
  in.will_roll_back = rng.uniform(1, 100) == 1;
  for (int i = 0; i < in.ol_cnt; ++i) {
    auto& line = in.lines[static_cast<std::size_t>(i)];
    line.i_id = static_cast<int>(nurand(rng, 8191, 1, scale_.items, c_.ol_i_id));
    const bool remote = rng.uniform(1, 100) == 1 && scale_.warehouses > 1;
    line.supply_w_id = remote ? remote_warehouse(rng, w_id) : w_id;
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
  const bool home = rng.uniform(1, 100) <= 85 || scale_.warehouses == 1;
  if (home) {
    in.c_w_id = w_id;
    in.c_d_id = in.d_id;
  } else {
    in.c_d_id = static_cast<int>(rng.uniform(1, kDistrictsPerWarehouse));
    in.c_w_id = remote_warehouse(rng, w_id);
  }
  choose_customer(rng, in.by_last_name, in.c_last, in.c_id);
  in.h_amount = fixed_point(rng, 1.00, 5'000.00, 2);
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

bool all_local(const NewOrderInput& in) noexcept {
  bool local = true;
  for (int i = 0; i < in.ol_cnt; ++i) local = local && in.lines[static_cast<std::size_t>(i)].supply_w_id == in.w_id;
  return local;
}

}  // namespace drivelab::oltp::tpcc
