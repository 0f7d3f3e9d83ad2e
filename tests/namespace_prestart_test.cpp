// NamespaceOptions::prestart_python and prestart_sh: code handed to an interpreter started
// ahead in a pooled sandbox behaves as in a fresh `python3 -c code` or `sh -c code`. Each
// program runs through a backend without a pool (a fresh interpreter in a sandbox built for
// the run) and through one whose pool for that language is full (a prestarted interpreter,
// checked by the backend's counter), and the two results must match: stdout, stderr, exit
// code, signal, outcome, limit, timeout and OOM flags. Both backends have the same (lowered)
// default memory ceiling, so that a memory-limit case fits the pool's shape.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cordon/units.h"
#include "kernel_features.h"
#include "namespace_backend.h"
#include "prestart_loader.h"
#include "proc_test_support.h"

namespace cordon {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

ns::NamespaceOptions options(bool prestart) {
  ns::NamespaceOptions o;
  o.default_memory_bytes = 64ULL << 20;
  o.pool_size = prestart ? 1 : 0;
  o.prestart_python = prestart;
  o.prestart_sh = prestart;
  return o;
}

struct Case {
  const char* name;
  const char* code;
  const char* stdin_data = nullptr;  // runs with stdin data take the normal path
  milliseconds timeout{5000};
  Language language = Language::kPython;
};

// The same program as sh code.
Case sh(const char* name, const char* code, const char* stdin_data = nullptr,
        milliseconds timeout = milliseconds(5000)) {
  return {name, code, stdin_data, timeout, Language::kSh};
}

// What must be equal between a fresh and a prestarted run.
std::string describe(const RunResult& r) {
  std::string s = "outcome=" + std::string(to_string(r.outcome));
  s += " exit=" + std::to_string(r.exit_code) + " signal=" + std::to_string(r.signal);
  s += " timed_out=" + std::to_string(static_cast<int>(r.timed_out));
  s += " oom=" + std::to_string(static_cast<int>(r.oom_killed));
  s += " limit=" + (r.limit ? std::string(to_string(*r.limit)) : std::string("-"));
  s += "\n--- stdout\n" + r.stdout_data + "\n--- stderr\n" + r.stderr_data;
  if (r.error) s += "\n--- error\n" + *r.error;
  return s;
}

class PrestartTest : public ::testing::TestWithParam<Case> {
 protected:
  // Made once for each suite (the plain, python and sh tests are three), and destroyed at
  // its end, not by the static destructors at exit: by then the library's own statics that
  // a pool's build in progress uses may be gone (a run of one case exited with SIGSEGV in CI
  // while its three pools were still building).
  static void TearDownTestSuite() {
    prestarted_.reset();
    fresh_.reset();
  }
  void SetUp() override {
    if (!fresh_) fresh_ = std::make_unique<ns::NamespaceBackend>(options(false));
    if (!prestarted_) prestarted_ = std::make_unique<ns::NamespaceBackend>(options(true));
    const Probe probe = fresh_->probe();
    if (!probe.available) CORDON_SKIP_OR_FAIL(probe.reason);
  }

  static RunRequest request(const Case& c) {
    RunRequest req;
    req.language = c.language;
    req.code = c.code;
    req.timeout = c.timeout;
    if (c.stdin_data != nullptr) req.stdin_data = c.stdin_data;
    return req;
  }
  // Through a prestarted interpreter (unless the request cannot take one).
  static RunResult run_prestarted(const RunRequest& req, bool expect_prestarted) {
    auto* pool = prestarted_->prestart_pool(req.language);
    EXPECT_NE(pool, nullptr);
    if (pool == nullptr) return {};
    EXPECT_TRUE(pool->wait_ready(Clock::now() + seconds(10))) << pool->last_error();
    const std::uint64_t before = prestarted_->prestarted_runs();
    RunResult r = prestarted_->run(req, {}, nullptr);
    EXPECT_EQ(prestarted_->prestarted_runs(), before + (expect_prestarted ? 1 : 0));
    return r;
  }

