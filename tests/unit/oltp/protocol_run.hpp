#pragma once
// Test helpers of the tpcc/sysbench emulator tests that run a whole protocol through the runner:
// a target directory the server users can reach, and a run whose journal another thread watches
// (to act once the measured phase has begun: kill the server, fill the disk).
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "temp_dir.hpp"

#include "drivelab/oltp/register.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"

namespace drivelab::oltp::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// Decodes protocol text `yaml` (named "p.yaml"; a decode error fails the test) with the OLTP
/// kinds and runs it on `target`, results in `out_dir`, progress to `out`.
inline runner::RunOutcome run_protocol_text(const std::string& yaml, const fs::path& target, const fs::path& out_dir,
                                            std::ostream& out, runner::StopFlag& stop) {
  runner::Registry reg;
  register_emulators(reg);
  config::Diagnostics diags;
  config::Document doc = config::Document::load_string(yaml, "p.yaml", diags);
  runner::Protocol p = runner::decode_protocol(doc, reg, diags);
  EXPECT_TRUE(diags.empty()) << diags.to_string();
  runner::RunOptions o;
  o.target = target;
  o.out_dir = out_dir;
  o.out = &out;
  return runner::run_protocol(p, o, stop);
}

/// Checks `reason` is runner::nothing_completed's for an open loop at 0.5/s over a measured phase
/// of about 2 s. The reason states the phase's measured length (2.01 s when a loaded machine ends
/// it late, as CI's Debian 13 run did), so the two figures are read and bounded, not matched.
inline void expect_nothing_completed_at_half_a_tps(const std::string& reason) {
  static const std::regex kShape(
      R"(the measured phase \(([0-9.]+) s\) completed no transaction: at rate 0\.5/s about ([0-9.]+) arrivals )"
      R"(were expected; nothing was measured)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(reason, m, kShape)) << reason;
  const double measured_s = std::stod(m[1].str());
  EXPECT_GE(measured_s, 1.9) << reason;
  EXPECT_LT(measured_s, 3.0) << reason;
  EXPECT_NEAR(std::stod(m[2].str()), 0.5 * measured_s, 0.01) << reason;
}

/// A fresh directory in /tmp the postgres user can reach, removed at the end.
class TmpTarget : public test_support::OpenTempDir {
 public:
  TmpTarget() : OpenTempDir("drivelab-tpcc-srv") {}
};

/// Runs a protocol with the tpcc emulator, and watches its journal from another thread.
struct ProtocolRun {
  fs::path out_dir;
  std::ostringstream out;
  std::atomic<bool> finished{false};

  /// True once the run's journal holds an interval event (read from the file: the runner
  /// appends and fdatasyncs each event as it happens).
  bool journal_has_interval() const {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(out_dir, ec)) {
      if (e.path().string().ends_with(".journal.jsonl")) {
        std::ifstream in(e.path());
        std::ostringstream whole;  // not istreambuf_iterator: GCC 14 -Wnull-dereference in libstdc++
        whole << in.rdbuf();
        const std::string text = whole.str();
        if (text.find("\"event\":\"interval\"") != std::string::npos) return true;
      }
    }
    return false;
  }
  void wait_for_measured_phase() const {
    while (!finished && !journal_has_interval()) std::this_thread::sleep_for(100ms);
  }

  runner::RunOutcome run(const std::string& yaml, const fs::path& target) {
    runner::StopFlag stop;
    runner::RunOutcome outcome = run_protocol_text(yaml, target, out_dir, out, stop);
    finished = true;
    return outcome;
  }
};

}  // namespace drivelab::oltp::test
