// A session's sandbox on the namespace backend (issue #41): one sandbox, its init in
// session mode (ns_init_channel.h's kSessionRun), order after order. Files written by one
// call are there for the next, shell variables are not, and a call ended by the host
// (its deadline) leaves none of its processes and keeps the sandbox. Through the
// BackendSession, every call goes to the session's python kernel: python state persists
// until a call loses the kernel (state_lost), the files persist across kernels.
#include "namespace_session.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

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

// ---- the BackendSession (NamespaceBackend::open_session) ----

std::unique_ptr<BackendSession> open_session(NamespaceBackend& backend,
                                             std::uint64_t workspace_bytes = 16ULL << 20,
                                             const Limits& limits = {}) {
  return testing::open_test_session(backend, limits, workspace_bytes);
}

RunResult call_in(BackendSession& s, const std::string& code) {
  RunRequest req = sh(code);
  req.timeout = std::chrono::seconds(10);
  return s.run(req, {}, nullptr);
}

RunResult py_in(BackendSession& s, const std::string& code,
                milliseconds timeout = std::chrono::seconds(20)) {
  RunRequest req;
  req.language = Language::kPython;
  req.code = code;
  req.timeout = timeout;
  return s.run(req, {}, nullptr);
}

std::string why(const RunResult& r) {
  return (r.error ? *r.error + " | " : "") + r.stderr_data + " | " + r.stdout_data;
}

// The processes of the sandbox, from inside (its own PID namespace): after a call only the
// init (1) and the kernel are left.
constexpr const char* kOthers =
    "import os\nsorted(int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) not in "
    "(1, os.getpid()))";

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
  const SessionStats stats = s->stats();
  EXPECT_EQ(stats.calls, 3);
  // CPU time comes from the session's group: measured for the session exactly when it is
  // for a call (never a 0 that reads as measured where the group cannot count it).
  EXPECT_EQ(stats.cpu_ms.has_value(), third.cpu_ms.has_value());
}

TEST(NamespaceSession, ATimedOutShellCallKillsItsProcessesAndTheSessionGoesOn) {
  NamespaceBackend backend;
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  auto s = open_session(backend);
  ASSERT_TRUE(s);
  RunRequest slow = sh("echo kept > f; sleep 100 & echo started; sleep 100");
  slow.timeout = milliseconds(300);
  const auto started = Clock::now();
  const RunResult r = s->run(slow, {}, nullptr);
  EXPECT_LT(Clock::now() - started, cordon_test::slack(std::chrono::seconds(3)));
  EXPECT_EQ(r.outcome, Outcome::kTimedOut) << (r.error ? *r.error : r.stderr_data);
  EXPECT_EQ(r.stdout_data, "started\n");
  EXPECT_TRUE(r.state_lost);  // the shell was the kernel's child: its run ended
  // The background sleep is gone: the sandbox holds its init and the new kernel only.
  const RunResult others = py_in(*s, kOthers);
  EXPECT_EQ(others.value, "[]") << others.stderr_data;
  EXPECT_EQ(call_in(*s, "cat f").stdout_data, "kept\n");
}

