#include "drivelab/runner/protocol.hpp"

#include <chrono>
#include <cstdlib>
#include <ranges>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/units.hpp"

namespace drivelab::runner {
namespace {

using namespace std::chrono_literals;

bool valid_test_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return false;
  return true;
}

void decode_timing(config::MapReader& r, TestSettings& s) {
  r.duration("warmup", s.warmup, {.min = 0ns});
  r.duration("duration", s.duration, {.min = 1s});
  r.duration("interval", s.interval, {.min = 100ms});
}

/// A test's measured phase writes one interval line per `interval`: more than kMaxIntervals is
/// refused at the test's interval (or duration) key, whichever it sets, else at the test.
void check_interval_count(const config::Node& test, const TestSettings& s) {
  if (s.interval.count() <= 0) return;
  const auto n = static_cast<std::uint64_t>(s.duration / s.interval);
  if (n <= kMaxIntervals) return;
  const config::Node at = test.child("interval").defined()   ? test.child("interval")
                          : test.child("duration").defined() ? test.child("duration")
                                                             : test;
  at.error(fmt::format("duration {} / interval {} is {} intervals; at most {} (make interval longer)",
                       format_duration(s.duration), format_duration(s.interval), n, kMaxIntervals));
}

std::uint64_t decode_seed(const config::Node& node) {
  const std::string text = node.scalar();
  if (text == "random") return static_cast<std::uint64_t>(monotonic_ns()) ^ 0x5DEECE66Dull;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || text[0] == '-') {
    node.error(fmt::format("expected a non-negative integer or 'random', found '{}'", text));
    return 1;
  }
  return v;
}

}  // namespace

results::Json Protocol::effective() const {
  results::Json j;
  j["protocol"] = name;
  if (!description.empty()) j["description"] = description;
  j["seed"] = seed;
  if (repeat != 1) j["repeat"] = repeat;
  if (repeat_between != RepeatBetween::as_is) j["repeat_between"] = to_string(repeat_between);
  if (!destroy_data_on.empty()) j["destroy_data_on"] = destroy_data_on;
  if (!harness_ceiling) j["harness_ceiling"] = false;
  if (!hosts.empty()) {
    results::Json hj = results::Json::array();
    for (const HostEntry& h : hosts) {
      results::Json e;
      if (h.rank)
        e["rank"] = *h.rank;
      else
        e["host"] = h.host;
      if (!h.target.empty()) e["target"] = h.target;
      if (!h.out.empty()) e["out"] = h.out;
      if (!h.set.empty()) e["set"] = h.set;
      hj.push_back(std::move(e));
    }
    j["hosts"] = std::move(hj);
  }
  results::Json tests_json = results::Json::array();
  for (const auto& t : tests) {
    results::Json tj;
    tj["name"] = t.settings.name;
    tj["kind"] = t.settings.kind;
    tj["warmup_s"] = std::chrono::duration<double>(t.settings.warmup).count();
    tj["duration_s"] = std::chrono::duration<double>(t.settings.duration).count();
    tj["interval_s"] = std::chrono::duration<double>(t.settings.interval).count();
    if (t.emulator) tj[t.settings.kind] = t.emulator->effective_config();
    tests_json.push_back(std::move(tj));
  }
  j["tests"] = std::move(tests_json);
  return j;
}

