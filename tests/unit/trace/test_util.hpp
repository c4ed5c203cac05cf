#pragma once
// Shared helpers of the trace tests: sample paths and reading a source to the end.
#include <sstream>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "drivelab/trace/readers.hpp"
#include "drivelab/trace/source.hpp"

namespace drivelab::trace {
/// gtest prints a TraceFormat by its name.
inline void PrintTo(TraceFormat format, std::ostream* os) { *os << to_string(format); }
}  // namespace drivelab::trace

namespace drivelab::trace::testing {

inline std::filesystem::path sample(const std::string& name) {
  return std::filesystem::path(DRIVELAB_SOURCE_DIR) / "tests/data/traces" / name;
}
/// The project's shared real traces live beside the checkout (../shared/data/traces), not in it:
/// a clone elsewhere has none, and the tests that read them skip (SKIP_WITHOUT_SHARED_TRACE).
inline std::filesystem::path shared_trace(const std::string& name) {
  return std::filesystem::path(DRIVELAB_SOURCE_DIR) / "../shared/data/traces" / name;
}
#define SKIP_WITHOUT_SHARED_TRACE(name)                                         \
  if (!std::filesystem::exists(::drivelab::trace::testing::shared_trace(name))) \
  GTEST_SKIP() << "no " << ::drivelab::trace::testing::shared_trace(name) << " beside this checkout"

inline std::vector<TraceIo> read_all(TraceSource& source) {
  std::vector<TraceIo> out;
  TraceIo io;
  while (source.next(io)) out.push_back(io);
  return out;
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
/// The whole file as bytes.
inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;  // not istreambuf_iterator: GCC 14 -Wnull-dereference in libstdc++
  text << in.rdbuf();
  return text.str();
}

/// A trace held in memory (the replayer's tests build the same from the models).
class VectorSource final : public TraceSource {
 public:
  VectorSource(std::vector<TraceIo> ios, std::vector<std::string> devices, std::int64_t tick_ns = 1000)
      : ios_(std::move(ios)), devices_(std::move(devices)), tick_ns_(tick_ns) {}
  bool next(TraceIo& io) override {
    if (pos_ == ios_.size()) return false;
    io = ios_[pos_++];
    return true;
  }
  const std::vector<std::string>& devices() const override { return devices_; }
  std::int64_t tick_ns() const override { return tick_ns_; }
  std::string describe() const override { return "in-memory trace"; }

 private:
  std::vector<TraceIo> ios_;
  std::vector<std::string> devices_;
  std::int64_t tick_ns_;
  std::size_t pos_ = 0;
};

/// Field-by-field equality of two requests.
inline bool same_io(const TraceIo& a, const TraceIo& b) {
  return a.time_ns == b.time_ns && a.offset_bytes == b.offset_bytes && a.size_bytes == b.size_bytes &&
         a.device == b.device && a.op == b.op && a.flags == b.flags;
}

}  // namespace drivelab::trace::testing
