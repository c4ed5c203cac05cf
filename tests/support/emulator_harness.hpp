#pragma once
// One test of a registered kind driven through the Emulator interface as the runner drives it
// (decode the `<kind>:` section, then prepare, warmup, run, verify, cleanup), recording into an
// in-memory TestRecord. Used by the emulators, render (and later vdi) unit tests.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/config/document.hpp"
#include "drivelab/results/recorder.hpp"
#include "drivelab/runner/emulator.hpp"

namespace drivelab::test_support {

/// mh-spec (issue 16): every interval of `t` carries its own histogram "latency", and its values
/// the metric catalogue declares figures of it (MetricDef::of_interval_latency: latency_avg_<unit>,
/// latency_p99_<unit>, ...) are that histogram's figures in `unit` ("us" or "ms"), so hosts'
/// intervals merge exactly; at least one such value per interval. Returns the number of intervals
/// checked.
inline std::size_t expect_interval_latency_histograms(const results::TestRecord& t, const std::string& unit) {
  for (std::size_t i = 0; i < t.intervals.size(); ++i) {
    const results::Interval& iv = t.intervals[i];
    const auto h = iv.histograms.find("latency");
    if (h == iv.histograms.end()) {
      ADD_FAILURE() << "interval " << i << " has no histogram 'latency'";
      continue;
    }
    int figures = 0;
    for (const auto& [name, v] : iv.values) {
      const results::MetricDef* d = results::find_metric_def(name);
      if (d == nullptr || !d->of_interval_latency) continue;
      EXPECT_EQ(d->unit_string(), unit) << name;
      EXPECT_DOUBLE_EQ(v, *results::histogram_figure(h->second, d->figure, d->unit_string()))
          << "interval " << i << " " << name;
      ++figures;
    }
    EXPECT_GT(figures, 0) << "interval " << i << " has no figure of its histogram 'latency'";
  }
  return t.intervals.size();
}

/// Fills a registry with a component's kinds (e.g. drivelab::emulators::register_emulators).
using RegisterKinds = void (*)(runner::Registry&);

struct EmulatorHarness {
  runner::Registry registry;
  config::Diagnostics diags;
  std::unique_ptr<runner::Emulator> emulator;
  results::TestRecord record;
  results::TestRecorder recorder{record, nullptr};
  runner::StopFlag stop;
  runner::TestContext ctx;

  /// `section_yaml` is the `<kind>:` section ("{random_passes: 1}"); decoding problems fail the test.
  EmulatorHarness(RegisterKinds register_kinds, const std::string& kind, const std::filesystem::path& target,
                  const std::string& section_yaml, std::chrono::nanoseconds warmup = std::chrono::nanoseconds(0),
                  std::chrono::nanoseconds duration = std::chrono::milliseconds(300),
                  std::chrono::nanoseconds interval = std::chrono::milliseconds(100), std::uint64_t seed = 42) {
    register_kinds(registry);
    ctx.settings = {.name = "unit", .kind = kind, .warmup = warmup, .duration = duration, .interval = interval};
    ctx.target_dir = target;
    ctx.seed = seed;
    ctx.stop = &stop;
    ctx.recorder = &recorder;
    const runner::EmulatorType* type = registry.find(kind);
    EXPECT_NE(type, nullptr) << kind;
    const config::Document doc = config::Document::load_string(kind + ": " + section_yaml, "t.yaml", diags);
    if (type) emulator = type->decode(doc.root(diags).child(kind), ctx.settings);
    EXPECT_TRUE(diags.empty()) << diags.to_string();
  }
  /// An emulator built directly (e.g. from a config with test-only failure injection).
  EmulatorHarness(const std::string& kind, const std::filesystem::path& target, std::unique_ptr<runner::Emulator> e,
                  std::uint64_t seed = 42)
      : emulator(std::move(e)) {
    ctx.settings = {.name = "unit", .kind = kind};
    ctx.target_dir = target;
    ctx.seed = seed;
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

  /// A headline metric; a missing one fails the test and returns -1.
  double metric(const std::string& name) const {
    const results::Metric* m = record.find_metric(name);
    EXPECT_NE(m, nullptr) << name;
    return m ? m->value : -1;
  }
  const results::MetricGroup* group(const std::string& name) const {
    for (const auto& g : record.groups)
      if (g.name == name) return &g;
    return nullptr;
  }
  /// Metric `name` of group `g`; a missing one fails the test and returns -1.
  double group_metric(const std::string& g, const std::string& name) const {
    const results::MetricGroup* grp = group(g);
    EXPECT_NE(grp, nullptr) << g;
    if (grp == nullptr) return -1;
    for (const auto& m : grp->metrics)
      if (m.name == name) return m.value;
    ADD_FAILURE() << g << "." << name << " missing";
    return -1;
  }
  const results::Check* check(const std::string& name) const {
    for (const auto& c : record.checks)
      if (c.name == name) return &c;
    return nullptr;
  }
  /// Sum of the value `key` over all intervals.
  double interval_sum(const std::string& key) const {
    double sum = 0;
    for (const auto& iv : record.intervals)
      for (const auto& [k, v] : iv.values)
        if (k == key) sum += v;
    return sum;
  }
  void expect_checks_pass() const {
    EXPECT_FALSE(record.checks.empty());
    for (const auto& c : record.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
  }
};

/// Problems that decoding `<kind>: <yaml>` reports, one per line ("" if none).
inline std::string decode_problems(RegisterKinds register_kinds, const std::string& kind,
                                   const std::string& section_yaml) {
  runner::Registry registry;
  register_kinds(registry);
  config::Diagnostics diags;
  const config::Document doc = config::Document::load_string(kind + ": " + section_yaml, "t.yaml", diags);
  const runner::TestSettings settings{.name = "unit", .kind = kind};
  (void)registry.find(kind)->decode(doc.root(diags).child(kind), settings);
  return diags.to_string();
}

}  // namespace drivelab::test_support
