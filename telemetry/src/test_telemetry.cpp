// One test's device and host telemetry, sampled at its interval boundaries (test_telemetry.hpp).
#include "drivelab/telemetry/test_telemetry.hpp"

#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"

namespace drivelab::telemetry {
namespace {

namespace cat = results::catalogue;

results::Json values_json(const std::vector<Figure>& figures) {
  results::Json out = results::Json::object();
  for (const auto& [def, v] : figures) out[std::string(def->name)] = v;
  return out;
}

DeviceTotals totals_of(const BlockRates& r) {
  return {.read_ios = r.reads,
          .write_ios = r.writes,
          .flush_ios = r.flushes,
          .read_bytes = r.read_bytes,
          .write_bytes = r.write_bytes};
}

std::vector<Figure> totals_figures(const DeviceTotals& t, bool has_flushes) {
  std::vector<Figure> out{{&cat::device_read_ios, static_cast<double>(t.read_ios)},
                          {&cat::device_write_ios, static_cast<double>(t.write_ios)},
                          {&cat::device_read_bytes, static_cast<double>(t.read_bytes)},
                          {&cat::device_write_bytes, static_cast<double>(t.write_bytes)}};
  if (has_flushes) out.emplace_back(&cat::device_flush_ios, static_cast<double>(t.flush_ios));
  return out;
}

}  // namespace

std::vector<Figure> device_figures(const BlockRates& r) {
  std::vector<Figure> out{{&cat::device_r_s, r.r_s}, {&cat::device_w_s, r.w_s}};
  if (r.has_discards) out.emplace_back(&cat::device_d_s, r.d_s);
  if (r.has_flushes) out.emplace_back(&cat::device_f_s, r.f_s);
  const double s = r.seconds > 0 ? r.seconds : 1.0;
  out.insert(out.end(), {{&cat::device_rmb_s, static_cast<double>(r.read_bytes) / 1e6 / s},
                         {&cat::device_wmb_s, static_cast<double>(r.write_bytes) / 1e6 / s},
                         {&cat::device_rrqm_s, r.rrqm_s},
                         {&cat::device_wrqm_s, r.wrqm_s},
                         {&cat::device_rareq_bytes, r.rareq_sz * 1024},
                         {&cat::device_wareq_bytes, r.wareq_sz * 1024},
                         {&cat::device_r_await_ms, r.r_await},
                         {&cat::device_w_await_ms, r.w_await}});
  if (r.has_flushes) out.emplace_back(&cat::device_f_await_ms, r.f_await);
  out.insert(out.end(), {{&cat::device_aqu_sz, r.aqu_sz}, {&cat::device_util_pct, r.util_pct}});
  return out;
}

std::vector<Figure> host_figures(const HostRates& h) {
  std::vector<Figure> out;
  if (h.cpu) {
    out.insert(out.end(), {{&cat::host_cpu_user_pct, h.cpu->user + h.cpu->nice},
                           {&cat::host_cpu_system_pct, h.cpu->system},
                           {&cat::host_cpu_iowait_pct, h.cpu->iowait},
                           {&cat::host_cpu_steal_pct, h.cpu->steal},
                           {&cat::host_cpu_irq_pct, h.cpu->irq + h.cpu->softirq}});
  }
  if (h.io_pressure) {
    out.emplace_back(&cat::host_psi_io_some_pct, h.io_pressure->some);
    if (h.io_pressure->full) out.emplace_back(&cat::host_psi_io_full_pct, *h.io_pressure->full);
  }
  if (h.memory_pressure) {
    out.emplace_back(&cat::host_psi_memory_some_pct, h.memory_pressure->some);
    if (h.memory_pressure->full) out.emplace_back(&cat::host_psi_memory_full_pct, *h.memory_pressure->full);
  }
  return out;
}

TestTelemetry::TestTelemetry(const std::filesystem::path& target, const std::filesystem::path& sys_root,
                             std::filesystem::path proc_root)
    : host_(std::move(proc_root)) {
  try {
    TargetStack t = device_stack_of(target, sys_root);
    stack_ = std::move(t.stack);
    reason_ = std::move(t.reason);
    shared_ = std::move(t.shared);
  } catch (const std::exception& ex) {
    reason_ = fmt::format("'{}': device stack not found: {}", target.string(), ex.what());
  }
  if (stack_) below_intervals_.assign(stack_->devices.size(), results::Json::array());
  try {
    if (stack_) sensors_ = drive_sensors(*stack_);
  } catch (const std::exception& ex) {
    note(fmt::format("drive temperature sensors not found: {}", ex.what()));
  }
}

std::optional<double> TestTelemetry::sample_temperatures(std::int64_t ns, const results::Interval* iv) {
  std::optional<double> hottest;
  for (std::size_t i = 0; i < sensors_.size() && i < phase_.size(); ++i) {
    const std::optional<double> c = read_hwmon_celsius(sensors_[i].composite);
    if (!c) {
      note(fmt::format("{}: could not be read", sensors_[i].composite.string()));
      continue;
    }
    PhaseSample s{seconds_between(first_->ns, ns), *c, std::nullopt};
    if (iv != nullptr) s.interval_t_s = iv->t_s;
    phase_[i].samples.push_back(s);
    hottest = std::max(hottest.value_or(*c), *c);
  }
  return hottest;
}

void TestTelemetry::note(std::string text) {
  if (std::find(notes_.begin(), notes_.end(), text) == notes_.end()) notes_.push_back(std::move(text));
}

TestTelemetry::Sample TestTelemetry::take() {
  Sample s;
  s.ns = monotonic_ns();
  if (stack_) {
    s.devices.reserve(stack_->devices.size());
    for (const StackDevice& d : stack_->devices) {
      try {
        s.devices.push_back(read_block_stat(d.stat_file()));
        if (!s.devices.back())
          note(fmt::format("{}: could not be read (the device went away?)", d.stat_file().string()));
      } catch (const std::exception& ex) {
        s.devices.emplace_back();
        note(ex.what());
      }
    }
  }
  try {
    s.host = host_.sample();
  } catch (const std::exception& ex) {
    note(ex.what());
  }
  return s;
}

void TestTelemetry::health_before() {
  if (run_ == nullptr || !run_->health.available || !stack_) return;
  health_before_ = read_drive_health(*stack_, run_->tools);
}

void TestTelemetry::begin() {
  std::lock_guard lock(mu_);
  cpu_first_ = process_cpu_times();
  first_ = take();
  previous_ = first_;
  ended_ = false;
  phase_.clear();
  for (const DriveSensor& d : sensors_) phase_.push_back(phase_of(d));
  sample_temperatures(first_->ns, nullptr);
}

void TestTelemetry::close_interval(results::Interval& iv) {
  std::lock_guard lock(mu_);
  if (!previous_ || ended_) return;
  Sample now = take();
  const double seconds = seconds_between(previous_->ns, now.ns);
  std::vector<Figure> figures;
  for (std::size_t i = 0; i < now.devices.size(); ++i) {
    if (!now.devices[i] || !previous_->devices[i]) continue;
    const BlockRates r = block_rates(*previous_->devices[i], *now.devices[i], seconds);
    if (i == 0) {
      figures = device_figures(r);
    } else {
      below_intervals_[i].push_back({{"t_s", iv.t_s}, {"values", values_json(device_figures(r))}});
    }
  }
  const std::vector<Figure> host = host_figures(host_rates(previous_->host, now.host, seconds));
  figures.insert(figures.end(), host.begin(), host.end());
  if (const auto hottest = sample_temperatures(now.ns, &iv)) figures.emplace_back(&cat::drive_temp_c, *hottest);
  for (const auto& [def, v] : figures) iv.values.push_back(results::interval_value(*def, v));
  previous_ = std::move(now);
}

void TestTelemetry::end() {
  std::lock_guard lock(mu_);
  if (!first_ || ended_) return;
  last_ = take();
  sample_temperatures(last_->ns, nullptr);
  cpu_last_ = process_cpu_times();
  ended_ = true;
}

void TestTelemetry::health_after() {
  if (!health_before_ || !stack_) return;
  health_after_ = read_drive_health(*stack_, run_->tools);
}

std::optional<BlockRates> TestTelemetry::record_devices(results::TestRecorder& rec, results::Json& details,
                                                        double seconds) {
  std::optional<BlockRates> head;
  details["stack"] = stack_->describe();
  results::Json devices = results::Json::array();
  for (std::size_t i = 0; i < stack_->devices.size(); ++i) {
    const StackDevice& d = stack_->devices[i];
    results::Json dj = {{"name", d.block.name}, {"role", role_name(d.role)}};
    if (i > 0) dj["below"] = stack_->devices[d.below_of].block.name;
    if (!first_->devices[i] || !last_->devices[i]) {
      devices.push_back(std::move(dj));
      continue;
    }
    const BlockRates r = block_rates(*first_->devices[i], *last_->devices[i], seconds);
    std::vector<Figure> figures = totals_figures(totals_of(r), r.has_flushes);
    const std::vector<Figure> rates = device_figures(r);
    figures.insert(figures.end(), rates.begin(), rates.end());
    if (i == 0) {
      head = r;
      for (const auto& [def, v] : figures) rec.metric(*def, v);
      // The work the emulator recorded (read under the recorder's lock, recorded after it).
      // A curve (vdbench `iorate: curve`, tpcc/sysbench `rate: curve`) runs several rates, each
      // with its own warm-up, inside the one window the device counters cover, while its work
      // metrics are the max run's: their ratio would be several times too high (3.5 device reads
      // per 4 KiB O_DIRECT read in a vdbench curve). Per-unit demand is for one-rate tests only.
      std::vector<Figure> demand;
      bool curve = false;
      rec.with_record([&](const results::TestRecord& t) {
        curve = results::is_curve(t);
        if (!curve) demand = demand_metrics(t, totals_of(r), seconds);
      });
      for (const auto& [def, v] : demand) rec.metric(*def, v);
      if (curve)
        details["no_demand"] =
            "a curve: the device counters cover every point and its warm-up, the work metrics the max run "
            "only, so no per-unit demand is given (the per-interval device figures are per point)";
    } else {
      dj["test"] = values_json(figures);
      dj["intervals"] = std::move(below_intervals_[i]);
    }
    devices.push_back(std::move(dj));
  }
  details["devices"] = std::move(devices);
  if (!shared_.empty()) {
    results::Json uses = results::Json::array();
    for (const SharedUse& u : shared_)
      uses.push_back(
          {{"what", u.what}, {"swap", u.swap}, {"type", u.type}, {"on", u.on}, {"counted_in", u.counted_in}});
    details["shared"] = {{"text", shared_text(*stack_, shared_)}, {"uses", std::move(uses)}};
  }
  return head;
}

std::string TestTelemetry::record_checks(results::TestRecorder& rec, results::Json& details,
                                         const std::optional<BlockRates>& head, double seconds) {
  PhysicsInputs in;
  in.window_s = seconds;
  if (head) {
    in.device_read_ios = static_cast<double>(head->reads);
    in.device_read_bytes = static_cast<double>(head->read_bytes);
    in.device_write_bytes = static_cast<double>(head->write_bytes);
  }
  in.no_device = stack_ ? "" : reason_;
  if (stack_) in.page_cache_loops = stack_->page_cache_loops();
  const CpuTimes cpu = cpu_last_ - cpu_first_;
  in.process_cpu_s = cpu.total_s();
  details["process_cpu_s"] = cpu.total_s();
  in.link = stack_ ? link_ceiling(*stack_) : LinkCeiling{std::nullopt, "", reason_};
  if (run_ != nullptr && run_->ceiling) {
    in.harness_iops_per_cpu_s = run_->ceiling->iops_per_cpu_s;
  } else {
    in.ceiling_reason = run_ != nullptr ? "no harness ceiling: " + run_->ceiling_reason : "no harness ceiling";
  }
  std::vector<PhysicsFinding> findings;
  rec.with_record([&](const results::TestRecord& t) { findings = physics_checks(t, in); });
  std::string failure;
  for (const PhysicsFinding& f : findings) {
    if (f.outcome == CheckOutcome::warning) rec.warning(f.detail);
    if (f.outcome == CheckOutcome::failed) {
      rec.check(f.check, false, f.detail);
      if (failure.empty()) failure = f.detail;
    }
  }
  details["checks"] = checks_json(findings);
  std::optional<double> hottest;
  for (const PhaseTemperature& p : phase_)
    for (const PhaseSample& s : p.samples) hottest = std::max(hottest.value_or(s.composite_c), s.composite_c);
  const bool readings = health_before_ && health_after_;
  if (readings || hottest) {
    TestHealth h =
        test_health(readings ? *health_before_ : HealthReading{}, readings ? *health_after_ : HealthReading{}, phase_);
    for (std::string& w : h.warnings) rec.warning(std::move(w));
    rec.detail("health", std::move(h.json));
    if (hottest) rec.metric(cat::drive_temp_max_c, *hottest);
    if (h.warning_s) rec.metric(cat::drive_temp_warning_s, *h.warning_s);
  }
  return failure;
}

std::string TestTelemetry::record(results::TestRecorder& rec) {
  std::lock_guard lock(mu_);
  if (!first_ || !last_) return {};
  const double seconds = seconds_between(first_->ns, last_->ns);
  results::Json details = {{"window_s", seconds},
                           {"window", "the measured phase: from the start of the emulator's run to its return"}};
  for (const std::string& r : host_.reasons()) note(r);
  std::optional<BlockRates> head;
  if (!stack_) {
    details["no_device"] = reason_;
  } else {
    head = record_devices(rec, details, seconds);
  }
  const std::vector<Figure> host = host_figures(host_rates(first_->host, last_->host, seconds));
  for (const auto& [def, v] : host) rec.metric(*def, v);
  std::string failure = record_checks(rec, details, head, seconds);
  if (!notes_.empty()) details["notes"] = notes_;
  rec.detail("telemetry", std::move(details));
  return failure;
}

}  // namespace drivelab::telemetry
