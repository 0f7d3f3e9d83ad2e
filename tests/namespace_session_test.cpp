// A session's sandbox on the namespace backend (issue #41): one sandbox, its init in
// session mode (ns_init_channel.h's kSessionRun), order after order. Files written by one
// call are there for the next, shell variables are not, and a call ended by the host
// (its deadline) leaves none of its processes and keeps the sandbox.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "cordon/proc/pipe.h"
#include "cordon/session.h"
#include "kernel_features.h"
#include "namespace_backend.h"
#include "session_test_support.h"

namespace cordon::ns {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct Call {
  init::Report report;
  std::string out;
};

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

// The children of the session's init now: the processes of the current call.
std::string init_children(pid_t init) {
  std::ifstream in("/proc/" + std::to_string(init) + "/task/" + std::to_string(init) + "/children");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

RunRequest sh(const std::string& code) {
  RunRequest req;
  req.language = Language::kSh;
  req.code = code;
  return req;
}

class Session : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_.probe().available) CORDON_SKIP_OR_FAIL(backend_.probe().reason);
    auto built = backend_.build_session(sh("true"), Clock::now() + std::chrono::seconds(10));
    ASSERT_TRUE(built) << built.error().describe();
    sandbox_ = std::move(*built);
  }
  void TearDown() override {
    if (!sandbox_) return;
    (void)sandbox_->process.close_session(Clock::now() + std::chrono::seconds(5));
    if (sandbox_->limits) (void)sandbox_->limits->remove(Clock::now() + std::chrono::seconds(5));
  }

  // Runs `code` as the session's next call; with `end_after`, the host ends it then.
  Call call(const std::string& code, std::optional<milliseconds> end_after = std::nullopt) {
    Call c;
    auto plan = backend_.session_call_plan(sh(code), *sandbox_);
    EXPECT_TRUE(plan) << plan.error().describe();
    if (!plan) return c;
    auto out = proc::make_pipe();
    EXPECT_TRUE(out);
    if (!out) return c;
    CodeOrder order;
    order.plan = &*plan;
    order.write_files = true;
    order.stdout_fd = out->write.get();
    auto launched = sandbox_->process.launch_session(order);
    EXPECT_TRUE(launched) << launched.error().describe();
    out->write.reset();
    if (end_after) {
      std::this_thread::sleep_for(*end_after);
      children_before_end_ = init_children(sandbox_->process.init_pid());
      auto ended = sandbox_->process.end_session_run();
      EXPECT_TRUE(ended) << ended.error().describe();
    }
    auto report = sandbox_->process.session_report(Clock::now() + std::chrono::seconds(10));
    EXPECT_TRUE(report) << report.error().describe();
    if (report) c.report = *report;
    c.out = read_all(out->read.get());
    return c;
  }

  NamespaceBackend backend_;
  std::optional<BuiltSandbox> sandbox_;
  std::string children_before_end_;
};

TEST_F(Session, FilesPersistShellVariablesDoNot) {
  const Call first = call("echo kept > f; X=set; echo \"one [$X]\"");
  EXPECT_EQ(first.out, "one [set]\n");
  EXPECT_TRUE(WIFEXITED(first.report.status) && WEXITSTATUS(first.report.status) == 0);
  const Call second = call("cat f; echo \"two [$X]\"");
  EXPECT_EQ(second.out, "kept\ntwo []\n");
  // Order after order: the init's buffers are reused, many times.
  for (int i = 0; i < 20; ++i) {
    const Call again = call("echo $(( $(cat n 2>/dev/null || echo 0) + 1 )) > n; cat n");
    EXPECT_EQ(again.out, std::to_string(i + 1) + "\n");
  }
}

TEST_F(Session, AnEndedCallLeavesNoProcessAndTheNextCallSeesTheFiles) {
  const auto started = Clock::now();
  const Call ended = call("echo kept > f; sleep 100 & sleep 100", milliseconds(200));
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(2));
  // Positive control: the call's processes were there before the end.
  EXPECT_NE(children_before_end_, "");
  ASSERT_EQ(ended.report.main_reaped, 1);
  EXPECT_TRUE(WIFSIGNALED(ended.report.status) && WTERMSIG(ended.report.status) == SIGKILL);
  // The background sleep is gone too: the init has no child left, and lives on.
  EXPECT_EQ(init_children(sandbox_->process.init_pid()), "");
  EXPECT_EQ(::kill(sandbox_->process.init_pid(), 0), 0);
  const Call next = call("cat f");
  EXPECT_EQ(next.out, "kept\n");
}

TEST_F(Session, AnEndRunAfterTheCallEndedIsIgnored) {
  EXPECT_EQ(call("true").report.main_reaped, 1);
  // Crossed the call's own end: no run to end, and the session goes on.
  ASSERT_TRUE(sandbox_->process.end_session_run());
  EXPECT_EQ(call("echo still").out, "still\n");
}