  static std::unique_ptr<ns::NamespaceBackend> fresh_;
  static std::unique_ptr<ns::NamespaceBackend> prestarted_;
};
std::unique_ptr<ns::NamespaceBackend> PrestartTest::fresh_;
std::unique_ptr<ns::NamespaceBackend> PrestartTest::prestarted_;

TEST_P(PrestartTest, SameAsAFreshInterpreter) {
  const Case& c = GetParam();
  const RunRequest req = request(c);
  const RunResult fresh = fresh_->run(req, {}, nullptr);
  const RunResult pre = run_prestarted(req, c.stdin_data == nullptr);
  EXPECT_NE(fresh.outcome, Outcome::kSandboxError) << describe(fresh);
  EXPECT_EQ(describe(fresh), describe(pre));
}

// Each case prints what it checks; the comparison does the rest.
const Case kCases[] = {
    {"name_and_globals", "print(__name__, sorted(globals()), repr(__doc__), __spec__)"},
    {"main_dict_in_order", "print(list(globals().items()))"},
    {"argv_and_path", "import sys; print(sys.argv, sys.orig_argv, sys.path, sys.flags)"},
    {"no_file", "print('__file__' in globals(), '__cached__' in globals())"},
    {"cwd_home_ids",
     "import os; print(os.getcwd(), os.getpid(), os.getppid(), os.getsid(0), "
     "os.getpgrp(), os.getuid(), os.umask(0o22), os.listdir('.'))"},
    {"environment", "import os; print(sorted(os.environ.items()))"},
    {"fds", "import os; print(sorted(os.listdir('/proc/self/fd')))"},
    {"modules", "import sys; print(sorted(sys.modules)); print(sorted(sys.path_importer_cache))"},
    {"stdio",
     "import sys\nfor f in (sys.stdin, sys.stdout, sys.stderr):\n"
     "    print(f.name, f.encoding, f.errors, f.line_buffering, f.write_through, "
     "f.seekable(), f.isatty())"},
    {"stdin_empty", "import sys; print(repr(sys.stdin.read()))"},
    {"stdin_data", "import sys; print(repr(sys.stdin.read()))", "some\ninput\n"},
    {"rlimits",
     "import resource as r\nfor n in ('RLIMIT_AS', 'RLIMIT_NOFILE', 'RLIMIT_NPROC', "
     "'RLIMIT_FSIZE', 'RLIMIT_CORE', 'RLIMIT_CPU'):\n"
     "    print(n, r.getrlimit(getattr(r, n)))"},
    {"signals",
     "import signal\nfor s in signal.valid_signals():\n"
     "    print(s, signal.getsignal(s))\nprint(signal.pthread_sigmask(0, []))"},
    {"traceback",
     "def inner():\n    raise ValueError('boom')\ndef outer():\n    inner()\nouter()\n"},
    {"chained", "try:\n    1/0\nexcept Exception as e:\n    raise KeyError('k') from e\n"},
    {"syntax_error", "x = (\n"},
    {"indentation_error", "  x = 1\n"},
    {"undecodable", "print(1)\xff"},
    {"exit_code", "import sys; print('partial', end=''); sys.exit(3)"},
    {"exit_message", "import sys; sys.exit('bye')"},
    {"exit_none", "raise SystemExit"},
    {"os_exit", "import os; print('lost in the buffer'); os._exit(7)"},
    {"keyboard_interrupt", "raise KeyboardInterrupt"},
    {"sigsegv", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"},
    {"sigterm", "import os, signal; print('x', flush=True); os.kill(os.getpid(), signal.SIGTERM)"},
    {"excepthook",
     "import sys\nsys.excepthook = lambda t, v, tb: print('hook', t.__name__, "
     "tb.tb_frame.f_code.co_name, tb.tb_next, file=sys.stderr)\n1/0\n"},
    {"atexit_sees_last",
     "import atexit, sys\natexit.register(lambda: print('atexit', "
     "sys.last_type, file=sys.stderr))\n1/0\n"},
    {"unflushed_output", "import sys; sys.stdout.write('no newline'); sys.stderr.write('err')"},
    {"closed_stdout", "import sys; sys.stdout.close(); print('x')"},
    {"warnings", "import warnings; warnings.warn('w'); warnings.warn('d', DeprecationWarning)"},
    {"annotations", "from __future__ import annotations\nx: int = 1\nprint(__annotations__)"},
    {"top_level_await", "async def f(): pass\nawait f()\n"},
    {"threads",
     "import threading\nt = threading.Thread(target=lambda: print('thread'))\n"
     "t.start(); t.join(); print(threading.main_thread().name, "
     "threading.active_count())"},
    {"subprocess",
     "import subprocess, sys\nprint(subprocess.run([sys.executable, '-c', "
     "'import os; print(sorted(os.environ))'], capture_output=True, "
     "text=True).stdout)"},
    {"memory_limit", "x = b'\\x01' * (256 << 20); print('survived')"},
    {"timeout", "import time; print('before', flush=True); time.sleep(10)", nullptr,
     milliseconds(1000)},
};

INSTANTIATE_TEST_SUITE_P(Programs, PrestartTest, ::testing::ValuesIn(kCases),
                         [](const auto& p) { return std::string(p.param.name); });

// A prestarted shell (preload/sh_preload.cpp): what `sh -c code` sees of its start.
const Case kShCases[] = {
    sh("arguments", "echo \"$0\" \"$#\" \"$*\" \"$-\" \"$LINENO\""),
    sh("environment", "env | sort; echo; export | sort"),
    sh("children_environment", "sh -c 'env | sort'; cat /proc/self/environ | tr '\\0' '\\n'"),
    sh("fds", "ls /proc/$$/fd; ls /proc/self/fd"),
    sh("cwd_ids_umask", "pwd; id; umask; echo $$ $PPID; ls -A"),
    sh("rlimits", "ulimit -a"),
    // Not SigBlk: dash blocks signals around its own wait for a child, so the mask read
    // from outside depends on the moment (fresh and prestarted alike).
    sh("traps_and_dispositions", "trap; grep -E '^Sig(Ign|Cgt)' /proc/$$/status"),
    sh("stdin_empty", "cat; echo end"),
    sh("stdin_data", "cat", "some\ninput\n"),
    sh("exit_code", "printf partial; exit 3"),
    sh("last_status", "false"),
    sh("not_found", "nope_not_a_command; echo after $?"),
    sh("syntax_error", "echo first; if"),
    sh("unterminated", "echo 'open"),
    sh("set_e", "set -e; echo one; false; echo two"),
    sh("here_document", "cat <<EOF\nline $((1 + 2))\nEOF\necho done"),
    sh("bytes", "printf '\\377\\000x\\n'; printf 'err' >&2"),
    sh("sigsegv", "kill -SEGV $$"),
    sh("sigterm", "echo x; kill -TERM $$"),
    sh("exit_trap", "trap 'echo trapped $?' EXIT; exit 4"),
    sh("background_job", "sleep 0.1 & wait $!; echo waited $?"),
    sh("memory_limit", "python3 -c \"x = b'\\x01' * (256 << 20)\"; echo status $?"),
    sh("timeout", "echo before; sleep 10", nullptr, milliseconds(1000)),
};

INSTANTIATE_TEST_SUITE_P(ShPrograms, PrestartTest, ::testing::ValuesIn(kShCases),
                         [](const auto& p) { return std::string(p.param.name); });

// Code longer than a pipe holds (the init writes it while the shell reads), still within
// one argument of a fresh run's command line.
TEST_F(PrestartTest, LongShCodeIsHandedOverWhole) {
  RunRequest req;
  req.language = Language::kSh;
  req.code = "x='" + std::string(100 * 1024, 'y') + "'; echo ${#x}";
  const RunResult fresh = fresh_->run(req, {}, nullptr);
  const RunResult pre = run_prestarted(req, /*expect_prestarted=*/true);
  EXPECT_EQ(fresh.stdout_data, "102400\n") << describe(fresh);
  EXPECT_EQ(describe(fresh), describe(pre));
}

// What differs in a prestarted shell (preload/sh_preload.cpp), only through /proc: its
// command line shows the placeholder, its map lists the library, and its environment block
// ends in NUL bytes where LD_PRELOAD was. Its children see none of it.
TEST_F(PrestartTest, KnownDifferencesOfAShellAreInProcOnly) {
  RunRequest req;
  req.language = Language::kSh;
  req.code =
      "tr '\\0' ' ' </proc/$$/cmdline; echo; grep -q 'memfd:cordon-sh-preload' /proc/$$/maps && "
      "echo mapped || echo not; "
      "grep -c 'LD_PRELOAD' /proc/$$/environ; tr -d '\\0' </proc/$$/environ | wc -c; "
      "tr '\\0' '\\n' </proc/$$/environ | grep -c .; "
      "sh -c 'grep -c cordon-sh-preload /proc/$$/maps'; true";
  const RunResult fresh = fresh_->run(req, {}, nullptr);
  const RunResult pre = run_prestarted(req, /*expect_prestarted=*/true);
  ASSERT_EQ(fresh.outcome, Outcome::kOk) << describe(fresh);
  ASSERT_EQ(pre.outcome, Outcome::kOk) << describe(pre);
  const auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t nl = text.find('\n', at);
      out.push_back(text.substr(at, nl - at));
      at = nl == std::string::npos ? text.size() : nl + 1;
    }
    return out;
  };
  const auto f = lines(fresh.stdout_data);
  const auto p = lines(pre.stdout_data);
  ASSERT_EQ(f.size(), 6u) << describe(fresh);
  ASSERT_EQ(p.size(), 6u) << describe(pre);
  const std::string argv0 = f[0].substr(0, f[0].find(' '));  // the shell's path
  EXPECT_EQ(f[0].rfind(argv0 + " -c tr ", 0), 0u) << f[0];
  EXPECT_EQ(p[0], argv0 + " -c " + std::string(ns::kShPlaceholder) + " ");
  EXPECT_EQ(f[1], "not");
  EXPECT_EQ(p[1], "mapped");
  EXPECT_EQ(f[2], "0");  // grep -c prints 0 (and exits 1) where nothing matches
  EXPECT_EQ(p[2], "0");
  EXPECT_EQ(f[3], p[3]);  // the same variables, byte for byte
  EXPECT_EQ(f[4], p[4]);
  EXPECT_EQ(f[5], "0");  // a child of the shell
  EXPECT_EQ(p[5], "0");
}

