#include <fmt/format.h>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/results/config_json.hpp"
#include "drivelab/emulators/precondition.hpp"
#include "drivelab/emulators/region.hpp"

namespace drivelab::emulators {
namespace {

constexpr std::uint64_t kMaxXfer = std::uint64_t{64} << 20;

void check_multiple_of_512(const config::Node& section, const char* key, std::uint64_t& bytes, std::uint64_t fallback) {
  if (bytes % 512 == 0) return;
  section.child(key).error(fmt::format("{} must be a multiple of 512 bytes, found {}", key, format_size(bytes)));
  bytes = fallback;
}

}  // namespace

PreconditionConfig decode_precondition(const config::Node& section) {
  PreconditionConfig c;
  config::MapReader r(section);
  r.choice("engine", c.engine, {{"io_uring", std::string("io_uring")}, {"psync", std::string("psync")}});
  c.region = decode_region(r.section("region"));
  if (r.size("xfersize", c.xfersize_bytes, {.min = 512, .max = kMaxXfer}))
    check_multiple_of_512(section, "xfersize", c.xfersize_bytes, 128 * 1024);
  r.integer("iodepth", c.iodepth, {.min = 1, .max = 4096});
  r.integer("random_passes", c.random_passes, {.min = 0, .max = 100});
  if (r.size("random_xfersize", c.random_xfersize_bytes, {.min = 512, .max = kMaxXfer}))
    check_multiple_of_512(section, "random_xfersize", c.random_xfersize_bytes, 4096);
  r.integer("random_iodepth", c.random_iodepth, {.min = 1, .max = 4096});
  r.size("random_pass_size", c.random_pass_size_bytes, {.min = 1 << 20});
  r.string("for_test", c.for_test);
  r.size("file_size", c.file_size_bytes, {.min = 1 << 20});
  r.finish();
  return c;
}

results::Json to_json(const PreconditionConfig& c) {
  results::Json j{{"engine", c.engine},
                  {"region", region_json(c.region)},
                  {"xfersize", results::size_json(c.xfersize_bytes)},
                  {"iodepth", c.iodepth},
                  {"random_passes", c.random_passes},
                  {"random_xfersize", results::size_json(c.random_xfersize_bytes)},
                  {"random_iodepth", c.random_iodepth},
                  {"file_size", results::size_json(c.file_size_bytes)}};
  if (c.random_pass_size_bytes > 0) j["random_pass_size"] = results::size_json(c.random_pass_size_bytes);
  if (!c.for_test.empty()) j["for_test"] = c.for_test;
  if (j["region"].is_null()) j.erase("region");
  return j;
}

}  // namespace drivelab::emulators
