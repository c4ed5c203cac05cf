#include "render_emulator.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/core/units.hpp"

namespace drivelab::render::detail {
namespace cat = results::catalogue;
static_assert(cat::kRenderPhaseSeconds.size() == kPhaseNames.size(), "one catalogued time metric per render phase");
namespace fs = std::filesystem;
namespace {

std::uint64_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string k;
  std::uint64_t v = 0;
  std::string unit;
  while (in >> k >> v >> unit)
    if (k == "MemAvailable:") return v * 1024;
  return 0;
}

/// Bytes the pipeline holds at its peak besides the array: the packed scene (load), the 8 bytes
/// per point of the repack's bucket and order arrays, the repacked blocks (~ the packed size).
std::uint64_t working_set_bytes(const SceneInfo& s) { return s.unpacked_bytes + 2 * s.file_bytes + 8 * s.points; }

void write_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

}  // namespace

RenderEmulator::~RenderEmulator() = default;

PipelineOptions RenderEmulator::options(runner::TestContext& ctx, MemoryMode mode) const {
  PipelineOptions o;
  o.scene = scene_path_;
  o.threads = threads_;
  o.process = config_.process;
  o.write = config_.write;
  o.output = output_path_;
  o.bucket_grid = config_.bucket_grid;
  o.points_per_block = points_per_block_;
  o.zstd_level = config_.zstd_level;
  o.device_stat = device_stat_;
  o.inject_unpack_failure = config_.inject_failure == "pipeline";
  const runner::StopFlag* stop = ctx.stop;
  o.stop = [stop] { return stop->requested(); };
  if (mode == MemoryMode::mmap) {
    o.array_file = array_path_;
    // The array's share of the budget: what the packed scene (loaded in full) leaves, at least 1/4.
    const std::uint64_t packed = scene_ ? scene_->file_bytes : 0;
    o.resident_limit_bytes = std::max(config_.memory_budget_bytes / 4,
                                      config_.memory_budget_bytes > packed ? config_.memory_budget_bytes - packed : 0);
  }
  return o;
}

