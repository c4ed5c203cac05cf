// Child processes on real programs (/bin/sh): finding, starting, capturing, timeouts, stopping,
// process groups, descriptors not inherited, and /proc/<pid>/stat.
#include "drivelab/core/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "temp_dir.hpp"

namespace drivelab {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test_support::TempDir;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

double seconds_since(std::int64_t t0) { return static_cast<double>(monotonic_ns() - t0) / 1e9; }

TEST(FindProgram, PathAbsoluteAndExtraDirs) {
  const auto sh = find_program("sh");
  ASSERT_TRUE(sh);
  EXPECT_TRUE(sh->is_absolute());
  EXPECT_EQ(find_program("/bin/sh"), fs::path("/bin/sh"));
  EXPECT_FALSE(find_program("/nonexistent/sh"));
  EXPECT_FALSE(find_program("drivelab-no-such-program"));
  EXPECT_FALSE(find_program(""));
  TempDir dir;
  const fs::path tool = dir.path() / "drivelab-extra-tool";
  std::ofstream(tool) << "#!/bin/sh\n";
  fs::permissions(tool, fs::perms::owner_all);
  EXPECT_FALSE(find_program("drivelab-extra-tool"));
  EXPECT_EQ(find_program("drivelab-extra-tool", {"/nonexistent", dir.path()}), tool);
}

TEST(RunCommand, ExitCodeAndBothStreamsCaptured) {
  const CommandResult r = run_command({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 10s);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);
  EXPECT_TRUE(contains(r.output, "out\n")) << r.output;
  EXPECT_TRUE(contains(r.output, "err\n")) << r.output;
}

TEST(RunCommand, TimeoutKillsTheWholeGroup) {
  const std::int64_t t0 = monotonic_ns();
  SpawnOptions group;
  group.own_process_group = true;
  // The shell's child holds the pipe too: only a group kill ends both.
  const CommandResult r = run_command({"/bin/sh", "-c", "echo started; sleep 30 & wait"}, 300ms, group);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_TRUE(contains(r.output, "started")) << r.output;
  EXPECT_LT(seconds_since(t0), 10.0);
}

TEST(RunCommand, WorkingDirectoryAndLargeOutputKeepsTheEnd) {
  TempDir dir;
  SpawnOptions in_dir;
  in_dir.cwd = dir.path();
  const CommandResult pwd = run_command({"/bin/sh", "-c", "pwd -P"}, 10s, in_dir);
  EXPECT_EQ(pwd.exit_code, 0);
  EXPECT_EQ(pwd.output, fs::canonical(dir.path()).string() + "\n");
  // 300 KB through a 64 KiB pipe: the child never blocks, the last 64 KiB are kept.
  const CommandResult big =
      run_command({"/bin/sh", "-c", "i=0; while [ $i -lt 30000 ]; do echo line-$i; i=$((i+1)); done; echo END"}, 60s);
  EXPECT_EQ(big.exit_code, 0);
  EXPECT_LE(big.output.size(), 64u * 1024);
  EXPECT_GT(big.output.size(), 32u * 1024);
  EXPECT_EQ(tail_of_text(big.output, 2), "line-29999\nEND");
}

TEST(ChildProcessTest, StartFailureNamesTheProgram) {
  try {
    ChildProcess c({"/nonexistent/prog"});
    ADD_FAILURE() << "started";
  } catch (const EnvironmentError& e) {
    EXPECT_TRUE(contains(e.what(), "start /nonexistent/prog: No such file")) << e.what();
  }
  SpawnOptions o;
  o.start_error = "cannot start gnuplot (/nonexistent/gnuplot)";
  try {
    ChildProcess c({"/nonexistent/gnuplot"}, o);
    ADD_FAILURE() << "started";
  } catch (const EnvironmentError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot start gnuplot (/nonexistent/gnuplot): No such file or directory");
  }
  EXPECT_THROW(ChildProcess({}), EnvironmentError);
}

TEST(ChildProcessTest, AppendsToALogFileAndReportsItsStatus) {
  TempDir dir;
  SpawnOptions log;
  log.output = ChildOutput::append_to_file;
  log.output_file = dir.path() / "server.log";
  for (const char* word : {"first", "second"}) {
    ChildProcess c({"/bin/sh", "-c", std::string("echo ") + word + "; echo " + word + "-err >&2; exit 4"}, log);
    const auto st = c.wait_for(10s);
    ASSERT_TRUE(st);
    EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 4);
    EXPECT_EQ(c.describe_status(), "exit code 4");
    EXPECT_FALSE(c.running());
  }
  EXPECT_EQ(tail_of_file(log.output_file), "first\nfirst-err\nsecond\nsecond-err");
  EXPECT_EQ(tail_of_file(log.output_file, 1), "second-err");
  EXPECT_EQ(tail_of_file(dir.path() / "missing"), "");
}