Protocol decode_protocol(const config::Document& doc, const Registry& registry, config::Diagnostics& diags) {
  Protocol p;
  p.file = doc.name();
  if (!doc.loaded()) return p;
  const config::Node root = doc.root(diags);
  // A result record given where a protocol belongs (JSON is YAML): one error that says what the
  // file is and what reads it, not every key of the record as unknown.
  if (const config::Node schema = root.child("schema"); schema.is_scalar()) {
    if (const std::string v = schema.scalar(); v.starts_with("drivelab.")) {
      schema.error(
          fmt::format("this is a drivelab result record (schema {}), not a protocol: drivelab report {} "
                      "reads it, drivelab results validate checks it",
                      v, doc.name()));
      return p;
    }
  }
  config::MapReader r(root);
  r.string("protocol", p.name, /*required=*/true);
  r.string("description", p.description);
  if (const config::Node seed = r.section("seed"); seed.defined()) p.seed = decode_seed(seed);
  r.integer("repeat", p.repeat, {.min = 1, .max = kMaxRepeat});
  r.choice("repeat_between", p.repeat_between, kRepeatBetweenNames);
  r.boolean("harness_ceiling", p.harness_ceiling);
  if (r.string("destroy_data_on", p.destroy_data_on) && p.destroy_data_on.empty())
    root.child("destroy_data_on")
        .error("destroy_data_on must name a device's serial number (or a loop device's backing file)");

  p.hosts = decode_hosts(r.section("hosts"));

  TestSettings defaults;
  if (const config::Node d = r.section("defaults"); d.defined()) {
    config::MapReader dr(d);
    decode_timing(dr, defaults);
    dr.finish();
  }

  const config::Node tests = r.section("tests", /*required=*/true);
  r.finish();
  if (!tests.defined()) return p;
  if (!tests.is_sequence()) {
    tests.error("expected a list of tests");
    return p;
  }
  const auto elements = tests.elements();
  if (elements.empty()) tests.error("a protocol needs at least one test");

  std::set<std::string> names;
  for (const config::Node& el : elements) {
    PlannedTest planned;
    TestSettings& s = planned.settings;
    s = defaults;
    config::MapReader tr(el);
    const bool has_name = tr.string("name", s.name, true);
    if (has_name) {
      if (!valid_test_name(s.name))
        el.child("name").error(fmt::format(
            "test name '{}' must be 1-64 characters of letters, digits, '-' or '_' (it names files)", s.name));
      else if (!names.insert(s.name).second)
        el.child("name").error(fmt::format("duplicate test name '{}'", s.name));
    }
    decode_timing(tr, s);
    check_interval_count(el, s);
    const EmulatorType* type = nullptr;
    if (tr.string("kind", s.kind, true)) {
      type = registry.find(s.kind);
      if (type == nullptr)
        el.child("kind").error(
            fmt::format("unknown kind '{}' (this drivelab knows: {})", s.kind, fmt::join(registry.kinds(), ", ")));
    }
    config::Node section = type ? tr.section(type->kind) : config::Node(YAML::Node(), "", "", &diags);
    tr.finish();
    if (type != nullptr) {
      planned.emulator = type->decode(section, s);
      planned.fresh = [type, yaml = section.yaml(), path = section.path(), file = section.file(), s] {
        config::Diagnostics again;  // decoded once already: no diagnostics
        std::unique_ptr<Emulator> e = type->decode(config::Node(yaml, path, file, &again), s);
        if (e == nullptr || !again.empty())
          throw InternalError(fmt::format("test '{}' did not decode again for its next repetition", s.name));
        return e;
      };
    }
    p.tests.push_back(std::move(planned));
  }
  // A test that writes another test's data file (a preconditioning's for_test) must name a later
  // test that has one: any other name would fill a file that no test reads.
  for (std::size_t i = 0; i < p.tests.size() && i < elements.size(); ++i) {
    if (!p.tests[i].emulator) continue;
    const auto [key, other] = p.tests[i].emulator->data_file_for();
    if (other.empty() || other == p.tests[i].settings.name) continue;  // its own name: the default
    const config::Node at = elements[i].child(p.tests[i].settings.kind).child(key);
    std::size_t j = 0;
    while (j < p.tests.size() && p.tests[j].settings.name != other) ++j;
    if (j == p.tests.size())
      at.error(fmt::format(
          "{} '{}' names no test of this protocol (tests: {})", key, other,
          fmt::join(p.tests | std::views::transform([](const PlannedTest& t) { return t.settings.name; }), ", ")));
    else if (j < i)
      at.error(fmt::format("{} '{}' names a test that runs before this one: its data file must be written first", key,
                           other));
    else if (!p.tests[j].emulator || !p.tests[j].emulator->owns_data_file())
      at.error(
          fmt::format("{} '{}' names a {} test, which has no data file of its own (io, vdbench, video or a "
                      "one-target replay)",
                      key, other, p.tests[j].settings.kind));
  }
  return p;
}

}  // namespace drivelab::runner
