// The replayer's summaries: a trace's (summarize, one pass of trace/stat.hpp's statistics) and
// the per-interval sample's clear and merge (replay.hpp).
#include <algorithm>
#include <cstdint>

#include "drivelab/trace/stat.hpp"
#include "drivelab/vdi/replay.hpp"

namespace drivelab::vdi {

double TraceSummary::iops() const noexcept {
  const double d = duration_s();
  return d > 0 ? static_cast<double>(reads + writes) / d : 0.0;
}

TraceSummary summarize(trace::TraceSource& source) {
  // One pass with the trace statistics of `drivelab trace stat` (trace/stat.hpp).
  const trace::TraceStats st = trace::compute_trace_stats(source);
  TraceSummary s;
  s.ios = st.ios;
  s.reads = st.ops[static_cast<int>(trace::TraceOp::read)].count;
  s.writes = st.ops[static_cast<int>(trace::TraceOp::write)].count;
  s.other = st.ios - s.reads - s.writes;
  s.flushes = st.flushes();
  s.fua = st.fua;
  s.discards = st.ops[static_cast<int>(trace::TraceOp::discard)].count;
  s.read_bytes = st.ops[static_cast<int>(trace::TraceOp::read)].bytes;
  s.write_bytes = st.ops[static_cast<int>(trace::TraceOp::write)].bytes;
  s.first_ns = st.first_time_ns;
  s.last_ns = st.last_time_ns;
  s.out_of_order = st.out_of_order;
  s.max_backward_ns = st.max_backward_ns;
  // The size histogram's bucket i holds sizes in (2^(i-1), 2^i]: the highest non-empty bucket's
  // bound is at least the largest request (and at most twice it): the slot buffers' size.
  for (std::size_t i = st.size_histogram.size(); i-- > 0;)
    if (st.size_histogram[i] > 0) {
      s.max_size_bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{1} << i, 0xFFFFFFFFu));
      break;
    }
  for (const auto& d : st.devices) {
    s.devices.push_back(d.name);
    s.device_end_bytes.push_back(d.max_end_bytes);
  }
  s.tick_ns = std::max<std::int64_t>(1, st.tick_ns);
  s.description = st.source;
  return s;
}

void ReplaySample::clear() {
  reset();
  read_bytes = write_bytes = errors = 0;
}

void ReplaySample::merge(const ReplaySample& o) {
  OpenLoopSample::merge(o);
  read_bytes += o.read_bytes;
  write_bytes += o.write_bytes;
  errors += o.errors;
}

}  // namespace drivelab::vdi
