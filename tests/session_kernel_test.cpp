// The session kernel (cordon/session_kernel.h): the reply parser on good, split, oversized,
// malformed and foreign frames; and the real kernel program, run as a plain child of the
// test under /usr/bin/python3 (no sandbox: the code here is harmless), driven through
// KernelClient with pipes for its stdout and stderr. The kill(-1) sweep is only ever asked
// for in a fresh PID namespace of the test's own, where it cannot reach the host.
#include "cordon/session_kernel.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cordon/kernel_call.h"
#include "cordon/session.h"
#include "kernel_features.h"

namespace {

using namespace cordon;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kPython = "/usr/bin/python3";

std::string le(std::uint64_t v, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFFU));
  return out;
}

std::string frame_of(const std::string& body) { return le(body.size(), 4) + body; }

// One record: its tag, length and bytes.
std::string rec(char tag, const std::string& data) { return tag + le(data.size(), 4) + data; }
std::string nonce_rec(std::uint64_t nonce) { return rec('N', le(nonce, 8)); }
std::string exit_rec(std::int64_t code) {
  return rec('X', le(static_cast<std::uint64_t>(code), 4));
}
std::string swept_rec(bool swept) { return rec('W', std::string(1, swept ? '\1' : '\0')); }

// The records of a call frame, by tag, in order.
std::vector<std::pair<char, std::string>> records_of(const std::string& frame) {
  std::vector<std::pair<char, std::string>> out;
  std::size_t at = 4;
  while (at + 5 <= frame.size()) {
    std::size_t size = 0;
    for (int i = 3; i >= 0; --i)
      size = (size << 8U) | static_cast<unsigned char>(frame[at + 1 + i]);
    out.emplace_back(frame[at], frame.substr(at + 5, size));
    at += 5 + size;
  }
  EXPECT_EQ(at, frame.size());
  return out;
}

TEST(KernelReplyParser, AGoodFrameSplitAtEveryByteParses) {
  const std::string frame =
      frame_of(nonce_rec(7) + exit_rec(0) + rec('V', "42") + swept_rec(false));
  for (std::size_t cut = 0; cut <= frame.size(); ++cut) {
    KernelReplyParser parser(7);
    parser.feed(std::string_view(frame).substr(0, cut));
    ASSERT_EQ(parser.feed(std::string_view(frame).substr(cut)), KernelReplyParser::State::kDone)
        << cut << ": " << parser.error();
    EXPECT_EQ(parser.reply().exit_code, 0);
    EXPECT_EQ(parser.reply().value, "42");
    EXPECT_FALSE(parser.reply().signal.has_value());
  }
  KernelReplyParser bytewise(7);
  for (const char c : frame) {
    ASSERT_NE(bytewise.state(), KernelReplyParser::State::kDone);
    bytewise.feed(std::string_view(&c, 1));
  }
  EXPECT_EQ(bytewise.state(), KernelReplyParser::State::kDone);
  // A signal instead of an exit code, an error, and the records in any order.
  KernelReplyParser other(7);
  ASSERT_EQ(other.feed(frame_of(swept_rec(true) + rec('E', "no argv") + rec('S', le(9, 4)) +
                                nonce_rec(7))),
            KernelReplyParser::State::kDone)
      << other.error();
  EXPECT_EQ(other.reply().signal, 9);
  EXPECT_EQ(other.reply().error, "no argv");
  EXPECT_TRUE(other.reply().swept);
}

TEST(KernelReplyParser, AnOversizedLengthIsRefusedBeforeAnyBody) {
  KernelReplyParser parser(1);
  EXPECT_EQ(parser.feed(std::string("\xff\xff\xff\xff", 4)), KernelReplyParser::State::kError);
  EXPECT_FALSE(parser.error().empty());
  KernelReplyParser just_over(1);
  EXPECT_EQ(just_over.feed(frame_of(std::string(kMaxKernelReplyBytes + 1, ' ')).substr(0, 4)),
            KernelReplyParser::State::kError);
}