// tmpfs pages are charged to the session's memory group: a file kept by call 1 counts in
// call 2.
TEST(NamespaceSession, MemoryKeptInFilesCountsInTheNextCall) {
  NamespaceBackend backend;
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  Limits limits;
  limits.memory_bytes = 160ULL << 20;
  // Holds 100 MiB in one process, each page touched.
  const std::string allocate = R"(python3 -c 'b = bytearray(100 << 20)
for i in range(0, len(b), 4096): b[i] = 1
print("held")')";
  auto fresh = open_session(backend, 256ULL << 20, limits);
  ASSERT_TRUE(fresh);
  const RunResult control = call_in(*fresh, allocate);
  EXPECT_EQ(control.outcome, Outcome::kOk)
      << (control.error ? *control.error : control.stderr_data);
  fresh.reset();

  auto s = open_session(backend, 256ULL << 20, limits);
  ASSERT_TRUE(s);
  const RunResult keep = call_in(*s, "head -c 100M /dev/zero > big && echo kept");
  ASSERT_EQ(keep.outcome, Outcome::kOk) << (keep.error ? *keep.error : keep.stderr_data);
  const RunResult over = call_in(*s, allocate);
  EXPECT_EQ(over.outcome, Outcome::kLimitExceeded)
      << (over.error ? *over.error : over.stderr_data) << " " << over.stdout_data;
  EXPECT_EQ(over.limit, LimitKind::kMemory);
  EXPECT_TRUE(over.state_lost);
  // The session survives its OOM: the file is still there.
  const RunResult after = call_in(*s, "wc -c < big");
  EXPECT_EQ(after.stdout_data, std::to_string(100 << 20) + "\n");
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

// The inspector opens a session on a worker thread that then ends, and calls it from others:
// the sandbox must not die with the thread that opened it (PR_SET_PDEATHSIG follows threads).
TEST(NamespaceSession, ASessionOutlivesTheThreadThatOpenedIt) {
  NamespaceBackend backend;
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  std::unique_ptr<BackendSession> s;
  std::thread([&] { s = open_session(backend); }).join();
  ASSERT_TRUE(s);
  RunResult first;
  RunResult second;
  std::thread([&] {
    first = py_in(*s, "x = 41\nopen('f', 'w').write('kept')");
    second = py_in(*s, "print(open('f').read())\nx + 1");
  }).join();
  EXPECT_EQ(first.outcome, Outcome::kOk) << why(first);
  EXPECT_EQ(second.stdout_data, "kept\n") << why(second);
  EXPECT_EQ(second.value, "42");
  EXPECT_FALSE(second.state_lost);
}

// The parent of `pid` (from /proc/<pid>/stat), or -1.
pid_t parent_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat.substr(close + 2));
  char state = 0;
  pid_t ppid = -1;
  rest >> state >> ppid;
  return ppid;
}

// Gone, or a zombie nobody reaps (this machine's PID 1 never does): nothing runs.
bool ended(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t close = stat.rfind(')');
  return close == std::string::npos || stat.substr(close + 2, 1) == "Z";
}

// The processes whose command line holds `needle`.
std::vector<pid_t> processes_with(const std::string& needle) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find(needle) != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

// The v1 memory group of `pid` as a directory ("" when there is none).
std::string memory_group_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  for (std::string line; std::getline(in, line);) {
    const std::size_t first = line.find(':');
    const std::size_t second = line.find(':', first + 1);
    if (line.substr(first + 1, second - first - 1) == "memory") {
      return "/sys/fs/cgroup/memory" + line.substr(second + 1);
    }
  }
  return "";
}

// The session's init died (here SIGKILLed from the host; in life, the OOM killer): the
// session says so (loss(), which a front end ends it with), and calls fail with a reason
// rather than hang.
TEST(NamespaceSession, ASessionWhoseInitDiedSaysSo) {
  NamespaceBackend backend;
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  auto s = open_session(backend);
  ASSERT_TRUE(s);
  EXPECT_EQ(py_in(*s, "x = 1\nx").value, "1");
  EXPECT_FALSE(s->loss());
  std::vector<pid_t> inits;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "comm");
    std::string comm;
    std::getline(in, comm);
    if (comm == "cordon-ns-init" && parent_of(std::stoi(name)) == ::getpid()) {
      inits.push_back(std::stoi(name));
    }
  }
  ASSERT_EQ(inits.size(), 1U);
  ASSERT_EQ(::kill(inits[0], SIGKILL), 0);
  const auto until = Clock::now() + cordon_test::slack(std::chrono::seconds(10));
  while (!s->loss() && Clock::now() < until) std::this_thread::sleep_for(milliseconds(10));
  const std::optional<SessionLoss> loss = s->loss();
  ASSERT_TRUE(loss);
  EXPECT_FALSE(loss->oom);
  EXPECT_NE(loss->reason.find("init died"), std::string::npos) << loss->reason;
  const RunResult after = py_in(*s, "x");
  EXPECT_EQ(after.outcome, Outcome::kSandboxError) << why(after);
  EXPECT_NE(after.error.value_or("").find("init died"), std::string::npos) << why(after);
}

