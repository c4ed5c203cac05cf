// The metric catalogue's lookups: the declarations of catalogue.hpp, the members of its figure
// families and the aliases, by name. The one place a metric name is taken apart (a family
// member's name is built here from its prefix, figure and unit).
#include "drivelab/results/catalogue.hpp"

#include <algorithm>
#include <charconv>
#include <deque>
#include <unordered_map>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/names.hpp"

namespace drivelab::results {
namespace {

constexpr std::array<std::pair<Unit, std::string_view>, 17> kUnitTexts{{
    {Unit::per_s, "1/s"},
    {Unit::per_min, "1/min"},
    {Unit::per_cpu_s, "1/cpu-s"},
    {Unit::mb_s, "MB/s"},
    {Unit::mib, "MiB"},
    {Unit::bytes, "bytes"},
    {Unit::pages, "pages"},
    {Unit::count, "count"},
    {Unit::ratio, "ratio"},
    {Unit::pct, "%"},
    {Unit::boolean, "bool"},
    {Unit::s, "s"},
    {Unit::ms, "ms"},
    {Unit::us, "us"},
    {Unit::ns, "ns"},
    {Unit::celsius, "°C"},
    {Unit::none, ""},
}};

/// A family's figures: the name's part and MetricSource::figure's word (latency_metrics.hpp).
struct FigureName {
  std::string_view name;
  std::string_view word;
};
constexpr std::array<FigureName, 10> kFigures{{{"avg", "avg"},
                                               {"min", "min"},
                                               {"max", "max"},
                                               {"sum", "sum"},
                                               {"p50", "p50"},
                                               {"p90", "p90"},
                                               {"p95", "p95"},
                                               {"p99", "p99"},
                                               {"p999", "p99.9"},
                                               {"p99_9", "p99.9"}}};
constexpr std::array<Unit, 2> kFigureUnits{Unit::us, Unit::ms};

struct Catalogue {
  std::deque<std::string> strings;  // names and descriptions of family members (stable storage)
  std::deque<MetricDef> members;
  std::unordered_map<std::string_view, const MetricDef*> by_name;

  Catalogue() {
    for (const MetricDef* d : catalogue::kAll) add(d->name, d);
    for (const FigureFamily* f : catalogue::kFamilies) {
      for (const FigureName& fig : kFigures) {
        for (Unit u : kFigureUnits) {
          const std::string full = fmt::format("{}_{}_{}", f->prefix, fig.name, unit_text(u));
          if (const auto it = by_name.find(full); it != by_name.end()) {
            // Declared in kAll (catalogue.hpp names it for its call sites): it must say so.
            if (it->second->family != f->prefix || it->second->figure != fig.word || it->second->unit != u)
              throw InternalError(fmt::format("metric '{}' is declared outside its family '{}'", full, f->prefix));
            continue;
          }
          const std::string_view name = strings.emplace_back(full);
          const std::string_view description = strings.emplace_back(fmt::format("{}: {}", f->description, fig.word));
          add(name, &members.emplace_back(catalogue::family_member(*f, name, fig.word, u, description)));
        }
      }
    }
    for (const MetricAlias& a : catalogue::kAliases) {
      const auto it = by_name.find(a.name);
      if (it == by_name.end())
        throw InternalError(fmt::format("metric alias '{}' of unknown '{}'", a.old_name, a.name));
      add(a.old_name, it->second);
    }
  }

  void add(std::string_view name, const MetricDef* d) {
    if (!by_name.emplace(name, d).second) throw InternalError(fmt::format("metric '{}' declared twice", name));
  }
};

const Catalogue& the_catalogue() {
  static const Catalogue c;
  return c;
}

}  // namespace

std::string_view unit_text(Unit u) noexcept {
  for (const auto& [unit, text] : kUnitTexts)
    if (unit == u) return text;
  return {};
}

std::optional<Unit> unit_from_text(std::string_view text) noexcept {
  for (const auto& [unit, t] : kUnitTexts)
    if (t == text) return unit;
  return std::nullopt;
}

std::string_view to_string(MetricKind k) noexcept {
  switch (k) {
    case MetricKind::operations: return "operations";
    case MetricKind::throughput: return "throughput";
    case MetricKind::latency: return "latency";
    case MetricKind::lateness: return "lateness";
    case MetricKind::errors: return "errors";
    case MetricKind::count: return "count";
    case MetricKind::cpu: return "cpu";
    case MetricKind::memory: return "memory";
    case MetricKind::device: return "device";
    case MetricKind::health: return "health";
    case MetricKind::time: return "time";
    case MetricKind::setting: return "setting";
    case MetricKind::progress: return "progress";
  }
  return "?";
}

std::string_view to_string(Direction d) noexcept {
  static constexpr EnumNames<Direction, 3> kNames{
      {{"higher", Direction::higher}, {"lower", Direction::lower}, {"none", Direction::none}}};
  return name_of(kNames, d);
}

const MetricDef& figure_def(const FigureFamily& family, std::string_view figure_name, Unit unit) {
  const std::string name = fmt::format("{}_{}_{}", family.prefix, figure_name, unit_text(unit));
  const MetricDef* d = find_metric_def(name);
  if (d == nullptr || d->family != family.prefix)
    throw InternalError(fmt::format("metric '{}' is not a figure of the catalogue's family '{}'", name, family.prefix));
  return *d;
}

const MetricDef* find_metric_def(std::string_view name) noexcept {
  try {
    const Catalogue& c = the_catalogue();
    const auto it = c.by_name.find(name);
    return it == c.by_name.end() ? nullptr : it->second;
  } catch (...) {
    return nullptr;  // a catalogue that does not build: catalogue_test fails on it
  }
}

std::span<const MetricDef* const> metric_defs() noexcept { return catalogue::kAll; }

std::span<const FigureFamily* const> figure_families() noexcept { return catalogue::kFamilies; }

std::span<const MetricAlias> metric_aliases() noexcept { return catalogue::kAliases; }

std::optional<double> figure_percentile(const MetricDef& def) noexcept {
  const std::string_view w = def.figure;
  if (w.size() < 2 || w.front() != 'p') return std::nullopt;
  double q = 0;
  const auto [end, ec] = std::from_chars(w.data() + 1, w.data() + w.size(), q);
  if (ec != std::errc() || end != w.data() + w.size()) return std::nullopt;
  return q;
}

double seconds_per(Unit u) noexcept {
  switch (u) {
    case Unit::s: return 1.0;
    case Unit::ms: return 1e-3;
    case Unit::us: return 1e-6;
    case Unit::ns: return 1e-9;
    default: return 0.0;
  }
}

}  // namespace drivelab::results