TEST(KernelReplyParser, MalformedFramesAreErrors) {
  const std::string ok_tail = exit_rec(0) + swept_rec(false);
  const std::vector<std::string> bodies{
      "not records",
      nonce_rec(4) + ok_tail + "X",                        // a cut record head
      nonce_rec(4) + ok_tail + 'V' + le(10, 4) + "short",  // a record past the end
      nonce_rec(3) + ok_tail,                              // wrong nonce (expects 4)
      rec('N', "4") + ok_tail,                             // nonce not 8 bytes
      ok_tail,                                             // no nonce
      nonce_rec(4) + swept_rec(false),                     // neither exit code nor signal
      nonce_rec(4) + ok_tail + rec('S', le(9, 4)),         // both
      nonce_rec(4) + exit_rec(256) + swept_rec(false),     // exit code out of range
      nonce_rec(4) + exit_rec(-1) + swept_rec(false),
      nonce_rec(4) + rec('X', "0") + swept_rec(false),       // exit code not 4 bytes
      nonce_rec(4) + rec('S', le(0, 4)) + swept_rec(false),  // signal out of range
      nonce_rec(4) + ok_tail + rec('V', std::string(kMaxKernelValueBytes + 1, 'x')),
      nonce_rec(4) + ok_tail + rec('E', std::string(kMaxKernelErrorBytes + 1, 'x')),
      nonce_rec(4) + ok_tail + rec('V', "\xff\xfe"),           // not UTF-8
      nonce_rec(4) + exit_rec(0),                              // swept missing
      nonce_rec(4) + exit_rec(0) + rec('W', "\2"),             // swept neither 0 nor 1
      nonce_rec(4) + ok_tail + rec('V', "1") + rec('V', "2"),  // a record twice
      nonce_rec(4) + ok_tail + rec('Q', ""),                   // a tag the protocol lacks
  };
  for (const std::string& body : bodies) {
    KernelReplyParser parser(4);
    EXPECT_EQ(parser.feed(frame_of(body)), KernelReplyParser::State::kError) << body;
    EXPECT_FALSE(parser.error().empty());
  }
  KernelReplyParser trailing(4);
  EXPECT_EQ(trailing.feed(frame_of(nonce_rec(4) + exit_rec(0) + swept_rec(true)) + "x"),
            KernelReplyParser::State::kError);
}

TEST(KernelCallFrame, EncodesLengthAndRecords) {
  const std::string frame = encode_kernel_call(
      {.language = "sh", .code = "", .argv = {"/bin/sh", "-c", "tr\xff"}, .stdin_data = "in"}, 9);
  const auto records = records_of(frame);
  const std::vector<std::pair<char, std::string>> expected{
      {'N', le(9, 8)}, {'L', "sh"},     {'C', ""},  {'A', "/bin/sh"},
      {'A', "-c"},     {'A', "tr\xff"}, {'I', "in"}};
  EXPECT_EQ(records, expected);
  // No stdin: no record for it.
  EXPECT_EQ(records_of(
                encode_kernel_call(
                    {.language = "python", .code = "x", .argv = {}, .stdin_data = std::nullopt}, 1))
                .size(),
            3U);
}

TEST(KernelSource, IsBuiltInAndStartsWithItsArgv) {
  EXPECT_NE(kernel_source().find("def main()"), std::string_view::npos);
  const auto argv = kernel_argv("/usr/bin/python3", 123);
  ASSERT_EQ(argv.size(), 6U);
  EXPECT_EQ(argv[3], kernel_source());
  EXPECT_EQ(argv[4], "--sweep-pidns");
  EXPECT_EQ(argv[5], "123");
  EXPECT_EQ(kernel_argv("/usr/bin/python3", std::nullopt).size(), 4U);
}

void set_nonblocking(int fd) { ASSERT_EQ(::fcntl(fd, F_SETFL, O_NONBLOCK), 0); }

