// One streaming pass of statistics over a trace (stat.hpp).
#include "drivelab/trace/stat.hpp"

#include <algorithm>
#include <bit>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace drivelab::trace {
namespace {

constexpr std::array<const char*, 4> kOpNames{"reads", "writes", "flushes", "discards"};

std::size_t size_bucket(std::uint32_t size_bytes) {
  return size_bytes <= 1 ? 0 : static_cast<std::size_t>(std::bit_width(size_bytes - 1));
}

std::string human_bytes(std::uint64_t bytes) {
  if (bytes >= (1ULL << 30)) return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1ULL << 30));
  if (bytes >= (1ULL << 20)) return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1ULL << 20));
  if (bytes >= 1024) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
  return fmt::format("{} B", bytes);
}

std::string size_label(std::size_t bucket) {
  const std::uint64_t le = bucket == 0 ? 1 : (1ULL << bucket);
  if (le >= (1ULL << 20)) return fmt::format("{}M", le >> 20);
  if (le >= 1024) return fmt::format("{}K", le >> 10);
  return fmt::format("{}", le);
}

}  // namespace

double TraceStats::mean_iops() const noexcept {
  const std::int64_t d = duration_ns();
  return d > 0 ? static_cast<double>(ios) * 1e9 / static_cast<double>(d) : 0.0;
}

// The windows tile [first, last]: bucket i covers [i W, (i+1) W) (bucket 0 also the requests before
// 0) cut to [first, last]; a cut bucket at the start joins the next, one at the end the previous.
double TraceStats::peak_iops() const noexcept {
  if (duration_ns() <= 0 || iops_buckets.empty()) return 0.0;
  const std::int64_t w = rate_bucket_ns;
  const auto rate = [](std::uint64_t count, std::int64_t width) {
    return static_cast<double>(count) * 1e9 / static_cast<double>(width);
  };
  double peak = 0;
  std::uint64_t last_count = 0, pending_count = 0;  // the last window completed; the one being filled
  std::int64_t last_width = 0, pending_width = 0;
  for (std::size_t i = first_time_ns <= 0 ? 0 : static_cast<std::size_t>(first_time_ns / w); i < iops_buckets.size();
       ++i) {
    const std::int64_t lo = i == 0 ? std::min<std::int64_t>(first_time_ns, 0) : static_cast<std::int64_t>(i) * w;
    const std::int64_t hi = static_cast<std::int64_t>(i + 1) * w;
    const std::int64_t covered = std::max<std::int64_t>(0, std::min(hi, last_time_ns) - std::max(lo, first_time_ns));
    pending_count += iops_buckets[i];
    pending_width += covered;
    if (pending_width >= w) {
      if (last_width > 0) peak = std::max(peak, rate(last_count, last_width));
      last_count = pending_count;
      last_width = pending_width;
      pending_count = 0;
      pending_width = 0;
    }
  }
  last_count += pending_count;  // a cut bucket at the end (or the whole trace) joins the last window
  last_width += pending_width;
  peak = std::max(peak, rate(last_count, last_width));
  return std::max(peak, mean_iops());  // equal rates can round either way
}

std::vector<std::string> plausibility_warnings(const TraceStats& s) {
  std::vector<std::string> out;
  if (s.ios < 2 || s.duration_ns() <= 0) return out;
  constexpr double kDayNs = 86'400e9;
  const double mean = s.mean_iops();
  const double span_ns = static_cast<double>(s.duration_ns());
  std::string why;
  if (mean < 1.0) why = fmt::format("a mean rate of {:.3g} IOPS is under 1 IOPS", mean);
  if (span_ns >= kDayNs && s.ios < 100'000) {
    why += fmt::format("{}{} requests span {:.1f} days", why.empty() ? "" : "; ", s.ios, span_ns / kDayNs);
  }
  if (mean > 1e7) why = fmt::format("a mean rate of {:.3g} IOPS is above 10 million IOPS", mean);
  if (!why.empty()) {
    out.push_back(
        fmt::format("{}: are the timestamps really {} ({})? If not, give their unit with --time-unit "
                    "(time_unit: in a protocol)",
                    why, s.clock.unit, s.clock.origin));
  }
  return out;
}