// cordon SIGKILLed while it holds a session: every process of the sandbox is gone (its init
// dies with its builder and sees its control socket close), and the next start sweeps its
// limit group.
TEST(NamespaceSession, ASessionDiesWithTheProcessThatHoldsIt) {
  {
    NamespaceBackend probe;
    if (!probe.probe().available) CORDON_SKIP_OR_FAIL(probe.probe().reason);
  }
  const std::string marker = "sleep 47.25";
  const pid_t holder = ::fork();
  if (holder == 0) {
    // The holder: opens a session on a thread that ends (as the inspector does), then
    // calls it; killed while the call runs.
    NamespaceBackend backend;
    std::unique_ptr<BackendSession> s;
    std::thread([&] {
      SessionOptions o;
      o.base = sh("true");
      o.base.limits.memory_bytes = 64ULL << 20;
      auto opened = backend.open_session(o);
      if (opened) s = std::move(*opened);
    }).join();
    if (!s) ::_exit(2);
    RunRequest r = sh(marker);
    r.timeout = std::chrono::seconds(60);
    (void)s->run(r, {}, nullptr);
    ::_exit(0);
  }
  ASSERT_GT(holder, 0);
  // The sandbox's processes: from the sleep up to the holder (sleep, sh, kernel, init).
  std::vector<pid_t> chain;
  const auto until = Clock::now() + cordon_test::slack(std::chrono::seconds(10));
  while (chain.size() < 4 && Clock::now() < until) {
    for (const pid_t p : processes_with(marker)) {
      std::vector<pid_t> up;
      for (pid_t at = p; at > 1 && at != holder; at = parent_of(at)) up.push_back(at);
      if (parent_of(up.back()) == holder && up.size() > chain.size()) chain = up;
    }
    if (chain.size() < 4) std::this_thread::sleep_for(milliseconds(10));
  }
  const std::string group = chain.empty() ? "" : memory_group_of(chain.front());
  ::kill(holder, SIGKILL);
  int status = 0;
  ::waitpid(holder, &status, 0);
  ASSERT_GE(chain.size(), 4U) << "the session's call was not seen running";
  ASSERT_FALSE(group.empty());
  EXPECT_TRUE(std::filesystem::exists(group)) << group;  // the positive control

  const auto gone_until = Clock::now() + cordon_test::slack(std::chrono::seconds(5));
  std::vector<pid_t> left = chain;
  while (!left.empty() && Clock::now() < gone_until) {
    std::erase_if(left, ended);
    if (!left.empty()) std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(left.empty()) << "the session's sandbox outlived the killed cordon";
  {
    NamespaceBackend sweeper;
    EXPECT_TRUE(sweeper.prepare());
  }
  EXPECT_FALSE(std::filesystem::exists(group)) << group;
}

// ---- the session's python kernel (NamespaceBackend::run_in_kernel) ----

// A session with the default options, opened for each test.
class KernelSession : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_.probe().available) CORDON_SKIP_OR_FAIL(backend_.probe().reason);
    s_ = open_session(backend_);
    ASSERT_TRUE(s_);
  }
  NamespaceBackend backend_;
  std::unique_ptr<BackendSession> s_;
};

TEST_F(KernelSession, VariablesImportsAndValuesPersistShellVariablesDoNot) {
  EXPECT_TRUE(s_->stats().interpreter_alive);  // started with the session
  RunResult r = py_in(*s_, "x = 41");
  EXPECT_EQ(r.outcome, Outcome::kOk) << why(r);
  EXPECT_FALSE(r.value.has_value());
  EXPECT_TRUE(s_->stats().interpreter_alive);
  r = py_in(*s_, "print(x + 1)");
  EXPECT_EQ(r.stdout_data, "42\n") << why(r);
  r = py_in(*s_, "import json\nrows = [1, 2, 3]");
  EXPECT_EQ(r.outcome, Outcome::kOk) << why(r);
  r = py_in(*s_, "json.dumps(rows)");
  EXPECT_EQ(r.value, "'[1, 2, 3]'") << why(r);
  // sh: a fresh process per call, started by the kernel; its background process is swept.
  r = call_in(*s_, "X=1; echo \"[$X]\"; sleep 100 &");
  EXPECT_EQ(r.stdout_data, "[1]\n") << why(r);
  r = call_in(*s_, "echo \"[$X]\"");
  EXPECT_EQ(r.stdout_data, "[]\n") << why(r);
  RunRequest fed = sh("cat");
  fed.stdin_data = "fed\n";
  fed.timeout = std::chrono::seconds(10);
  r = s_->run(fed, {}, nullptr);
  EXPECT_EQ(r.stdout_data, "fed\n") << why(r);
  r = py_in(*s_, kOthers);
  EXPECT_EQ(r.value, "[]") << why(r);
  // The shell calls did not touch the interpreter.
  r = py_in(*s_, "x");
  EXPECT_EQ(r.value, "41") << why(r);
  EXPECT_FALSE(r.state_lost);
  r = py_in(*s_, "1 / 0");
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_NE(r.stderr_data.find("ZeroDivisionError"), std::string::npos) << why(r);
  EXPECT_FALSE(r.state_lost);
}

