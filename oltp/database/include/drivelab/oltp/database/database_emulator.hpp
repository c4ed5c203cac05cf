#pragma once
/// \file database_emulator.hpp
/// What the OLTP kinds (tpcc, sysbench) share as runner::Emulators on a database: each phase the
/// runner calls (prepare, warmup, run, verify) runs the kind's own *_phase inside
/// adding_server_log (backend/server.hpp), so a failure's reason quotes a managed server's log
/// before cleanup removes its directory (issue 15). The kind says which server that is.
#include <string>

#include "drivelab/oltp/backend/server.hpp"
#include "drivelab/oltp/database/database.hpp"
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

}  // namespace drivelab::oltp
