// The capability probe tells "unknown", "not compiled in" and "blocked by this kernel or
// container" apart. The blocked case is produced for real: a seccomp filter — what container
// runtimes use to block io_uring — installed on one thread makes io_uring_setup fail with EPERM
// and io_setup with ENOSYS there, and the probe and make_engine run on that thread.
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <string>
#include <thread>

#include "drivelab/core/errors.hpp"
#include "drivelab/io/engine.hpp"

namespace drivelab::io {
namespace {

bool contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

TEST(EngineProbe, EveryEngineIsKnownAndDeclaresItsCapabilities) {
  for (std::string_view name : engine_names()) {
    SCOPED_TRACE(std::string(name));
    const EngineAvailability a = probe_engine(name);
    EXPECT_TRUE(a.known);
    EXPECT_EQ(a.usable, a.reason.empty()) << a.reason;
    if (a.usable) {
      EXPECT_TRUE(a.compiled_in);
    }
    EXPECT_FALSE(a.summary.empty());
    // Synchronous engines say so in their note (one I/O in flight per job whatever iodepth says).
    if (!a.capabilities.has(Capability::async)) {
      EXPECT_NE(a.note.find("synchronous"), std::string::npos) << a.note;
    }
  }
  EXPECT_TRUE(probe_engine("null").usable);
  EXPECT_TRUE(probe_engine("psync").usable);
}

TEST(EngineProbe, UringFeaturesAreProbedWhenUsable) {
  const EngineAvailability a = probe_engine("io_uring");
  if (!a.usable) GTEST_SKIP() << a.reason;
  std::vector<std::string> names;
  for (const FeatureAvailability& f : a.features) {
    names.push_back(f.name);
    EXPECT_EQ(f.usable, f.reason.empty()) << f.name << ": " << f.reason;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"sqthread_poll", "registered_files", "registered_buffers"}));
}

TEST(EngineProbe, NotCompiledInIsItsOwnError) {
  // In a build without liburing (DRIVELAB_WITH_URING=OFF) the probe says so and make_engine throws
  // NotCompiledIn, not EnvironmentError; in this build both are compiled in, so check consistency.
  for (std::string_view name : engine_names()) {
    const EngineAvailability a = probe_engine(name);
    if (a.compiled_in) continue;
    EXPECT_TRUE(contains(a.reason, "not compiled into this build")) << a.reason;
    EXPECT_THROW(make_engine(name), NotCompiledIn);
  }
}

#if defined(__x86_64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
constexpr std::uint32_t kAuditArch = 0;
#endif

sock_filter stmt(std::uint32_t code, std::uint32_t k) { return {static_cast<std::uint16_t>(code), 0, 0, k}; }
sock_filter jump_eq(std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
  return {static_cast<std::uint16_t>(BPF_JMP | BPF_JEQ | BPF_K), jt, jf, k};
}

// Installs, on the calling thread only, a filter that fails io_uring_setup with EPERM and
// io_setup with ENOSYS (what Docker's and other runtimes' default profiles do).
bool block_async_io_on_this_thread() {
  const sock_filter filter[] = {
      stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      jump_eq(kAuditArch, 1, 0),
      stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      jump_eq(__NR_io_uring_setup, 0, 1),
      stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      jump_eq(__NR_io_setup, 0, 1),
      stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  const sock_fprog prog{static_cast<unsigned short>(std::size(filter)), const_cast<sock_filter*>(filter)};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;  // no TSYNC: this thread only
}

struct BlockedOutcome {
  bool filtered = false;
  EngineAvailability uring, aio;
  bool uring_threw_environment = false, uring_threw_not_compiled = false;
  std::string uring_what;
};

TEST(EngineProbe, BlockedByTheContainerIsAnEnvironmentErrorThatSaysWhy) {
  if (kAuditArch == 0) GTEST_SKIP() << "no seccomp architecture constant for this CPU";
  if (!probe_engine("io_uring").usable || !probe_engine("libaio").usable)
    GTEST_SKIP() << "io_uring or libaio is not usable here even without a filter";
  BlockedOutcome out;
  std::thread blocked([&out] {
    out.filtered = block_async_io_on_this_thread();
    if (!out.filtered) return;
    out.uring = probe_engine("io_uring");
    out.aio = probe_engine("libaio");
    try {
      make_engine("io_uring");
    } catch (const NotCompiledIn& e) {
      out.uring_threw_not_compiled = true;
    } catch (const EnvironmentError& e) {
      out.uring_threw_environment = true;
      out.uring_what = e.what();
    }
  });
  blocked.join();
  if (!out.filtered) GTEST_SKIP() << "seccomp filters are not available here";

  EXPECT_TRUE(out.uring.known);
  EXPECT_TRUE(out.uring.compiled_in) << "compiled in, but blocked: not the NotCompiledIn case";
  EXPECT_FALSE(out.uring.usable);
  EXPECT_TRUE(contains(out.uring.reason, "io_uring is disabled on this kernel or container")) << out.uring.reason;
  EXPECT_TRUE(contains(out.uring.reason, "Operation not permitted (EPERM)")) << out.uring.reason;
  // kernel.io_uring_disabled is 0 on the test machines, so the message points at seccomp.
  EXPECT_TRUE(contains(out.uring.reason, "io_uring_disabled")) << out.uring.reason;
  EXPECT_TRUE(contains(out.uring.reason, "use engine libaio or psync")) << out.uring.reason;
  EXPECT_TRUE(out.uring.features.empty()) << "features are probed only when the engine is usable";
  EXPECT_TRUE(out.uring_threw_environment);
  EXPECT_FALSE(out.uring_threw_not_compiled);
  EXPECT_EQ(out.uring_what, out.uring.reason);

  EXPECT_TRUE(out.aio.compiled_in);
  EXPECT_FALSE(out.aio.usable);
  EXPECT_TRUE(contains(out.aio.reason, "libaio: io_setup(2) failed: Function not implemented (ENOSYS)"))
      << out.aio.reason;
  EXPECT_TRUE(contains(out.aio.reason, "CONFIG_AIO")) << out.aio.reason;

  // The filter died with its thread: this thread can still use both.
  EXPECT_TRUE(probe_engine("io_uring").usable);
  EXPECT_TRUE(probe_engine("libaio").usable);
}

}  // namespace
}  // namespace drivelab::io
