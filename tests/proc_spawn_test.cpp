#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "cordon/proc/pipe.h"
#include "cordon/proc/spawn.h"

namespace cordon::proc {
namespace {

// Runs `script` with /bin/sh, returns its stdout (read to EOF) and exit info.
struct Ran {
  std::string out;
  ExitInfo info;
};

Ran run_sh(const std::string& script, SpawnOptions opts = {}) {
  auto pipe = make_pipe();
  EXPECT_TRUE(pipe.has_value());
  opts.path = "/bin/sh";
  opts.argv = {"sh", "-c", script};
  opts.stdout_fd = pipe->write.get();
  auto child = spawn(opts);
  EXPECT_TRUE(child.has_value()) << child.error().describe();
  pipe->write.reset();
  Ran ran;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe->read.get(), buf, sizeof buf)) > 0;) ran.out.append(buf, n);
  auto info = child->wait();
  EXPECT_TRUE(info.has_value());
  ran.info = *info;
  return ran;
}

TEST(Spawn, RunsWithExactlyTheGivenEnvironment) {
  SpawnOptions opts;
  opts.env = {"A=1", "B=two"};
  const Ran ran = run_sh("env | grep -v '^PWD=' | sort", opts);
  EXPECT_EQ(ran.out, "A=1\nB=two\n");
  EXPECT_TRUE(ran.info.exited());
  EXPECT_EQ(ran.info.exit_code(), 0);
}

TEST(Spawn, ReportsExitCodeAndSignal) {
  EXPECT_EQ(run_sh("exit 7").info.exit_code(), 7);
  const Ran killed = run_sh("kill -SEGV $$");
  EXPECT_FALSE(killed.info.exited());
  EXPECT_EQ(killed.info.signal(), SIGSEGV);
  EXPECT_EQ(killed.info.exit_code(), -1);
}

TEST(Spawn, ExecFailureIsAnErrorWithTheReason) {
  SpawnOptions opts;
  opts.path = "/nonexistent/interpreter";
  opts.argv = {"x"};
  SpawnStage stage = SpawnStage::kSignals;
  auto child = spawn(opts, &stage);
  ASSERT_FALSE(child.has_value());
  EXPECT_EQ(child.error().sys_errno, ENOENT);
  EXPECT_EQ(stage, SpawnStage::kExec);
  EXPECT_NE(child.error().message.find("execve /nonexistent/interpreter"), std::string::npos);
}

TEST(Spawn, ChdirFailureIsAnError) {
  SpawnOptions opts;
  opts.path = "/bin/true";
  opts.argv = {"true"};
  opts.cwd = "/nonexistent-dir";
  SpawnStage stage = SpawnStage::kExec;
  auto child = spawn(opts, &stage);
  ASSERT_FALSE(child.has_value());
  EXPECT_EQ(stage, SpawnStage::kChdir);
}

TEST(Spawn, ChildHasOwnSessionAndCwd) {
  SpawnOptions opts;
  opts.cwd = "/tmp";
  // Field 6 of /proc/self/stat is the session id; in its own session it equals the pid.
  const Ran ran =
      run_sh("pwd; set -- $(cat /proc/$$/stat); [ \"$6\" = \"$$\" ] && echo leader", opts);
  EXPECT_EQ(ran.out, "/tmp\nleader\n");
}

TEST(Spawn, OnlyStdioIsInheritedAndCoreIsOff) {
  // A high fd (CLOEXEC like all of ours; close_range must close it regardless).
  UniqueFd leak(::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 100));
  ASSERT_TRUE(leak.valid());
  const Ran ran = run_sh("ls /proc/self/fd | sort -n | tr '\\n' ' '; ulimit -c");
  // 0 1 2, plus the fd ls itself opened for the directory listing; then `ulimit -c`.
  EXPECT_TRUE(ran.out.starts_with("0 1 2 ")) << ran.out;
  EXPECT_EQ(ran.out.find(" " + std::to_string(leak.get()) + " "), std::string::npos) << ran.out;
  EXPECT_TRUE(ran.out.ends_with(" 0\n")) << ran.out;
}

TEST(Spawn, KeepFdsArePlacedFromThree) {
  auto extra = make_pipe();
  ASSERT_TRUE(extra.has_value());
  SpawnOptions opts;
  opts.keep_fds = {extra->write.get()};
  const Ran ran = run_sh("echo via3 >&3", opts);
  extra->write.reset();
  char buf[64];
  const ssize_t n = ::read(extra->read.get(), buf, sizeof buf);
  EXPECT_EQ(std::string(buf, n > 0 ? n : 0), "via3\n");
}

TEST(Spawn, SignalDispositionsAreResetAndUnblocked) {
  // The test process ignores SIGUSR1 and blocks SIGUSR2; the child must have neither.
  struct sigaction ign{};
  ign.sa_handler = SIG_IGN;
  struct sigaction old{};
  ::sigaction(SIGUSR1, &ign, &old);
  sigset_t set, oldset;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &set, &oldset);
  const Ran ran = run_sh("grep -E '^(SigIgn|SigBlk)' /proc/self/status");
  pthread_sigmask(SIG_SETMASK, &oldset, nullptr);
  ::sigaction(SIGUSR1, &old, nullptr);
  EXPECT_EQ(ran.out, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

TEST(Spawn, RlimitsAreApplied) {
  SpawnOptions opts;
  opts.rlimits = {{RLIMIT_NOFILE, 64, 64}};
  EXPECT_EQ(run_sh("ulimit -n", opts).out, "64\n");
}

TEST(Spawn, DestructorKillsAndReaps) {
  pid_t pid = -1;
  {
    SpawnOptions opts;
    opts.path = "/bin/sleep";
    opts.argv = {"sleep", "30"};
    auto child = spawn(opts);
    ASSERT_TRUE(child.has_value());
    pid = child->pid();
  }
  // Reaped by us: the pid is gone entirely (not even a zombie).
  EXPECT_NE(::access(("/proc/" + std::to_string(pid)).c_str(), F_OK), 0);
}

TEST(Spawn, PidfdBecomesReadableOnExit) {
  SpawnOptions opts;
  opts.path = "/bin/true";
  opts.argv = {"true"};
  auto child = spawn(opts);
  ASSERT_TRUE(child.has_value());
  struct pollfd pfd{child->pidfd(), POLLIN, 0};
  EXPECT_EQ(::poll(&pfd, 1, 5000), 1);
  auto info = child->wait();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->exit_code(), 0);
}

}  // namespace
}  // namespace cordon::proc
