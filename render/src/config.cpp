#include <fmt/format.h>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/render/render.hpp"
#include "drivelab/render/scene.hpp"

namespace drivelab::render {
namespace {}  // namespace

std::uint64_t RenderConfig::point_count() const {
  if (points > 0) return points;
  const PointLayout* l = find_point_layout(layout);
  const double bpp = l ? l->bytes_per_point : 64;
  return static_cast<std::uint64_t>(static_cast<double>(memory_budget_bytes) * working_set_factor / bpp);
}

RenderConfig decode_render(const config::Node& section) {
  RenderConfig c;
  config::MapReader r(section);
  r.choice("mode", c.mode, kMemoryModeNames);
  r.size("memory_budget", c.memory_budget_bytes, {.min = std::uint64_t{4} << 20});
  std::int64_t points = 0;
  if (r.integer("points", points, {.min = 1000, .max = 4'000'000'000})) c.points = static_cast<std::uint64_t>(points);
  r.number("working_set_factor", c.working_set_factor, {.min = 0.01, .max = 64.0});
  if (const config::Node n = r.section("layout"); n.defined() && find_point_layout(n.scalar()) == nullptr)
    n.error(fmt::format("layout must be one of: flip, flip-lite; found '{}'", n.scalar()));
  else if (n.defined())
    c.layout = n.scalar();
  r.size("block_size", c.block_bytes, {.min = std::uint64_t{64} << 10, .max = std::uint64_t{1} << 30});
  r.integer("threads", c.threads, {.min = 0, .max = 1024});
  r.boolean("process", c.process);
  r.boolean("write", c.write);
  r.choice("bucket_grid", c.bucket_grid, {{"4", 4u}, {"8", 8u}, {"16", 16u}, {"32", 32u}, {"64", 64u}});
  r.integer("zstd_level", c.zstd_level, {.min = -5, .max = 19});
  r.size("swap_file_size", c.swap_file_bytes);
  r.boolean("baseline", c.baseline);
  r.boolean("keep_scene", c.keep_scene);
  r.finish();
  if (c.point_count() >= (std::uint64_t{1} << 32))
    section.error(
        fmt::format("{} points are too many (at most 4,294,967,295: point indices are 32-bit)", c.point_count()));
  if (c.point_count() < 1000)
    section.error(
        fmt::format("only {} points: raise memory_budget or working_set_factor, or set points", c.point_count()));
  return c;
}

results::Json to_json(const RenderConfig& c) {
  const PointLayout* l = find_point_layout(c.layout);
  return results::Json{{"mode", to_string(c.mode)},
                       {"memory_budget_bytes", c.memory_budget_bytes},
                       {"points", c.point_count()},
                       {"working_set_factor", c.working_set_factor},
                       {"layout", c.layout},
                       {"bytes_per_point", l ? l->bytes_per_point : 0},
                       {"unpacked_bytes", c.point_count() * (l ? l->bytes_per_point : 0)},
                       {"block_size_bytes", c.block_bytes},
                       {"threads", c.threads},
                       {"process", c.process},
                       {"write", c.write},
                       {"bucket_grid", c.bucket_grid},
                       {"zstd_level", c.zstd_level},
                       {"swap_file_size_bytes", c.swap_file_bytes},
                       {"baseline", c.baseline},
                       {"keep_scene", c.keep_scene}};
}

}  // namespace drivelab::render
