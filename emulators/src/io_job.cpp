#include "drivelab/emulators/io_job.hpp"

#include <fmt/format.h>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/results/config_json.hpp"
#include "drivelab/runner/engine_key.hpp"

namespace drivelab::emulators {
namespace {

constexpr std::uint64_t kSector = 512;
constexpr std::uint64_t kMaxXfer = std::uint64_t{64} << 20;
// All jobs' buffers (jobs x iodepth x xfersize) live in memory at once.
constexpr std::uint64_t kMaxBufferBytes = std::uint64_t{4} << 30;

// format_size when it is exact ("4 KiB"), else plain bytes: both decode back to the same value.

}  // namespace

IoJobConfig decode_io_job(const config::Node& section) {
  IoJobConfig job;
  config::MapReader r(section);
  runner::decode_engine(r, job.engine);
  r.choice("rw", job.rw, kRwNames);
  const bool xfer_ok = r.size("xfersize", job.xfersize_bytes, {.min = kSector, .max = kMaxXfer});
  if (xfer_ok && job.xfersize_bytes % kSector != 0) {
    section.child("xfersize")
        .error(fmt::format("xfersize must be a multiple of 512 bytes, found {}", format_size(job.xfersize_bytes)));
    job.xfersize_bytes = 4096;
  }
  const bool depth_ok = r.integer("iodepth", job.iodepth, {.min = 1, .max = 65536});
  if (r.size("file_size", job.file_size_bytes, {.min = kSector}) && job.file_size_bytes < job.xfersize_bytes)
    section.child("file_size")
        .error(fmt::format("file_size must be at least xfersize ({}), found {}", format_size(job.xfersize_bytes),
                           format_size(job.file_size_bytes)));
  r.boolean("direct", job.direct);
  const bool jobs_ok = r.integer("jobs", job.jobs, {.min = 1, .max = 1024});
  r.boolean("keep_file", job.keep_file);
  r.boolean("registerfiles", job.registerfiles);
  r.boolean("fixedbufs", job.fixedbufs);
  if (r.integer("iodepth_batch_submit", job.iodepth_batch_submit, {.min = 1, .max = 65536}) &&
      job.iodepth_batch_submit > job.iodepth)
    section.child("iodepth_batch_submit")
        .error(fmt::format("iodepth_batch_submit must be at most iodepth ({}), found {}", job.iodepth,
                           job.iodepth_batch_submit));
  if (r.integer("iodepth_batch_complete_min", job.iodepth_batch_complete_min, {.min = 0, .max = 65536}) &&
      job.iodepth_batch_complete_min > job.iodepth)
    section.child("iodepth_batch_complete_min")
        .error(fmt::format("iodepth_batch_complete_min must be at most iodepth ({}), found {}", job.iodepth,
                           job.iodepth_batch_complete_min));
  if (r.integer("iodepth_batch_complete_max", job.iodepth_batch_complete_max, {.min = 1, .max = 65536})) {
    if (job.iodepth_batch_complete_max > job.iodepth)
      section.child("iodepth_batch_complete_max")
          .error(fmt::format("iodepth_batch_complete_max must be at most iodepth ({}), found {}", job.iodepth,
                             job.iodepth_batch_complete_max));
    else if (job.iodepth_batch_complete_max < job.iodepth_batch_complete_min)
      section.child("iodepth_batch_complete_max")
          .error(fmt::format("iodepth_batch_complete_max must be at least iodepth_batch_complete_min ({}), found {}",
                             job.iodepth_batch_complete_min, job.iodepth_batch_complete_max));
  }
  r.boolean("sqthread_poll", job.sqthread_poll);
  r.integer("sqthread_poll_cpu", job.sqthread_poll_cpu, {.min = -1, .max = 65535});
  std::chrono::nanoseconds idle = job.sq_thread_idle;
  if (r.duration("sq_thread_idle", idle, {.min = std::chrono::nanoseconds(0), .max = std::chrono::hours(1)}))
    job.sq_thread_idle = std::chrono::duration_cast<std::chrono::milliseconds>(idle);
  if (job.engine != "io_uring") {
    const std::pair<const char*, bool> set[] = {{"sqthread_poll", job.sqthread_poll},
                                                {"sqthread_poll_cpu", job.sqthread_poll_cpu >= 0},
                                                {"sq_thread_idle", job.sq_thread_idle.count() > 0}};
    for (const auto& [key, is_set] : set)
      if (is_set) section.child(key).error(fmt::format("{} is an io_uring option; engine is {}", key, job.engine));
  }
  // io_uring accepts at most 16384 registered buffers; like fio, one per slot.
  if (job.fixedbufs && job.iodepth > 16384)
    section.child("fixedbufs")
        .error(fmt::format("fixedbufs registers one buffer per I/O slot, at most 16384; "
                           "iodepth is {}",
                           job.iodepth));
  r.finish();
  const std::uint64_t buffers = job.xfersize_bytes * job.iodepth * job.jobs;
  if ((xfer_ok || depth_ok || jobs_ok) && buffers > kMaxBufferBytes)
    section.error(fmt::format("jobs x iodepth x xfersize = {} of I/O buffers is more than {}; lower one of them",
                              format_size(buffers), format_size(kMaxBufferBytes)));
  return job;
}

results::Json to_json(const IoJobConfig& job) {
  return results::Json{{"engine", job.engine},
                       {"rw", to_string(job.rw)},
                       {"xfersize", results::size_json(job.xfersize_bytes)},
                       {"iodepth", job.iodepth},
                       {"file_size", results::size_json(job.file_size_bytes)},
                       {"direct", job.direct},
                       {"jobs", job.jobs},
                       {"keep_file", job.keep_file},
                       {"registerfiles", job.registerfiles},
                       {"fixedbufs", job.fixedbufs},
                       {"iodepth_batch_submit", job.iodepth_batch_submit},
                       {"iodepth_batch_complete_min", job.iodepth_batch_complete_min},
                       {"iodepth_batch_complete_max", job.complete_max()},
                       {"sqthread_poll", job.sqthread_poll},
                       {"sqthread_poll_cpu", job.sqthread_poll_cpu},
                       {"sq_thread_idle", fmt::format("{}ms", job.sq_thread_idle.count())}};
}

}  // namespace drivelab::emulators
