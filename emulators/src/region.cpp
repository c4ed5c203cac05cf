#include "drivelab/emulators/region.hpp"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/core/units.hpp"

namespace drivelab::emulators {
namespace {

/// A percentage ("25%", 0..100) or a size ("10GiB", "4096"); zero only where `allow_zero`.
std::optional<io::Extent> decode_extent(const config::Node& node, bool allow_zero) {
  if (!node.is_scalar()) {
    node.error("expected a percentage (25%) or a size (10GiB)");
    return std::nullopt;
  }
  const std::string text = node.scalar();
  if (!text.empty() && text.back() == '%') {
    const std::string number = text.substr(0, text.size() - 1);
    char* end = nullptr;
    const double p = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(p)) {
      node.error(fmt::format("expected a percentage (25%) or a size (10GiB), found '{}'", text));
      return std::nullopt;
    }
    if (p < 0 || p > 100 || (!allow_zero && p == 0)) {
      node.error(fmt::format("a percentage must be {} 0 and at most 100, found '{}'", allow_zero ? "at least" : "above",
                             text));
      return std::nullopt;
    }
    return io::Extent::of_percent(p);
  }
  try {
    const std::uint64_t bytes = parse_size(text);
    if (bytes == 0 && !allow_zero) {
      node.error("a region size must be above 0");
      return std::nullopt;
    }
    return io::Extent::of_bytes(bytes);
  } catch (const std::invalid_argument& e) {
    node.error(fmt::format("expected a percentage (25%) or a size (10GiB), found '{}': {}", text, e.what()));
    return std::nullopt;
  }
}

results::Json extent_json(const io::Extent& e) {
  if (e.is_percent) return fmt::format("{:g}%", e.percent);
  const std::string text = format_size(e.bytes);
  if (text.find('.') != std::string::npos) return e.bytes;
  std::string compact;  // "10 GiB" -> "10GiB": one token, as users write sizes
  for (char c : text)
    if (c != ' ') compact += c;
  return compact;
}

}  // namespace

std::optional<io::Region> decode_region(const config::Node& node) {
  if (!node.defined() || node.is_null()) return std::nullopt;
  if (node.is_scalar()) {
    try {
      return io::parse_region(node.scalar());
    } catch (const std::invalid_argument& e) {
      node.error(e.what());
      return std::nullopt;
    }
  }
  if (!node.is_map()) {
    node.error("expected 'first 25%' or a mapping {offset: 0%, size: 25%}");
    return std::nullopt;
  }
  io::Region region;
  bool ok = true;
  config::MapReader r(node);
  if (const config::Node off = r.section("offset"); off.defined()) {
    const auto e = decode_extent(off, true);
    ok = ok && e.has_value();
    if (e) region.offset = *e;
  }
  if (const config::Node size = r.section("size"); size.defined()) {
    const auto e = decode_extent(size, false);
    ok = ok && e.has_value();
    if (e) region.size = *e;
  }
  r.finish();
  if (!ok) return std::nullopt;
  return region;
}

results::Json region_json(const std::optional<io::Region>& region) {
  if (!region) return nullptr;
  const bool at_start = region->offset.is_percent ? region->offset.percent == 0 : region->offset.bytes == 0;
  if (!at_start) return results::Json{{"offset", extent_json(region->offset)}, {"size", extent_json(region->size)}};
  if (region->size == io::Extent::of_percent(100)) return "all";
  const results::Json size = extent_json(region->size);
  return "first " + (size.is_string() ? size.get<std::string>() : std::to_string(size.get<std::uint64_t>()));
}

}  // namespace drivelab::emulators