// Code too long for argv goes through a file: a sandbox built for the run, not a
// prestarted interpreter (and nothing is wasted: the request never reaches that pool).
TEST_F(PrestartTest, CodeInAFileTakesTheNormalPath) {
  RunRequest req;
  req.language = Language::kPython;
  req.code = "print(__file__)\n# " + std::string(200 * 1024, 'x') + "\n";
  const RunResult fresh = fresh_->run(req, {}, nullptr);
  const RunResult pre = run_prestarted(req, /*expect_prestarted=*/false);
  EXPECT_EQ(describe(fresh), describe(pre));
  EXPECT_EQ(fresh.stdout_data, "/.cordon-code\n");
}

// Variables of the request change how the interpreter would have started: normal path.
TEST_F(PrestartTest, RequestEnvironmentTakesTheNormalPath) {
  RunRequest req;
  req.language = Language::kPython;
  req.code = "import os, sys; print(os.environ['PYTHONHASHSEED'], hash('a'))";
  req.env = {{"PYTHONHASHSEED", "7"}};
  const RunResult fresh = fresh_->run(req, {}, nullptr);
  const RunResult pre = run_prestarted(req, /*expect_prestarted=*/false);
  EXPECT_EQ(describe(fresh), describe(pre));
}

// Input files are written before the code is handed over, into the cwd it started in.
TEST_F(PrestartTest, InputFilesAreThereAndImportable) {
  RunRequest req;
  req.language = Language::kPython;
  req.code = "import helper; print(helper.X, open('data.txt').read())";
  req.input_files.emplace("helper.py", "X = 42\n");
  req.input_files.emplace("data.txt", "hello");
  const RunResult fresh = fresh_->run(req, {}, nullptr);
  const RunResult pre = run_prestarted(req, /*expect_prestarted=*/true);
  EXPECT_EQ(fresh.stdout_data, "42 hello\n") << describe(fresh);
  EXPECT_EQ(describe(fresh), describe(pre));
}