TEST_F(Session, CloseEndsTheInitAndEverythingInIt) {
  const pid_t init = sandbox_->process.init_pid();
  auto out = proc::make_pipe();
  ASSERT_TRUE(out);
  auto plan = backend_.session_call_plan(sh("sleep 100"), *sandbox_);
  ASSERT_TRUE(plan);
  CodeOrder order;
  order.plan = &*plan;
  order.write_files = true;
  order.stdout_fd = out->write.get();
  ASSERT_TRUE(sandbox_->process.launch_session(order));
  out->write.reset();
  std::this_thread::sleep_for(milliseconds(100));
  const auto started = Clock::now();
  auto closed = sandbox_->process.close_session(Clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(closed) << closed.error().describe();
  // The init exited on EOF (not killed at the bound): the namespace went with it.
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(2));
  EXPECT_TRUE(closed->exited());
  EXPECT_NE(::kill(init, 0), 0);
  EXPECT_EQ(read_all(out->read.get()), "");  // every writer of the pipe is gone
}

// ---- calls through the shared driver (NamespaceBackend::run_in_session) ----

class DrivenSession : public ::testing::Test {
 protected:
  // A session whose sandbox has `limits` for its whole life.
  std::optional<BuiltSandbox> open(const Limits& limits) {
    RunRequest shape = sh("true");
    shape.limits = limits;
    auto built = backend_.build_session(shape, Clock::now() + std::chrono::seconds(10));
    EXPECT_TRUE(built) << built.error().describe();
    if (!built) return std::nullopt;
    return std::move(*built);
  }
  static void close(std::optional<BuiltSandbox>& s) {
    if (!s) return;
    (void)s->process.close_session(Clock::now() + std::chrono::seconds(5));
    if (s->limits) (void)s->limits->remove(Clock::now() + std::chrono::seconds(5));
    s.reset();
  }
  RunResult run(BuiltSandbox& s, const std::string& code, milliseconds timeout,
                const Limits& limits = {}) {
    RunRequest req = sh(code);
    req.timeout = timeout;
    req.limits = limits;
    return backend_.run_in_session(s, &tree_cpu_us_, req, {}, nullptr);
  }

  NamespaceBackend backend_;
  std::int64_t tree_cpu_us_ = 0;
};

TEST_F(DrivenSession, ATimedOutCallKillsItsProcessesAndTheSessionGoesOn) {
  if (!backend_.probe().available) CORDON_SKIP_OR_FAIL(backend_.probe().reason);
  auto s = open({});
  ASSERT_TRUE(s);
  const auto started = Clock::now();
  const RunResult slow =
      run(*s, "echo kept > f; sleep 100 & echo started; sleep 100", milliseconds(200));
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(2));
  EXPECT_EQ(slow.outcome, Outcome::kTimedOut) << (slow.error ? *slow.error : slow.stderr_data);
  EXPECT_EQ(slow.stdout_data, "started\n");
  // The background sleep is gone (checked from the host): the init has no child.
  EXPECT_EQ(init_children(s->process.init_pid()), "");
  const RunResult next = run(*s, "cat f", std::chrono::seconds(10));
  EXPECT_EQ(next.outcome, Outcome::kOk) << (next.error ? *next.error : next.stderr_data);
  EXPECT_EQ(next.stdout_data, "kept\n");
  close(s);
}

// tmpfs pages are charged to the memory group: a file kept by call 1 counts in call 2.
TEST_F(DrivenSession, MemoryKeptByOneCallCountsInTheNext) {
  if (!backend_.probe().available) CORDON_SKIP_OR_FAIL(backend_.probe().reason);
  Limits limits;
  limits.memory_bytes = 160ULL << 20;
  limits.scratch_bytes = 256ULL << 20;
  // Holds 100 MiB in one process, each page touched.
  const std::string allocate = R"(python3 -c 'b = bytearray(100 << 20)
for i in range(0, len(b), 4096): b[i] = 1
print("held")')";
  auto fresh = open(limits);
  ASSERT_TRUE(fresh);
  const RunResult control = run(*fresh, allocate, std::chrono::seconds(20), limits);
  EXPECT_EQ(control.outcome, Outcome::kOk)
      << (control.error ? *control.error : control.stderr_data);
  close(fresh);

  auto s = open(limits);
  ASSERT_TRUE(s);
  const RunResult keep =
      run(*s, "head -c 100M /dev/zero > big && echo kept", std::chrono::seconds(20), limits);
  ASSERT_EQ(keep.outcome, Outcome::kOk) << (keep.error ? *keep.error : keep.stderr_data);
  const RunResult over = run(*s, allocate, std::chrono::seconds(20), limits);
  EXPECT_EQ(over.outcome, Outcome::kLimitExceeded)
      << (over.error ? *over.error : over.stderr_data) << " " << over.stdout_data;
  EXPECT_EQ(over.limit, LimitKind::kMemory);
  // The session survives its OOM: the file is still there.
  const RunResult after = run(*s, "wc -c < big", std::chrono::seconds(10), limits);
  EXPECT_EQ(after.stdout_data, std::to_string(100 << 20) + "\n");
  close(s);
}

