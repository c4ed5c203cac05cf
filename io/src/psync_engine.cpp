// psync: pread(2)/pwrite(2), one I/O at a time, performed inside queue() (fio's psync engine,
// FIO_SYNCIO). Whatever queue depth is configured, one job keeps at most one I/O at the device.
#include <unistd.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "drivelab/core/errors.hpp"
#include "engines.hpp"

namespace drivelab::io::detail {
namespace {

class PsyncEngine final : public SelfCompletingEngine {
 public:
  using SelfCompletingEngine::SelfCompletingEngine;

  const EngineInfo& info() const noexcept override;

  void register_files(std::span<const int> fds) override { fds_.assign(fds.begin(), fds.end()); }

  QueueStatus queue(const IoRequest& r) override {
    if (in_flight() >= queue_depth_) return QueueStatus::busy;
    if (r.file_index >= fds_.size()) throw InternalError("psync: request names file index beyond the registered files");
    const int fd = fds_[r.file_index];
    const auto offset = static_cast<off_t>(r.offset_bytes);
    ssize_t n;
    do {
      n = r.op == Op::read ? ::pread(fd, r.buffer, r.length_bytes, offset)
                           : ::pwrite(fd, r.buffer, r.length_bytes, offset);
    } while (n < 0 && errno == EINTR);
    done_.push({r.user_data, n < 0 ? -static_cast<std::int64_t>(errno) : static_cast<std::int64_t>(n)});
    ++since_submit_;
    return QueueStatus::completed;
  }

  std::size_t submit() override { return std::exchange(since_submit_, 0); }

  std::size_t in_flight() const noexcept override { return done_.size(); }

 private:
  std::vector<int> fds_;
  std::size_t since_submit_ = 0;  // completed by queue() since the last submit()
};

}  // namespace

namespace rows {
extern const EngineInfo psync{
    .name = "psync",
    .summary = "pread(2)/pwrite(2), one I/O at a time inside queue() (fio: psync)",
    .note = "synchronous: one I/O in flight per job whatever iodepth says; use jobs",
    .capabilities = {Capability::supports_direct},
    .make = &make_as<PsyncEngine>,
};
}  // namespace rows

const EngineInfo& PsyncEngine::info() const noexcept { return rows::psync; }

}  // namespace drivelab::io::detail
