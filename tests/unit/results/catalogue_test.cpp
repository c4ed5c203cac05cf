// The metric catalogue (results/catalogue.hpp, issue 31): its lookups, and the pages and schema
// that restate it held to it: docs/results.md ("Metric catalogue"), docs/metrics.md ("Interval
// values") and docs/results.schema.json ($defs unit and metric_name). On a mismatch the test
// prints the block the page should have, to paste.
#include "drivelab/results/catalogue.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "drivelab/core/errors.hpp"

namespace drivelab::results {
namespace {

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(DRIVELAB_SOURCE_DIR) + "/" + relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The lines between "<!-- NAME:begin -->" and "<!-- NAME:end -->" of a page.
std::string block(const std::string& page, std::string_view name) {
  const std::string begin = fmt::format("<!-- {}:begin -->\n", name), end = fmt::format("<!-- {}:end -->", name);
  const auto b = page.find(begin);
  const auto e = page.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) return "(no block " + std::string(name) + ")";
  return page.substr(b + begin.size(), e - b - begin.size());
}

std::string where_words(std::uint8_t where) {
  std::string out;
  for (const auto& [bit, word] : {std::pair{kHeadline, "headline"}, {kGroup, "group"}, {kInterval, "interval"}})
    if ((where & bit) != 0) out += (out.empty() ? "" : ", ") + std::string(word);
  return out;
}

/// "`ms`"; the empty unit of a plain number as `""`.
std::string unit_cell(Unit u, std::optional<Unit> other = std::nullopt) {
  const auto one = [](Unit x) { return x == Unit::none ? std::string("`\"\"`") : fmt::format("`{}`", unit_text(x)); };
  return other ? one(u) + " or " + one(*other) : one(u);
}

/// docs/results.md's catalogue table: one row per declaration, then one per figure family.
std::string expected_results_table() {
  std::string out =
      "| Metric | Unit | Kind | Better | Recorded as | Emulators | Meaning |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const MetricDef* d : metric_defs())
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} |\n", d->name, unit_cell(d->unit, d->other_unit),
                       to_string(d->kind), to_string(d->better), where_words(d->where), d->recorded_by, d->description);
  for (const FigureFamily* f : figure_families())
    out += fmt::format(
        "| `{}` | `us` or `ms` | {} | lower | {} | {} | {}; figure `avg`, `min`, `max`, `sum`, `p50`, `p90`, `p95`, "
        "`p99`, `p999` (99.9th) or `p99_9` |\n",
        f->pattern(), to_string(f->kind), where_words(f->where), f->recorded_by, f->description);
  return out;
}

std::string expected_alias_table() {
  std::string out = "| Old name (read, no longer written) | Name |\n|---|---|\n";
  for (const MetricAlias& a : metric_aliases()) out += fmt::format("| `{}` | `{}` |\n", a.old_name, a.name);
  return out;
}

/// docs/metrics.md's table of interval values and what each feeds.
std::string expected_interval_table() {
  std::string out = "| Value | Unit | Kind | Feeds | Emulators |\n|---|---|---|---|---|\n";
  for (const MetricDef* d : metric_defs()) {
    if (!d->recorded_as(kInterval)) continue;
    std::string feeds;
    const auto add = [&feeds](std::string_view s) { feeds += (feeds.empty() ? "" : ", ") + std::string(s); };
    if (d->has(kOperationsFeed)) add("`drivelab_operations_total`");
    if (d->has(kBytesFeed)) add("`drivelab_bytes_total`, `drivelab_interval_bytes_per_second`");
    if (d->has(kErrorsFeed)) add("`drivelab_errors_total`");
    if (d == &catalogue::retries) add("`drivelab_retries_total`");
    if (d == &catalogue::tps) add("`drivelab_interval_transactions_per_second`");
    if (d == &catalogue::tpm_c) add("`drivelab_interval_tpmc`");
    if (d == &catalogue::iops) add("`drivelab_interval_iops`");
    if (d->of_interval_latency)
      add("`drivelab_interval_latency_seconds`, `drivelab_interval_latency_mean_seconds` (without the histogram)");
    if (d->kind == MetricKind::lateness && figure_percentile(*d) && !d->family.empty())
      add("`drivelab_interval_lateness_seconds`");
    if (d->has(kDeviceLine)) add("its telemetry series (below)");
    if (feeds.empty()) feeds = "`drivelab_interval_value` only";
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", d->name, unit_cell(d->unit), to_string(d->kind), feeds,
                       d->recorded_by);
  }
  return out;
}