TEST(DistinctTail, AFloodOfOneMessageCannotPushTheCauseOutOfTheQuotedLines) {
  // The shape of a managed PostgreSQL's log after SIGQUIT with terminals reconnecting: the cause,
  // then one FATAL per refused reconnect attempt (timestamps and pids differ).
  std::string log =
      "2026-12-02 21:44:22.009 UTC [27325] ERROR:  unused item 1001: New-Order rolled back\n"
      "2026-12-02 21:44:22.213 UTC [27326] ERROR:  unused item 1001: New-Order rolled back\n"
      "2026-12-02 21:44:22.843 UTC [27289] LOG:  received immediate shutdown request\n";
  for (int i = 0; i < 50; ++i)
    log += fmt::format("2026-12-02 21:44:{:02}.{:03} UTC [{}] FATAL:  the database system is shutting down\n",
                       23 + i / 10, i * 7, 27333 + i);
  log += "2026-12-02 21:44:29.903 UTC [27289] LOG:  database system is shut down\n\n";
  EXPECT_EQ(distinct_tail_of_text(log, 20),
            "2026-12-02 21:44:22.213 UTC [27326] ERROR:  unused item 1001: New-Order rolled back [2 times]\n"
            "2026-12-02 21:44:22.843 UTC [27289] LOG:  received immediate shutdown request\n"
            "2026-12-02 21:44:27.343 UTC [27382] FATAL:  the database system is shutting down [50 times]\n"
            "2026-12-02 21:44:29.903 UTC [27289] LOG:  database system is shut down");
  // The plain tail of the same log has lost the cause.
  EXPECT_EQ(tail_of_text(log, 20).find("immediate shutdown request"), std::string::npos);
  // Fewer distinct lines than asked: the newest ones, in order.
  EXPECT_EQ(distinct_tail_of_text(log, 2),
            "2026-12-02 21:44:27.343 UTC [27382] FATAL:  the database system is shutting down [50 times]\n"
            "2026-12-02 21:44:29.903 UTC [27289] LOG:  database system is shut down");
  EXPECT_EQ(distinct_tail_of_text("a\nb\na\n", 20), "b\na [2 times]");
  EXPECT_EQ(distinct_tail_of_text(" \n\n", 20), "");
  EXPECT_EQ(distinct_tail_of_text("x", 0), "");
}

TEST(ChildProcessTest, TerminateThenKill) {
  ChildProcess polite({"/bin/sh", "-c", "exec sleep 30"});
  EXPECT_TRUE(polite.running());
  EXPECT_EQ(polite.describe_status(), "running");
  EXPECT_FALSE(polite.wait_for(50ms));
  EXPECT_TRUE(polite.terminate(10s));
  EXPECT_EQ(polite.describe_status(), "killed by signal 15");

  SpawnOptions group;
  group.own_process_group = true;
  group.output = ChildOutput::capture;
  ChildProcess stubborn({"/bin/sh", "-c", "trap '' TERM; echo ready; sleep 30; sleep 30"}, group);
  for (int i = 0; i < 500 && !contains(stubborn.output(), "ready"); ++i) stubborn.wait_for(10ms);
  const std::int64_t t0 = monotonic_ns();
  EXPECT_FALSE(stubborn.terminate(200ms));
  EXPECT_LT(seconds_since(t0), 10.0);
  EXPECT_EQ(stubborn.describe_status(), "killed by signal 9");
}

TEST(ChildProcessTest, TheDestructorKillsAndTheChildInheritsNoDescriptor) {
  pid_t pid = -1;
  {
    ChildProcess c({"/bin/sh", "-c", "exec sleep 30"});
    pid = c.pid();
    ASSERT_TRUE(process_state(pid));
  }
  EXPECT_FALSE(process_state(pid)) << "killed and reaped";

  const int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC on purpose
  ASSERT_GE(leaked, 3);
  const std::string probe =
      "if [ -e /proc/self/fd/" + std::to_string(leaked) + " ]; then echo open; else echo closed; fi";
  const CommandResult r = run_command({"/bin/sh", "-c", probe}, 10s);
  ::close(leaked);
  EXPECT_EQ(r.output, "closed\n");
}

TEST(ProcessStateTest, CommandNameAndZombies) {
  const auto self = process_state(::getpid());
  ASSERT_TRUE(self);
  EXPECT_EQ(self->comm, std::string("core_test").substr(0, 15));
  EXPECT_EQ(self->state, 'R');
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  std::optional<ProcessState> s;
  for (int i = 0; i < 500; ++i) {
    s = process_state(child);
    if (s && s->state == 'Z') break;
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, 'Z') << "ended, not yet reaped";
  int st = 0;
  ::waitpid(child, &st, 0);
  EXPECT_FALSE(process_state(child));
}

TEST(Tail, LastLinesWithoutTrailingBlanks) {
  EXPECT_EQ(tail_of_text("a\nb\nc\n\n", 2), "b\nc");
  EXPECT_EQ(tail_of_text("a\nb\nc", 5), "a\nb\nc");
  EXPECT_EQ(tail_of_text("", 3), "");
}

}  // namespace
}  // namespace drivelab