// The run's clock starts when the code is handed over: a prestarted run of `pass` is not
// charged the interpreter's start-up, and its setup is far below a fresh build's.
TEST_F(PrestartTest, WallClockStartsAtTheHandOver) {
  RunRequest req;
  req.language = Language::kPython;
  req.code = "pass";
  const RunResult pre = run_prestarted(req, /*expect_prestarted=*/true);
  ASSERT_EQ(pre.outcome, Outcome::kOk) << describe(pre);
  const RunResult fresh = fresh_->run(req, {}, nullptr);
  ASSERT_EQ(fresh.outcome, Outcome::kOk) << describe(fresh);
  EXPECT_LE(pre.wall_ms, fresh.wall_ms)
      << "prestarted " << pre.wall_ms << " ms, fresh " << fresh.wall_ms << " ms";
}

// The one difference a program can see without looking at /proc or clocks
// (prestart_loader.h): the loader's frame is below the code's.
TEST_F(PrestartTest, KnownDifferenceTheLoaderFrameIsBelow) {
  RunRequest req;
  req.language = Language::kPython;
  req.code =
      "import sys\ntry:\n    f = sys._getframe(1)\n    print(f.f_code.co_filename, "
      "f.f_code.co_name, f.f_back)\nexcept ValueError as e:\n    print('none:', e)\n";
  const RunResult fresh = fresh_->run(req, {}, nullptr);
  const RunResult pre = run_prestarted(req, /*expect_prestarted=*/true);
  EXPECT_EQ(fresh.stdout_data, "none: call stack is not deep enough\n") << describe(fresh);
  EXPECT_EQ(pre.stdout_data, "<string> <module> None\n") << describe(pre);
}

