#include "drivelab/oltp/tpcc/tpcc_config.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/oltp/tpcc/tpcc_schema.hpp"

namespace drivelab::oltp::tpcc {

int default_connections(int users, int cpus) noexcept { return std::min(users, std::max(8, 4 * std::max(cpus, 1))); }

TpccConfig decode_tpcc_config(const config::Node& section, int cpus) {
  if (cpus <= 0) cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  TpccConfig c;
  config::MapReader r(section);
  decode_database(r, section, c.database);
  r.integer("warehouses", c.warehouses, {.min = 1, .max = 100'000});
  r.integer("users", c.users, {.min = 1, .max = 100'000});
  r.choice("think", c.think, kThinkModeNames);
  r.choice("profile", c.profile, kProfileNames);
  const bool has_all_warehouses = r.boolean("all_warehouses", c.all_warehouses);
  const bool has_terminals = r.choice("terminals", c.terminals, kTerminalModeNames);
  const bool has_connections = r.integer("connections", c.connections, {.min = 1, .max = 100'000});
  bool has_rate = false;
  if (const config::Node rate = section.defined() ? section.child("rate") : section;
      rate.defined() && rate.is_scalar() && rate.scalar() == "curve") {
    r.accept("rate");
    c.rate_curve = has_rate = true;
  } else {
    has_rate = r.number("rate", c.rate_per_s, {.min = 0.001, .max = 10'000'000.0});
  }
  if (const config::Node curve = r.section("curve"); curve.defined()) {
    if (std::vector<double> pts = runner::decode_curve(curve); !pts.empty()) c.curve = std::move(pts);
  }
  // `slo: {new_order_p99_ms: 10, p90_ms: 50}`: <type>_p<N>_ms or p<N>_ms.
  const config::Node slo = r.section("slo");
  c.slo = runner::decode_slo(slo, kSloSubjects,
                             ": <type>_p<N>_ms (type new_order, payment, order_status, delivery, stock_level) or "
                             "p<N>_ms for all types, N 90, 95 or 99; e.g. {new_order_p99_ms: 10}");
  const bool has_login_rate = r.number("login_rate", c.login_rate_per_s, {.min = 0.0, .max = 100'000.0});
  const bool has_think_scale = r.number("think_scale", c.think_scale, {.min = 1e-6, .max = 1.0});
  const bool has_transactions = r.choice("transactions", c.transactions, kTxProtocolNames);
  r.duration("reconnect_timeout", c.reconnect_timeout,
             {.min = std::chrono::milliseconds(100), .max = std::chrono::hours(1)});
  decode_failure_bound(r, c.failure_bound);
  r.boolean("reuse", c.reuse);
  r.boolean("keep_database", c.keep_database);
  r.boolean("shared_database", c.shared_database);
  const bool has_load_threads = r.integer("load_threads", c.load_threads, {.min = 1, .max = 1024});
  r.integer("scale_items", c.scale_items, {.min = 100, .max = kItems});
  r.finish();

  if (std::string w = runner::slo_without_curve_warning(slo, c.rate_curve); !w.empty()) c.warnings.push_back(w);
  if (c.users == 0) c.users = 10 * c.warehouses;
  if (has_all_warehouses && c.all_warehouses && c.profile != Profile::hammerdb) {
    section.child("all_warehouses")
        .error(
            "all_warehouses is HammerDB's option (each terminal draws its warehouse before every transaction); it "
            "needs profile: hammerdb (TPC-C keeps a terminal on its home warehouse, clause 2.4.1.1)");
    c.all_warehouses = false;
  }
  if (!has_terminals)
    c.terminals = (c.think == ThinkMode::tpcc || has_rate) ? TerminalMode::pooled : TerminalMode::dedicated;
  const bool pooled = c.terminals == TerminalMode::pooled;

  if (has_rate && c.think == ThinkMode::tpcc) {
    section.child("rate").error(
        "rate (open loop: arrivals at a fixed mean rate) and think: tpcc (closed loop: each terminal "
        "waits for its response and thinks) exclude each other");
    c.rate_per_s = 0;
    c.rate_curve = false;
  } else if (has_rate && !pooled) {
    section.child("rate").error("rate needs terminals: pooled (arrivals are queued to the pool of connections)");
    c.rate_per_s = 0;
    c.rate_curve = false;
  }
  if (has_connections && !pooled) {
    section.child("connections")
        .error("connections sizes the pool of terminals: pooled; terminals: dedicated opens one per user");
  } else if (has_connections && c.rate_per_s == 0 && c.connections > c.users) {
    section.child("connections")
        .error(fmt::format("connections ({}) must not exceed users ({}): a closed-loop terminal has at most one "
                           "transaction in flight, so the extra connections would never be used",
                           c.connections, c.users));
    c.connections = c.users;
  }
  if (!has_connections || !pooled) c.connections = pooled ? default_connections(c.users, cpus) : c.users;
  // HammerDB starts a virtual user every repeat_delay = 500 ms (genvu.tcl 506, 518-523).
  if (!has_login_rate && c.profile == Profile::hammerdb) c.login_rate_per_s = kHammerDbLoginRatePerS;
  if (has_login_rate && pooled)
    section.child("login_rate")
        .error(
            "login_rate staggers the logins of terminals: dedicated; the pool of terminals: pooled "
            "connects at once");
  if (has_think_scale && c.think != ThinkMode::tpcc) {
    section.child("think_scale").error("think_scale scales the keying and think times of think: tpcc");
    c.think_scale = 1.0;
  }

  // Procedures exist for the native PostgreSQL and MySQL/MariaDB backends (HammerDB's default
  // there); SQLite has no stored procedures and the ODBC path runs portable statements.
  const Capabilities can = capabilities_of(c.database.backend);
  const bool has_procs = can.server_procedures;
  if (!has_transactions) {
    c.transactions = has_procs ? TxProtocol::procedures : TxProtocol::statements;
  } else if (c.transactions == TxProtocol::procedures && !has_procs) {
    section.child("transactions")
        .error(fmt::format("transactions: procedures needs backend: postgres or mysql (server-side functions); "
                           "the {} backend runs transactions: statements",
                           to_string(c.database.backend)));
    c.transactions = TxProtocol::statements;
  }

  // One loader where writers are serialised (SQLite's single writer).
  if (has_load_threads && can.serialized_writers && c.load_threads != 1) {
    section.child("load_threads")
        .error(fmt::format("load_threads must be 1 with the {} backend (SQLite has a single writer)",
                           to_string(c.database.backend)));
    c.load_threads = 1;
  }
  if (!has_load_threads || c.load_threads == 0)
    c.load_threads = can.serialized_writers ? 1 : std::min(c.warehouses, 2 * cpus);

  if (c.shared_database && c.database.connection.empty())
    section.child("shared_database")
        .error(
            "shared_database needs an existing server that every rank reaches: server.connection (a managed server "
            "or an SQLite file is one rank's own)");

  // A managed server's max_connections must hold every session the run opens at once.
  check_max_connections_key(
      section, c.database, c.connections,
      load_threads_used(c.load_threads, {.warehouses = c.warehouses, .items = c.scale_items}, can),
      pooled ? "pooled connections" : "dedicated terminals");
  return c;
}

results::Json to_json(const TpccConfig& c) {
  results::Json j = to_json(c.database);
  j["warehouses"] = c.warehouses;
  j["users"] = c.users;
  j["think"] = to_string(c.think);
  // Only when not the default, so the records of TPC-C runs keep their keys.
  if (c.profile != Profile::tpcc) j["profile"] = to_string(c.profile);
  if (c.all_warehouses) j["all_warehouses"] = true;
  j["terminals"] = to_string(c.terminals);
  j["connections"] = c.connections;
  runner::rate_to_json(j, c.rate_per_s, c.rate_curve, c.curve, c.slo);
  if (c.terminals == TerminalMode::dedicated) j["login_rate"] = c.login_rate_per_s;
  if (c.think == ThinkMode::tpcc) j["think_scale"] = c.think_scale;
  j["transactions"] = to_string(c.transactions);
  j["reconnect_timeout"] = format_duration(c.reconnect_timeout);
  j["failure_bound"] = to_json(c.failure_bound);
  j["reuse"] = c.reuse;
  j["keep_database"] = c.keep_database;
  if (c.shared_database) j["shared_database"] = true;
  j["load_threads"] = c.load_threads;
  j["scale_items"] = c.scale_items;
  return j;
}

}  // namespace drivelab::oltp::tpcc
