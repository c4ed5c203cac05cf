#pragma once
/// \file tpcc_transaction_data.hpp
/// What goes into and comes out of the five TPC-C transactions, whichever way they reach the
/// database (tpcc_transactions.hpp): the inputs a terminal keys in (clauses 2.4.1, 2.5.1, 2.6.1,
/// 2.7.1, 2.8.1) and their generator, the outputs a terminal would display, and how a
/// transaction ended (TxResult).
#include <array>
#include <string>

#include "drivelab/core/rng.hpp"
#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/tpcc/tpcc_random.hpp"

namespace drivelab::oltp::tpcc {

// ---- inputs (clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1) -----------------------------------------

/// One item line of a New-Order.
struct OrderLineInput {
  int i_id = 0;
  int supply_w_id = 0;
  int quantity = 0;
};

struct NewOrderInput {
  int w_id = 0, d_id = 0, c_id = 0;
  int ol_cnt = 0;                          ///< 5..15
  std::array<OrderLineInput, 15> lines{};  ///< first ol_cnt are used
  bool will_roll_back = false;             ///< last line names an unused item (2.4.1.4)
};

struct PaymentInput {
  int w_id = 0, d_id = 0;
  int c_w_id = 0, c_d_id = 0;
  bool by_last_name = false;
  int c_id = 0;         ///< when !by_last_name
  std::string c_last;   ///< when by_last_name
  double h_amount = 0;  ///< 1.00 .. 5,000.00
};

struct OrderStatusInput {
  int w_id = 0, d_id = 0;
  bool by_last_name = false;
  int c_id = 0;
  std::string c_last;
};

struct DeliveryInput {
  int w_id = 0;
  int o_carrier_id = 0;  ///< 1..10
};

struct StockLevelInput {
  int w_id = 0, d_id = 0;
  int threshold = 0;  ///< 10..20
};

/// Draws transaction inputs for one terminal. `c_run` are the run's NURand constants (shared by
/// every terminal of the run); `scale` bounds the ids. `profile` chooses whose rules draw them
/// (tpcc_random.hpp): the rules below are TPC-C's; with Profile::hammerdb each "hammerdb:" rule
/// replaces the one before it (HammerDB v4.12 pgoltp.tcl / mariaoltp.tcl, docs/oltp-tpcc.md 2a).
class InputGenerator {
 public:
  InputGenerator(const Scale& scale, const CConstants& c_run, Profile profile = Profile::tpcc,
                 HammerDbScript script = HammerDbScript::postgresql)
      : scale_(scale), c_(c_run), profile_(profile), script_(script) {}

  /// Clause 2.4.1: d_id random(1,10); c_id NURand(1023,1,3000); ol_cnt random(5,15); 1% of
  /// orders roll back (unused item id on the last line); each line: i_id NURand(8191,1,items),
  /// supplied by a remote warehouse with probability 1% when W > 1, quantity random(1,10).
  /// hammerdb: c_id random(1,3000); i_id random(1,items); rollback 1 in 100 (postgresql) or
  /// 1 in 99 (mariadb); a line is remote with probability 1% whatever W, its warehouse
  /// 1 + (w + random(0,W-1)) mod W, any of the W (postgresql), or random over the other W - 1,
  /// home when W = 1 (mariadb).
  NewOrderInput new_order(Rng& rng, int w_id) const;
  /// Clause 2.5.1: 85% home / 15% remote customer (remote only when W > 1; remote district
  /// random(1,10)); 60% by last name (NURand(255,0,999)), 40% by id (NURand(1023,1,3000));
  /// h_amount random(1.00, 5,000.00). hammerdb: 15% remote also when W = 1 (then the home
  /// warehouse with a random district); c_id random(1,3000); h_amount a whole number random(1,5000).
  PaymentInput payment(Rng& rng, int w_id) const;
  /// Clause 2.6.1: d_id random(1,10); 60% by last name, 40% by id (hammerdb: c_id random(1,3000)).
  OrderStatusInput order_status(Rng& rng, int w_id) const;
  /// Clause 2.7.1: o_carrier_id random(1,10).
  DeliveryInput delivery(Rng& rng, int w_id) const;
  /// Clause 2.8.1: d_id fixed per terminal; threshold random(10,20).
  StockLevelInput stock_level(Rng& rng, int w_id, int d_id) const;