// What the cases claim to reach, reached the same way by both (the comparison above
// would also pass if both failed alike).
TEST_F(PrestartTest, LimitsSignalsAndTimeoutAreReal) {
  const auto both = [&](const char* code, milliseconds timeout) {
    RunRequest req;
    req.language = Language::kPython;
    req.code = code;
    req.timeout = timeout;
    return std::pair{fresh_->run(req, {}, nullptr), run_prestarted(req, true)};
  };
  const auto [segv_f, segv_p] =
      both("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", milliseconds(5000));
  EXPECT_EQ(segv_f.signal, SIGSEGV);
  EXPECT_EQ(segv_p.signal, SIGSEGV);
  const auto [oom_f, oom_p] = both("x = b'\\x01' * (256 << 20)", milliseconds(5000));
  EXPECT_EQ(oom_f.outcome, Outcome::kLimitExceeded) << describe(oom_f);
  EXPECT_EQ(oom_p.outcome, Outcome::kLimitExceeded) << describe(oom_p);
  const auto [slow_f, slow_p] = both("import time; time.sleep(10)", milliseconds(500));
  EXPECT_TRUE(slow_f.timed_out);
  EXPECT_TRUE(slow_p.timed_out);
  EXPECT_GE(slow_p.wall_ms, 500);
}

// Host pids of this process's live children named `comm`, or of their children (depth 2).
std::vector<pid_t> descendants_named(const std::string& comm, int depth) {
  std::vector<pid_t> parents{::getpid()};
  std::vector<pid_t> found;
  for (int level = 1; level <= depth; ++level) {
    std::vector<pid_t> next;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      // read_file(): a process that exits while its stat is read makes the read fail
      // (ESRCH), which it absorbs; the empty text then counts as gone, below.
      const std::string stat = testing::read_file((entry.path() / "stat").string()).value_or("");
      const auto open = stat.find('(');
      const auto close = stat.rfind(')');
      // A zombie (an exited init its pool has not reaped yet) is gone for this purpose.
      if (open == std::string::npos || close == std::string::npos || stat[close + 2] == 'Z') {
        continue;
      }
      const pid_t ppid = std::atoi(stat.c_str() + close + 4);  // ") S <ppid>"
      if (std::ranges::find(parents, ppid) == parents.end()) continue;
      const pid_t pid = std::stoi(name);
      next.push_back(pid);
      if (level == depth && stat.substr(open + 1, close - open - 1) == comm) found.push_back(pid);
    }
    parents = std::move(next);
  }
  return found;
}