// What the host keeps between a kernel's calls (SandboxKernel::CallMemo) never gives a
// call another's figures: a call with its own CPU limit is declared with it (and the next
// without one, without it), and a call's limit facts are its own, not its predecessor's.
TEST_F(KernelSession, EachCallIsDeclaredAndTimedForItself) {
  const auto cpu_claim = [](const RunResult& r) {
    for (const Enforced& e : r.enforced) {
      if (e.aspect == Aspect::kCpu) return e.mechanism + " " + e.value.value_or("");
    }
    return std::string("(none)");
  };
  RunResult plain = py_in(*s_, "x = 1");
  ASSERT_EQ(plain.outcome, Outcome::kOk) << why(plain);
  RunRequest limited;
  limited.language = Language::kPython;
  limited.code = "x += 1";
  limited.timeout = std::chrono::seconds(20);
  limited.limits.cpu_time = std::chrono::seconds(7);
  const RunResult own = s_->run(limited, {}, nullptr);
  ASSERT_EQ(own.outcome, Outcome::kOk) << why(own);
  EXPECT_NE(cpu_claim(own), cpu_claim(plain));
  EXPECT_NE(cpu_claim(own).find('7'), std::string::npos) << cpu_claim(own);
  const RunResult again = py_in(*s_, "x += 1");
  EXPECT_EQ(cpu_claim(again), cpu_claim(plain));
  EXPECT_EQ(again.enforced.size(), plain.enforced.size());
  EXPECT_EQ(py_in(*s_, "x").value, "3");

  // The groups' figures a call starts from are those the last call ended with: a call that
  // hits the session's process ceiling says so, and the next, which forks nothing and fails, does
  // not (from figures kept from before the first, it would).
  Limits few;
  few.max_processes = 12;
  auto capped = open_session(backend_, 16ULL << 20, few);
  ASSERT_TRUE(capped);
  ASSERT_EQ(py_in(*capped, "x = 1").outcome, Outcome::kOk);
  if (::geteuid() != 0) GTEST_SKIP() << "the process ceiling is a cgroup: needs root here";
  const RunResult forks =
      call_in(*capped, "i=0; while [ $i -lt 40 ]; do sleep 30 & i=$((i+1)); done 2>/dev/null");
  EXPECT_EQ(forks.outcome, Outcome::kLimitExceeded) << why(forks);
  EXPECT_EQ(forks.limit, LimitKind::kProcesses) << why(forks);
  const RunResult quiet = call_in(*capped, "exit 3");  // a failure, and not the ceiling's
  EXPECT_EQ(quiet.outcome, Outcome::kFailed) << why(quiet);
  EXPECT_EQ(quiet.exit_code, 3);
  EXPECT_FALSE(quiet.limit.has_value());
  EXPECT_EQ(py_in(*capped, "x").value, "1");
}

