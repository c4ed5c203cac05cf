// libFuzzer target for the trace readers: one binary, the format chosen by DRIVELAB_FUZZ_FORMAT
// (a registered name, or `auto`, which also fuzzes format detection). Malformed input must end
// in TraceFormatError ("file:line: reason"); any other exception, a crash or a sanitizer report
// is a bug. The formats come from the registration list (trace/src/formats.cpp):
// DRIVELAB_FUZZ_SEEDS=DIR writes each row's detection sample to DIR/NAME/ (and every sample to
// DIR/auto/), prints "NAME SEED_FILE" per format, and exits; scripts/fuzz.sh runs one target per
// printed name.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "drivelab/trace/readers.hpp"
#include "input.hpp"

namespace {

drivelab::trace::TraceFormat g_format;

void write_seeds(const std::filesystem::path& dir) {
  using namespace drivelab::trace;
  std::filesystem::create_directories(dir / "auto");
  for (const TraceFormatInfo* row : trace_formats()) {
    const std::string name(row->name);
    std::filesystem::create_directories(dir / name);
    std::ofstream(dir / name / "sample", std::ios::binary) << row->sample;
    std::ofstream(dir / "auto" / name, std::ios::binary) << row->sample;
    std::printf("%s %.*s\n", name.c_str(), static_cast<int>(row->seed_file.size()), row->seed_file.data());
  }
  std::printf("auto\n");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* seeds = std::getenv("DRIVELAB_FUZZ_SEEDS")) {
    write_seeds(seeds);
    std::exit(0);
  }
  const char* name = std::getenv("DRIVELAB_FUZZ_FORMAT");
  if (name == nullptr) {
    std::fprintf(stderr, "set DRIVELAB_FUZZ_FORMAT to a trace format name or auto (scripts/fuzz.sh)\n");
    std::exit(2);
  }
  g_format = drivelab::trace::parse_trace_format(name);  // ConfigError for an unknown name
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace drivelab::trace;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    auto source = detail::open_trace_memory(std::move(bytes), "fuzz.trace", g_format);
    TraceIo io;
    std::uint64_t count = 0;
    while (source->next(io)) {
      // Every request names a device the source has listed.
      if (io.device >= source->devices().size()) std::abort();
      if (static_cast<unsigned>(io.op) > static_cast<unsigned>(TraceOp::discard)) std::abort();
      ++count;
    }
    if (source->tick_ns() <= 0) std::abort();
    (void)source->describe();
    (void)count;
  } catch (const TraceFormatError& e) {
    // The contract: "name:line: reason".
    if (std::string(e.what()).rfind("fuzz.trace:", 0) != 0) std::abort();
  }
  return 0;
}
