#pragma once
/// \file register.hpp
/// The OLTP emulators of drivelab, added to a Registry by hand (no static self-registration:
/// the linker would drop it from a static library).
#include "drivelab/runner/emulator.hpp"

namespace drivelab::oltp {

/// Adds every emulator of this component:
///  - `tpcc`: TPC-C-like OLTP on a database in the target (SQLite by default): New-Order,
///    Payment, Order-Status, Delivery, Stock-Level; tpmC/NOPM, TPS, response times
///    (tpcc_config.hpp for the keys, docs/oltp-tpcc.md for the model).
///  - `sysbench`: sysbench 1.0.20's oltp_read_write / oltp_read_only / oltp_write_only
///    (sysbench_config.hpp for the keys, docs/oltp-sysbench.md for the model).
/// Throws InternalError if a kind is already registered. Both in src/register.cpp.
void register_emulators(runner::Registry& registry);

}  // namespace drivelab::oltp
