#include "vdbench_job.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/timer_slack.hpp"
#include "drivelab/core/errors.hpp"

namespace drivelab::emulators::detail {
namespace {

// The longest a wait may last: bounds the reaction to a stop request (runner: within 50 ms).
constexpr std::int64_t kMaxWaitNs = 10'000'000;
// Stop counting the backlog beyond this (a hopeless overload); the count is a lower bound then.
constexpr std::uint64_t kMaxBacklogCount = 100'000'000;

}  // namespace

void VdbSample::clear() {
  reset();
  bytes = random_ios = 0;
  std::fill(workload_ios.begin(), workload_ios.end(), 0);
}

void VdbSample::merge(const VdbSample& o) {
  OpenLoopSample::merge(o);
  bytes += o.bytes;
  random_ios += o.random_ios;
  if (workload_ios.size() < o.workload_ios.size()) workload_ios.resize(o.workload_ios.size());
  for (std::size_t i = 0; i < o.workload_ios.size(); ++i) workload_ios[i] += o.workload_ios[i];
}

VdbenchJob::VdbenchJob(const VdbenchConfig& config, const JobSetup& setup) : config_(config), setup_(setup) {
  io::EngineOptions options;
  options.queue_depth = std::max<std::uint32_t>(setup.depth, 1);
  engine_ = io::make_engine(config.engine, options);
  const int fds[] = {setup.fd};
  engine_->register_files(fds);

  std::uint64_t largest = 0;
  for (const auto& w : config.workloads)
    for (const auto& x : w.xfersize) largest = std::max(largest, x.size_bytes);
  slot_bytes_ = static_cast<std::uint32_t>(largest);
  buffers_ = AlignedBuffer(static_cast<std::size_t>(slot_bytes_) * setup.depth);
  const iovec iov[] = {{buffers_.data(), buffers_.size()}};
  engine_->register_buffers(iov);

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
  stop_.store(true, std::memory_order_relaxed);
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
  std::lock_guard lock(mu_);
  std::swap(out, interval_);
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

void VdbenchJob::loop(double rate_per_s, std::uint64_t schedule_seed) {
  const bool async = engine_->capabilities().has(io::Capability::async);
  const std::uint32_t depth = setup_.depth;
  std::vector<Slot> slots(depth);
  std::vector<std::uint32_t> free_slots;
  for (std::uint32_t i = depth; i-- > 0;) free_slots.push_back(i);
  std::vector<std::uint32_t> staged;
  std::vector<io::IoCompletion> done(depth);
  std::optional<ArrivalSchedule> schedule;
  if (rate_per_s > 0) {
    // The jobs share the rate; each has its own stream of arrivals (independent Poisson streams
    // add up to one of the total rate; deterministic ones are phase-shifted to interleave).
    schedule.emplace(rate_per_s, config_.distribution, Rng(schedule_seed).split(setup_.index), monotonic_ns(),
                     static_cast<double>(setup_.index) / static_cast<double>(setup_.jobs));
  }
  backlog_ = 0;

  try {
    for (;;) {
      const bool stopping = stop_.load(std::memory_order_relaxed);
      std::int64_t now = monotonic_ns();
      if (!stopping) {
        while (!free_slots.empty()) {
          std::int64_t intended = 0;
          if (schedule) {
            if (schedule->peek_ns() > now) break;
            intended = schedule->next_ns();
          }
          const std::uint32_t s = free_slots.back();
          Slot& slot = slots[s];
          slot.spec = stream_->next();
          slot.intended_ns = intended;
          std::byte* buf = buffers_.data() + static_cast<std::size_t>(s) * slot_bytes_;
          if (slot.spec.op == io::Op::write) {
            const int w = static_cast<int>(slot.spec.workload);
            const bool laid_out = slot.laid_out_workload == w && slot.laid_out_bytes == slot.spec.length_bytes;
            fillers_[slot.spec.workload].fill({buf, slot.spec.length_bytes}, laid_out);
            slot.laid_out_workload = w;
            slot.laid_out_bytes = slot.spec.length_bytes;
          } else {
            slot.laid_out_workload = -1;  // the read overwrites the buffer
          }
          const io::IoRequest req{.op = slot.spec.op,
                                  .file_index = 0,
                                  .offset_bytes = slot.spec.offset_bytes,
                                  .length_bytes = slot.spec.length_bytes,
                                  .buffer = buf,
                                  .buffer_index = 0,
                                  .user_data = s,
                                  .intended_ns = intended};
          if (!async) slot.issue_ns = monotonic_ns();  // a synchronous engine does the I/O in queue()
          const io::QueueStatus st = engine_->queue(req);
          if (st == io::QueueStatus::busy) {
            // Cannot happen with depth <= queue_depth; keep the arrival by not consuming the slot.
            fail(fmt::format("engine {} refused an I/O with {} of {} slots in flight", engine_->name(),
                             engine_->in_flight(), depth));
            break;
          }
          free_slots.pop_back();
          staged.push_back(s);
          ++issued_;
          if (!async) now = monotonic_ns();
        }
        if (!staged.empty()) {
          if (async) {
            const std::int64_t t = monotonic_ns();
            for (std::uint32_t s : staged) slots[s].issue_ns = t;
          }
          for (std::uint32_t s : staged)
            if (slots[s].intended_ns == 0) slots[s].intended_ns = slots[s].issue_ns;  // closed loop
          engine_->submit();
          staged.clear();
        }
      } else if (engine_->in_flight() == 0) {
        break;
      }

      // Wait for a completion, or for the next arrival when a slot is free for it.
      std::int64_t wait_ns = kMaxWaitNs;
      if (schedule && !free_slots.empty() && !stopping)
        wait_ns = std::clamp<std::int64_t>(schedule->peek_ns() - monotonic_ns(), 0, kMaxWaitNs);
      if (engine_->in_flight() == 0) {
        if (stopping) break;
        if (wait_ns > 0) sleep_until_ns(monotonic_ns() + wait_ns);
        continue;
      }
      // Closed loop: fio's untimed wait for the next completion (no hrtimer per call).
      const std::size_t n = engine_->reap(wait_ns > 0 ? 1 : 0, done,
                                          schedule ? std::chrono::nanoseconds(wait_ns) : io::IoEngine::kNoTimeout);
      if (n == 0) continue;
      const std::int64_t t_done = monotonic_ns();
      std::lock_guard lock(mu_);
      for (std::size_t i = 0; i < n; ++i) {
        const auto s = static_cast<std::uint32_t>(done[i].user_data);
        const Slot& slot = slots[s];
        free_slots.push_back(s);
        ++completed_;
        if (done[i].result != static_cast<std::int64_t>(slot.spec.length_bytes)) {
          fail(phase_.failure({.op = slot.spec.op,
                               .length_bytes = slot.spec.length_bytes,
                               .offset_bytes = slot.spec.offset_bytes,
                               .file = setup_.file.native(),
                               .result = done[i].result}));
          continue;
        }
        interval_.record(slot.intended_ns, slot.issue_ns, t_done);
        ++interval_.ios;
        interval_.bytes += slot.spec.length_bytes;
        if (slot.spec.op == io::Op::read)
          ++interval_.reads;
        else
          ++interval_.writes;
        if (slot.spec.random) ++interval_.random_ios;
        ++interval_.workload_ios[slot.spec.workload];
      }
    }
  } catch (const std::exception& e) {
    fail(fmt::format("engine {}: {}", engine_->name(), e.what()));
  }
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
