// libFuzzer target for the YAML toolkit (config/): any bytes as a config file. Loading must end
// (yaml-cpp 0.7's LoadAll does not on some inputs, jbeder/yaml-cpp#1040), a malformed file must
// end in diagnostics, and every diagnostic must be printable: well-formed UTF-8 without control
// characters, however binary the input. Run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "drivelab/config/map_reader.hpp"

namespace {

using namespace drivelab::config;

bool printable_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F) return false;
      ++i;
      continue;
    }
    std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (n == 0 || c > 0xF4 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

// Reads a mapping as the decoders do: a few typed keys, then every entry as a nested section.
void walk(const Node& node, int depth) {
  if (depth > 8) return;
  if (node.is_sequence()) {
    for (const Node& e : node.elements()) walk(e, depth + 1);
    return;
  }
  if (!node.is_map()) return;
  MapReader r(node);
  std::string name;
  std::int64_t count = 0;
  std::uint64_t bytes = 0;
  std::chrono::nanoseconds duration{};
  double pct = 0;
  r.string("name", name);
  r.integer("iodepth", count, {1, 1024});
  r.size("xfersize", bytes);
  r.duration("duration", duration);
  r.percent("rdpct", pct);
  for (const auto& [key, child] : node.entries()) {
    r.accept(key);
    walk(child, depth + 1);
  }
  r.finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Diagnostics diags;
  const Document doc = Document::load_string(text, "fuzz.yaml", diags);
  if (doc.loaded()) walk(doc.root(diags), 0);
  if (!doc.loaded() && diags.size() == 0) std::abort();  // a failed load always says why
  for (const Diagnostic& d : diags.items())
    if (!printable_utf8(d.to_string())) {
      std::fprintf(stderr, "not printable: %s\n", d.to_string().c_str());
      std::abort();
    }
  return 0;
}
