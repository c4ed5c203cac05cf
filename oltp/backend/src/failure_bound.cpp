#include "drivelab/oltp/backend/failure_bound.hpp"

#include <fmt/format.h>

namespace drivelab::oltp {

std::string describe_error(const DbStatus& s) {
  std::string code;
  if (!s.sqlstate.empty())
    code = fmt::format("SQLSTATE {}", s.sqlstate);
  else if (s.native_code != 0)
    code = fmt::format("error {}", s.native_code);
  const std::string message = s.message.empty() ? std::string(to_string(s.outcome)) : s.message;
  return code.empty() ? message : fmt::format("{} {}", code, message);
}

results::Json to_json(const AttemptTotals& a) {
  results::Json j{{"failed_attempts", a.failed}, {"attempts", a.attempts}};
  if (a.first_error) {
    j["first_error"] = describe_error(*a.first_error);
    j["first_error_s"] = a.first_error_s;
  }
  if (a.last_error) {
    j["last_error"] = describe_error(*a.last_error);
    j["last_error_s"] = a.last_error_s;
  }
  return j;
}

struct FailureMeter::Kind {
  std::string name;
  std::mutex mu;
  std::int64_t window_start_ns = 0;  // of the current window
  std::uint64_t attempts = 0;        // in the current window
  std::uint64_t failed = 0;
  std::optional<DbStatus> window_error;  // the latest failure of the current window
  std::int64_t failing_since_ns = -1;    // the first failure after the last success
  AttemptTotals totals;
};

FailureMeter::FailureMeter(FailureBound bound, std::vector<std::string> kinds) : bound_(bound) {
  if (bound_.window.count() <= 0) bound_.window = std::chrono::seconds(5);
  for (auto& name : kinds) {
    kinds_.push_back(std::make_unique<Kind>());
    kinds_.back()->name = std::move(name);
  }
}

FailureMeter::~FailureMeter() = default;

void FailureMeter::start(std::int64_t t0_ns) {
  for (auto& k : kinds_) {
    std::lock_guard lock(k->mu);
    k->window_start_ns = t0_ns;
    k->attempts = k->failed = 0;
    k->window_error.reset();
    k->failing_since_ns = -1;
    k->totals = {};
  }
  t0_ns_.store(t0_ns, std::memory_order_release);
}

std::optional<std::string> FailureMeter::tripped(std::string reason) {
  std::lock_guard lock(mu_);
  if (tripped_) return std::nullopt;
  tripped_ = true;
  return reason;
}

std::optional<std::string> FailureMeter::judge(Kind& k, std::int64_t window_end_ns) {
  const std::uint64_t attempts = k.attempts, failed = k.failed;
  const std::int64_t start = k.window_start_ns;
  const std::optional<DbStatus> error = k.window_error;
  k.attempts = k.failed = 0;
  k.window_error.reset();
  if (attempts < FailureBound::kMinAttempts || !error) return std::nullopt;
  const double pct = 100.0 * static_cast<double>(failed) / static_cast<double>(attempts);
  if (pct <= bound_.failed_pct) return std::nullopt;
  const std::int64_t t0 = t0_ns_.load(std::memory_order_acquire);
  const auto s = [t0](std::int64_t ns) { return static_cast<double>(ns - t0) / 1e9; };
  const std::string began =
      failed == attempts && k.failing_since_ns >= 0
          ? fmt::format("every attempt has failed since {:.1f} s into the measured phase", s(k.failing_since_ns))
          : fmt::format("failing since {:.1f} s into the measured phase (its first failure after its last success)",
                        s(k.failing_since_ns >= 0 ? k.failing_since_ns : start));
  return tripped(
      fmt::format("{}: {} of {} attempts failed from {:.1f} to {:.1f} s into the measured phase ({:.1f}%, more than "
                  "failure_bound's {:g}% over {:g} s): {}; {}",
                  k.name, failed, attempts, s(start), s(window_end_ns), pct, bound_.failed_pct,
                  std::chrono::duration<double>(bound_.window).count(), describe_error(*error), began));
}

std::optional<std::string> FailureMeter::attempt(std::size_t kind, const DbStatus* failure, std::int64_t now_ns) {
  const std::int64_t t0 = t0_ns_.load(std::memory_order_acquire);
  if (t0 < 0 || now_ns < t0 || kind >= kinds_.size()) return std::nullopt;
  Kind& k = *kinds_[kind];
  std::lock_guard lock(k.mu);
  std::optional<std::string> reason;
  const std::int64_t w = bound_.window.count();
  if (now_ns >= k.window_start_ns + w) {
    reason = judge(k, k.window_start_ns + w);
    k.window_start_ns += (now_ns - k.window_start_ns) / w * w;  // windows without an attempt are empty
  }
  ++k.attempts;
  ++k.totals.attempts;
  if (failure != nullptr) {
    ++k.failed;
    ++k.totals.failed;
    k.window_error = *failure;
    const double at_s = static_cast<double>(now_ns - t0) / 1e9;
    if (!k.totals.first_error) {
      k.totals.first_error = *failure;
      k.totals.first_error_s = at_s;
    }
    k.totals.last_error = *failure;
    k.totals.last_error_s = at_s;
    if (k.failing_since_ns < 0) k.failing_since_ns = now_ns;
  } else {
    k.failing_since_ns = -1;
  }
  return reason;
}

std::optional<std::string> FailureMeter::check_end(std::int64_t now_ns) {
  if (t0_ns_.load(std::memory_order_acquire) < 0) return std::nullopt;
  std::optional<std::string> first;
  for (auto& k : kinds_) {
    std::lock_guard lock(k->mu);
    const std::int64_t w = bound_.window.count();
    if (now_ns >= k->window_start_ns + w) {
      // Every window after the last attempt is empty; only the one with attempts is judged.
      if (auto r = judge(*k, k->window_start_ns + w); r && !first) first = std::move(r);
    } else if (now_ns - k->window_start_ns >= w / 2) {
      if (auto r = judge(*k, now_ns); r && !first) first = std::move(r);
    }
  }
  return first;
}

std::vector<AttemptTotals> FailureMeter::totals() const {
  std::vector<AttemptTotals> out;
  for (const auto& k : kinds_) {
    std::lock_guard lock(k->mu);
    out.push_back(k->totals);
  }
  return out;
}

}  // namespace drivelab::oltp
