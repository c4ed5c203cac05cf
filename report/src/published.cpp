// The workloads behind the published-results CSV's test names, and whether a measured test ran
// the same one (docs/reporter.md "Published configurations": every entry with its evidence).
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "drivelab/core/units.hpp"
#include "drivelab/report/dataset.hpp"

namespace drivelab::report {
namespace {

using results::Json;

// The seed files of ../shared/seeds/ (the CSV's `source` column), by review.
constexpr std::string_view kXg8 = "000_948965f824cc5f36.txt";
constexpr std::string_view kXg6 = "001_ddcecffda6a7ac13.txt";
constexpr std::string_view kRocket = "002_44da36beee8a26fc.txt";
constexpr std::string_view kFl6 = "003_ae5cad58a7600376.txt";
constexpr std::string_view kCd6 = "004_0413b8abb055afcd.txt";
constexpr std::uint64_t kKiB = 1024;

bool tpcc_sqlserver_lab(std::string_view kind, const Json& c) {
  return kind == "tpcc" && c.value("warehouses", 0) == 1500 && c.value("users", 0) == 15000;
}

bool sysbench_mysql_lab(std::string_view kind, const Json& c) {
  return kind == "sysbench" && c.value("workload", std::string()) == "oltp_read_write" && c.value("tables", 0) == 100 &&
         c.value("table_size", 0) == 10'000'000 && c.value("threads", 0) == 32;
}

constexpr std::string_view kVdiTrace =
    "the lab's VDI trace capture (not public; kind vdi generates a model from other measurements, docs/vdi.md)";
constexpr std::string_view kDbMix = "the lab's vdbench database mix (its parameter files are not public)";

// "4K random read": a corner's transfer size (whole KiB), access and direction, as the reviews name it.
std::string corner_words(const IoWorkload& w) {
  return fmt::format("{}K {} {}", w.xfersize_bytes / kKiB, w.seekpct >= 100 ? "random" : "sequential",
                     w.rdpct >= 100 ? "read" : "write");
}

// A corner of the lab's vdbench curve, measured at its peak with `w.outstanding` threads.
PublishedConfiguration vdbench_corner(std::string test, std::vector<std::string_view> sources, const IoWorkload& w) {
  const std::string workload = fmt::format("vdbench {}, 100% {}s, {} threads: the peak of its curve to 120%",
                                           corner_words(w), w.rdpct >= 100 ? "read" : "write", w.outstanding);
  return {std::move(test), std::move(sources), workload, w, nullptr};
}

// A fio 3.28 spot check at queue depth `w.outstanding` (one job).
PublishedConfiguration fio_spot_check(std::string test, const IoWorkload& w) {
  return {std::move(test), {kFl6}, fmt::format("fio 3.28 {}, QD{}", corner_words(w), w.outstanding), w, nullptr};
}

const std::vector<PublishedConfiguration>& table() {
  static const std::vector<PublishedConfiguration> t = [] {
    const std::vector<std::string_view> all{kXg8, kXg6, kRocket, kCd6};
    std::vector<PublishedConfiguration> out{
        vdbench_corner("4k_random_read", all, {4 * kKiB, 100, 100, 128}),
        vdbench_corner("4k_random_write", all, {4 * kKiB, 0, 100, 128}),
        vdbench_corner("4k_random_read_high", {kCd6}, {4 * kKiB, 100, 100, 512}),
        vdbench_corner("4k_random_write_high", {kCd6}, {4 * kKiB, 0, 100, 512}),
        vdbench_corner("64k_sequential_read", {kXg6}, {64 * kKiB, 100, 0, 16}),
        vdbench_corner("64k_sequential_read", {kXg8, kRocket, kCd6}, {64 * kKiB, 100, 0, 32}),
        vdbench_corner("64k_sequential_write", {kRocket, kCd6}, {64 * kKiB, 0, 0, 16}),
        {"64k_sequential_write",
         {kXg8, kXg6},
         "vdbench 64K sequential write, 100% writes, threads not known (the latency is garbled in the source)",
         std::nullopt,
         nullptr},
        vdbench_corner("64k_sequential_read_high", {kCd6}, {64 * kKiB, 100, 0, 64}),
        vdbench_corner("64k_sequential_write_high", {kCd6}, {64 * kKiB, 0, 0, 64}),
        fio_spot_check("fio_seq_read_128k_qd32", {128 * kKiB, 100, 0, 32}),
        fio_spot_check("fio_seq_write_128k_qd32", {128 * kKiB, 0, 0, 32}),
        fio_spot_check("fio_rand_read_4k_qd256", {4 * kKiB, 100, 100, 256}),
        fio_spot_check("fio_rand_write_4k_qd32", {4 * kKiB, 0, 100, 32}),
        {"sqlserver_oltp", all,
         "SQL Server TPC-C (commercial tool), 1,500 warehouses, 15,000 virtual users per VM, 2.5 h + 30 min",
         std::nullopt, tpcc_sqlserver_lab},
        {"sysbench_oltp",
         {kCd6},
         "sysbench oltp_read_write on MySQL, 100 tables x 10,000,000 rows, 32 threads per VM, 2 h + 1 h",
         std::nullopt,
         sysbench_mysql_lab},
        {"houdini",
         {kXg6},
         "Houdini Maelstrom render, bare metal, 64 GB DRAM, swap file on the drive",
         std::nullopt,
         nullptr},
        {"video_stream",
         {kXg8},
         "Blackmagic Disk Speed Test (large file, frame-sized transfers)",
         std::nullopt,
         nullptr},
    };
    // Whole families with one configuration each: the VDI traces and the database mixes.
    for (const char* prefix : {"vdi_", "vdi_fc_", "vdi_lc_"})
      for (const char* phase : {"boot", "initial_login", "monday_login"})
        out.push_back({std::string(prefix) + phase, all, std::string(kVdiTrace), std::nullopt, nullptr});
    for (const char* mix : {"sql", "sql_90_10", "sql_80_20", "oracle", "oracle_90_10", "oracle_80_20"})
      out.push_back({mix, {kCd6}, std::string(kDbMix), std::nullopt, nullptr});
    return out;
  }();
  return t;
}

}  // namespace

const PublishedConfiguration* published_configuration(std::string_view test, std::string_view source) {
  for (const auto& c : table()) {
    if (c.test != test) continue;
    for (const auto s : c.sources)
      if (s == source) return &c;
  }
  return nullptr;
}

std::optional<IoWorkload> measured_io_workload(std::string_view kind, const Json& config) {
  if (!config.is_object()) return std::nullopt;
  try {
    if (kind == "io") {
      static const std::map<std::string, std::pair<double, double>, std::less<>> rw{
          {"randread", {100, 100}}, {"randwrite", {0, 100}}, {"read", {100, 0}}, {"write", {0, 0}}};
      const auto it = rw.find(config.value("rw", std::string()));
      if (it == rw.end() || !config.contains("xfersize") || !config["xfersize"].is_string()) return std::nullopt;
      const auto jobs = config.value("jobs", 1u);
      // psync has one I/O in flight per job whatever iodepth says (docs/io.md).
      const auto depth = config.value("engine", std::string()) == "psync" ? 1u : config.value("iodepth", 1u);
      return IoWorkload{parse_size(config["xfersize"].get<std::string>()), it->second.first, it->second.second,
                        jobs * depth};
    }
    if (kind == "vdbench") {
      const Json& w = config.value("workloads", Json::array());
      if (!w.is_array() || w.size() != 1) return std::nullopt;  // a mix is not a corner
      const Json& x = w[0].value("xfersize", Json::array());
      if (!x.is_array() || x.size() != 1 || !x[0].contains("size") || !x[0]["size"].is_string()) return std::nullopt;
      return IoWorkload{parse_size(x[0]["size"].get<std::string>()), w[0].value("rdpct", -1.0),
                        w[0].value("seekpct", -1.0), config.value("threads", 0u)};
    }
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): a malformed value is not a known workload
  }
  return std::nullopt;
}

