#pragma once
/// \file database_emulator.hpp
/// What the OLTP kinds (tpcc, sysbench) share as runner::Emulators on a database: each phase the
/// runner calls (prepare, warmup, run, verify) runs the kind's own *_phase inside
/// adding_server_log (backend/server.hpp), so a failure's reason quotes a managed server's log
/// before cleanup removes its directory (issue 15). The kind says which server that is.
/// DriverEmulator adds what their `rate: curve` shares: the open-loop points after the max run.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "drivelab/oltp/backend/server.hpp"
#include "drivelab/core/clock.hpp"
#include "drivelab/core/phase.hpp"
#include "drivelab/oltp/database/database.hpp"
#include "drivelab/runner/curve.hpp"
#include "drivelab/runner/emulator.hpp"

namespace drivelab::oltp {

class DatabaseEmulator : public runner::Emulator {
 public:
  void prepare(runner::TestContext& ctx) final {
    adding_server_log([&] { prepare_phase(ctx); }, [&] { return managed_server(); });
  }
  void warmup(runner::TestContext& ctx) final {
    adding_server_log([&] { warmup_phase(ctx); }, [&] { return managed_server(); });
  }
  void run(runner::TestContext& ctx) final {
    adding_server_log([&] { run_phase(ctx); }, [&] { return managed_server(); });
  }
  void verify(runner::TestContext& ctx) final {
    adding_server_log([&] { verify_phase(ctx); }, [&] { return managed_server(); });
  }

 protected:
  // The kind's phases, as runner::Emulator describes them.
  virtual void prepare_phase(runner::TestContext& ctx) = 0;
  virtual void warmup_phase(runner::TestContext& ctx) = 0;
  virtual void run_phase(runner::TestContext& ctx) = 0;
  virtual void verify_phase(runner::TestContext& ctx) = 0;
  /// The managed server behind the database, nullptr for none (yet: asked when a phase fails,
  /// the server may have been started inside it).
  virtual const ManagedServer* managed_server() const noexcept = 0;

  /// What open_database needs for this test (database.hpp OpenRequest): the target, the test's
  /// name, the workload ("tpcc", "sysbench"), the most sessions it opens at once, and the
  /// recorder as the place for its progress lines and warnings.
  static OpenRequest open_request(const runner::TestContext& ctx, const std::string& test_name, std::string workload,
                                  int connections) {
    OpenRequest req;
    req.target_dir = ctx.target_dir;
    req.test_name = test_name;
    req.workload = std::move(workload);
    req.connections = connections;
    results::TestRecorder* rec = ctx.recorder;
    req.message = [rec](const std::string& m) { rec->message(m); };
    req.warning = [rec](const std::string& m) { rec->warning(m); };
    return req;
  }
};

/// A DatabaseEmulator whose workers a `Driver` runs (tpcc::Driver, sysbench::Driver: their
/// begin_measurement(), finish() and totals().measured_s), with the open-loop points of its
/// `rate: curve` (docs/oltp-tpcc.md, docs/oltp-sysbench.md), run the same way by both kinds.
template <class Driver>
class DriverEmulator : public DatabaseEmulator {
 protected:
  /// Starts the kind's driver at `rate_per_s` (0: closed loop, else an open loop); `point` > 0 is
  /// a curve point's, whose workers draw from a stream of their own.
  virtual void start_driver(runner::TestContext& ctx, double rate_per_s, std::uint64_t point) = 0;
  /// One interval per settings.interval until the measured time ends or the run stops.
  virtual void measure_intervals(runner::TestContext& ctx) = 0;
  /// A stop was requested or the workers failed: what ends the phase's waits (core/phase.hpp).
  virtual bool stop_or_failed(const runner::TestContext& ctx) const noexcept = 0;

  /// The open-loop points of `rate: curve` after its closed-loop max run runs.front()
  /// (runner::run_rate_curve: the points of `curve`, their rates and their shares on several
  /// hosts), each run reported by runner::report_curve_run with `record`, the max run first. A
  /// point: runner::curve_point_start_line, then `driver` is replaced (start_driver at the
  /// point's rate and stream), runs settings.warmup unrecorded and its measured phase
  /// (begin_measurement, measure_intervals, finish). A point stopped in its warm-up ends the
  /// curve; one stopped in its measured phase is a fragment (often the warm-up's backlog
  /// draining), no point of the curve and never a bracket of the answer: only its
  /// runner::cut_point_line; one run to its end is appended to `runs` as a `Run` (the kind's
  /// CurveRun: group, requested_pct, requested_tps, totals). When the max run completed nothing,
  /// the warning "rate: curve: the max run <completed> nothing, so there is no rate to take a
  /// share of" (`completed`: the kind's word, "completed", "committed"). Returns the group of the
  /// last run when the curve did not run all its points, else "".
  template <class Run, class RecordRun>
  std::string run_curve_points(runner::TestContext& ctx, const runner::TestSettings& settings,
                               const std::vector<double>& curve, std::vector<Run>& runs,
                               std::unique_ptr<Driver>& driver, RecordRun&& record, std::string_view completed) {
    results::TestRecorder& rec = *ctx.recorder;
    runner::report_curve_run(rec, runs.front(), runs.front(), record);
    const auto stopped = [&] { return stop_or_failed(ctx); };
    const runner::RateCurveResult result =
        runner::run_rate_curve(ctx, runs.front().tps(), curve, stopped, [&](const runner::RateCurvePoint& p) {
          rec.message(runner::curve_point_start_line(p));
          driver.reset();
          start_driver(ctx, p.rate_per_s, p.index);
          if (!wait_until(monotonic_ns() + settings.warmup.count(), stopped)) {
            driver->finish();
            return true;
          }
          driver->begin_measurement();
          measure_intervals(ctx);
          driver->finish();
          if (stopped()) {
            rec.message(runner::cut_point_line(p.group, driver->totals().measured_s, settings.duration));
          } else {
            Run run{
                .group = p.group, .requested_pct = p.pct, .requested_tps = p.rate_per_s, .totals = driver->totals()};
            runner::report_curve_run(rec, run, runs.front(), record);
            runs.push_back(std::move(run));
          }
          return stopped();
        });
    if (result.max_rate <= 0)
      rec.warning("rate: curve: the max run " + std::string(completed) +
                  " nothing, so there is no rate to take a share of");
    return result.complete ? std::string() : runs.back().group;
  }
};

}  // namespace drivelab::oltp