std::string drain(int fd) {
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// A program on fd 0 = the socket, fd 1/2 = pipes; optionally PID 1 of a fresh PID
// namespace (clone3 with CLONE_NEWPID). Killed and reaped when the test ends.
class Child {
 public:
  Child(std::vector<std::string> argv, bool new_pid_namespace) {
    int sv[2];
    int out[2];
    int err[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
        ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
      return;
    }
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    clone_args ca{};
    ca.flags = new_pid_namespace ? CLONE_NEWPID : 0;
    ca.exit_signal = SIGCHLD;
    const long pid = ::syscall(SYS_clone3, &ca, sizeof ca);
    if (pid == 0) {
      // Only async-signal-safe calls: the test process has threads.
      if (::dup2(sv[1], 0) < 0 || ::dup2(out[1], 1) < 0 || ::dup2(err[1], 2) < 0) ::_exit(126);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    start_errno_ = pid < 0 ? errno : 0;
    ::close(sv[1]);
    ::close(out[1]);
    ::close(err[1]);
    control_ = UniqueFd(sv[0]);
    out_ = UniqueFd(out[0]);
    err_ = UniqueFd(err[0]);
    pid_ = static_cast<pid_t>(pid);
    if (pid > 0) {
      set_nonblocking(out_.get());
      set_nonblocking(err_.get());
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  [[nodiscard]] bool started() const { return pid_ > 0; }
  [[nodiscard]] int start_errno() const { return start_errno_; }
  [[nodiscard]] int out_fd() const { return out_.get(); }
  [[nodiscard]] int err_fd() const { return err_.get(); }
  // SIGKILL and reap: the kernel's end for run_kernel_call; its wait status.
  std::optional<int> end(Clock::time_point kill_at) {
    ++ends_;
    if (pid_ <= 0) return std::nullopt;
    int status = 0;
    pid_t got = 0;
    while ((got = ::waitpid(pid_, &status, WNOHANG)) == 0 && Clock::now() < kill_at) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (got == 0) {
      ::kill(pid_, SIGKILL);
      got = ::waitpid(pid_, &status, 0);
    }
    pid_ = -1;
    return got > 0 ? std::optional<int>(status) : std::nullopt;
  }
  [[nodiscard]] int ends() const { return ends_; }
  UniqueFd take_control() { return std::move(control_); }
  std::string out() { return drain(out_.get()); }
  std::string err() { return drain(err_.get()); }

 private:
  pid_t pid_ = -1;
  int start_errno_ = 0;
  int ends_ = 0;
  UniqueFd control_;
  UniqueFd out_;
  UniqueFd err_;
};

KernelCall python(std::string code) {
  KernelCall call;
  call.language = "python";
  call.code = std::move(code);
  return call;
}
KernelCall sh(std::string code) {
  KernelCall call;
  call.language = "sh";
  call.argv = {"/bin/sh", "-c", code};
  call.code = std::move(code);
  return call;
}

KernelCall sh_argv(std::vector<std::string> argv) {
  KernelCall call;
  call.language = "sh";
  call.argv = std::move(argv);
  return call;
}

Clock::time_point soon() { return Clock::now() + cordon_test::slack(std::chrono::seconds(20)); }

class KernelProcess : public testing::Test {
 protected:
  void SetUp() override {
    if (::access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
  }
};

TEST_F(KernelProcess, StatePersistsAndATrailingExpressionIsTheValue) {
  Child child(kernel_argv(kPython, std::nullopt), false);
  ASSERT_TRUE(child.started());
  KernelClient client(child.take_control());
  const CancelToken none;
  auto r = client.call(python("x = 41"), soon(), none);
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(r.reply.exit_code, 0);
  EXPECT_FALSE(r.reply.value.has_value());
  EXPECT_FALSE(r.reply.swept);
  r = client.call(python("x + 1"), soon(), none);
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(r.reply.value, "42");
  r = client.call(python("import json"), soon(), none);
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  r = client.call(python("json.dumps([1])"), soon(), none);
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(r.reply.value, "'[1]'");
  // A repr that is no UTF-8 (a lone surrogate) and a replaced sys.stdout keep the kernel.
  r = client.call(python("class R:\n  def __repr__(self): return '\\ud800'\nR()"), soon(), none);
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(r.reply.value, "?");
  r = client.call(python("import sys\nsys.stdout = None"), soon(), none);
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  r = client.call(python("'y' * 100000"), soon(), none);
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  ASSERT_TRUE(r.reply.value.has_value());
  EXPECT_LE(r.reply.value->size(), kMaxKernelValueBytes);
  EXPECT_NE(r.reply.value->find("[cut at 65536 of 100002 bytes]"), std::string::npos);
}

TEST_F(KernelProcess, OutputIsInThePipesBeforeTheReply) {
  Child child(kernel_argv(kPython, std::nullopt), false);
  ASSERT_TRUE(child.started());
  KernelClient client(child.take_control());
  const auto r = client.call(
      python("import sys\nprint('to out')\nprint('to err', file=sys.stderr)"), soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(child.out(), "to out\n");
  EXPECT_EQ(child.err(), "to err\n");
}

TEST_F(KernelProcess, AnExceptionExitsOneWithATracebackAndTheKernelLivesOn) {
  Child child(kernel_argv(kPython, std::nullopt), false);
  ASSERT_TRUE(child.started());
  KernelClient client(child.take_control());
  auto r = client.call(python("y = 5\n1 / 0"), soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(r.reply.exit_code, 1);
  const std::string err = child.err();
  EXPECT_NE(err.find("Traceback"), std::string::npos) << err;
  EXPECT_NE(err.find("ZeroDivisionError"), std::string::npos) << err;
  EXPECT_NE(err.find("1 / 0"), std::string::npos) << err;  // the cell's line is shown
  EXPECT_EQ(err.find("run_python"), std::string::npos) << err;
  r = client.call(python("y"), soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(r.reply.value, "5");
  r = client.call(python("def ("), soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(r.reply.exit_code, 1);
  const std::string syntax = child.err();
  EXPECT_NE(syntax.find("SyntaxError"), std::string::npos) << syntax;
  EXPECT_EQ(syntax.find("ast.py"), std::string::npos) << syntax;  // no frame of the kernel's
}

// The traceback machinery loads at the first error (an idle kernel does without it): a
// function of an earlier cell still shows its line, and so does a later cell's; the
// code's first cell is <cell 1> even after the host's empty readiness probe.
TEST_F(KernelProcess, ATracebackShowsTheLinesOfEarlierCellsLoadedOnlyAtTheFirstError) {
  Child child(kernel_argv(kPython, std::nullopt), false);
  ASSERT_TRUE(child.started());
  KernelClient client(child.take_control());
  // An empty cell first, as the host's readiness probe sends: no cell of the code's.
  auto r = client.call(python(""), soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(r.reply.exit_code, 0);
  r = client.call(python("def boom():\n    return {}['missing key']"), soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  // What an idle session costs: none of these is loaded before an error needs one.
  r = client.call(python("import sys\nsorted(m for m in ('json', 're', 'ast', 'socket', "
                         "'threading', 'traceback', 'linecache') if m in sys.modules)"),
                  soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(r.reply.value, "[]");
  r = client.call(python("boom()"), soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(r.reply.exit_code, 1);
  std::string err = child.err();
  EXPECT_NE(err.find("return {}['missing key']"), std::string::npos) << err;  // cell 1's line
  EXPECT_NE(err.find("<cell 1>"), std::string::npos) << err;
  r = client.call(python("x = 1\nraise ValueError('late')"), soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  err = child.err();
  EXPECT_NE(err.find("raise ValueError('late')"), std::string::npos) << err;  // cell 4's
}

TEST_F(KernelProcess, ShRunsAFreshProcessWithItsExitCodeAndStdin) {
  Child child(kernel_argv(kPython, std::nullopt), false);
  ASSERT_TRUE(child.started());
  KernelClient client(child.take_control());
  auto r = client.call(sh("echo from sh; exit 3"), soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(r.reply.exit_code, 3);
  EXPECT_EQ(child.out(), "from sh\n");
  KernelCall with_input = sh("cat");
  with_input.stdin_data = "fed\n";
  r = client.call(with_input, soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(r.reply.exit_code, 0);
  EXPECT_EQ(child.out(), "fed\n");
  // SIGPIPE is back at its default in the child (python ignores it): `yes` just ends.
  r = client.call(sh("yes | head -n 1"), soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(child.out(), "y\n");
  EXPECT_EQ(child.err(), "");
  r = client.call(sh("kill -9 $$"), soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(r.reply.signal, SIGKILL);
  r = client.call(sh_argv({"/nonexistent/sh"}), soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(r.reply.exit_code, 127);
  EXPECT_TRUE(r.reply.error.has_value());
}

TEST_F(KernelProcess, SysExitEndsTheKernel) {
  Child child(kernel_argv(kPython, std::nullopt), false);
  ASSERT_TRUE(child.started());
  KernelClient client(child.take_control());
  auto r = client.call(python("import sys\nsys.exit(4)"), soon(), {});
  EXPECT_EQ(r.outcome, KernelOutcome::kGone);
  EXPECT_TRUE(client.lost());
  r = client.call(python("1"), soon(), {});
  EXPECT_EQ(r.outcome, KernelOutcome::kGone);
}

// A stand-in kernel: python that reads the call and answers with `reply` (raw bytes).
std::vector<std::string> fake_kernel(const std::string& reply_expr) {
  return {kPython, "-I", "-S", "-c",
          "import os,struct,time\nn=struct.unpack('<I',os.read(0,4))[0]\nos.read(0,n)\n"
          "os.write(0," +
              reply_expr + ")\ntime.sleep(30)\n"};
}

TEST_F(KernelProcess, GarbageOrAHugeLengthIsAProtocolErrorWithoutAHang) {
  for (const std::string& reply : {std::string(R"(b'\x05\x00\x00\x00hello')"),
                                   std::string(R"(b'\xff\xff\xff\x7f' + b'x'*4096)"),
                                   std::string("struct.pack('<I',13)+b'{\"nonce\":1}'+b'x'*10")}) {
    Child child(fake_kernel(reply), false);
    ASSERT_TRUE(child.started());
    KernelClient client(child.take_control());
    const auto start = Clock::now();
    const auto r = client.call(python("1"), soon(), {});
    EXPECT_EQ(r.outcome, KernelOutcome::kProtocolError) << reply << ": " << r.detail;
    EXPECT_LT(Clock::now() - start, cordon_test::slack(std::chrono::seconds(5)));
    EXPECT_TRUE(client.lost());
  }
}

TEST_F(KernelProcess, TheDeadlineAndCancelReturnInTime) {
  Child child({kPython, "-I", "-S", "-c", "import time\ntime.sleep(30)"}, false);
  ASSERT_TRUE(child.started());
  KernelClient client(child.take_control());
  auto start = Clock::now();
  auto r = client.call(python("1"), Clock::now() + 200ms, {});
  EXPECT_EQ(r.outcome, KernelOutcome::kDeadline);
  EXPECT_GE(Clock::now() - start, 200ms);
  EXPECT_LT(Clock::now() - start, cordon_test::slack(std::chrono::seconds(2)));

  Child other({kPython, "-I", "-S", "-c", "import time\ntime.sleep(30)"}, false);
  ASSERT_TRUE(other.started());
  KernelClient second(other.take_control());
  CancelSource source;
  source.cancel();
  start = Clock::now();
  r = second.call(python("1"), soon(), source.token());
  EXPECT_EQ(r.outcome, KernelOutcome::kCancelled);
  EXPECT_LT(Clock::now() - start, cordon_test::slack(std::chrono::seconds(2)));
}

// The sweep, only ever inside a PID namespace made for the test: the kernel is its PID 1.
// A guard check too: told that its own namespace is the host's, the kernel must not sweep.
TEST_F(KernelProcess, TheSweepEndsBackgroundProcessesInItsOwnPidNamespace) {
  struct stat host_ns{};
  ASSERT_EQ(::stat("/proc/self/ns/pid", &host_ns), 0);
  Child child(kernel_argv(kPython, host_ns.st_ino), /*new_pid_namespace=*/true);
  if (!child.started()) {
    CORDON_SKIP_OR_FAIL(std::string("no new PID namespace: ") + std::strerror(child.start_errno()));
  }
  KernelClient client(child.take_control());
  auto r = client.call(sh("sleep 1000 & echo $!; kill -0 $! && echo alive"), soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail << child.err();
  EXPECT_TRUE(r.reply.swept);
  const std::string out = child.out();
  const std::string pid = out.substr(0, out.find('\n'));
  ASSERT_NE(out.find("alive"), std::string::npos) << out;  // the positive control
  r = client.call(sh("kill -0 " + pid + " 2>/dev/null && echo still there || echo gone"), soon(),
                  {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail;
  EXPECT_EQ(child.out(), "gone\n");

  // Told the namespace it runs in is the host's, it refuses to sweep.
  const std::string wrapper =
      "import os,sys\nino=os.stat('/proc/self/ns/pid').st_ino\n"
      "os.execv(sys.argv[1], [sys.argv[1],'-P','-c',sys.argv[2],'--sweep-pidns',str(ino)])";
  Child guarded({kPython, "-I", "-S", "-c", wrapper, kPython, std::string(kernel_source())}, true);
  ASSERT_TRUE(guarded.started());
  KernelClient guarded_client(guarded.take_control());
  r = guarded_client.call(sh("true"), soon(), {});
  ASSERT_EQ(r.outcome, KernelOutcome::kReply) << r.detail << guarded.err();
  EXPECT_FALSE(r.reply.swept);
}

// ---- run_kernel_call (cordon/kernel_call.h): a call of a kernel to its RunResult ----

class KernelCallTest : public KernelProcess {
 protected:
  // Starts `argv` (the kernel by default) as a plain child and its client.
  void start(std::vector<std::string> argv = kernel_argv(kPython, std::nullopt)) {
    child_.emplace(std::move(argv), false);
    ASSERT_TRUE(child_->started());
    client_.emplace(child_->take_control());
    kernel_.client = &*client_;
    kernel_.stdout_fd = child_->out_fd();
    kernel_.stderr_fd = child_->err_fd();
    kernel_.end = [this](RunClock::time_point kill_at, RunClock::time_point) {
      return child_->end(kill_at);
    };
  }
  RunResult run(const std::string& code, std::chrono::milliseconds timeout = 20s,
                const CancelToken& cancel = {}, std::uint64_t output_bytes = 0) {
    RunRequest request;
    request.timeout = cordon_test::slack(timeout);
    request.limits.output_bytes = output_bytes;
    return run_kernel_call(kernel_, python(code), request, cancel, nullptr);
  }

  std::optional<Child> child_;
  std::optional<KernelClient> client_;
  StartedKernel kernel_;
};

TEST_F(KernelCallTest, StateAndValueAcrossCallsAndTheKernelLivesOn) {
  start();
  RunResult r = run("x = 41\nprint('set')");
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "set\n");
  EXPECT_FALSE(r.value.has_value());
  r = run("print(x + 1)\nx + 2");
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "42\n");
  EXPECT_EQ(r.value, "43");
  EXPECT_FALSE(r.state_lost);
  r = run("import sys\nprint('bad', file=sys.stderr)\n1 / 0");
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.stderr_data.find("ZeroDivisionError"), std::string::npos) << r.stderr_data;
  EXPECT_FALSE(r.state_lost);
  EXPECT_EQ(child_->ends(), 0);
}

TEST_F(KernelCallTest, OutputLargerThanAPipeIsReadWhileTheClientWaitsAndCapped) {
  start();
  // 1 MiB on each stream: the kernel blocks at its flush unless the pipes are read.
  RunResult r =
      run("import sys\nsys.stdout.write('o' * (1 << 20))\nsys.stderr.write('e' * (1 << 20))", 5s);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.stderr_data.substr(0, 200);
  EXPECT_EQ(r.stdout_data.size(), 1U << 20);
  EXPECT_EQ(r.stderr_data.size(), 1U << 20);
  EXPECT_FALSE(r.stdout_truncated);
  r = run("print('p' * 100000)", 5s, {}, /*output_bytes=*/1000);
  EXPECT_EQ(r.outcome, Outcome::kOk);
  EXPECT_EQ(r.stdout_data, std::string(1000, 'p'));
  EXPECT_TRUE(r.stdout_truncated);
  // Nothing of one call's output leaks into the next.
  r = run("print('next')");
  EXPECT_EQ(r.stdout_data, "next\n");
}

TEST_F(KernelCallTest, ATimeoutIsDecidedByTheDeadlineAndLosesTheKernel) {
  start();
  const auto started = Clock::now();
  const RunResult r = run("import time\nprint('before', flush=True)\ntime.sleep(30)", 300ms);
  EXPECT_LT(Clock::now() - started, cordon_test::slack(std::chrono::seconds(3)));
  EXPECT_EQ(r.outcome, Outcome::kTimedOut);
  EXPECT_TRUE(r.state_lost);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.stdout_data, "before\n");
  EXPECT_EQ(child_->ends(), 1);
  // The lost client refuses at once; the backend starts another kernel.
  EXPECT_TRUE(client_->lost());
}

TEST_F(KernelCallTest, CancelLosesTheKernel) {
  start();
  CancelSource source;
  std::thread canceller([&] {
    std::this_thread::sleep_for(200ms);
    source.cancel();
  });
  const RunResult r = run("import time\ntime.sleep(30)", 20s, source.token());
  canceller.join();
  EXPECT_EQ(r.outcome, Outcome::kCancelled);
  EXPECT_TRUE(r.state_lost);
  EXPECT_EQ(child_->ends(), 1);
}

TEST_F(KernelCallTest, SysExitIsTheCallsExitAndLosesTheKernel) {
  start();
  const RunResult r = run("import sys\nprint('bye')\nsys.exit(3)");
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.stdout_data, "bye\n");
  EXPECT_TRUE(r.state_lost);
}

TEST_F(KernelCallTest, GarbageFramingIsAFailedCallAndALostKernelNotAHang) {
  start(fake_kernel(R"(b'\x05\x00\x00\x00hello')"));
  const auto started = Clock::now();
  const RunResult r = run("1");
  EXPECT_LT(Clock::now() - started, cordon_test::slack(std::chrono::seconds(5)));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.outcome, Outcome::kSignaled);
  EXPECT_TRUE(r.state_lost);
  EXPECT_NE(r.stderr_data.find("broke its protocol"), std::string::npos) << r.stderr_data;
  EXPECT_EQ(child_->ends(), 1);
}

TEST_F(KernelCallTest, AKernelThatDoesNotSweepWhenItShouldIsLost) {
  start();
  kernel_.expects_sweep = true;  // a kernel without --sweep-pidns replies swept: false
  const RunResult r = run("print('ran')\n7");
  EXPECT_EQ(r.outcome, Outcome::kOk);
  EXPECT_EQ(r.value, "7");
  EXPECT_TRUE(r.state_lost);
  EXPECT_EQ(child_->ends(), 1);
}

}  // namespace
