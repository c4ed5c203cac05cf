#pragma once
// A test of kind `render` driven through the Emulator interface as the runner drives it, on a real
// temp directory (ext4 here: swap files need a filesystem that supports them).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "drivelab/config/document.hpp"
#include "drivelab/render/pressure.hpp"
#include "drivelab/render/render.hpp"
#include "drivelab/results/recorder.hpp"
#include "drivelab/runner/emulator.hpp"
#include "emulator_harness.hpp"
#include "temp_dir.hpp"

namespace drivelab::render::testing {

/// On the build tree's filesystem, not /tmp (a tmpfs here): swap files need a real filesystem.
struct TempDir : drivelab::test_support::TempDir {
  TempDir() : drivelab::test_support::TempDir("drivelab-render-test", drivelab::test_support::TempBase::build_tree) {}
};

struct RenderTest : drivelab::test_support::EmulatorHarness {
  /// From a `render:` section in YAML ("{mode: none, points: 100000}").
  RenderTest(const std::filesystem::path& target, const std::string& section_yaml)
      : EmulatorHarness(&register_emulators, "render", target, section_yaml) {}
  /// From a config (for the test-only failure injection).
  RenderTest(const std::filesystem::path& target, RenderConfig config)
      : EmulatorHarness("render", target, make_render_emulator(std::move(config))) {}
};

/// Why swap mode cannot run here ("" when it can).
inline std::string swap_mode_unavailable(const std::filesystem::path& dir) {
  try {
    check_swap_mode(dir);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

/// Every drivelab file in `dir`, and the swap file in /proc/swaps and the cgroup of process `pid`
/// (the test process by default; other test processes may run swap tests at the same time).
inline std::string leftovers(const std::filesystem::path& dir, int pid = ::getpid()) {
  const std::string mine = "drivelab-render." + std::to_string(pid);
  std::string out;
  for (const SwapEntry& s : active_swaps())
    if (s.path.find(mine + ".") != std::string::npos) out += "active swap " + s.path + "\n";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("drivelab-", 0) == 0) out += "file " + e.path().string() + "\n";
  const std::filesystem::path parent = cgroup_path_for("x").parent_path();
  if (!parent.empty())
    for (const auto& e : std::filesystem::directory_iterator(parent, ec))
      if (e.path().filename().string() == mine) out += "cgroup " + e.path().string() + "\n";
  return out;
}

/// Serialises swap-mode tests across test processes (ctest -j): one swap file at a time, since
/// swap mode refuses to start while another swap is active.
class SwapTestLock {
 public:
  SwapTestLock() : fd_(::open(DRIVELAB_BINARY_DIR "/render-swap-tests.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~SwapTestLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  SwapTestLock(const SwapTestLock&) = delete;
  SwapTestLock& operator=(const SwapTestLock&) = delete;

 private:
  int fd_;
};

}  // namespace drivelab::render::testing
