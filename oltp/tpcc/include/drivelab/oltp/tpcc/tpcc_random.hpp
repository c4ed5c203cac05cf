#pragma once
/// \file tpcc_random.hpp
/// The random rules of TPC-C (Standard Specification 5.11, February 2010): cardinalities,
/// NURand with its C constants, customer last names, a-strings/n-strings, and the card deck that
/// fixes the transaction mix.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/core/names.hpp"
#include "drivelab/core/rng.hpp"
#include "drivelab/oltp/backend/backend.hpp"

namespace drivelab::oltp::tpcc {

// ---- cardinalities (clause 1.2 / 4.3.3.1) -------------------------------------------------------
inline constexpr int kDistrictsPerWarehouse = 10;
inline constexpr int kCustomersPerDistrict = 3000;
inline constexpr int kOrdersPerDistrict = 3000;
inline constexpr int kItems = 100'000;  ///< also STOCK rows per warehouse
/// Orders 2,101..3,000 of each district are undelivered at load time (900 NEW-ORDER rows).
inline constexpr int kFirstUndeliveredOrder = 2101;
/// Customers 1..1,000 get last names from c_id - 1; the others from NURand(255, 0, 999).
inline constexpr int kCustomersWithSequentialLastName = 1000;

/// Database size. `items` is 100,000 in TPC-C; smaller values exist only for fast unit tests and
/// make the database not TPC-C (documented in docs/oltp-tpcc.md).
struct Scale {
  int warehouses = 1;
  int items = kItems;
};

// ---- profiles (docs/oltp-tpcc.md section 2a) --------------------------------------------------

/// Whose rules draw the inputs, the transaction mix, the terminals' warehouses and the think
/// times. tpcc: the TPC-C clauses cited in this file (the default). hammerdb: HammerDB v4.12
/// TPROC-C's driver scripts where they differ (each difference with its file:line in
/// docs/oltp-tpcc.md); everything else stays TPC-C's.
enum class Profile { tpcc, hammerdb };
inline constexpr EnumNames<Profile, 2> kProfileNames{{{"tpcc", Profile::tpcc}, {"hammerdb", Profile::hammerdb}}};
inline std::string_view to_string(Profile p) noexcept { return name_of(kProfileNames, p); }

/// HammerDB draws New-Order's item lines inside its stored procedure, and its PostgreSQL and
/// MariaDB procedures differ: oltp::HammerDbScript (backend.hpp), which the backend names
/// (Backend::hammerdb_script()).
using oltp::HammerDbScript;

/// The C of NURand(255, 0, 999, C) for C_LAST that HammerDB uses at load and at run time alike
/// (tpcccommon-1.0.tm's callers: pgoltp.tcl, mariaoltp.tcl `NURand 255 0 999 123`).
inline constexpr int kHammerDbCLast = 123;

// ---- NURand (clause 2.1.6) ----------------------------------------------------------------------

/// The run-time constant C of NURand for each of its three uses (clause 2.1.6):
/// A = 255 for C_LAST, 1023 for C_ID, 8191 for OL_I_ID; each C in [0, A].
struct CConstants {
  int c_last = 0;
  int c_id = 0;
  int ol_i_id = 0;
};

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x  (clause 2.1.6).
/// Returns a value in [x, y]; values whose bits overlap A's pattern are favoured.
std::int64_t nurand(Rng& rng, int a, std::int64_t x, std::int64_t y, int c) noexcept;

/// C-Load: constants used while populating the database (only C_LAST is used by the load).
/// Profile hammerdb: C_LAST is kHammerDbCLast.
CConstants make_c_load(Rng& rng, Profile profile = Profile::tpcc) noexcept;
/// C-Run for the measurement, chosen so that clause 2.1.6.1 holds for C_LAST:
/// delta = |C_Run - C_Load| in [65, 119], delta != 96 and delta != 112. C_ID and OL_I_ID: any
/// value in range (the load does not use them). Profile hammerdb: C_LAST is kHammerDbCLast
/// whatever C-Load is (HammerDB does not follow clause 2.1.6.1).
CConstants make_c_run(Rng& rng, const CConstants& c_load, Profile profile = Profile::tpcc) noexcept;
/// The clause 2.1.6.1 constraint on the C_LAST constants.
bool c_last_run_is_valid(int c_load, int c_run) noexcept;

// ---- strings (clause 4.3.2.2, 4.3.2.3, 4.3.2.7) -------------------------------------------------

/// Customer last name from a number in [0, 999]: the syllables BAR OUGHT ABLE PRI PRES ESE ANTI
/// CALLY ATION EING indexed by its three digits, concatenated (clause 4.3.2.3; 371 -> "PRICALLYOUGHT").
std::string last_name(int number);
/// The ten syllables, in clause order.
const std::array<std::string_view, 10>& last_name_syllables() noexcept;

/// Random a-string of random(min_len, max_len) alphanumeric characters (clause 4.3.2.2:
/// 62 characters: a-z, A-Z, 0-9), written into `out` (replaced).
void a_string(Rng& rng, int min_len, int max_len, std::string& out);
/// Random n-string of random(min_len, max_len) digits (clause 4.3.2.2).
void n_string(Rng& rng, int min_len, int max_len, std::string& out);
/// Zip code: n-string of 4 digits followed by "11111" (clause 4.3.2.7).
void zip_code(Rng& rng, std::string& out);
/// I_DATA / S_DATA: a-string of 26..50; in 10% of rows "ORIGINAL" replaces 8 characters at a
/// random position (clause 4.3.3.1).
void data_with_original(Rng& rng, std::string& out);
/// A random permutation of 1..n (O_C_ID of the initial orders, clause 4.3.3.1).
std::vector<int> permutation(Rng& rng, int n);
/// A fixed-point random number in [min, max] with `decimals` decimals, e.g. I_PRICE
/// random(1.00, 100.00): drawn uniformly as an integer count of hundredths, so every value the
/// column can hold is equally likely (the spec's "random within [x .. y]" at the column's
/// precision).
double fixed_point(Rng& rng, double min, double max, int decimals) noexcept;

// ---- transaction mix (clause 5.2.4) -------------------------------------------------------------

enum class TxType { new_order, payment, order_status, delivery, stock_level };
inline constexpr int kTxTypes = 5;
inline constexpr std::array<TxType, kTxTypes> kAllTxTypes{TxType::new_order, TxType::payment, TxType::order_status,
                                                          TxType::delivery, TxType::stock_level};
/// "new_order", "payment", "order_status", "delivery", "stock_level".
std::string_view to_string(TxType t) noexcept;

/// HammerDB's mix: every transaction draws RandomNumber 1 23 on its own (no deck): 1-10
/// New-Order, 11-20 Payment, 21 Delivery, 22 Stock-Level, 23 Order-Status (pgoltp.tcl 3221-3242,
/// mariaoltp.tcl 2529-2550). The shares are the deck's, but a run of 23 can hold any counts.
TxType hammerdb_transaction(Rng& rng) noexcept;

/// A card deck (the selection method clause 5.2.4 permits for the minimum mix of 5.2.4.2): 23 cards,
/// 10 New-Order, 10 Payment, 1 Order-Status, 1 Delivery, 1 Stock-Level, shuffled again after
/// every 23 draws. Mix: 43.48% / 43.48% / 4.35% / 4.35% / 4.35% — each of Payment, Order-Status,
/// Delivery and Stock-Level is at or above its minimum (43%, 4%, 4%, 4%) in every 23 transactions,
/// and New-Order takes the rest. One deck per terminal.
class Deck {
 public:
  static constexpr int kCards = 23;
  static constexpr std::array<int, kTxTypes> kCardsPerType{10, 10, 1, 1, 1};