TraceStats compute_trace_stats(TraceSource& source) {
  TraceStats s;
  s.source = source.describe();
  s.tick_ns = source.tick_ns();
  s.clock = source.clock();
  TraceIo io;
  std::int64_t previous = 0;
  while (source.next(io)) {
    if (s.ios == 0) {
      s.first_time_ns = s.last_time_ns = io.time_ns;
    } else if (io.time_ns < previous) {
      ++s.out_of_order;
      s.max_backward_ns = std::max(s.max_backward_ns, previous - io.time_ns);
    }
    previous = io.time_ns;
    s.first_time_ns = std::min(s.first_time_ns, io.time_ns);
    s.last_time_ns = std::max(s.last_time_ns, io.time_ns);
    ++s.ios;
    s.bytes += io.size_bytes;
    auto& op = s.ops[static_cast<std::size_t>(io.op)];
    ++op.count;
    op.bytes += io.size_bytes;
    if ((io.flags & TraceIo::kPreflush) != 0 && io.op != TraceOp::flush) ++s.preflushes;
    if ((io.flags & TraceIo::kFua) != 0) ++s.fua;
    if (io.op != TraceOp::flush) ++s.size_histogram[size_bucket(io.size_bytes)];

    // IOPS over time from time 0; requests before 0 (unsorted traces) count in the first bucket.
    std::uint64_t bucket = io.time_ns <= 0 ? 0 : static_cast<std::uint64_t>(io.time_ns / s.rate_bucket_ns);
    while (bucket >= TraceStats::kMaxRateBuckets) {
      std::vector<std::uint64_t> merged((s.iops_buckets.size() + 1) / 2, 0);
      for (std::size_t i = 0; i < s.iops_buckets.size(); ++i) merged[i / 2] += s.iops_buckets[i];
      s.iops_buckets = std::move(merged);
      s.rate_bucket_ns *= 2;
      bucket = static_cast<std::uint64_t>(io.time_ns / s.rate_bucket_ns);
    }
    if (bucket >= s.iops_buckets.size()) s.iops_buckets.resize(bucket + 1, 0);
    ++s.iops_buckets[bucket];

    if (io.device >= s.devices.size()) s.devices.resize(io.device + 1);
    DeviceStats& d = s.devices[io.device];
    ++d.ios;
    d.bytes += io.size_bytes;
    if (io.op != TraceOp::flush) {
      const std::uint64_t end = io.offset_bytes + io.size_bytes;
      d.min_offset_bytes = d.has_span ? std::min(d.min_offset_bytes, io.offset_bytes) : io.offset_bytes;
      d.max_end_bytes = d.has_span ? std::max(d.max_end_bytes, end) : end;
      d.has_span = true;
    }
  }
  const auto& names = source.devices();
  if (s.devices.size() < names.size()) s.devices.resize(names.size());
  for (std::size_t i = 0; i < s.devices.size(); ++i) {
    s.devices[i].name = i < names.size() ? names[i] : std::to_string(i);
  }
  s.warnings = plausibility_warnings(s);
  return s;
}