std::string to_string(const IoWorkload& w) {
  const char* access = w.seekpct >= 100 ? "random" : w.seekpct <= 0 ? "sequential" : "mixed-seek";
  return fmt::format("{} {}, {:g}% reads, {} outstanding", format_size(w.xfersize_bytes), access, w.rdpct,
                     w.outstanding);
}

bool measures(const PublishedConfiguration& published, std::string_view kind, const Json& config) {
  if (published.matches != nullptr) return published.matches(kind, config);
  if (!published.io) return false;
  const auto m = measured_io_workload(kind, config);
  if (!m) return false;
  // seekpct: vdbench's 100 is random, 0 sequential; anything between is neither corner.
  return m->xfersize_bytes == published.io->xfersize_bytes && m->rdpct == published.io->rdpct &&
         m->seekpct == published.io->seekpct && m->outstanding == published.io->outstanding;
}

std::string describe_workload(std::string_view kind, const Json& config) {
  if (const auto w = measured_io_workload(kind, config)) return fmt::format("{}: {}", kind, to_string(*w));
  if (kind == "vdbench" && config.is_object() && config.contains("workloads") && config["workloads"].is_array())
    return fmt::format("vdbench: a mix of {} workloads, {} threads", config["workloads"].size(),
                       config.value("threads", 0u));
  return fmt::format("{}: another configuration", kind);
}

}  // namespace drivelab::report
