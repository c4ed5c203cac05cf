#pragma once
/// \file cpu_usage.hpp
/// CPU time spent by this process or by one thread, split into user and system (kernel) time, as
/// getrusage(2) reports it. Take a snapshot before and after a measured phase and subtract:
///
///     const CpuTimes t0 = process_cpu_times();
///     ... measured phase of `elapsed_s` seconds ...
///     const CpuTimes used = process_cpu_times() - t0;
///     used.user_pct(elapsed_s)    // like fio's usr_cpu: percent of ONE core, may exceed 100
///
/// Which snapshot to take:
///  - process_cpu_times() (RUSAGE_SELF): every thread of the process, including the kernel threads
///    that work for it and belong to it — io_uring's SQPOLL thread and io-wq workers (Linux >= 5.12
///    creates them as threads of the process) — so it is the honest cost of a whole test.
///  - thread_cpu_times() (RUSAGE_THREAD, Linux >= 2.6.26): the calling thread only. This is what fio
///    reports as a job's usr_cpu/sys_cpu (fio lib/getrusage.c prefers RUSAGE_THREAD, in process
///    and thread mode alike), so fio's figures leave out io-wq and SQPOLL threads.
///
/// Resolution: the kernel accounts these times at scheduler-tick granularity on some
/// configurations (CONFIG_TICK_CPU_ACCOUNTING: 1/HZ, often 1-4 ms) and exactly with
/// CONFIG_VIRT_CPU_ACCOUNTING_GEN; over phases of seconds the error is below 1%.
/// Errors: none (getrusage cannot fail with these arguments; a zero snapshot is returned if it did).
#include <cstdint>

namespace drivelab {

/// User and system CPU time in nanoseconds (a snapshot since the process/thread started, or the
/// difference of two snapshots).
struct CpuTimes {
  std::int64_t user_ns = 0;    ///< time executing in user mode (rusage ru_utime)
  std::int64_t system_ns = 0;  ///< time executing in the kernel on our behalf (ru_stime)

  double user_s() const noexcept { return static_cast<double>(user_ns) / 1e9; }
  double system_s() const noexcept { return static_cast<double>(system_ns) / 1e9; }
  double total_s() const noexcept { return user_s() + system_s(); }

  /// Percent of one core over `elapsed_s` of wall time (fio: usr_cpu / sys_cpu). 100 = one core
  /// busy the whole time; two busy threads give 200. 0 when elapsed_s <= 0.
  double user_pct(double elapsed_s) const noexcept { return pct(user_ns, elapsed_s); }
  double system_pct(double elapsed_s) const noexcept { return pct(system_ns, elapsed_s); }
  double total_pct(double elapsed_s) const noexcept { return pct(user_ns + system_ns, elapsed_s); }

  friend CpuTimes operator-(const CpuTimes& a, const CpuTimes& b) noexcept {
    return {a.user_ns - b.user_ns, a.system_ns - b.system_ns};
  }
  friend CpuTimes operator+(const CpuTimes& a, const CpuTimes& b) noexcept {
    return {a.user_ns + b.user_ns, a.system_ns + b.system_ns};
  }
  friend bool operator==(const CpuTimes&, const CpuTimes&) = default;

 private:
  static double pct(std::int64_t ns, double elapsed_s) noexcept {
    return elapsed_s > 0 ? static_cast<double>(ns) / 1e9 / elapsed_s * 100.0 : 0.0;
  }
};

/// CPU time of the whole process so far: all its threads, live and exited (getrusage RUSAGE_SELF).
CpuTimes process_cpu_times() noexcept;

/// CPU time of the calling thread so far (getrusage RUSAGE_THREAD).
CpuTimes thread_cpu_times() noexcept;

}  // namespace drivelab
