#pragma once
/// \file io_job.hpp
/// The `io:` section of a test of kind `io`: one fio-style job (docs/io.md has the full model).
///
///     - name: 4k-random-read
///       kind: io
///       io: {engine: io_uring, rw: randread, xfersize: 4k, iodepth: 32, file_size: 1GiB,
///            direct: true, jobs: 1, keep_file: true}
///
/// Each of `jobs` threads owns its own engine and keeps `iodepth` I/Os outstanding (closed loop, as
/// fio's: fill the queue, submitting every iodepth_batch_submit I/Os; when it is full, reap between
/// iodepth_batch_complete_min and _max completions and refill at once), on the one file
/// `<target>/drivelab-<test>.dat`.
/// Offsets are aligned to xfersize; random offsets are uniform over the file (fio's
/// randrepeat/norandommap behaviour, seeded from the test seed, one stream per job); sequential
/// jobs each walk their own 1/jobs slice of the file, wrapping at its end (fio: offset_increment).
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "drivelab/config/document.hpp"
#include "drivelab/core/names.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::emulators {

/// fio's `rw=` words for the four pure patterns.
enum class Rw { randread, randwrite, read, write };
inline constexpr EnumNames<Rw, 4> kRwNames{
    {{"randread", Rw::randread}, {"randwrite", Rw::randwrite}, {"read", Rw::read}, {"write", Rw::write}}};
inline std::string_view to_string(Rw rw) noexcept { return name_of(kRwNames, rw); }
inline bool is_random(Rw rw) noexcept { return rw == Rw::randread || rw == Rw::randwrite; }
inline bool is_write(Rw rw) noexcept { return rw == Rw::randwrite || rw == Rw::write; }

/// Defaults are the values that apply when a key is absent.
struct IoJobConfig {
  std::string engine = "io_uring";  ///< io_uring | libaio | psync | null (io/engine.hpp)
  Rw rw = Rw::randread;
  std::uint64_t xfersize_bytes = 4096;                     ///< multiple of 512; with direct, of the logical block size
  std::uint32_t iodepth = 32;                              ///< outstanding I/Os per job, 1..65536 (psync: acts as 1)
  std::uint64_t file_size_bytes = std::uint64_t{1} << 30;  ///< >= xfersize
  bool direct = true;                                      ///< O_DIRECT (bypass the page cache)
  std::uint32_t jobs = 1;                                  ///< threads, each with its own engine, 1..1024
  bool keep_file = true;                                   ///< keep the filled file for the next run
  bool registerfiles = false;                              ///< io_uring: register the fd (fio: registerfiles)
  bool fixedbufs = false;                                  ///< io_uring: registered buffers (fio: fixedbufs)
  /// I/Os queued before they are handed to the kernel in one submit call, 1..iodepth (fio:
  /// iodepth_batch_submit, default 1: every I/O is submitted as soon as it is queued). Larger
  /// batches cost fewer system calls but reach the device in bursts; on a virtio disk here a batch
  /// of 32 gave ~15% fewer IOPS than 1 (bench/io_vs_fio.sh), as it does for fio itself.
  std::uint32_t iodepth_batch_submit = 1;
  /// Least completions one reap waits for, 0..iodepth (fio: iodepth_batch_complete_min, default 1;
  /// 0 = poll without sleeping).
  std::uint32_t iodepth_batch_complete_min = 1;
  /// Most completions one reap takes, 1..iodepth; 0 = "as iodepth_batch_complete_min (at least 1)"
  /// (fio: iodepth_batch_complete_max, whose default is iodepth_batch_complete_min). So by default a
  /// job reaps ONE completion and refills its slot before it looks at the next: completed I/Os
  /// wait in the completion queue, inside their measured latency, and the job keeps ~iodepth
  /// I/Os outstanding — fio's behaviour, which the side-by-side comparison needs.
  std::uint32_t iodepth_batch_complete_max = 0;
  /// io_uring: a kernel thread submits from the SQ ring (IORING_SETUP_SQPOLL); implies
  /// registerfiles. fio: sqthread_poll.
  bool sqthread_poll = false;
  /// io_uring with sqthread_poll: CPU for the SQ thread, -1 = not pinned (fio: sqthread_poll_cpu).
  std::int32_t sqthread_poll_cpu = -1;
  /// io_uring with sqthread_poll: idle time before the SQ thread sleeps; 0 = kernel default (1 s).
  std::chrono::milliseconds sq_thread_idle{0};

  /// iodepth_batch_complete_max with its default applied.
  std::uint32_t complete_max() const noexcept {
    return iodepth_batch_complete_max > 0 ? iodepth_batch_complete_max
                                          : (iodepth_batch_complete_min > 0 ? iodepth_batch_complete_min : 1);
  }
};

/// Decodes an `io:` section (an undefined node: all defaults). Every problem is recorded in
/// section.diagnostics() with its path, e.g. "tests[0].io.xfersize: xfersize must be a multiple
/// of 512 bytes, found 1000 B"; the default is kept for a bad key.
IoJobConfig decode_io_job(const config::Node& section);

/// The effective configuration with the same keys, re-decodable by decode_io_job (sizes as
/// "4 KiB"/"1 GiB" when exact, else bytes).
results::Json to_json(const IoJobConfig& job);

}  // namespace drivelab::emulators