  const Scale& scale() const noexcept { return scale_; }
  Profile profile() const noexcept { return profile_; }

 private:
  int remote_warehouse(Rng& rng, int home) const;
  /// C_ID of New-Order, Payment and Order-Status: NURand(1023,1,3000); hammerdb: random(1,3000).
  int customer_id(Rng& rng) const;
  /// 60% by last name (NURand(255,0,999)), 40% by id (customer_id): Payment and Order-Status
  /// choose their customer alike (clauses 2.5.1.2, 2.6.1.2).
  void choose_customer(Rng& rng, bool& by_last_name, std::string& c_last, int& c_id) const;
  Scale scale_;
  CConstants c_;
  Profile profile_;
  HammerDbScript script_;
};

/// Where a terminal works: its home warehouse and its Stock-Level district (clause 4.2.2
/// placement, tpcc_driver.hpp), or HammerDB's choices: a virtual user's home warehouse and
/// district are random(1,W) and random(1,10) (pgoltp.tcl 3212, 3216); with HammerDB's
/// all-warehouses option (gentpcc.tcl 7-28) virtual user j (0-based) of V owns the warehouses
/// ((j + k V) mod W) + 1 for k = 0 .. ceil(W / V) - 1 and draws one of them before every
/// transaction.
class TerminalHome {
 public:
  /// Terminal `number` (0-based, of the job's `job_users`) of a run with `warehouses`; draws
  /// from `rng` (the terminal's own stream) only under Profile::hammerdb.
  static TerminalHome make(Profile profile, bool all_warehouses, int number, int job_users, int warehouses, Rng& rng);
  /// The warehouse of the next transaction: the home warehouse, or with all-warehouses a draw.
  int warehouse(Rng& rng) const noexcept;
  int home_w_id() const noexcept { return w_id_; }
  int stock_level_d_id() const noexcept { return d_id_; }
  /// With all-warehouses: how many warehouses this terminal draws from (0 otherwise).
  int owned_warehouses() const noexcept { return all_count_; }

 private:
  int w_id_ = 1, d_id_ = 1;
  int warehouses_ = 1;
  int all_first_ = 0, all_step_ = 1, all_count_ = 0;
};

// ---- outputs (what the terminal would display; used by tests) ----------------------------------

struct NewOrderOutput {
  int o_id = 0;
  bool all_local = true;
  double total_amount = 0;  ///< sum(ol_amount) * (1 - c_discount) * (1 + w_tax + d_tax)
  int brand_generic_b = 0;  ///< lines marked 'B' (both I_DATA and S_DATA contain "ORIGINAL")
};

struct PaymentOutput {
  int c_id = 0;
  std::string c_credit;
  double c_balance = 0;  ///< after the payment
};

struct OrderStatusOutput {
  int c_id = 0;
  double c_balance = 0;
  int o_id = 0;
  int o_carrier_id = 0;  ///< 0 when not delivered
  int lines = 0;
};

struct DeliveryOutput {
  int delivered = 0;  ///< districts whose oldest undelivered order was delivered
  int skipped = 0;    ///< districts without an undelivered order (clause 2.7.4.2 note)
};

struct StockLevelOutput {
  int low_stock = 0;
};

// ---- how a transaction ended --------------------------------------------------------------------

/// committed    done;
/// rolled_back  the business rollback of New-Order (clause 2.4.1.4: 1% of orders name an unused
///              item on their last line); the transaction has been rolled back;
/// failed       a database call failed; TxResult::status says how (retryable / in_doubt / fatal).
enum class TxEnd { committed, rolled_back, failed };

struct TxResult {
  TxEnd end = TxEnd::committed;
  DbStatus status;  ///< meaningful when end == failed
};

/// all_local of a New-Order: every line is supplied by the home warehouse (O_ALL_LOCAL).
bool all_local(const NewOrderInput& in) noexcept;

}  // namespace drivelab::oltp::tpcc
