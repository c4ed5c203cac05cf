// The metric catalogue (results/catalogue.hpp) against its dump, tests/golden/metric_catalogue.json:
// every field of every declaration (kAll), of every generated member of the figure families, of
// the families themselves and of the aliases, as the catalogue had them when the dump was written.
// The record's keys and units, Prometheus and the reporter all read these fields, so a change to
// the way the catalogue is declared must leave every one of them as it was. A declaration added
// since the dump passes; one removed or changed fails, naming its field. After a deliberate change
// (say which in the commit), rewrite the dump with DRIVELAB_UPDATE_GOLDEN=1.
#include "drivelab/results/catalogue.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace drivelab::results {
namespace {

using nlohmann::json;

const std::string kDumpPath = std::string(DRIVELAB_SOURCE_DIR) + "/tests/golden/metric_catalogue.json";

json dump(const MetricDef& d) {
  return json{{"name", d.name},
              {"unit", unit_text(d.unit)},
              {"kind", to_string(d.kind)},
              {"better", to_string(d.better)},
              {"description", d.description},
              {"recorded_by", d.recorded_by},
              {"where", d.where},
              {"word", d.word},
              {"traits", d.traits},
              {"merge", static_cast<int>(d.merge)},
              {"other_unit", d.other_unit ? json(unit_text(*d.other_unit)) : json(nullptr)},
              {"figure", d.figure},
              {"family", d.family},
              {"of_interval_latency", d.of_interval_latency}};
}

/// The catalogue as the dump writes it: declarations by name (kAll's, then the families'
/// generated members), families by prefix, aliases by old name.
json catalogue_now() {
  json metrics = json::object(), families = json::object(), aliases = json::object();
  for (const MetricDef* d : metric_defs()) metrics[std::string(d->name)] = dump(*d);
  for (const FigureFamily* f : figure_families()) {
    families[std::string(f->prefix)] = json{{"kind", to_string(f->kind)},
                                            {"description", f->description},
                                            {"recorded_by", f->recorded_by},
                                            {"where", f->where},
                                            {"interval_latency", f->interval_latency}};
    for (std::string_view figure : {"avg", "min", "max", "sum", "p50", "p90", "p95", "p99", "p999", "p99_9"})
      for (Unit u : {Unit::us, Unit::ms}) {
        const MetricDef& m = figure_def(*f, figure, u);
        metrics[std::string(m.name)] = dump(m);
      }
  }
  for (const MetricAlias& a : metric_aliases()) aliases[std::string(a.old_name)] = a.name;
  return json{{"metrics", metrics}, {"families", families}, {"aliases", aliases}};
}

/// Every entry of `was` (an object of objects or of strings) is in `now` with the same fields.
void expect_kept(const json& was, const json& now, const std::string& what) {
  for (const auto& [key, old] : was.items()) {
    ASSERT_TRUE(now.contains(key)) << what << " '" << key << "' is no longer in the catalogue";
    if (!old.is_object()) {
      EXPECT_EQ(now[key], old) << what << " '" << key << "'";
      continue;
    }
    for (const auto& [field, value] : old.items())
      EXPECT_EQ(now[key].value(field, json()), value) << what << " '" << key << "', field " << field;
  }
}

TEST(MetricCatalogue, EveryDeclarationKeepsTheFieldsOfItsDump) {
  const json now = catalogue_now();
  if (std::getenv("DRIVELAB_UPDATE_GOLDEN") != nullptr) std::ofstream(kDumpPath) << now.dump(1) << '\n';
  std::ifstream in(kDumpPath);
  ASSERT_TRUE(in) << "no " << kDumpPath << " (DRIVELAB_UPDATE_GOLDEN=1 writes it)";
  const json was = json::parse(in);
  ASSERT_GE(was.at("metrics").size(), metric_defs().size()) << "the dump lists the whole catalogue";
  expect_kept(was.at("metrics"), now.at("metrics"), "metric");
  expect_kept(was.at("families"), now.at("families"), "figure family");
  expect_kept(was.at("aliases"), now.at("aliases"), "alias");
}

}  // namespace
}  // namespace drivelab::results
