#pragma once
// One test of a registered kind driven through the Emulator interface, as the runner drives it,
// on a real directory or block device (for the precondition and video tests).
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "drivelab/config/yaml.hpp"
#include "drivelab/emulators/register.hpp"
#include "drivelab/io/engine.hpp"
#include "drivelab/results/recorder.hpp"
#include "drivelab/runner/emulator.hpp"

namespace drivelab::emulators::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "drivelab-kind-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct KindTest {
  runner::Registry registry;
  config::Diagnostics diags;
  std::unique_ptr<runner::Emulator> emulator;
  results::TestRecord record;
  results::TestRecorder recorder{record, nullptr};
  runner::StopFlag stop;
  runner::TestContext ctx;

  /// `section_yaml` is the `<kind>:` section ("{random_passes: 1}"); `add_kinds` registers the
  /// kinds of the component under test (tests of other components pass their own).
  KindTest(const std::string& kind, const std::filesystem::path& target, const std::string& section_yaml,
           std::chrono::nanoseconds duration = std::chrono::milliseconds(300),
           std::chrono::nanoseconds interval = std::chrono::milliseconds(100),
           void (*add_kinds)(runner::Registry&) = register_emulators) {
    add_kinds(registry);
    const runner::EmulatorType* type = registry.find(kind);
    EXPECT_NE(type, nullptr) << kind;
    const config::Document doc = config::Document::load_string(kind + ": " + section_yaml, "t.yaml", diags);
    ctx.settings = {.name = "unit", .kind = kind, .warmup = std::chrono::nanoseconds(0), .duration = duration,
                    .interval = interval};
    if (type) emulator = type->decode(doc.root(diags).child(kind), ctx.settings);
    EXPECT_TRUE(diags.empty()) << diags.to_string();
    ctx.target_dir = target;
    ctx.seed = 42;
    ctx.stop = &stop;
    ctx.recorder = &recorder;
  }

  /// prepare, warmup, run, verify, cleanup.
  void run_all() {
    emulator->prepare(ctx);
    emulator->warmup(ctx);
    emulator->run(ctx);
    emulator->verify(ctx);
    emulator->cleanup(ctx);
  }

  double metric(const std::string& name) const {
    const results::Metric* m = record.find_metric(name);
    EXPECT_NE(m, nullptr) << name;
    return m ? m->value : -1;
  }
  void expect_checks_pass() const {
    EXPECT_FALSE(record.checks.empty());
    for (const auto& c : record.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
  }
};

/// Problems that decoding `<kind>: <yaml>` reports, one per line ("" if none).
inline std::string decode_problems(const std::string& kind, const std::string& section_yaml,
                                   void (*add_kinds)(runner::Registry&) = register_emulators) {
  runner::Registry registry;
  add_kinds(registry);
  config::Diagnostics diags;
  const config::Document doc = config::Document::load_string(kind + ": " + section_yaml, "t.yaml", diags);
  const runner::TestSettings settings{.name = "unit", .kind = kind};
  (void)registry.find(kind)->decode(doc.root(diags).child(kind), settings);
  return diags.to_string();
}

inline std::string usable_engine() { return io::probe_engine("io_uring").usable ? "io_uring" : "psync"; }

}  // namespace drivelab::emulators::testing
