#include "vdbench_job.hpp"

#include <algorithm>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/timer_slack.hpp"
#include "drivelab/core/errors.hpp"

namespace drivelab::emulators::detail {
namespace {

// Stop counting the backlog beyond this (a hopeless overload); the count is a lower bound then.
constexpr std::uint64_t kMaxBacklogCount = 100'000'000;

}  // namespace

void VdbSample::settle() noexcept {
  const std::uint64_t n = on_time.count();
  if (n == 0) return;
  latency.merge(on_time);
  service.merge(on_time);
  lateness.record_n(0, n);
  on_time.reset();
}

void VdbSample::clear() {
  reset();
  on_time.reset();
  bytes = 0;
  std::fill(workload_ios.begin(), workload_ios.end(), 0);
}

void VdbSample::merge(const VdbSample& o) {
  OpenLoopSample::merge(o);
  on_time.merge(o.on_time);
  bytes += o.bytes;
  if (workload_ios.size() < o.workload_ios.size()) workload_ios.resize(o.workload_ios.size());
  for (std::size_t i = 0; i < o.workload_ios.size(); ++i) workload_ios[i] += o.workload_ios[i];
}

VdbenchJob::VdbenchJob(const VdbenchConfig& config, const JobSetup& setup) : config_(config), setup_(setup) {
  std::uint64_t largest = 0;
  for (const auto& w : config.workloads)
    for (const auto& x : w.xfersize) largest = std::max(largest, x.size_bytes);
  const std::uint32_t depth = std::max<std::uint32_t>(setup.depth, 1);
  const int fds[] = {setup.fd};
  // Every I/O of a pass in one submit() (batch_submit = depth); the data is the fillers' (no scramble).
  pump_ = std::make_unique<io::Pump>(config.engine, io::EngineOptions{.queue_depth = depth},
                                     io::PumpOptions{.slot_bytes = static_cast<std::uint32_t>(largest),
                                                     .batch_submit = depth,
                                                     .complete_min = 1,
                                                     .complete_max = depth,
                                                     .fill_seed = setup.seed,
                                                     .scramble_writes = false},
                                     fds, std::vector<std::string>{setup.file.native()});
  slots_.resize(pump_->depth());

  const Rng base = Rng(setup.seed).split(setup.index);
  stream_.emplace(config.workloads, setup.region, setup.alignment_bytes, setup.index, setup.jobs, base.split(1));
  for (std::size_t w = 0; w < config.workloads.size(); ++w)
    fillers_.emplace_back(config.workloads[w].compratio, config.workloads[w].dedupratio, config.dedupunit_bytes,
                          base.split(100 + w));
  interval_.workload_ios.assign(config.workloads.size(), 0);
}

VdbenchJob::~VdbenchJob() {
  stop();
  {
    std::lock_guard lock(ctl_mu_);
    command_ = Command::exit;
  }
  ctl_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void VdbenchJob::start(double rate_per_s, std::uint64_t schedule_seed) {
  if (!thread_.joinable()) thread_ = std::thread([this] { thread_main(); });
  {
    std::lock_guard lock(ctl_mu_);
    stop_.store(false, std::memory_order_relaxed);
    rate_ = rate_per_s;
    seed_ = schedule_seed;
    command_ = Command::run;
  }
  ctl_cv_.notify_all();
}

void VdbenchJob::stop() noexcept {
  request_stop();
  std::unique_lock lock(ctl_mu_);
  ctl_cv_.wait(lock, [&] { return command_ != Command::run; });
}

void VdbenchJob::thread_main() {
  const ScopedTimerSlack slack(kPacedTimerSlackNs);  // every paced wake-up of this job thread
  std::unique_lock lock(ctl_mu_);
  for (;;) {
    ctl_cv_.wait(lock, [&] { return command_ != Command::idle; });
    if (command_ == Command::exit) return;
    const double rate = rate_;
    const std::uint64_t seed = seed_;
    lock.unlock();
    loop(rate, seed);
    lock.lock();
    if (command_ == Command::run) command_ = Command::idle;
    ctl_cv_.notify_all();
  }
}

void VdbenchJob::take(VdbSample& out) {
  out.clear();
  if (out.workload_ios.size() != config_.workloads.size()) out.workload_ios.assign(config_.workloads.size(), 0);
  {
    const std::lock_guard lock(pump_->sample_lock());
    std::swap(out, interval_);
  }
  out.settle();
  if (out.workload_ios.size() == 1) out.workload_ios[0] = out.ios;  // Driver::completed counts several only
}

std::uint64_t VdbenchJob::unique_units() const noexcept {
  std::uint64_t n = 0;
  for (const auto& f : fillers_) n += f.unique_units();
  return n;
}

std::uint64_t VdbenchJob::written_units() const noexcept {
  std::uint64_t n = 0;
  for (const auto& f : fillers_) n += f.units();
  return n;
}

// The pump's driver: the stream's next I/O (its data laid out by the workload's filler), due at
// the schedule's next arrival (open loop) or now (closed loop).
struct VdbenchJob::Driver {
  static constexpr bool kSharedSample = true;
  VdbenchJob& j;
  ArrivalSchedule* schedule;  // nullptr: closed loop
  const bool per_workload;    // several workloads: completions counted per workload

  std::int64_t next_due_ns() const noexcept { return schedule ? schedule->peek_ns() : io::kDueNow; }
  bool prepare(io::IoRequest& r, std::uint32_t s) {
    if (schedule) schedule->next_ns();  // the pump takes the intended start from next_due_ns()
    Slot& slot = j.slots_[s];
    j.stream_->next(slot.spec);
    if (slot.spec.op == io::Op::write) {
      const int w = static_cast<int>(slot.spec.workload);
      const bool laid_out = slot.laid_out_workload == w && slot.laid_out_bytes == slot.spec.length_bytes;
      j.fillers_[slot.spec.workload].fill({r.buffer, slot.spec.length_bytes}, laid_out);
      slot.laid_out_workload = w;
      slot.laid_out_bytes = slot.spec.length_bytes;
    } else {
      slot.laid_out_workload = -1;  // the read overwrites the buffer
    }
    r.op = slot.spec.op;
    r.file_index = 0;
    r.offset_bytes = slot.spec.offset_bytes;
    r.length_bytes = slot.spec.length_bytes;
    return true;
  }
  bool keep_going() const noexcept { return !j.stop_.load(std::memory_order_relaxed); }
  void failed(const io::PumpCompletion&, const io::FailedIo& io) { j.fail(j.phase_.failure(io)); }
  VdbSample& sample() noexcept { return j.interval_; }
  void completed(const io::PumpCompletion& c) noexcept {
    if (per_workload) ++j.interval_.workload_ios[j.slots_[c.slot].spec.workload];
  }
};

void VdbenchJob::loop(double rate_per_s, std::uint64_t schedule_seed) {
  std::optional<ArrivalSchedule> schedule;
  if (rate_per_s > 0) {
    // The jobs share the rate; each has its own stream of arrivals (independent Poisson streams
    // add up to one of the total rate; deterministic ones are phase-shifted to interleave).
    schedule.emplace(rate_per_s, config_.distribution, Rng(schedule_seed).split(setup_.index), monotonic_ns(),
                     static_cast<double>(setup_.index) / static_cast<double>(setup_.jobs));
  }
  backlog_ = 0;
  Driver driver{*this, schedule ? &*schedule : nullptr, config_.workloads.size() > 1};
  run_pump(*pump_, driver);
  if (schedule) {
    // Arrivals that were due when the run stopped but never got a slot: the visible part of an
    // overload that latency alone would understate.
    const std::int64_t end = monotonic_ns();
    while (schedule->peek_ns() <= end && backlog_ < kMaxBacklogCount) {
      schedule->next_ns();
      ++backlog_;
    }
  }
}

}  // namespace drivelab::emulators::detail
