// The OLTP kinds of drivelab (register.hpp): one place that lists them.
#include "drivelab/oltp/register.hpp"

#include "drivelab/oltp/sysbench/sysbench_config.hpp"
#include "drivelab/oltp/tpcc/tpcc_config.hpp"
#include "drivelab/runner/curve.hpp"
#include "drivelab/runner/emulator_type.hpp"

namespace drivelab::oltp {

namespace {

/// `decode` then `make`, as runner::emulator_type, refusing at its key an open-loop rate that
/// expects fewer than one arrival in the test's measured time (runner::check_rate_for_duration).
template <class Decode, class Make>
runner::EmulatorType oltp_type(std::string kind, std::string summary, Decode decode, Make make) {
  return {std::move(kind), std::move(summary),
          [decode, make](const config::Node& section,
                         const runner::TestSettings& settings) -> std::unique_ptr<runner::Emulator> {
            auto config = decode(section);
            runner::check_rate_for_duration(section, config.rate_per_s, settings);
            return make(std::move(config), settings);
          }};
}

}  // namespace

void register_emulators(runner::Registry& registry) {
  registry.add(oltp_type(
      "tpcc",
      "TPC-C-like OLTP (New-Order, Payment, Order-Status, Delivery, Stock-Level) on SQLite, PostgreSQL, "
      "MySQL/MariaDB or ODBC: tpmC/NOPM, TPS, response times (queue wait + service)",
      [](const config::Node& section) { return tpcc::decode_tpcc_config(section); }, tpcc::make_tpcc_emulator));
  registry.add(
      oltp_type("sysbench",
                "sysbench 1.0.20-compatible OLTP (oltp_read_write, oltp_read_only, oltp_write_only) on SQLite, "
                "PostgreSQL or MySQL/MariaDB: TPS, QPS r/w/o, p95/p99 latency, err/s, reconn/s",
                sysbench::decode_sysbench_config, sysbench::make_sysbench_emulator));
}

}  // namespace drivelab::oltp
