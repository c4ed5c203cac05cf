#pragma once
/// \file tpcc_config.hpp
/// The `tpcc:` section of a test (kind: tpcc). Every key, its default and its range:
///
///   backend:       sqlite                 only sqlite is built; postgres, mysql, odbc are planned
///                                         and rejected with "backend 'postgres' is not built yet"
///   warehouses:    1                      >= 1 (database ~86 MB per warehouse with SQLite)
///   users:         10 x warehouses        >= 1 terminals (threads, one connection each)
///   think:         none                   none | tpcc (clause 5.2.5 keying + think times)
///   journal_mode:  WAL                    SQLite journal: WAL | DELETE | TRUNCATE | PERSIST | MEMORY | OFF
///   synchronous:   FULL                   SQLite: OFF | NORMAL | FULL | EXTRA (FULL: every commit
///                                         is flushed to the drive)
///   cache_size:    64MiB                  SQLite page cache per connection (a size; >= 1MiB)
///   busy_timeout:  5s                     longest wait for SQLite's writer lock before a retry
///   reuse:         false                  keep a complete database of the same scale from a
///                                         previous run instead of rebuilding it (checked)
///   keep_database: false                  leave the database in the target after the test
///   load_threads:  1                      loader threads (SQLite: must be 1, one writer)
///   scale_items:   100000                 TESTING ONLY, NOT TPC-C: rows of ITEM and STOCK per
///                                         warehouse; anything but 100000 is flagged in the record
#include <chrono>
#include <cstdint>
#include <string>

#include "drivelab/config/yaml.hpp"
#include "drivelab/oltp/tpcc_driver.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::oltp::tpcc {

struct TpccConfig {
  std::string backend = "sqlite";
  int warehouses = 1;
  int users = 0;  ///< 0 in the file means "default": resolved to 10 x warehouses by decode
  ThinkMode think = ThinkMode::none;
  std::string journal_mode = "WAL";
  std::string synchronous = "FULL";
  std::uint64_t cache_size_bytes = 64ull << 20;
  std::chrono::nanoseconds busy_timeout = std::chrono::seconds(5);
  bool reuse = false;
  bool keep_database = false;
  int load_threads = 1;
  int scale_items = kItems;
};

/// Decodes `section` (undefined: all defaults). Problems go to section.diagnostics(); the
/// returned config holds defaults where a key was invalid.
TpccConfig decode_tpcc_config(const config::Node& section);

/// The effective configuration (every key, defaults resolved) for the result record.
results::Json to_json(const TpccConfig& c);

}  // namespace drivelab::oltp::tpcc
