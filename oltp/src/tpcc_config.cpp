#include "drivelab/oltp/tpcc_config.hpp"

#include <fmt/format.h>

#include "drivelab/core/units.hpp"
#include "drivelab/oltp/sqlite_backend.hpp"

namespace drivelab::oltp::tpcc {

TpccConfig decode_tpcc_config(const config::Node& section) {
  TpccConfig c;
  config::MapReader r(section);
  if (r.string("backend", c.backend)) {
    if (c.backend == "postgres" || c.backend == "mysql" || c.backend == "odbc") {
      section.child("backend").error(fmt::format(
          "backend '{}' is not built yet (this version has: sqlite)", c.backend));
      c.backend = "sqlite";
    } else if (c.backend != "sqlite") {
      section.child("backend").error(fmt::format(
          "unknown backend '{}' (choices: sqlite; planned: postgres, mysql, odbc)", c.backend));
      c.backend = "sqlite";
    }
  }
  r.integer("warehouses", c.warehouses, {.min = 1, .max = 100'000});
  r.integer("users", c.users, {.min = 1, .max = 100'000});
  r.choice("think", c.think, {{"none", ThinkMode::none}, {"tpcc", ThinkMode::tpcc}});
  if (r.string("journal_mode", c.journal_mode) && !is_valid_journal_mode(c.journal_mode)) {
    section.child("journal_mode").error(fmt::format(
        "'{}' is not a journal mode (choices: WAL, DELETE, TRUNCATE, PERSIST, MEMORY, OFF)",
        c.journal_mode));
    c.journal_mode = "WAL";
  }
  if (r.string("synchronous", c.synchronous) && !is_valid_synchronous(c.synchronous)) {
    section.child("synchronous").error(fmt::format(
        "'{}' is not a synchronous level (choices: OFF, NORMAL, FULL, EXTRA)", c.synchronous));
    c.synchronous = "FULL";
  }
  r.size("cache_size", c.cache_size_bytes, {.min = 1ull << 20, .max = 1ull << 40});
  r.duration("busy_timeout", c.busy_timeout,
             {.min = std::chrono::milliseconds(1), .max = std::chrono::hours(1)});
  r.boolean("reuse", c.reuse);
  r.boolean("keep_database", c.keep_database);
  if (r.integer("load_threads", c.load_threads, {.min = 1, .max = 1024}) && c.backend == "sqlite" &&
      c.load_threads != 1) {
    section.child("load_threads").error(
        "load_threads must be 1 with the sqlite backend (SQLite has a single writer)");
    c.load_threads = 1;
  }
  r.integer("scale_items", c.scale_items, {.min = 100, .max = kItems});
  r.finish();
  if (c.users == 0) c.users = 10 * c.warehouses;
  return c;
}

results::Json to_json(const TpccConfig& c) {
  return results::Json{
      {"backend", c.backend},
      {"warehouses", c.warehouses},
      {"users", c.users},
      {"think", c.think == ThinkMode::tpcc ? "tpcc" : "none"},
      {"journal_mode", c.journal_mode},
      {"synchronous", c.synchronous},
      {"cache_size", format_size(c.cache_size_bytes)},
      {"busy_timeout", format_duration(c.busy_timeout)},
      {"reuse", c.reuse},
      {"keep_database", c.keep_database},
      {"load_threads", c.load_threads},
      {"scale_items", c.scale_items},
  };
}

}  // namespace drivelab::oltp::tpcc
