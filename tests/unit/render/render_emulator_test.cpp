// Kind `render` through the Emulator interface: decoding, modes none and mmap, and mode swap with
// a real swap file and memory cgroup (root only): paging is recorded, and the swap file and cgroup
// are gone after a normal end, an injected error, SIGINT, and (cleaned on the next start) a crash.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "render_harness.hpp"

namespace drivelab::render {
namespace {

using testing::leftovers;
using testing::RenderTest;
using testing::TempDir;
namespace fs = std::filesystem;

std::string decode_problems(const std::string& yaml) {
  config::Diagnostics diags;
  const config::Document doc = config::Document::load_string("render: " + yaml, "t.yaml", diags);
  decode_render(doc.root(diags).child("render"));
  return diags.to_string();
}

TEST(RenderDecode, DefaultsAndProblems) {
  config::Diagnostics diags;
  const RenderConfig c = decode_render(config::Node(YAML::Node(), "render", "t", &diags));
  EXPECT_TRUE(diags.empty());
  EXPECT_EQ(c.mode, MemoryMode::swap);
  EXPECT_EQ(c.memory_budget_bytes, std::uint64_t{2} << 30);
  EXPECT_EQ(c.point_count(), (std::uint64_t{3} << 30) / 64) << "the unpacked array is 1.5x the budget";
  EXPECT_EQ(c.block_bytes, 10'000'000u);
  EXPECT_FALSE(c.process);
  EXPECT_FALSE(c.write);
  const std::string p = decode_problems("{mode: zram, layout: bgeo, bucket_grid: 12, treads: 2}");
  EXPECT_NE(p.find("mode must be one of: none, mmap, swap; found 'zram'"), std::string::npos) << p;
  EXPECT_NE(p.find("layout must be one of: flip, flip-lite; found 'bgeo'"), std::string::npos) << p;
  EXPECT_NE(p.find("bucket_grid must be one of"), std::string::npos) << p;
  EXPECT_NE(p.find("unknown key 'treads' (did you mean 'threads'?)"), std::string::npos) << p;
  EXPECT_NE(decode_problems("{memory_budget: 1TiB, working_set_factor: 64}").find("too many"), std::string::npos);
  EXPECT_EQ(decode_problems("{mode: mmap, memory_budget: 64MiB, points: 5000}"), "");
}

TEST(Render, NoneModeTimesThePhasesAndWarnsNothing) {
  TempDir dir;
  RenderTest t(dir.path(), "{mode: none, points: 120000, threads: 2, block_size: 1MB}");
  t.run_all();
  t.expect_checks_pass();
  EXPECT_EQ(t.record.checks.size(), 4u);
  EXPECT_GT(t.metric("total_s"), 0);
  EXPECT_NEAR(t.metric("total_s"), t.metric("load_s") + t.metric("unpack_s") + t.metric("repack_s"), 1e-9);
  EXPECT_EQ(t.record.find_metric("process_s"), nullptr);
  EXPECT_EQ(t.record.intervals.size(), 3u) << "one per phase that ran";
  EXPECT_TRUE(t.record.warnings.empty());
  EXPECT_EQ(t.record.details.at("scene").at("blocks"), 8) << "1 MB / 64 B = 15,625 points per block";
  EXPECT_EQ(leftovers(dir.path()), "") << "scene removed";
}

TEST(Render, MmapModePagesTheArrayThroughAFileInTheTarget) {
  TempDir dir;
  RenderTest t(dir.path(), "{mode: mmap, memory_budget: 8MiB, working_set_factor: 3, threads: 2, block_size: 1MB}");
  t.run_all();
  t.expect_checks_pass();
  EXPECT_GT(t.metric("major_faults"), 0);
  EXPECT_GT(t.record.details.at("pipeline").at("evicted_bytes").get<double>(), 16e6);
  EXPECT_EQ(t.record.details.at("pipeline").at("array_bytes"), 8 * 3 << 20);
  EXPECT_EQ(leftovers(dir.path()), "");
}

// A symbolic link in the place of the render test's scene or array file is refused, never
// followed: the scene writer and the mmap array truncated and overwrote whatever it named, outside
// the target, and the test measured that file's drive (found by a fresh review).
TEST(Render, ASymbolicLinkInTheSceneOrArrayFilesPlaceIsRefusedAndItsTargetUntouched) {
  TempDir dir;
  TempDir elsewhere;
  for (const char* file : {"drivelab-unit.bgeo.zst", "drivelab-unit.points"}) {
    const fs::path victim = elsewhere.path() / file;
    {
      std::ofstream(victim) << "precious";
    }
    fs::create_symlink(victim, dir.path() / file);
    RenderTest t(dir.path(), "{mode: mmap, memory_budget: 8MiB, working_set_factor: 3, threads: 2, block_size: 1MB}");
    try {
      t.run_all();
      ADD_FAILURE() << file << ": the link was followed";
    } catch (const EnvironmentError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(file) + " is a symbolic link (to " + victim.string() +
                                           "): drivelab writes only files of its own inside the target"),
                std::string::npos)
          << e.what();
    }
    t.emulator->cleanup(t.ctx);
    std::ifstream in(victim);
    std::string text;
    std::getline(in, text);
    EXPECT_EQ(text, "precious") << file;
    EXPECT_EQ(fs::file_size(victim), 8u) << file;
    fs::remove(dir.path() / file);
  }
}