TEST_F(DrivenSession, TheWorkspaceQuotaGivesEnospcInside) {
  if (!backend_.probe().available) CORDON_SKIP_OR_FAIL(backend_.probe().reason);
  Limits limits;
  limits.scratch_bytes = 8ULL << 20;
  auto s = open(limits);
  ASSERT_TRUE(s);
  const RunResult r =
      run(*s, "head -c 20M /dev/zero > big; echo rc=$?", std::chrono::seconds(10), limits);
  EXPECT_NE(r.stderr_data.find("No space left on device"), std::string::npos) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "rc=1\n");
  close(s);
}

// ---- the BackendSession (NamespaceBackend::open_session) ----

std::unique_ptr<BackendSession> open_session(NamespaceBackend& backend,
                                             std::uint64_t workspace_bytes = 16ULL << 20) {
  return testing::open_test_session(backend, sh("true"), workspace_bytes);
}

RunResult call_in(BackendSession& s, const std::string& code) {
  RunRequest req = sh(code);
  req.timeout = std::chrono::seconds(10);
  return s.run(req, {}, nullptr);
}

TEST(NamespaceSession, CallsShareFilesAndTheHostReadsAndWritesThem) {
  NamespaceBackend backend;
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  auto s = open_session(backend);
  ASSERT_TRUE(s);
  EXPECT_EQ(call_in(*s, "mkdir d; echo one > d/f; V=1").outcome, Outcome::kOk);
  const RunResult second = call_in(*s, "cat d/f; echo \"[$V]\"");
  EXPECT_EQ(second.stdout_data, "one\n[]\n");
  auto read = s->read_file("d/f", 100);
  ASSERT_TRUE(read) << read.error().describe();
  EXPECT_EQ(*read, "one\n");
  // Written from the host, owned by the sandbox's user: the code can change it.
  const Status wrote = s->write_file("in/new.txt", "from host");
  ASSERT_TRUE(wrote) << wrote.error().describe();
  const RunResult third = call_in(*s, "cat in/new.txt; echo more >> in/new.txt && echo ok");
  EXPECT_EQ(third.stdout_data, "from hostok\n") << third.stderr_data;
  auto listed = s->list_files("in");
  ASSERT_TRUE(listed) << listed.error().describe();
  ASSERT_EQ(listed->size(), 1U);
  EXPECT_EQ((*listed)[0], (WorkspaceEntry{"in/new.txt", false, 14}));
  EXPECT_EQ(s->stats().calls, 3);
}

TEST(NamespaceSession, NoPathOutsideAndNoLinkThePlantedCodeFollowed) {
  NamespaceBackend backend;
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  auto s = open_session(backend);
  ASSERT_TRUE(s);
  ASSERT_EQ(call_in(*s, "ln -s /etc/passwd pw; ln -s / root; mkfifo fifo; echo x > real").outcome,
            Outcome::kOk);
  EXPECT_FALSE(s->read_file("../etc/passwd", 1 << 20));
  EXPECT_FALSE(s->read_file("/etc/passwd", 1 << 20));
  EXPECT_FALSE(s->read_file("pw", 1 << 20));
  EXPECT_FALSE(s->read_file("root/etc/passwd", 1 << 20));
  EXPECT_FALSE(s->read_file("fifo", 1 << 20));  // refused, not blocked on
  EXPECT_FALSE(s->write_file("pw", "x"));
  EXPECT_FALSE(s->write_file("root/tmp/x", "x"));
  EXPECT_FALSE(s->read_file("real", 1));  // over its size
  auto real = s->read_file("real", 10);
  ASSERT_TRUE(real);
  EXPECT_EQ(*real, "x\n");
}

TEST(NamespaceSession, TheWorkspaceQuotaHoldsForCallsAndHostWrites) {
  NamespaceBackend backend;
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  auto s = open_session(backend, 4ULL << 20);
  ASSERT_TRUE(s);
  const RunResult r = call_in(*s, "head -c 8M /dev/zero > big; echo rc=$?");
  EXPECT_NE(r.stderr_data.find("No space left on device"), std::string::npos) << r.stderr_data;
  EXPECT_FALSE(s->write_file("more", std::string(1 << 20, 'x')));
}

}  // namespace
}  // namespace cordon::ns