TEST_F(KernelSession, ATimeoutRestartsTheInterpreterAndKeepsTheFiles) {
  RunResult r = py_in(*s_, "open('f', 'w').write('kept')\nx = 1");
  ASSERT_EQ(r.outcome, Outcome::kOk) << why(r);
  const auto started = Clock::now();
  r = py_in(*s_,
            "import subprocess, time\nsubprocess.Popen(['sleep', '100'])\n"
            "print('slow', flush=True)\ntime.sleep(100)",
            milliseconds(500));
  EXPECT_LT(Clock::now() - started, cordon_test::slack(std::chrono::seconds(3)));
  EXPECT_EQ(r.outcome, Outcome::kTimedOut) << why(r);
  EXPECT_TRUE(r.state_lost);
  EXPECT_EQ(r.stdout_data, "slow\n");
  EXPECT_FALSE(s_->stats().interpreter_alive);
  // A fresh interpreter: the variable is gone, the file and nothing else of the call is there.
  r = py_in(*s_, "print(open('f').read())\nprint('x' in globals())");
  EXPECT_EQ(r.outcome, Outcome::kOk) << why(r);
  EXPECT_EQ(r.stdout_data, "kept\nFalse\n");
  EXPECT_FALSE(r.state_lost);
  r = py_in(*s_, kOthers);
  EXPECT_EQ(r.value, "[]") << why(r);
}

TEST_F(KernelSession, ResetEndsTheInterpreterAndKeepsTheFiles) {
  ASSERT_EQ(py_in(*s_, "x = 1\nopen('f', 'w').write('kept')").outcome, Outcome::kOk);
  ASSERT_TRUE(s_->reset());
  EXPECT_FALSE(s_->stats().interpreter_alive);
  const RunResult r = py_in(*s_, "print(open('f').read())\n'x' in globals()");
  EXPECT_EQ(r.stdout_data, "kept\n") << why(r);
  EXPECT_EQ(r.value, "False");
  EXPECT_FALSE(r.state_lost);
  ASSERT_TRUE(s_->reset());
  ASSERT_TRUE(s_->reset());  // nothing to end: still fine
}

TEST_F(KernelSession, SysExitInACellIsItsExitAndTheNextCallGetsAFreshInterpreter) {
  ASSERT_EQ(py_in(*s_, "x = 1").outcome, Outcome::kOk);
  RunResult r = py_in(*s_, "import sys\nprint('bye')\nsys.exit(3)");
  EXPECT_EQ(r.outcome, Outcome::kFailed) << why(r);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.stdout_data, "bye\n");
  EXPECT_TRUE(r.state_lost);
  r = py_in(*s_, "'x' in globals()");
  EXPECT_EQ(r.value, "False") << why(r);
}

// The code finds the kernel's control socket the way any code could (/proc/self/fd) and
// writes a frame header no reply may have: a failed call and a fresh interpreter, no hang.
TEST_F(KernelSession, GarbageOnTheControlSocketIsAFailedCallAndARestart) {
  ASSERT_EQ(py_in(*s_, "x = 1").outcome, Outcome::kOk);
  const auto started = Clock::now();
  RunResult r = py_in(*s_, R"(import os
for name in os.listdir('/proc/self/fd'):
    try:
        target = os.readlink('/proc/self/fd/' + name)
    except OSError:
        continue
    if target.startswith('socket:'):
        print('found', name, flush=True)
        os.write(int(name), b'\xff\xff\xff\xffgarbage'))");
  EXPECT_LT(Clock::now() - started, cordon_test::slack(std::chrono::seconds(5)));
  EXPECT_EQ(r.stdout_data.rfind("found ", 0), 0U) << why(r);  // the socket was found
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.state_lost);
  EXPECT_NE(r.stderr_data.find("broke its protocol"), std::string::npos) << why(r);
  r = py_in(*s_, "'x' in globals()");
  EXPECT_EQ(r.value, "False") << why(r);
  EXPECT_FALSE(r.state_lost);
}

// One limit group for the session: what the interpreter keeps from call 1 counts in call 2.
TEST(NamespaceSessionKernel, MemoryKeptByAPythonCallCountsInTheNext) {
  NamespaceBackend backend;
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  Limits limits;
  limits.memory_bytes = 200ULL << 20;
  // ~60% of the limit, every page written.
  const std::string hold = "bytearray(b'\\x01') * (120 << 20)";
  auto control = open_session(backend, 16ULL << 20, limits);
  ASSERT_TRUE(control);
  RunResult r = py_in(*control, "a = " + hold + "\nlen(a)");
  ASSERT_EQ(r.outcome, Outcome::kOk) << why(r);  // one such call fits
  control.reset();

  auto s = open_session(backend, 16ULL << 20, limits);
  ASSERT_TRUE(s);
  r = py_in(*s, "kept = " + hold + "\nlen(kept)");
  ASSERT_EQ(r.outcome, Outcome::kOk) << why(r);
  r = py_in(*s, "more = " + hold + "\nlen(more)");
  EXPECT_EQ(r.outcome, Outcome::kLimitExceeded) << why(r);
  EXPECT_EQ(r.limit, LimitKind::kMemory);
  EXPECT_TRUE(r.state_lost);
  // The memory went with the interpreter: the next call runs.
  r = py_in(*s, "more = " + hold + "\nlen(more)");
  EXPECT_EQ(r.outcome, Outcome::kOk) << why(r);
}

