#include "drivelab/render/pipeline.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/core/units.hpp"

namespace drivelab::render {
namespace fs = std::filesystem;
namespace {

constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kChunk = 16 << 20;

/// Runs fn(t) on `n` threads (t = 0 on the caller); rethrows the first exception.
template <class F>
void parallel(unsigned n, F&& fn) {
  std::vector<std::exception_ptr> errors(n);
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < n; ++t)
      pool.emplace_back([&, t] {
        try {
          fn(t);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
    try {
      fn(0u);
    } catch (...) {
      errors[0] = std::current_exception();
    }
  }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

/// The flat point array: anonymous memory, or a shared mapping of a file with a limited resident set.
class FlatArray {
 public:
  FlatArray(std::uint64_t bytes, const fs::path& file, std::uint64_t resident_limit)
      : bytes_(std::max<std::uint64_t>(bytes, kPage)), file_(file), limit_(resident_limit) {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    if (!file_.empty()) {
      fd_ = open_no_follow(file_, O_RDWR | O_CREAT | O_TRUNC, 0600);
      if (!fd_) throw_errno("render: create " + file_.string(), errno);
      // Allocated, not only sized: a sparse mapped file on a full filesystem would raise SIGBUS at
      // the first store the filesystem cannot back; posix_fallocate makes ENOSPC an error here.
      if (const int err = ::posix_fallocate(fd_.get(), 0, static_cast<off_t>(bytes_)); err != 0) {
        fd_.reset();
        std::error_code ec;
        fs::remove(file_, ec);
        throw EnvironmentError(fmt::format(
            "render: mode mmap: allocating the {} array file {} failed: {}; the mmap mode needs that much free space "
            "in the target",
            format_size(bytes_), file_.string(), errno_text(err)));
      }
      flags = MAP_SHARED;
    }
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, flags, fd_.get(), 0);
    if (p == MAP_FAILED) throw_errno(fmt::format("render: map {} for the flat array", bytes_), errno);
    data_ = static_cast<std::byte*>(p);
    if (fd_ && limit_ > 0) limiter_ = std::jthread([this](const std::stop_token& st) { limit_loop(st); });
  }
  ~FlatArray() {
    if (limiter_.joinable()) {
      limiter_.request_stop();
      limiter_.join();
    }
    ::munmap(data_, bytes_);
    if (fd_) {
      fd_.reset();
      std::error_code ec;
      fs::remove(file_, ec);
    }
  }
  FlatArray(const FlatArray&) = delete;
  FlatArray& operator=(const FlatArray&) = delete;
  std::byte* data() noexcept { return data_; }
  std::uint64_t evicted_bytes() const noexcept { return evicted_.load(); }

  /// Tells the kernel how the next pass reads a file-backed array (madvise(2)): MADV_SEQUENTIAL
  /// for the passes in point order (aggressive fault readahead), MADV_RANDOM for the gather by
  /// bucket (no readahead: with the default 128 KiB of readahead per fault, a 64-byte random
  /// access under a resident limit read ~100x the array from the drive, 335 GB for a 3 GiB array
  /// in the first 2 GiB-budget run). Anonymous memory pages through swap, whose own readahead
  /// (vm.page-cluster, VMA-based) the kernel adapts to the access pattern: no advice there.
  void advise(int advice) noexcept {
    if (fd_) ::madvise(data_, bytes_, advice);
  }

  /// Brings the array's resident set to at most the limit now (also called at each phase start).
  void enforce() {
    if (!fd_ || limit_ == 0) return;
    std::lock_guard lock(mu_);
    const std::uint64_t pages = (bytes_ + kPage - 1) / kPage;
    vec_.resize(pages);
    if (::mincore(data_, bytes_, vec_.data()) != 0) return;
    std::uint64_t resident = 0;
    for (unsigned char v : vec_) resident += v & 1;
    resident *= kPage;
    if (resident <= limit_) return;
    // Write back and drop 16 MiB chunks, in address order from where the last round stopped
    // (a clock hand, as the kernel's reclaim), down to 90% of the limit.
    const std::uint64_t goal = limit_ / 10 * 9;
    const std::uint64_t chunks = (bytes_ + kChunk - 1) / kChunk;
    for (std::uint64_t n = 0; n < chunks && resident > goal; ++n) {
      const std::uint64_t c = cursor_;
      cursor_ = (cursor_ + 1) % chunks;
      const std::uint64_t off = c * kChunk, len = std::min(kChunk, bytes_ - off);
      std::uint64_t in = 0;
      for (std::uint64_t p = off / kPage; p < (off + len + kPage - 1) / kPage; ++p) in += vec_[p] & 1;
      if (in == 0) continue;
      ::msync(data_ + off, len, MS_SYNC);
      ::madvise(data_ + off, len, MADV_DONTNEED);
      ::posix_fadvise(fd_.get(), static_cast<off_t>(off), static_cast<off_t>(len), POSIX_FADV_DONTNEED);
      resident -= std::min(resident, in * kPage);
      evicted_ += in * kPage;
    }
  }

 private:
  /// Every 10 ms: enforce().
  void limit_loop(const std::stop_token& st) {
    while (!st.stop_requested()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      enforce();
    }
  }

  std::uint64_t bytes_;
  fs::path file_;
  std::uint64_t limit_;
  UniqueFd fd_;
  std::byte* data_ = nullptr;
  std::atomic<std::uint64_t> evicted_{0};
  std::mutex mu_;  // guards vec_ and cursor_
  std::vector<unsigned char> vec_;
  std::uint64_t cursor_ = 0;
  std::jthread limiter_;
};

struct StopRequested {};

void read_all(int fd, std::byte* p, std::size_t n, std::uint64_t off) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw_errno("render: read scene", r < 0 ? errno : EIO);
    p += r;
    n -= static_cast<std::size_t>(r);
    off += static_cast<std::uint64_t>(r);
  }
}

float get_f32(const std::byte* p) noexcept {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

/// The points split into one contiguous range per thread.
struct Split {
  std::uint64_t points;
  std::uint32_t bytes_per_point;
  unsigned threads;
  std::pair<std::uint64_t, std::uint64_t> range(unsigned t) const noexcept {
    const std::uint64_t per = (points + threads - 1) / threads;
    return {std::min(points, t * per), std::min(points, (t + 1) * per)};
  }
};

/// The repack phase's counting sort: the index of every point in bucket order (stable: load order
/// within a bucket). Each thread counts its own range's buckets; the counts become start offsets
/// bucket-major, thread-minor, so each thread then places its points without a lock. Returns
/// early (an incomplete order) when `stop` says so; the caller checks it again.
template <class Stop>
std::vector<std::uint32_t> bucket_order(const std::byte* flat, const Split& split, std::uint32_t bucket_grid,
                                        const Stop& stop) {
  const std::uint64_t nbuckets = std::uint64_t{bucket_grid} * bucket_grid * bucket_grid;
  std::vector<std::uint32_t> bucket(split.points);
  std::vector<std::vector<std::uint64_t>> counts(split.threads, std::vector<std::uint64_t>(nbuckets, 0));
  parallel(split.threads, [&](unsigned t) {
    const auto [lo, hi] = split.range(t);
    for (std::uint64_t i = lo; i < hi; ++i) {
      if ((i & 0xFFFF) == 0 && stop()) return;
      float pos[3];
      std::memcpy(pos, flat + i * split.bytes_per_point, 12);
      bucket[i] = bucket_of(pos, bucket_grid);
      ++counts[t][bucket[i]];
    }
  });
  std::uint64_t sum = 0;  // counts -> start offsets, bucket-major, thread-minor
  for (std::uint64_t b = 0; b < nbuckets; ++b)
    for (unsigned t = 0; t < split.threads; ++t) sum += std::exchange(counts[t][b], sum);
  std::vector<std::uint32_t> order(split.points);
  parallel(split.threads, [&](unsigned t) {
    const auto [lo, hi] = split.range(t);
    for (std::uint64_t i = lo; i < hi; ++i) order[counts[t][bucket[i]]++] = static_cast<std::uint32_t>(i);
  });
  return order;
}

/// Untimed, after the phases: checksums over the flat array and over every point of the
/// bucketed blocks (the two must agree: repack moves points, it never changes one), and whether
/// the blocks hold their points in bucket order.
void check_output(const std::byte* flat, const Split& split, const std::vector<std::vector<std::byte>>& out,
                  std::uint64_t ppb, std::uint32_t bucket_grid, PipelineResult& r) {
  const std::uint32_t bpp = split.bytes_per_point;
  const unsigned threads = split.threads;
  const std::uint64_t nout = out.size();
  const auto ranges = [&](unsigned t) { return split.range(t); };
  std::vector<PointChecksum> flat_sums(threads), out_sums(threads);
  std::vector<std::uint32_t> first_bucket(nout), last_bucket(nout);
  std::atomic<bool> in_order{true};
  std::atomic<std::uint64_t> next{0};
  parallel(threads, [&](unsigned t) {
    const auto [lo, hi] = ranges(t);
    flat_sums[t].add(flat + lo * bpp, hi - lo, bpp);
    std::vector<std::byte> staging(ppb * bpp);
    for (std::uint64_t b; (b = next.fetch_add(1)) < nout;) {
      const std::uint64_t n = std::min(ppb, r.points - b * ppb);
      decompress_block(out[b].data(), out[b].size(), staging.data(), n * bpp);
      out_sums[t].add(staging.data(), n, bpp);
      std::uint32_t prev = 0;
      for (std::uint64_t k = 0; k < n; ++k) {
        float pos[3];
        std::memcpy(pos, &staging[k * bpp], 12);
        const std::uint32_t bk = bucket_of(pos, bucket_grid);
        if (k == 0) first_bucket[b] = bk;
        if (k > 0 && bk < prev) in_order = false;
        prev = bk;
      }
      last_bucket[b] = prev;
    }
  });
  for (std::uint64_t b = 1; b < nout; ++b)
    if (first_bucket[b] < last_bucket[b - 1]) in_order = false;
  for (unsigned t = 0; t < threads; ++t) {
    r.flat_checksum.merge(flat_sums[t]);
    r.repacked_checksum.merge(out_sums[t]);
  }
  r.buckets_in_order = in_order.load();
}

/// Phase 3: advects every point by one 1/24 s frame (position += velocity x dt, age += dt), one
/// range of points per thread; returns early on a stop request.
template <class Stop>
void advect_frame(std::byte* flat, const Split& split, const Stop& stop) {
  const std::uint32_t bpp = split.bytes_per_point;
  parallel(split.threads, [&](unsigned t) {
    const auto [lo, hi] = split.range(t);
    constexpr float dt = 1.0f / 24;
    for (std::uint64_t i = lo; i < hi; ++i) {
      if ((i & 0xFFFF) == 0 && stop()) return;
      std::byte* p = flat + i * bpp;
      for (int a = 0; a < 3; ++a) {
        const float x = get_f32(p + 4 * a) + get_f32(p + 12 + 4 * a) * dt;
        std::memcpy(p + 4 * a, &x, 4);
      }
      const float age = get_f32(p + 28) + dt;
      std::memcpy(p + 28, &age, 4);
    }
  });
}

/// Phase 5: the bucketed blocks, in order, to one new file, then fdatasync. Returns the bytes
/// written.
std::uint64_t write_blocks(const std::filesystem::path& output, const std::vector<std::vector<std::byte>>& blocks) {
  UniqueFd fd = open_no_follow(output, O_WRONLY | O_CREAT | O_TRUNC);
  if (!fd) throw_errno("render: create " + output.string(), errno);
  std::uint64_t written = 0;
  for (const auto& b : blocks) {
    for (std::size_t off = 0; off < b.size();) {
      const ssize_t w = ::write(fd.get(), b.data() + off, b.size() - off);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) throw_errno("render: write " + output.string(), errno);
      off += static_cast<std::size_t>(w);
    }
    written += b.size();
  }
  if (::fdatasync(fd.get()) != 0) throw_errno("render: fdatasync " + output.string(), errno);
  return written;
}

void run_phases(const PipelineOptions& o, PipelineResult& r) {
  const auto stop = [&] { return o.stop && o.stop(); };
  const SceneHeader scene = read_scene_header(o.scene);
  const std::uint32_t bpp = scene.bytes_per_point;
  const unsigned threads = std::max(1u, o.threads);
  r.points = scene.points;
  r.blocks_in = scene.blocks.size();
  r.array_bytes = scene.points * bpp;
  FlatArray array(r.array_bytes, o.array_file, o.resident_limit_bytes);
  std::byte* flat = array.data();

  const auto timed = [&](Phase phase, auto&& body) {
    PhaseStats& s = r.phases[static_cast<int>(phase)];
    const PagingCounters before = PagingCounters::sample(o.device_stat);
    const std::int64_t t0 = monotonic_ns();
    array.enforce();
    body();
    s.seconds = seconds_between(t0, monotonic_ns());
    s.paging = PagingCounters::sample(o.device_stat) - before;
    s.ran = true;
    r.total_seconds += s.seconds;
    if (stop()) throw StopRequested{};
  };

  // 1 load: one thread reads every packed block.
  std::vector<std::vector<std::byte>> packed(scene.blocks.size());
  timed(Phase::load, [&] {
    UniqueFd fd(::open(o.scene.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) throw_errno("render: open " + o.scene.string(), errno);
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    for (std::size_t b = 0; b < scene.blocks.size() && !stop(); ++b) {
      packed[b].resize(scene.blocks[b].compressed_bytes);
      read_all(fd.get(), packed[b].data(), packed[b].size(), scene.blocks[b].offset);
      r.packed_in_bytes += packed[b].size();
    }
  });

  // 2 unpack: threads take blocks; each block is freed once unpacked.
  timed(Phase::unpack, [&] {
    std::atomic<std::size_t> next{0};
    parallel(threads, [&](unsigned) {
      for (std::size_t b; (b = next.fetch_add(1)) < packed.size() && !stop();) {
        if (o.inject_unpack_failure && b == packed.size() / 2)
          throw InternalError("render: injected failure in the unpack phase (test)");
        const BlockEntry& e = scene.blocks[b];
        decompress_block(packed[b].data(), packed[b].size(), flat + e.first_point * bpp, e.points * bpp);
        std::vector<std::byte>().swap(packed[b]);
      }
    });
  });

  const Split split{r.points, bpp, threads};

  // 3 process: advect every point by one 1/24 s frame.
  if (o.process) timed(Phase::process, [&] { advect_frame(flat, split, stop); });

  // 4 repack: counting sort by bucket (stable: load order within a bucket), then gather by bucket.
  const std::uint64_t ppb = std::max<std::uint64_t>(1, o.points_per_block);
  const std::uint64_t nout = (r.points + ppb - 1) / ppb;
  std::vector<std::vector<std::byte>> out(nout);
  timed(Phase::repack, [&] {
    array.advise(MADV_SEQUENTIAL);
    const std::vector<std::uint32_t> order = bucket_order(flat, split, o.bucket_grid, stop);
    if (stop()) return;
    std::atomic<std::uint64_t> next{0};
    std::atomic<std::uint64_t> bytes{0};
    array.advise(MADV_RANDOM);
    parallel(threads, [&](unsigned) {
      std::vector<std::byte> staging(ppb * bpp);
      for (std::uint64_t b; (b = next.fetch_add(1)) < nout && !stop();) {
        const std::uint64_t first = b * ppb, n = std::min(ppb, r.points - first);
        for (std::uint64_t k = 0; k < n; ++k) {
          // A block gathers ~156,000 points, each possibly a major fault: check for a stop
          // request within it, so Ctrl-C ends a paging run in well under a second.
          if ((k & 0xFFF) == 0 && stop()) return;
          std::memcpy(&staging[k * bpp], flat + std::uint64_t{order[first + k]} * bpp, bpp);
        }
        out[b] = compress_block(staging.data(), n * bpp, o.zstd_level);
        bytes += out[b].size();
      }
    });
    r.repacked_bytes = bytes.load();
    r.blocks_out = nout;
  });

  // 5 write: the bucketed blocks, in order, to one file; fdatasync.
  if (o.write) timed(Phase::write, [&] { r.written_bytes += write_blocks(o.output, out); });
  r.completed = true;
  r.evicted_bytes = array.evicted_bytes();
  array.advise(MADV_SEQUENTIAL);

  check_output(flat, split, out, ppb, o.bucket_grid, r);
}

}  // namespace

PipelineResult run_pipeline(const PipelineOptions& options) noexcept {
  PipelineResult r;
  try {
    run_phases(options, r);
  } catch (const StopRequested&) {  // NOLINT(bugprone-empty-catch): a stop ends the phases, not a failure
  } catch (const std::exception& e) {
    r.failed = true;
    std::snprintf(r.error, sizeof r.error, "%s", e.what());
  } catch (...) {
    r.failed = true;
    std::snprintf(r.error, sizeof r.error, "unknown exception");
  }
  rusage ru{};
  if (::getrusage(RUSAGE_SELF, &ru) == 0) r.peak_rss_bytes = static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;
  return r;
}

}  // namespace drivelab::render
