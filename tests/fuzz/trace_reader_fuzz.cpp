// libFuzzer target for one trace reader (FUZZ_FORMAT, set by tests/fuzz/CMakeLists.txt; `automatic`
// also fuzzes format detection). Malformed input must end in TraceFormatError ("file:line:
// reason"); any other exception, a crash or a sanitizer report is a bug. Run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "drivelab/trace/readers.hpp"
#include "input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace drivelab::trace;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    auto source = detail::open_trace_memory(std::move(bytes), "fuzz.trace", TraceFormat::FUZZ_FORMAT);
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
