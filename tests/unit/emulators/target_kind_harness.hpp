#pragma once
// One test of a registered emulators kind driven through the Emulator interface, as the runner
// drives it, on a real directory or block device (for the precondition and video tests).
#include <chrono>
#include <filesystem>
#include <string>

#include "drivelab/emulators/register.hpp"
#include "drivelab/io/engine.hpp"
#include "emulator_harness.hpp"
#include "temp_dir.hpp"

namespace drivelab::emulators::testing {

using drivelab::test_support::TempDir;

struct KindTest : drivelab::test_support::EmulatorHarness {
  /// `section_yaml` is the `<kind>:` section ("{random_passes: 1}").
  KindTest(const std::string& kind, const std::filesystem::path& target, const std::string& section_yaml,
           std::chrono::nanoseconds duration = std::chrono::milliseconds(300),
           std::chrono::nanoseconds interval = std::chrono::milliseconds(100))
      : EmulatorHarness(&register_emulators, kind, target, section_yaml, std::chrono::nanoseconds(0), duration,
                        interval) {}
};

/// Problems that decoding `<kind>: <yaml>` reports, one per line ("" if none).
inline std::string decode_problems(const std::string& kind, const std::string& section_yaml) {
  return drivelab::test_support::decode_problems(&register_emulators, kind, section_yaml);
}

inline std::string usable_engine() { return io::probe_engine("io_uring").usable ? "io_uring" : "psync"; }

}  // namespace drivelab::emulators::testing