// ---- the session's kernel started at the open, and the pool of sessions built ahead ----

// The backend as `cordon mcp` holds it: a pool of 2 with python started ahead, and so a pool
// of sessions of the default shape, their kernels started.
NamespaceOptions pooled_options() {
  NamespaceOptions o;
  o.pool_size = 2;
  o.prestart_python = true;
  return o;
}

// The shape `cordon mcp`'s session_open and `cordon session start` open with by default.
SessionOptions default_session() {
  SessionOptions o;
  o.base.language = Language::kPython;
  return o;
}

std::unique_ptr<BackendSession> open_default(NamespaceBackend& backend) {
  return testing::open_test_session(backend, default_session().base, kDefaultWorkspaceBytes);
}

// The pool of sessions with `count` ready, or a failure.
void expect_ready(NamespaceBackend& backend, std::size_t count) {
  auto* pool = backend.session_pool();
  ASSERT_NE(pool, nullptr);
  EXPECT_TRUE(pool->wait_ready(Clock::now() + cordon_test::slack(std::chrono::seconds(30)), count))
      << pool->last_error();
}

pid_t init_of(BackendSession& s) { return dynamic_cast<NamespaceSession&>(s).init_pid(); }

// `pid`'s pid in its innermost PID namespace (the last NSpid field), or -1.
pid_t inner_pid(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("NSpid:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    pid_t last = -1;
    for (pid_t p = 0; fields >> p;) last = p;
    return last;
  }
  return -1;
}

// The kernel runs before the first call, and that call runs in it: the process the init
// had started before any call is the one whose os.getpid() the call returns.
void expect_kernel_started_at_open(BackendSession& s) {
  EXPECT_TRUE(s.stats().interpreter_alive);
  std::istringstream children(init_children(init_of(s)));
  std::vector<pid_t> kernels;
  for (pid_t p = 0; children >> p;) kernels.push_back(p);
  ASSERT_EQ(kernels.size(), 1U) << "the init's children before the first call";
  const pid_t inner = inner_pid(kernels[0]);
  ASSERT_GT(inner, 1);
  const RunResult r = py_in(s, "import os\nos.getpid()");
  EXPECT_EQ(r.value, std::to_string(inner)) << why(r);
  EXPECT_FALSE(r.state_lost);
}

TEST(NamespaceSessionOpen, TheKernelStartsWhenTheSessionOpens) {
  NamespaceBackend backend;
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  auto s = open_default(backend);
  ASSERT_TRUE(s);
  expect_kernel_started_at_open(*s);
  EXPECT_EQ(backend.pooled_sessions(), 0U);  // no pool here
}

// A kernel started at the open with the session's options; a first call that asks for
// another start (its own variables) gets a kernel started with them, as it did when the
// first call started the kernel.
TEST(NamespaceSessionOpen, AFirstCallWithItsOwnVariablesGetsThemInItsKernel) {
  NamespaceBackend backend;
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  auto s = open_default(backend);
  ASSERT_TRUE(s);
  RunRequest call;
  call.language = Language::kPython;
  call.code = "import os\nos.environ.get('CORDON_FIRST')";
  call.env = {{"CORDON_FIRST", "given"}};
  call.timeout = std::chrono::seconds(20);
  const RunResult r = s->run(call, {}, nullptr);
  EXPECT_EQ(r.value, "'given'") << why(r);
  EXPECT_FALSE(r.state_lost);
}