  Deck();
  TxType draw(Rng& rng) noexcept;

 private:
  std::array<TxType, kCards> cards_;
  int next_ = kCards;  // shuffle on first draw
};

/// Clause 5.2.4.2's minimum shares of the completed transactions, in % per TxType: Payment 43%,
/// Order-Status, Delivery, Stock-Level 4% each; New-Order none (it is the rest).
inline constexpr std::array<double, kTxTypes> kMinMixPct{0, 43, 4, 4, 4};

/// A type whose measured share is below its clause 5.2.4.2 minimum (mix_shortfalls).
struct MixShortfall {
  TxType type = TxType::payment;
  std::uint64_t count = 0;  ///< its completed transactions
  double pct = 0;           ///< its share of all completed transactions
  double min_pct = 0;       ///< kMinMixPct
};

/// The types of `completed` (completed transactions per TxType: commits + business rollbacks)
/// whose share is below kMinMixPct by more than `terminals` decks can explain. Each terminal's
/// completed transactions are whole decks between a partial deck at the start of the measured
/// phase and one at its end; a partial deck of h cards can hold no card of a type with k cards per
/// deck when h <= 23 - k, so one terminal can fall short of the share k/23 by at most
/// 2 k (23 - k) / 23 transactions (11.3 Payments, 1.9 of a one-card type). A count below
/// min% x completed - terminals x that is not the deck's doing: transactions of the type failed
/// or never ran. `terminals` = 0 judges the shares as they are (HammerDB's independent draw,
/// which promises no minimum). Empty when nothing completed.
std::vector<MixShortfall> mix_shortfalls(const std::array<std::uint64_t, kTxTypes>& completed, int terminals);

/// For independent draws with HammerDB's odds (hammerdb_transaction: 10/23 Payment, 1/23 each of
/// the small types, 43.5% and 4.3%, barely above the minimums): the shortfalls of
/// mix_shortfalls(completed, 0) whose count is also more than 3 standard deviations of the
/// binomial count below the type's expected count (p x completed). A correct run misses a
/// minimum by chance alone in about one run of four at 10,000 transactions; this far below its
/// odds, chance does not explain it (p < 0.0014 per type): the type's transactions failed or
/// never ran.
std::vector<MixShortfall> mix_shortfalls_beyond_chance(const std::array<std::uint64_t, kTxTypes>& completed);

}  // namespace drivelab::oltp::tpcc