TEST(MetricCatalogue, FindsDeclarationsFamilyMembersAndAliases) {
  EXPECT_EQ(find_metric_def("iops"), &catalogue::iops);
  EXPECT_EQ(find_metric_def("latency_p99_us"), &catalogue::latency_p99_us);
  EXPECT_EQ(find_metric_def("lat_p99_us"), &catalogue::latency_p99_us) << "an alias reads as its declaration";
  const MetricDef* p999 = find_metric_def("service_time_p99_9_ms");
  ASSERT_NE(p999, nullptr);
  EXPECT_EQ(p999->unit, Unit::ms);
  EXPECT_EQ(p999->figure, "p99.9");
  EXPECT_EQ(p999->family, "service_time");
  EXPECT_EQ(p999->better, Direction::lower);
  EXPECT_EQ(&figure_def(catalogue::queue_wait, "p99_9", Unit::ms), find_metric_def("queue_wait_p99_9_ms"));
  EXPECT_EQ(figure_percentile(*p999), 99.9);
  EXPECT_EQ(figure_percentile(catalogue::latency_avg_us), std::nullopt);
  EXPECT_THROW(figure_def(catalogue::latency, "p42", Unit::us), InternalError);
  EXPECT_EQ(find_metric_def("no_such_metric"), nullptr);
  EXPECT_EQ(find_metric_def("iops_"), nullptr);
}

TEST(MetricCatalogue, UnitsPrintTheRecordsUnitStrings) {
  EXPECT_EQ(unit_text(Unit::per_s), "1/s");
  EXPECT_EQ(unit_text(Unit::per_min), "1/min");
  EXPECT_EQ(unit_text(Unit::mb_s), "MB/s");
  EXPECT_EQ(unit_text(Unit::pct), "%");
  EXPECT_EQ(unit_text(Unit::us), "us");
  EXPECT_EQ(unit_text(Unit::none), "");
  EXPECT_EQ(unit_from_text("1/cpu-s"), Unit::per_cpu_s);
  EXPECT_EQ(unit_from_text("B"), std::nullopt);
}

// Names are unique (the catalogue refuses a second declaration when it builds: the lookups above
// would fail), lower case with '_', and a figure of merit has a direction.
TEST(MetricCatalogue, DeclarationsAreWellFormed) {
  std::set<std::string_view> names;
  for (const MetricDef* d : metric_defs()) {
    EXPECT_TRUE(names.insert(d->name).second) << d->name;
    EXPECT_EQ(d->name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"), std::string_view::npos) << d->name;
    EXPECT_FALSE(d->description.empty()) << d->name;
    EXPECT_FALSE(d->recorded_by.empty()) << d->name;
    EXPECT_NE(d->where, 0) << d->name;
    if (d->kind == MetricKind::latency || d->kind == MetricKind::time) {
      EXPECT_TRUE(d->unit == Unit::s || d->unit == Unit::ms || d->unit == Unit::us || d->unit == Unit::ratio ||
                  d->unit == Unit::count)
          << d->name;
    }
    if (d->has(kBytesFeed)) EXPECT_EQ(d->unit, Unit::mb_s) << d->name;
    if (d->has(kOperationsFeed) || d->has(kErrorsFeed))
      EXPECT_TRUE(d->unit == Unit::count || d->unit == Unit::per_s) << d->name;
    if (!d->family.empty()) EXPECT_EQ(find_metric_def(d->name), d) << d->name;
  }
  for (const MetricAlias& a : metric_aliases()) {
    EXPECT_FALSE(names.contains(a.old_name)) << a.old_name;
    EXPECT_TRUE(names.contains(a.name)) << a.name;
  }
}

TEST(MetricCatalogue, ResultsPageListsEveryMetricWithItsUnit) {
  const std::string page = read_source("docs/results.md");
  const std::string expected = expected_results_table();
  EXPECT_EQ(block(page, "metric-catalogue"), expected) << "docs/results.md, the block metric-catalogue:\n" << expected;
  EXPECT_EQ(block(page, "metric-aliases"), expected_alias_table());
}

TEST(MetricCatalogue, MetricsPageListsEveryIntervalValue) {
  const std::string page = read_source("docs/metrics.md");
  const std::string expected = expected_interval_table();
  EXPECT_EQ(block(page, "interval-values"), expected) << "docs/metrics.md, the block interval-values:\n" << expected;
}

// The record's JSON Schema lists the catalogue's units and names ($defs unit and metric_name,
// as examples: records written before the catalogue keep their names and units valid).
TEST(MetricCatalogue, SchemaListsTheCataloguesUnitsAndNames) {
  const auto schema = nlohmann::json::parse(read_source("docs/results.schema.json"));
  std::vector<std::string> units;
  for (int u = 0; u <= static_cast<int>(Unit::none); ++u) units.emplace_back(unit_text(static_cast<Unit>(u)));
  EXPECT_EQ(schema["$defs"]["unit"]["examples"].get<std::vector<std::string>>(), units)
      << "docs/results.schema.json $defs.unit.examples: " << nlohmann::json(units).dump();
  std::vector<std::string> names;
  for (const MetricDef* d : metric_defs()) names.emplace_back(d->name);
  for (const FigureFamily* f : figure_families()) names.push_back(f->pattern());
  for (const MetricAlias& a : metric_aliases()) names.emplace_back(a.old_name);
  EXPECT_EQ(schema["$defs"]["metric_name"]["examples"].get<std::vector<std::string>>(), names)
      << "docs/results.schema.json $defs.metric_name.examples: " << nlohmann::json(names).dump();
}

}  // namespace
}  // namespace drivelab::results
