#pragma once
/// \file protocol.hpp
/// A protocol file: an ordered list of tests run against one target.
///
///     protocol: quick                 # name (required)
///     description: ...                # optional
///     seed: 42                        # optional; default: fixed 1 (reproducible); "random" = from time
///     destroy_data_on: S3EVNX0M123    # optional; consent to write to the block device with this
///                                     # serial (loop device: backing file); docs/targets.md
///     defaults: {warmup: 10s, duration: 60s, interval: 5s}   # optional, applied to every test
///     hosts: [...]                    # optional: per-host targets and overrides (hosts.hpp)
///     tests:
///       - name: oltp                  # required, unique, [A-Za-z0-9_-]
///         kind: tpcc                  # required, a registered EmulatorType::kind
///         warmup: 10s
///         duration: 60s
///         interval: 5s
///         tpcc: {warehouses: 2, ...}  # the kind's own section (see that emulator's docs)
///
/// decode_protocol() reports every problem of the whole file at once (file:line:column: path: why).
#include <memory>
#include <string>
#include <vector>

#include "drivelab/config/document.hpp"
#include "drivelab/runner/emulator.hpp"
#include "drivelab/runner/hosts.hpp"

namespace drivelab::runner {

struct PlannedTest {
  TestSettings settings;
  std::unique_ptr<Emulator> emulator;
};

struct Protocol {
  std::string name;
  std::string description;
  std::string file;
  std::uint64_t seed = 1;
  /// `destroy_data_on:` the identity of the block device this protocol may destroy ("" = none).
  std::string destroy_data_on;
  std::vector<PlannedTest> tests;
  /// `hosts:` (hosts.hpp); the entry of this process is applied before decoding (apps/).
  std::vector<HostEntry> hosts;
  /// The effective protocol (defaults applied, each test's effective config), for the record.
  results::Json effective() const;
};

/// Decodes a loaded document. Problems go to `diags`; the returned Protocol is only meaningful
/// when diags is empty afterwards.
Protocol decode_protocol(const config::Document& doc, const Registry& registry, config::Diagnostics& diags);

}  // namespace drivelab::runner
