// The OLTP kinds of drivelab (register.hpp): one place that lists them.
#include "drivelab/oltp/register.hpp"

#include "drivelab/oltp/sysbench/sysbench_config.hpp"
#include "drivelab/oltp/tpcc/tpcc_config.hpp"
#include "drivelab/runner/emulator_type.hpp"

namespace drivelab::oltp {

void register_emulators(runner::Registry& registry) {
  registry.add(runner::emulator_type(
      "tpcc",
      "TPC-C-like OLTP (New-Order, Payment, Order-Status, Delivery, Stock-Level) on SQLite, PostgreSQL, "
      "MySQL/MariaDB or ODBC: tpmC/NOPM, TPS, response times (queue wait + service)",
      [](const config::Node& section) { return tpcc::decode_tpcc_config(section); }, tpcc::make_tpcc_emulator));
  registry.add(runner::emulator_type(
      "sysbench",
      "sysbench 1.0.20-compatible OLTP (oltp_read_write, oltp_read_only, oltp_write_only) on SQLite, "
      "PostgreSQL or MySQL/MariaDB: TPS, QPS r/w/o, p95/p99 latency, err/s, reconn/s",
      sysbench::decode_sysbench_config, sysbench::make_sysbench_emulator));
}

}  // namespace drivelab::oltp