void RenderEmulator::prepare(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  const fs::path dir = ctx.target_dir;
  if (const auto stale = clean_stale(dir); !stale.empty()) {
    for (const auto& s : stale) rec.message("render: stale cleanup: " + s);
    rec.detail("stale_cleanup", results::Json(stale));
  }
  if (config_.mode == MemoryMode::swap) check_swap_mode(dir);
  const PointLayout& layout = *find_point_layout(config_.layout);
  threads_ = config_.threads > 0 ? config_.threads : std::max(1u, std::thread::hardware_concurrency());
  points_per_block_ = std::max<std::uint64_t>(1, config_.block_bytes / layout.bytes_per_point);
  const std::string base = "drivelab-" + ctx.settings.name;
  scene_path_ = dir / (base + ".bgeo.zst");
  array_path_ = dir / (base + ".points");
  output_path_ = dir / (base + ".bucketed.bgeo.zst");
  device_stat_ = device_stat_path(dir);
  const std::uint64_t points = config_.point_count();
  rec.message(fmt::format("render: writing {} {} points ({} unpacked, {} bytes per point) in blocks of {} points to {}",
                          points, layout.id, format_size(points * layout.bytes_per_point), layout.bytes_per_point,
                          points_per_block_, scene_path_.string()));
  const runner::StopFlag* stop = ctx.stop;
  scene_ = write_scene(scene_path_, layout, points, points_per_block_, config_.bucket_grid, ctx.seed, threads_,
                       config_.zstd_level, [stop] { return stop->requested(); });
  rec.detail("scene",
             results::Json{{"path", scene_path_.string()},
                           {"points", scene_->points},
                           {"blocks", scene_->blocks},
                           {"points_per_block", scene_->points_per_block},
                           {"file_bytes", scene_->file_bytes},
                           {"unpacked_bytes", scene_->unpacked_bytes},
                           {"compression_ratio", scene_->file_bytes > 0 ? static_cast<double>(scene_->unpacked_bytes) /
                                                                              static_cast<double>(scene_->file_bytes)
                                                                        : 0.0}});
  if (ctx.stop_requested()) return;
  if (config_.mode != MemoryMode::swap) return;

  // Marker first: a crash after this line leaves enough for clean_stale() to undo what follows.
  const int pid = static_cast<int>(::getpid());
  const fs::path swap_path = dir / fmt::format("drivelab-render.{}.swap", pid);
  const std::string cg_name = fmt::format("drivelab-render.{}", pid);
  marker_ = marker_path(dir, pid);
  {
    const std::string text =
        fmt::format("pid {}\nswap {}\ncgroup {}\n", pid, swap_path.string(), cgroup_path_for(cg_name).string());
    const UniqueFd m = open_no_follow(marker_, O_WRONLY | O_CREAT | O_TRUNC);
    if (!m || ::write(m.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      throw EnvironmentError("render: cannot write the marker file " + marker_.string());
  }
  const std::uint64_t ws = working_set_bytes(*scene_);
  const std::uint64_t swap_bytes =
      config_.swap_file_bytes > 0
          ? config_.swap_file_bytes
          : std::max<std::uint64_t>(
                64 << 20,
                (ws > config_.memory_budget_bytes ? ws - config_.memory_budget_bytes : 0) / 4 * 5 + (64 << 20));
  rec.message(fmt::format("render: swap file {} of {} on the target; memory cgroup capped at {}", swap_path.string(),
                          format_size(swap_bytes), format_size(config_.memory_budget_bytes)));
  swap_ = std::make_unique<SwapFile>(swap_path, swap_bytes, [stop] { return stop->requested(); });
  cgroup_ = std::make_unique<MemoryCgroup>(cg_name, config_.memory_budget_bytes);
  rec.detail("memory_pressure", results::Json{{"mode", "swap"},
                                              {"swap_file", swap_path.string()},
                                              {"swap_file_bytes", swap_->size_bytes()},
                                              {"cgroup", cgroup_->path().string()},
                                              {"cgroup_version", cgroup_->version()},
                                              {"memory_limit_bytes", config_.memory_budget_bytes}});
  if (config_.inject_failure == "prepare")
    throw EnvironmentError("render: injected failure after the swap file and cgroup were set up (test)");
}

PipelineResult RenderEmulator::run_in_cgroup(runner::TestContext& ctx) {
  int go[2], res[2];
  if (::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(res, O_CLOEXEC) != 0) throw_errno("render: pipe", errno);
  UniqueFd go_r(go[0]), go_w(go[1]), res_r(res[0]), res_w(res[1]);
  const PipelineOptions o = options(ctx, MemoryMode::swap);
  const pid_t child = ::fork();
  if (child < 0) throw_errno("render: fork the pipeline process", errno);
  if (child == 0) {
    // The pipeline process: dies with its parent; waits until it is inside the cgroup.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::signal(SIGINT, SIG_IGN);  // the parent handles SIGINT and kills us
    char c = 0;
    if (::read(go_r.get(), &c, 1) != 1) ::_exit(3);
    PipelineOptions co = o;
    co.stop = nullptr;
    const PipelineResult r = run_pipeline(co);
    write_all(res_w.get(), &r, sizeof r);
    ::_exit(0);
  }
  res_w.reset();
  go_r.reset();
  bool killed = false;
  try {
    cgroup_->add(child);
  } catch (...) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    throw;
  }
  const char c = 'g';
  write_all(go_w.get(), &c, 1);
  PipelineResult r;
  std::size_t got = 0;
  auto* dst = reinterpret_cast<char*>(&r);
  for (;;) {
    if (ctx.stop_requested() && !killed) {
      ::kill(child, SIGKILL);
      killed = true;
    }
    pollfd p{res_r.get(), POLLIN, 0};
    const int n = ::poll(&p, 1, 50);
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    const ssize_t k = ::read(res_r.get(), dst + got, sizeof r - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += static_cast<std::size_t>(k);
    if (got == sizeof r) break;
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  cgroup_limit_hits_ = cgroup_->limit_hits();
  if (got == sizeof r) return r;
  PipelineResult fail;
  if (killed) return fail;  // stopped: nothing measured
  fail.failed = true;
  const std::uint64_t ooms = cgroup_->oom_kills();
  std::snprintf(fail.error, sizeof fail.error, "%s",
                fmt::format("the pipeline process {} ({} OOM kill(s) in the cgroup; the swap file may be too small "
                            "or the budget below what cannot be swapped)",
                            WIFSIGNALED(status) ? fmt::format("was killed by signal {}", WTERMSIG(status))
                                                : fmt::format("exited with status {}", WEXITSTATUS(status)),
                            ooms)
                    .c_str());
  return fail;
}

void RenderEmulator::run(runner::TestContext& ctx) {
  if (!scene_ || ctx.stop_requested()) return;
  auto& rec = *ctx.recorder;
  rec.message(fmt::format("render: mode {}, {} threads, budget {}", to_string(config_.mode), threads_,
                          format_size(config_.memory_budget_bytes)));
  const PipelineResult r =
      config_.mode == MemoryMode::swap ? run_in_cgroup(ctx) : run_pipeline(options(ctx, config_.mode));
  result_ = r;
  if (r.failed) throw EnvironmentError(std::string("render: ") + r.error);
  if (!r.completed) {
    rec.message("render: stopped before the end: no score recorded");
    return;
  }
  record(ctx, r);
  if (config_.baseline && r.completed && !ctx.stop_requested()) run_baseline(ctx);
}

void RenderEmulator::record(runner::TestContext& ctx, const PipelineResult& r) {
  auto& rec = *ctx.recorder;
  double t = 0;
  PagingCounters total;
  for (std::size_t i = 0; i < r.phases.size(); ++i) {
    const PhaseStats& p = r.phases[i];
    if (!p.ran) continue;
    t += p.seconds;
    total += p.paging;
    const double d = p.seconds > 0 ? p.seconds : 1e-9;
    rec.interval(
        {.t_s = t,
         .duration_s = p.seconds,
         .values = {
             results::interval_value(cat::phase, static_cast<double>(i + 1)),
             results::interval_value(cat::swap_in_mb_s, static_cast<double>(p.paging.pswpin_pages) * 4096 / 1e6 / d),
             results::interval_value(cat::swap_out_mb_s, static_cast<double>(p.paging.pswpout_pages) * 4096 / 1e6 / d),
             results::interval_value(cat::device_read_mb_s, static_cast<double>(p.paging.device_read_bytes) / 1e6 / d),
             results::interval_value(cat::device_write_mb_s,
                                     static_cast<double>(p.paging.device_write_bytes) / 1e6 / d)}});
  }
  rec.set_phase_times(0, r.total_seconds);
  rec.metric(cat::total_s, r.total_seconds, "seconds to finish the phases that ran (lower is better)");
  for (std::size_t i = 0; i < r.phases.size(); ++i)
    if (r.phases[i].ran)
      rec.metric(*cat::kRenderPhaseSeconds[i], r.phases[i].seconds,
                 fmt::format("phase {} ({})", i + 1, kPhaseNames[i]));
  // The paging evidence of the mode first (the summary shows the first five metrics): swap
  // traffic for swap, the mapping's major faults and device reads for mmap.
  const auto swap_metrics = [&] {
    rec.metric(cat::swap_out_bytes, static_cast<double>(total.pswpout_pages) * 4096,
               "/proc/vmstat pswpout x 4 KiB over the phases (whole host)");
    rec.metric(cat::swap_in_bytes, static_cast<double>(total.pswpin_pages) * 4096,
               "/proc/vmstat pswpin x 4 KiB over the phases (whole host)");
  };
  if (config_.mode == MemoryMode::swap) swap_metrics();
  rec.metric(cat::major_faults, static_cast<double>(total.process_major_faults),
             "major page faults of the pipeline process (getrusage)");
  rec.metric(cat::device_read_bytes, static_cast<double>(total.device_read_bytes),
             "read from the target's block device over the phases (/sys/dev/block/*/stat)");
  rec.metric(cat::device_write_bytes, static_cast<double>(total.device_write_bytes),
             "written to the target's block device over the phases");
  if (config_.mode != MemoryMode::swap) swap_metrics();
  for (std::size_t i = 0; i < r.phases.size(); ++i) {
    const PhaseStats& p = r.phases[i];
    if (!p.ran) continue;
    const std::string g = fmt::format("phase{}_{}", i + 1, kPhaseNames[i]);
    rec.group_metric(g, cat::seconds, p.seconds);
    rec.group_metric(g, cat::pswpin_pages, static_cast<double>(p.paging.pswpin_pages), "/proc/vmstat, 4 KiB pages");
    rec.group_metric(g, cat::pswpout_pages, static_cast<double>(p.paging.pswpout_pages), "/proc/vmstat, 4 KiB pages");
    rec.group_metric(g, cat::host_major_faults, static_cast<double>(p.paging.pgmajfault), "/proc/vmstat pgmajfault");
    rec.group_metric(g, cat::major_faults, static_cast<double>(p.paging.process_major_faults),
                     "the pipeline process (getrusage)");
    rec.group_metric(g, cat::device_read_bytes, static_cast<double>(p.paging.device_read_bytes));
    rec.group_metric(g, cat::device_write_bytes, static_cast<double>(p.paging.device_write_bytes));
  }
  rec.detail("pipeline", results::Json{{"mode", to_string(config_.mode)},
                                       {"threads", threads_},
                                       {"points", r.points},
                                       {"array_bytes", r.array_bytes},
                                       {"blocks_in", r.blocks_in},
                                       {"blocks_out", r.blocks_out},
                                       {"packed_in_bytes", r.packed_in_bytes},
                                       {"repacked_bytes", r.repacked_bytes},
                                       {"written_bytes", r.written_bytes},
                                       {"evicted_bytes", r.evicted_bytes},
                                       {"peak_rss_bytes", r.peak_rss_bytes},
                                       {"cgroup_limit_hits", cgroup_limit_hits_},
                                       {"completed", r.completed}});
  if (config_.mode == MemoryMode::none || !r.completed) return;
  const bool paged = config_.mode == MemoryMode::swap ? total.pswpout_pages > 0 && total.device_write_bytes > 0
                                                      : total.process_major_faults > 0 && total.device_read_bytes > 0;
  if (!paged)
    rec.warning(
        fmt::format("render: the run did not page to the target (pswpout {} pages, {} major faults, {} read "
                    "and {} written on the device): the working set fit in memory, so the drive did not "
                    "decide the score; raise working_set_factor or lower memory_budget",
                    total.pswpout_pages, total.process_major_faults, format_size(total.device_read_bytes),
                    format_size(total.device_write_bytes)));
}

void RenderEmulator::run_baseline(runner::TestContext& ctx) {
  auto& rec = *ctx.recorder;
  const std::uint64_t need = working_set_bytes(*scene_) + (256 << 20);
  if (const std::uint64_t avail = mem_available_bytes(); avail < need) {
    rec.warning(fmt::format("render: baseline skipped: mode none needs about {} of RAM, {} is available",
                            format_size(need), format_size(avail)));
    return;
  }
  rec.message("render: baseline: the same pipeline in RAM (mode none)");
  const PipelineResult b = run_pipeline(options(ctx, MemoryMode::none));
  if (b.failed) {
    rec.warning(std::string("render: baseline failed: ") + b.error);
    return;
  }
  if (!b.completed) return;
  rec.metric(cat::baseline_total_s, b.total_seconds, "the same phases in RAM (mode none)");
  for (std::size_t i = 0; i < b.phases.size(); ++i)
    if (b.phases[i].ran) rec.group_metric("baseline", *cat::kRenderPhaseSeconds[i], b.phases[i].seconds);
  if (b.total_seconds > 0 && result_)
    rec.metric(cat::slowdown_vs_ram, result_->total_seconds / b.total_seconds,
               "total_s / baseline_total_s: how much longer paging to the drive took than RAM only");
}

void RenderEmulator::verify(runner::TestContext& ctx) {
  if (!result_ || !result_->completed || !scene_) return;
  auto& rec = *ctx.recorder;
  const PipelineResult& r = *result_;
  rec.check("every generated point was unpacked", r.flat_checksum.points == scene_->points,
            fmt::format("{} generated, {} in the flat array", scene_->points, r.flat_checksum.points));
  rec.check("unpack -> repack lost nothing (point checksum of the flat array = of the bucketed blocks)",
            r.flat_checksum == r.repacked_checksum,
            fmt::format("flat {} points / {:016x}, repacked {} points / {:016x}", r.flat_checksum.points,
                        r.flat_checksum.sum, r.repacked_checksum.points, r.repacked_checksum.sum));
  if (!config_.process)
    rec.check("load -> unpack lost nothing (point checksum of the scene = of the flat array)",
              r.flat_checksum == scene_->checksum,
              fmt::format("scene {:016x}, flat {:016x}", scene_->checksum.sum, r.flat_checksum.sum));
  rec.check("bucketed blocks hold their points in bucket order", r.buckets_in_order);
}

void RenderEmulator::cleanup(runner::TestContext& ctx) noexcept {
  std::vector<std::string> problems;
  if (cgroup_ && !cgroup_->remove()) problems.push_back("cgroup " + cgroup_->path().string());
  cgroup_.reset();
  if (swap_ && !swap_->remove()) problems.push_back("swap file " + swap_->path().string());
  swap_.reset();
  std::error_code ec;
  if (!marker_.empty() && problems.empty()) fs::remove(marker_, ec);
  if (!config_.keep_scene && !scene_path_.empty()) fs::remove(scene_path_, ec);
  if (!output_path_.empty()) fs::remove(output_path_, ec);
  if (!array_path_.empty()) fs::remove(array_path_, ec);
  if (!problems.empty() && ctx.recorder) {
    try {
      ctx.recorder->warning("render: could not remove (the next start retries): " + problems.front());
    } catch (...) {  // NOLINT(bugprone-empty-catch): noexcept cleanup: the warning is best effort
    }
  }
}

}  // namespace drivelab::render::detail

namespace drivelab::render {

std::unique_ptr<runner::Emulator> make_render_emulator(RenderConfig config) {
  return std::make_unique<detail::RenderEmulator>(std::move(config));
}

void register_emulators(runner::Registry& registry) {
  registry.add(
      {.kind = "render",
       .summary = "Houdini-like render pipeline (load, unpack, repack points) paging to the drive: swap | mmap | none",
       .decode = [](const config::Node& section, const runner::TestSettings&) -> std::unique_ptr<runner::Emulator> {
         return make_render_emulator(decode_render(section));
       }});
}

}  // namespace drivelab::render
