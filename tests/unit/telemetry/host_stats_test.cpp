// /proc/stat's cpu line and /proc/pressure files, on captured contents, and the sampler's
// reasons, given once.
#include "drivelab/telemetry/host_stats.hpp"

#include <gtest/gtest.h>

#include "drivelab/core/errors.hpp"
#include "temp_dir.hpp"

namespace drivelab::telemetry {
namespace {

// The first lines of /proc/stat on a 2-CPU Linux 6.x machine, about a second apart (209 ticks of
// USER_HZ in all).
constexpr const char* kStatBefore =
    "cpu  4705 356 584 3699 123 0 45 7 0 0\n"
    "cpu0 2351 178 292 1849 61 0 22 3 0 0\n"
    "cpu1 2354 178 292 1850 62 0 23 4 0 0\n"
    "intr 114930548 113199788 3 0 5 263 0 4 [...]\n"
    "ctxt 1990473\n";
constexpr const char* kStatAfter =
    "cpu  4765 356 614 3779 143 2 58 11 0 0\n"
    "cpu0 2381 178 307 1889 71 1 29 5 0 0\n";

TEST(ProcStat, TheCpuLine) {
  const CpuStat a = parse_proc_stat_cpu(kStatBefore);
  EXPECT_EQ(a.user, 4705u);
  EXPECT_EQ(a.nice, 356u);
  EXPECT_EQ(a.system, 584u);
  EXPECT_EQ(a.idle, 3699u);
  EXPECT_EQ(a.iowait, 123u);
  EXPECT_EQ(a.softirq, 45u);
  EXPECT_EQ(a.steal, 7u);
  // +60 user, +0 nice, +30 system, +80 idle, +20 iowait, +2 irq, +13 softirq, +4 steal = 209 ticks.
  const CpuPercent p = cpu_percent(a, parse_proc_stat_cpu(kStatAfter));
  EXPECT_DOUBLE_EQ(p.user, 60.0 / 209 * 100);
  EXPECT_DOUBLE_EQ(p.system, 30.0 / 209 * 100);
  EXPECT_DOUBLE_EQ(p.idle, 80.0 / 209 * 100);
  EXPECT_DOUBLE_EQ(p.iowait, 20.0 / 209 * 100);
  EXPECT_DOUBLE_EQ(p.irq, 2.0 / 209 * 100);
  EXPECT_DOUBLE_EQ(p.softirq, 13.0 / 209 * 100);
  EXPECT_DOUBLE_EQ(p.steal, 4.0 / 209 * 100);
  EXPECT_DOUBLE_EQ(p.nice, 0.0);
  EXPECT_NEAR(p.user + p.nice + p.system + p.idle + p.iowait + p.irq + p.softirq + p.steal, 100.0, 1e-9);
}

TEST(ProcStat, ACounterThatWentDownCountsZero) {
  const CpuStat a{100, 0, 100, 100, 50, 0, 0, 0, 0, 0};
  const CpuStat b{150, 0, 100, 150, 40, 0, 0, 0, 0, 0};  // iowait went down (proc(5))
  const CpuPercent p = cpu_percent(a, b);
  EXPECT_DOUBLE_EQ(p.iowait, 0.0);
  EXPECT_DOUBLE_EQ(p.user, 50.0);
  EXPECT_DOUBLE_EQ(p.idle, 50.0);
}

TEST(ProcStat, OldKernelsWriteFewerFieldsAndBadTextIsNamed) {
  const CpuStat old = parse_proc_stat_cpu("cpu  1 2 3 4\n");
  EXPECT_EQ(old.idle, 4u);
  EXPECT_EQ(old.steal, 0u);
  try {
    parse_proc_stat_cpu("intr 5\ncpu  1 2 x 4 5\n", "/proc/stat");
    FAIL() << "no error";
  } catch (const EnvironmentError& e) {
    EXPECT_STREQ(e.what(), "/proc/stat:2: cpu system is 'x', not an unsigned number");
  }
  EXPECT_THROW(parse_proc_stat_cpu("cpu0 1 2 3 4\n"), EnvironmentError) << "cpu0 is not the summary line";
}

// /proc/pressure/io captured on Linux 6.18, and 10 s later with 0.25 s more "some" stall and
// 0.1 s more "full" stall.
constexpr const char* kIoBefore =
    "some avg10=0.01 avg60=0.61 avg300=1.64 total=1333300006\n"
    "full avg10=0.01 avg60=0.59 avg300=1.32 total=605156718\n";
constexpr const char* kIoAfter =
    "some avg10=2.50 avg60=0.80 avg300=1.65 total=1333550006\n"
    "full avg10=1.00 avg60=0.61 avg300=1.32 total=605256718\n";

TEST(Pressure, StallShareOverAnInterval) {
  const PressureStat a = parse_pressure(kIoBefore, "/proc/pressure/io");
  EXPECT_EQ(a.some_total_us, 1333300006u);
  ASSERT_TRUE(a.full_total_us);
  EXPECT_EQ(*a.full_total_us, 605156718u);
  EXPECT_DOUBLE_EQ(a.some_avg10, 0.01);
  const PressurePercent p = pressure_percent(a, parse_pressure(kIoAfter, "io"), 10.0);
  EXPECT_DOUBLE_EQ(p.some, 2.5);  // 250,000 us of 10,000,000
  ASSERT_TRUE(p.full);
  EXPECT_DOUBLE_EQ(*p.full, 1.0);
  // cpu before Linux 5.13: no "full" line.
  const PressureStat cpu = parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n", "cpu");
  EXPECT_FALSE(cpu.full_total_us);
  EXPECT_FALSE(pressure_percent(cpu, cpu, 1.0).full);
}

TEST(Pressure, BadTextNamesFileLineAndKey) {
  try {
    parse_pressure("some avg10=0.01 total=12\nfull avg10=0.01 total=1x\n", "/proc/pressure/memory");
    FAIL() << "no error";
  } catch (const EnvironmentError& e) {
    EXPECT_STREQ(e.what(), "/proc/pressure/memory:2: full total is '1x', not microseconds");
  }
  EXPECT_THROW(parse_pressure("full avg10=0 total=1\n", "p"), EnvironmentError) << "no some line";
  EXPECT_THROW(parse_pressure("some avg10=0\n", "p"), EnvironmentError) << "no total";
}

TEST(HostSampler, AMissingPressureFileIsSaidOnce) {
  test_support::TempDir proc;
  proc.write("stat", kStatBefore);
  HostSampler sampler(proc.path());
  const HostSample a = sampler.sample();
  proc.write("stat", kStatAfter);
  const HostSample b = sampler.sample();
  ASSERT_TRUE(a.cpu && b.cpu);
  EXPECT_FALSE(a.io_pressure);
  EXPECT_FALSE(a.memory_pressure);
  ASSERT_EQ(sampler.reasons().size(), 2u) << "io and memory, once each over two samples";
  EXPECT_NE(sampler.reasons()[0].find("pressure/io: absent"), std::string::npos) << sampler.reasons()[0];
  const HostRates r = host_rates(a, b, 1.0);
  ASSERT_TRUE(r.cpu);
  EXPECT_DOUBLE_EQ(r.cpu->user, 60.0 / 209 * 100);
  EXPECT_FALSE(r.io_pressure);
}

TEST(HostSampler, ThisMachine) {
  HostSampler sampler;
  const HostSample s = sampler.sample();
  ASSERT_TRUE(s.cpu) << (sampler.reasons().empty() ? "" : sampler.reasons()[0]);
  EXPECT_GT(s.cpu->idle + s.cpu->user + s.cpu->system, 0u);
  // Pressure: present on a kernel with PSI, else said once.
  EXPECT_TRUE(s.io_pressure || !sampler.reasons().empty());
}

}  // namespace
}  // namespace drivelab::telemetry