TEST(Render, RefusesSwapModeOnTmpfsNamingTheReason) {
  if (!fs::exists("/dev/shm") || testing::swap_mode_unavailable("/dev/shm").find("tmpfs") == std::string::npos)
    GTEST_SKIP() << "no tmpfs at /dev/shm";
  const std::string why = testing::swap_mode_unavailable("/dev/shm");
  EXPECT_NE(why.find("mode swap cannot run here"), std::string::npos) << why;
  EXPECT_NE(why.find("tmpfs"), std::string::npos) << why;
}

class RenderSwap : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = testing::swap_mode_unavailable(dir.path()); !why.empty()) GTEST_SKIP() << why;
  }
  /// 32 MiB cgroup, 96 MiB array: most of the array must go to the swap file.
  static constexpr const char* kSection =
      "{mode: swap, memory_budget: 32MiB, working_set_factor: 3, threads: 2, swap_file_size: 512MiB, "
      "block_size: 1MB}";
  static RenderConfig config(const std::string& failure) {
    RenderConfig c;
    c.mode = MemoryMode::swap;
    c.memory_budget_bytes = 16 << 20;
    c.working_set_factor = 3;
    c.threads = 2;
    c.block_bytes = 1'000'000;
    c.inject_failure = failure;
    return c;
  }
  testing::SwapTestLock lock;
  TempDir dir;
};

TEST_F(RenderSwap, PagesToTheSwapFileAndRemovesItAndTheCgroup) {
#if defined(__SANITIZE_ADDRESS__)
  // Known open problem: under ASan (shadow memory and quarantine inside a 32 MiB cgroup v1 limit)
  // the pipeline is OOM-killed in about one run of three instead of swapping. The swap path's
  // cleanup still runs in CI through the injected-error and SIGINT tests below.
  GTEST_SKIP() << "flaky under AddressSanitizer: cgroup v1 OOM kill at a 32 MiB budget (docs/render.md)";
#endif
  RenderTest t(dir.path(), kSection);
  t.emulator->prepare(t.ctx);
  const auto& mp = t.record.details.at("memory_pressure");
  const fs::path swap = mp.at("swap_file").get<std::string>(), cgroup = mp.at("cgroup").get<std::string>();
  EXPECT_TRUE(fs::exists(swap));
  EXPECT_TRUE(fs::exists(cgroup));
  EXPECT_TRUE(fs::exists(marker_path(dir.path(), ::getpid())));
  bool active = false;
  for (const SwapEntry& s : active_swaps()) active |= s.path == swap.string();
  EXPECT_TRUE(active) << "swapon";
  t.emulator->run(t.ctx);
  t.emulator->verify(t.ctx);
  t.emulator->cleanup(t.ctx);
  t.expect_checks_pass();
  EXPECT_GT(t.metric("swap_out_bytes"), 8e6) << "the array went to the swap file";
  EXPECT_GT(t.metric("swap_in_bytes"), 0) << "and came back";
  EXPECT_GT(t.metric("device_write_bytes"), 0);
  EXPECT_GT(t.record.details.at("pipeline").at("cgroup_limit_hits").get<double>(), 0);
  EXPECT_TRUE(t.record.warnings.empty()) << t.record.warnings.front();
  EXPECT_FALSE(fs::exists(swap));
  EXPECT_FALSE(fs::exists(cgroup));
  EXPECT_EQ(leftovers(dir.path()), "");
}

TEST_F(RenderSwap, RefusesWhileAnotherSwapIsActiveNamingIt) {
  const fs::path other = dir.path() / "other.swap";
  {
    SwapFile swap(other, 16 << 20, [] { return false; });
    const std::string why = testing::swap_mode_unavailable(dir.path());
    EXPECT_NE(why.find("another swap file is active (" + other.string() + ")"), std::string::npos) << why;
    RenderTest t(dir.path(), kSection);
    EXPECT_THROW(t.emulator->prepare(t.ctx), EnvironmentError);
    t.emulator->cleanup(t.ctx);
    EXPECT_FALSE(fs::exists(dir.path() / "drivelab-unit.bgeo.zst")) << "refused before writing the scene";
  }
  EXPECT_FALSE(fs::exists(other)) << "SwapFile is RAII: swapoff + unlink";
  EXPECT_EQ(testing::swap_mode_unavailable(dir.path()), "");
}

