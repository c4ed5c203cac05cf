// null: completes every request at submit() without touching a file (fio's null engine,
// FIO_NOIO). It behaves like an asynchronous engine, so a job's loop, clock reads and histogram
// work are exercised at full queue depth: what it measures is drivelab's own overhead per I/O.
#include <vector>

#include "engines.hpp"

namespace drivelab::io::detail {
namespace {

class NullEngine final : public SelfCompletingEngine {
 public:
  explicit NullEngine(const EngineOptions& options) : SelfCompletingEngine(options) { staged_.reserve(queue_depth_); }

  const EngineInfo& info() const noexcept override;

  void register_files(std::span<const int>) override {}

  QueueStatus queue(const IoRequest& r) override {
    if (in_flight() >= queue_depth_) return QueueStatus::busy;
    staged_.push_back({r.user_data, static_cast<std::int64_t>(r.length_bytes)});
    return QueueStatus::queued;
  }

  std::size_t submit() override {
    const std::size_t n = staged_.size();
    for (const IoCompletion& c : staged_) done_.push(c);
    staged_.clear();
    return n;
  }

  std::size_t in_flight() const noexcept override { return staged_.size() + done_.size(); }

 private:
  std::vector<IoCompletion> staged_;
};

}  // namespace

namespace rows {
extern const EngineInfo null{
    .name = "null",
    .summary = "completes every request at submit() without I/O: drivelab's own overhead (fio: null)",
    .note = "",
    .capabilities = {Capability::async, Capability::batched, Capability::supports_direct, Capability::no_io},
    .make = &make_as<NullEngine>,
};
}  // namespace rows

const EngineInfo& NullEngine::info() const noexcept { return rows::null; }

}  // namespace drivelab::io::detail