// A prestarted python that died while it waited takes its sandbox with it (the init
// exits): the run that would have taken it builds its own, and succeeds.
TEST_F(PrestartTest, AnInterpreterKilledWhileItWaitedIsReplaced) {
  for (const Language language : {Language::kPython, Language::kSh}) {
    auto* pool = prestarted_->prestart_pool(language);
    ASSERT_NE(pool, nullptr);
    ASSERT_TRUE(pool->wait_ready(Clock::now() + seconds(10))) << pool->last_error();
  }
  auto* sessions = prestarted_->session_pool();
  ASSERT_NE(sessions, nullptr);
  ASSERT_TRUE(sessions->wait_ready(Clock::now() + seconds(10))) << sessions->last_error();
  const std::size_t inits = descendants_named("cordon-ns-init", 1).size();
  // The plain pool's, the python pool's, the sh pool's and the session pool's.
  ASSERT_EQ(inits, 4u);
  // The python pool's waiting python, not the pooled session's kernel (`python3 -P`).
  std::vector<pid_t> waiting = descendants_named("python3", 2);
  std::erase_if(waiting, [](pid_t pid) {
    const std::string argv =
        testing::read_file("/proc/" + std::to_string(pid) + "/cmdline").value_or("");
    return argv.find(std::string("\0-P\0", 4)) != std::string::npos;
  });
  ASSERT_EQ(waiting.size(), 1u);
  ASSERT_EQ(::kill(waiting[0], SIGKILL), 0);
  const auto until = Clock::now() + seconds(3);
  while (descendants_named("cordon-ns-init", 1).size() > inits - 1 && Clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_EQ(descendants_named("cordon-ns-init", 1).size(), inits - 1);
  RunRequest req;
  req.language = Language::kPython;
  req.code = "print('ran')";
  const std::uint64_t before = prestarted_->prestarted_runs();
  const RunResult r = prestarted_->run(req, {}, nullptr);
  EXPECT_EQ(r.outcome, Outcome::kOk) << describe(r);
  EXPECT_EQ(r.stdout_data, "ran\n");
  EXPECT_EQ(prestarted_->prestarted_runs(), before);
}

// A bash run never meets a waiting python or sh: it takes the plain pool (or builds its
// own); a python run never meets a waiting sh, nor a sh run a waiting python.
TEST_F(PrestartTest, OtherLanguagesTakeThePlainPool) {
  auto* python = prestarted_->python_pool();
  auto* shell = prestarted_->prestart_pool(Language::kSh);
  ASSERT_NE(python, nullptr);
  ASSERT_NE(shell, nullptr);
  ASSERT_EQ(prestarted_->prestart_pool(Language::kBash), nullptr);
  for (auto* pool : {python, shell}) {
    ASSERT_TRUE(pool->wait_ready(Clock::now() + seconds(10))) << pool->last_error();
  }
  RunRequest req;
  req.language = Language::kBash;
  req.code = "ps -o comm= 2>/dev/null || ls /proc | grep -c '^[0-9]'";
  const std::uint64_t before = prestarted_->prestarted_runs();
  const RunResult r = prestarted_->run(req, {}, nullptr);
  EXPECT_EQ(r.outcome, Outcome::kOk) << describe(r);
  EXPECT_EQ(prestarted_->prestarted_runs(), before);
  EXPECT_EQ(python->ready_count(), 1u);  // untouched
  EXPECT_EQ(shell->ready_count(), 1u);
  req.language = Language::kSh;
  req.code = "echo sh";
  EXPECT_EQ(run_prestarted(req, /*expect_prestarted=*/true).stdout_data, "sh\n");
  EXPECT_EQ(python->ready_count(), 1u);  // a sh run took its own pool's
}

}  // namespace
}  // namespace cordon