std::string format_trace_stats(const TraceStats& s) {
  std::string out = fmt::format("trace      {}\n", s.source);
  out += fmt::format("clock      {}, {}\n", s.clock.unit, s.clock.origin);
  out += fmt::format("I/Os       {}\n", s.ios);
  out += fmt::format("bytes      {} ({})\n", s.bytes, human_bytes(s.bytes));
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const OpTotals& op = s.ops[i];
    if (op.count == 0 && i >= 2) continue;
    out += fmt::format("{:<10} {} I/Os, {} bytes ({}), mean {} bytes\n", kOpNames[i], op.count, op.bytes,
                       human_bytes(op.bytes), op.count ? op.bytes / op.count : 0);
  }
  if (s.preflushes)
    out += fmt::format("{:<10} {} (writes that carry a flush before them)\n", "preflushes", s.preflushes);
  if (s.fua) out += fmt::format("{:<10} {} (forced unit access)\n", "FUA", s.fua);
  out += fmt::format("duration   {:.3f} s (timestamp tick {} ns)\n", static_cast<double>(s.duration_ns()) / 1e9,
                     s.tick_ns);
  if (s.out_of_order)
    out += fmt::format("unsorted   {} requests arrive before their predecessor, at most {:.6f} s before it\n",
                       s.out_of_order, static_cast<double>(s.max_backward_ns) / 1e9);
  out += fmt::format("IOPS       mean {:.1f}, peak {:.1f} (over {} s windows)\n", s.mean_iops(), s.peak_iops(),
                     static_cast<double>(s.rate_bucket_ns) / 1e9);
  for (const std::string& w : s.warnings) out += fmt::format("warning    {}\n", w);
  out += "sizes      (bytes <= : count)\n";
  for (std::size_t i = 0; i < s.size_histogram.size(); ++i) {
    if (s.size_histogram[i]) out += fmt::format("  {:>6} : {}\n", size_label(i), s.size_histogram[i]);
  }
  out += fmt::format("devices    {}\n", s.devices.size());
  for (const DeviceStats& d : s.devices) {
    out += fmt::format("  {:<12} {} I/Os, {}, LBA span ", d.name, d.ios, human_bytes(d.bytes));
    out += d.has_span ? fmt::format("[{}, {}) bytes = {}\n", d.min_offset_bytes, d.max_end_bytes,
                                    human_bytes(d.max_end_bytes - d.min_offset_bytes))
                      : std::string("none\n");
  }
  const std::size_t shown = std::min<std::size_t>(s.iops_buckets.size(), 10);
  // Counts, not rates: a bucket is 1 s only until a long trace doubles it (issue 29: they were
  // labelled "IOPS" at any width).
  out += fmt::format("requests per {} s bucket over time ({} buckets; first {}):",
                     static_cast<double>(s.rate_bucket_ns) / 1e9, s.iops_buckets.size(), shown);
  for (std::size_t i = 0; i < shown; ++i) out += fmt::format(" {}", s.iops_buckets[i]);
  out += "\n";
  return out;
}

std::string trace_stats_json(const TraceStats& s) {
  nlohmann::ordered_json j;
  j["trace"] = s.source;
  j["ios"] = s.ios;
  j["bytes"] = s.bytes;
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    j[kOpNames[i]] = {{"count", s.ops[i].count}, {"bytes", s.ops[i].bytes}};
  }
  auto sizes = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < s.size_histogram.size(); ++i) {
    if (s.size_histogram[i])
      sizes.push_back({{"le_bytes", i == 0 ? 1ULL : (1ULL << i)}, {"count", s.size_histogram[i]}});
  }
  j["preflushes"] = s.preflushes;
  j["fua"] = s.fua;
  j["size_histogram"] = sizes;
  j["time_unit"] = s.clock.unit;
  j["time_unit_origin"] = s.clock.origin;
  j["tick_ns"] = s.tick_ns;
  j["duration_s"] = static_cast<double>(s.duration_ns()) / 1e9;
  j["out_of_order"] = s.out_of_order;
  j["max_backward_s"] = static_cast<double>(s.max_backward_ns) / 1e9;
  j["mean_iops"] = s.mean_iops();
  j["peak_iops"] = s.peak_iops();
  j["iops"] = {{"bucket_s", static_cast<double>(s.rate_bucket_ns) / 1e9}, {"counts", s.iops_buckets}};
  auto devices = nlohmann::ordered_json::array();
  for (const DeviceStats& d : s.devices) {
    nlohmann::ordered_json dj{{"name", d.name}, {"ios", d.ios}, {"bytes", d.bytes}};
    if (d.has_span) {
      dj["lba_min_bytes"] = d.min_offset_bytes;
      dj["lba_max_bytes"] = d.max_end_bytes;
    }
    devices.push_back(dj);
  }
  j["devices"] = devices;
  j["warnings"] = s.warnings;
  return j.dump(2) + "\n";
}

}  // namespace drivelab::trace