TEST(NamespaceSessionPool, APooledSessionKeepsStateAndFilesLikeAnyOther) {
  NamespaceBackend backend(pooled_options());
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  expect_ready(backend, 1);
  auto s = open_default(backend);
  ASSERT_TRUE(s);
  EXPECT_EQ(backend.pooled_sessions(), 1U);
  expect_kernel_started_at_open(*s);
  RunResult r = py_in(*s, "x = 41\nopen('f', 'w').write('kept')");
  ASSERT_EQ(r.outcome, Outcome::kOk) << why(r);
  r = py_in(*s, "print(open('f').read())\nx + 1");
  EXPECT_EQ(r.stdout_data, "kept\n") << why(r);
  EXPECT_EQ(r.value, "42");
  EXPECT_EQ(call_in(*s, "cat f").stdout_data, "kept");
  EXPECT_EQ(s->read_file("f", 64).value_or(""), "kept");
  ASSERT_TRUE(s->write_file("from-host", "h"));
  EXPECT_EQ(py_in(*s, "open('from-host').read()").value, "'h'");
}

TEST(NamespaceSessionPool, TwoPooledSessionsSeeNothingOfEachOther) {
  NamespaceBackend backend(pooled_options());
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  expect_ready(backend, 2);
  auto a = open_default(backend);
  auto b = open_default(backend);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(backend.pooled_sessions(), 2U);
  ASSERT_EQ(py_in(*a, "secret = 'a'\nopen('mine', 'w').write('a')").outcome, Outcome::kOk);
  RunResult r = py_in(*b, "import os\n('secret' in globals(), os.path.exists('mine'))");
  EXPECT_EQ(r.value, "(False, False)") << why(r);
  const auto listed = b->list_files("");
  ASSERT_TRUE(listed);
  EXPECT_TRUE(
      std::ranges::none_of(*listed, [](const WorkspaceEntry& e) { return e.path == "mine"; }));
  // Each a sandbox of its own: its own init, its own limit group.
  EXPECT_NE(init_of(*a), init_of(*b));
  EXPECT_NE(memory_group_of(init_of(*a)), memory_group_of(init_of(*b)));
  EXPECT_EQ(py_in(*a, "secret").value, "'a'");
}

// The v1 memory limit of `pid`'s group, or 0.
std::uint64_t memory_limit_of(pid_t pid) {
  std::ifstream in(memory_group_of(pid) + "/memory.limit_in_bytes");
  std::uint64_t v = 0;
  in >> v;
  return v;
}

TEST(NamespaceSessionPool, ASessionOfAnotherShapeBuildsItsOwnAndHoldsItsLimit) {
  NamespaceBackend backend(pooled_options());
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  expect_ready(backend, 2);
  SessionOptions other = default_session();
  other.base.limits.memory_bytes = 300ULL << 20;
  auto s = backend.open_session(other);
  ASSERT_TRUE(s) << s.error().describe();
  EXPECT_EQ(backend.pooled_sessions(), 0U);
  EXPECT_EQ(memory_limit_of(init_of(**s)), 300ULL << 20);
  expect_kernel_started_at_open(**s);
  // The positive control: a pooled one has the default ceiling.
  auto pooled = open_default(backend);
  ASSERT_TRUE(pooled);
  EXPECT_EQ(backend.pooled_sessions(), 1U);
  EXPECT_EQ(memory_limit_of(init_of(*pooled)), kDefaultMemoryCeiling);
}

TEST(NamespaceSessionPool, ThePoolRefillsAndEverySessionWorks) {
  NamespaceBackend backend(pooled_options());
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  constexpr int kSessions = 5;  // more than the pool's size
  std::vector<std::unique_ptr<BackendSession>> open;
  for (int i = 0; i < kSessions; ++i) {
    expect_ready(backend, 1);
    open.push_back(open_default(backend));
    ASSERT_TRUE(open.back());
    ASSERT_EQ(py_in(*open.back(), "n = " + std::to_string(i)).outcome, Outcome::kOk);
  }
  EXPECT_EQ(backend.pooled_sessions(), static_cast<std::uint64_t>(kSessions));
  for (int i = 0; i < kSessions; ++i) {
    EXPECT_EQ(py_in(*open[i], "n").value, std::to_string(i));
  }
}

}  // namespace
}  // namespace cordon::ns