TEST_F(RenderSwap, InjectedErrorInPrepareLeavesNothing) {
  RenderTest t(dir.path(), config("prepare"));
  EXPECT_THROW(t.emulator->prepare(t.ctx), EnvironmentError);
  EXPECT_NE(leftovers(dir.path()), "") << "the swap file and cgroup existed";
  t.emulator->cleanup(t.ctx);  // the runner calls cleanup on every path
  EXPECT_EQ(leftovers(dir.path()), "");
}

TEST_F(RenderSwap, InjectedErrorInThePipelineLeavesNothing) {
  RenderTest t(dir.path(), config("pipeline"));
  t.emulator->prepare(t.ctx);
  try {
    t.emulator->run(t.ctx);
    ADD_FAILURE() << "run should throw";
  } catch (const EnvironmentError& e) {
    const std::string what = e.what();
    bool expect_injected = true;
#if defined(__SANITIZE_ADDRESS__)
    // Under ASan the pipeline is sometimes OOM-killed (cgroup v1) before it reaches the injected
    // failure (see PagesToTheSwapFileAndRemovesItAndTheCgroup): that is also a pipeline failure, and
    // what this test is about, nothing left behind, is checked below either way.
    expect_injected = what.find("killed by signal 9") == std::string::npos || what.find("OOM") == std::string::npos;
#endif
    if (expect_injected) {
      EXPECT_NE(what.find("injected failure in the unpack phase"), std::string::npos) << what;
    }
  }
  t.emulator->cleanup(t.ctx);
  EXPECT_EQ(leftovers(dir.path()), "");
}

TEST_F(RenderSwap, SigintStopsThePipelineAndLeavesNothing) {
  runner::StopFlag::install_signal_handlers();
  runner::StopFlag::global().reset();
  RenderTest t(dir.path(), kSection);
  t.ctx.stop = &runner::StopFlag::global();
  t.emulator->prepare(t.ctx);
  const fs::path cgroup = t.record.details.at("memory_pressure").at("cgroup").get<std::string>();
  std::atomic<bool> sent{false};
  std::jthread interrupter([&](const std::stop_token& st) {
    // SIGINT once the pipeline process is inside the cgroup.
    while (!st.stop_requested()) {
      std::ifstream procs(cgroup / "cgroup.procs");
      int pid = 0;
      if (procs >> pid) {
        ::kill(::getpid(), SIGINT);
        sent = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  t.emulator->run(t.ctx);
  interrupter.request_stop();
  interrupter.join();
  t.emulator->verify(t.ctx);
  t.emulator->cleanup(t.ctx);
  runner::StopFlag::global().reset();
  if (!sent) GTEST_SKIP() << "the pipeline ended before the signal";
  EXPECT_EQ(t.record.find_metric("total_s"), nullptr) << "an interrupted render has no score";
  EXPECT_EQ(leftovers(dir.path()), "");
}

TEST_F(RenderSwap, TheNextStartCleansUpAfterACrash) {
  // A run that dies by SIGKILL after setting up: its swap file, cgroup and marker stay behind.
  const pid_t crashed = ::fork();
  ASSERT_GE(crashed, 0);
  if (crashed == 0) {
    RenderTest t(dir.path(), kSection);
    try {
      t.emulator->prepare(t.ctx);
    } catch (...) {
      ::_exit(2);
    }
    ::raise(SIGKILL);
  }
  int status = 0;
  ::waitpid(crashed, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child did not set up swap mode";
  const std::string left = leftovers(dir.path(), crashed);
  EXPECT_NE(left.find(fmt::format("drivelab-render.{}.swap", crashed)), std::string::npos) << left;
  EXPECT_NE(left.find(fmt::format("drivelab-render.{}.marker", crashed)), std::string::npos) << left;
  EXPECT_NE(left.find("cgroup "), std::string::npos) << left;

  RenderTest t(dir.path(), "{mode: none, points: 20000}");
  t.run_all();
  t.expect_checks_pass();
  ASSERT_TRUE(t.record.details.contains("stale_cleanup"));
  const std::string log = t.record.details.at("stale_cleanup").dump();
  EXPECT_NE(log.find("swapoff"), std::string::npos) << log;
  EXPECT_NE(log.find("removed cgroup"), std::string::npos) << log;
  EXPECT_NE(log.find("removed marker"), std::string::npos) << log;
  EXPECT_EQ(leftovers(dir.path(), crashed), "");
}

}  // namespace
}  // namespace drivelab::render
