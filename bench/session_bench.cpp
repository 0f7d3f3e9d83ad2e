// What a call in a session costs (issue #41), through the production path (the namespace
// plugin loaded by the registry, Backend::open_session, BackendSession::run), against
// baselines measured in the same run:
//
//   warm call:  `x += 1` in a warm python session     vs a bare python REPL over a pipe
//               (unsandboxed: the physical limit for this shape)              target <= 2x
//               the same                              vs one-shot bubblewrap python3 -c
//                                                                             target <= 0.1x
//               the same                              vs one-shot through the pool with
//               python started ahead                                          reported
//   creating:   open_session + first python call      vs a pooled one-shot python call
//                                                                             target <= 1x
//               open_session alone                    vs the same             reported
//   idle cost:  host RSS of an idle python session (its processes, and what the host
//               process keeps for it) against a bare python REPL's own RSS   target <= +2 MiB
//               (also shown: the session's own interpreter's RSS, and the rest; and
//               the private part alone, RssAnon, against the REPL's)       reported
//   many:       200 idle python sessions at once, each still answering    target: all 200
//   container:  `x += 1` in a warm runc session       vs the bare REPL        reported
//
// The sessions are opened on the backend as `cordon mcp` holds it (a pool of 2, python
// started ahead), the one the pooled one-shots run on. Each side is checked, not only
// timed: after the timed calls the session's `x` (read back as the call's value) and the
// REPL's must equal the number of increments each was sent.
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cordon/backend_options.h"
#include "cordon/plugin_registry.h"
#include "cordon/session.h"
#include "harness.h"
#include "spawn_baseline.h"

namespace {

using Clock = std::chrono::steady_clock;
using cordon::bench::arg_int;

const cordon::CancelToken kNever;

cordon::RunRequest python(std::string code) {
  cordon::RunRequest r;
  r.language = cordon::Language::kPython;
  r.code = std::move(code);
  r.timeout = std::chrono::seconds(20);
  return r;
}

cordon::SessionOptions python_session() {
  cordon::SessionOptions options;
  options.base = python("");
  return options;
}

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "bench-session: %s\n", why.c_str());
  std::exit(2);
}

cordon::RunResult must_run(cordon::BackendSession& session, const std::string& code) {
  cordon::RunResult r = session.run(python(code), kNever, nullptr);
  if (!r.ok() || r.state_lost)
    die("a session call failed: " + r.stdout_data + r.stderr_data + r.error.value_or(""));
  return r;
}

// A warm session whose `x` counts the timed increments: the bench checks the count.
struct CountingSession {
  std::unique_ptr<cordon::BackendSession> session;
  std::int64_t sent = 0;
  void increment() {
    must_run(*session, "x += 1");
    ++sent;
  }
  // `x`, read back as the call's value (the repr of the trailing expression), must be the
  // number of increments sent: every timed call really ran, in the one interpreter.
  void check(const std::string& what) {
    const cordon::RunResult r = must_run(*session, "x");
    if (r.value != std::to_string(sent)) {
      die(what + ": x is " + r.value.value_or("(no value)") + " after " + std::to_string(sent) +
          " increments");
    }
  }
};

std::unique_ptr<cordon::BackendSession> open(cordon::Backend& backend) {
  auto session = backend.open_session(python_session());
  if (!session) die("open_session: " + session.error().describe());
  return std::move(*session);
}

CountingSession warm_session(cordon::Backend& backend) {
  CountingSession warm{open(backend)};
  must_run(*warm.session, "x = 0");
  return warm;
}

// A bare python REPL over a pipe: one line of code in, one line out, in one process.
class BareRepl {
 public:
  BareRepl() {
    int to_child[2];
    int from_child[2];
    if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) die("pipe");
    pid_ = ::fork();
    if (pid_ < 0) die("fork");
    if (pid_ == 0) {
      ::dup2(to_child[0], 0);
      ::dup2(from_child[1], 1);
      ::close(to_child[1]);
      ::close(from_child[0]);
      const char* loop =
          "import sys\n"
          "g = {}\n"
          "for line in sys.stdin:\n"
          "    exec(line, g)\n"
          "    sys.stdout.write('ok\\n'); sys.stdout.flush()\n";
      ::execl("/usr/bin/python3", "python3", "-u", "-c", loop, nullptr);
      ::_exit(127);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
    (void)call("x = 0");
  }
  BareRepl(const BareRepl&) = delete;
  BareRepl& operator=(const BareRepl&) = delete;
  ~BareRepl() {
    ::close(in_);
    ::close(out_);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  // One line of code; what it printed before the REPL's "ok".
  std::string call(const std::string& line) {
    const std::string sent = line + "\n";
    if (::write(in_, sent.data(), sent.size()) != static_cast<ssize_t>(sent.size())) die("write");
    std::string got;
    char buf[64];
    while (!got.ends_with("ok\n")) {
      const ssize_t n = ::read(out_, buf, sizeof buf);
      if (n <= 0) die("the bare REPL died");
      got.append(buf, static_cast<std::size_t>(n));
    }
    got.resize(got.size() - 3);
    return got;
  }
  void increment() {
    (void)call("x += 1");
    ++sent_;
  }
  void check() {
    const std::string x = call("print(x)");
    if (x != std::to_string(sent_) + "\n") {
      die("the bare REPL's x is " + x + " after " + std::to_string(sent_) + " increments");
    }
  }
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::int64_t sent_ = 0;
};

// A /proc/<pid>/status figure in kB (VmRSS: the resident set; RssAnon: its private,
// anonymous part, without the pages of python's and the init's files every session
// shares), 0 when gone.
long status_kb(pid_t pid, std::string_view field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with(field)) return std::stol(line.substr(field.size()));
  }
  return 0;
}
long rss_kb(pid_t pid) { return status_kb(pid, "VmRSS:"); }
long anon_kb(pid_t pid) { return status_kb(pid, "RssAnon:"); }

pid_t parent_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 4 > line.size()) return 0;
  return static_cast<pid_t>(std::strtol(line.c_str() + close + 4, nullptr, 10));
}

// Whether `pid` is this process's descendant: what other work on a shared machine starts
// meanwhile is not counted.
bool descends_from_self(pid_t pid) {
  const pid_t self = ::getpid();
  for (int depth = 0; depth < 16 && pid > 1; ++depth) {
    pid = parent_of(pid);
    if (pid == self) return true;
  }
  return false;
}

std::string comm_of(pid_t pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

std::set<pid_t> host_pids() {
  std::set<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0') out.insert(static_cast<pid_t>(pid));
  }
  ::closedir(d);
  return out;
}

// `x += 1` in a warm runc session against the bare REPL (reported only), where the container
// backend is usable here.
void container_call(cordon::PluginRegistry& registry, BareRepl& repl, int rounds, int warmup) {
  auto container = registry.create("container");
  if (!container || !(*container)->probe().available) {
    std::printf(
        "container (runc) session: skipped: %s\n",
        container ? (*container)->probe().reason.c_str() : container.error().describe().c_str());
    return;
  }
  CountingSession warm = warm_session(**container);
  const auto vs_repl = cordon::bench::compare(
      "python `x += 1`: a warm container (runc) session vs a bare python REPL over a pipe",
      "BackendSession::run(x += 1), runc", [&] { warm.increment(); }, "bare REPL round trip",
      [&] { repl.increment(); }, rounds, warmup, /*target=*/0);
  warm.check("the runc session");
  repl.check();
  cordon::bench::print(vs_repl);
  cordon::bench::print_json(vs_repl);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = arg_int(argc, argv, "--rounds", 200);
  const int warmup = arg_int(argc, argv, "--warmup", 20);
  const int many = arg_int(argc, argv, "--many", 200);
  int missed = 0;

  // The backend as `cordon mcp` holds it: a pool of 2 with python started ahead. Sessions
  // are opened on it, and the pooled one-shots run through it.
  cordon::PluginRegistry registry;
  registry.discover(cordon::PluginRegistry::default_search_path());
  cordon::BackendOptions pooled_options;
  pooled_options.pool_size = 2;
  pooled_options.prestart = "python";
  auto backend = registry.create("namespace", pooled_options);
  if (!backend) die(backend.error().describe());
  if (!(*backend)->probe().available) die("namespace unavailable: " + (*backend)->probe().reason);

  // A warm session: its interpreter started, `x` defined.
  CountingSession warm = warm_session(**backend);
  const auto session_call = [&] { warm.increment(); };

  BareRepl repl;
  const auto vs_repl = cordon::bench::compare(
      "python `x += 1`: a warm session vs a bare python REPL over a pipe (unsandboxed)",
      "BackendSession::run(x += 1)", session_call, "bare REPL round trip",
      [&] { repl.increment(); }, rounds, warmup, /*target=*/2.0);
  repl.check();
  cordon::bench::print(vs_repl);
  cordon::bench::print_json(vs_repl);
  if (!vs_repl.met()) ++missed;

  const std::vector<std::string> bwrap_py =
      cordon::bench::bwrap_argv({"/usr/bin/python3", "-c", "x = 1"});
  const auto vs_bwrap = cordon::bench::compare(
      "python `x += 1`: a warm session vs one-shot bubblewrap python3 -c",
      "BackendSession::run(x += 1)", session_call, "bwrap --unshare-all ... python3 -c",
      [&] { cordon::bench::spawn_and_wait(bwrap_py); }, rounds / 2, warmup / 2,
      /*target=*/0.1);
  cordon::bench::print(vs_bwrap);
  cordon::bench::print_json(vs_bwrap);
  if (!vs_bwrap.met()) ++missed;

  const auto one_shot = [&] {
    const cordon::RunResult r = (*backend)->run(python("x = 1"), kNever, nullptr);
    if (!r.ok()) die("a pooled one-shot failed: " + r.error.value_or(r.stderr_data));
  };
  // Between the one-shot calls the pool refills, as between a server's requests.
  const auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(60)); };
  const auto vs_pool = cordon::bench::compare(
      "python `x += 1`: a warm session vs a one-shot call through the pool (python ahead)",
      "BackendSession::run(x += 1)", session_call, "Backend::run(python x = 1), pooled", one_shot,
      rounds / 2, warmup / 2, /*target=*/0, settle);
  warm.check("the warm session");
  cordon::bench::print(vs_pool);
  cordon::bench::print_json(vs_pool);

  // Creating a session and its first python call (its interpreter started) against the
  // pooled one-shot; the sessions are closed untimed, before the next round.
  std::vector<std::unique_ptr<cordon::BackendSession>> opened;
  const auto close_opened = [&] {
    opened.clear();
    settle();
  };
  const auto vs_create = cordon::bench::compare(
      "creating a python session (open + first call) vs a pooled one-shot python call",
      "open_session + run(x = 1)",
      [&] {
        opened.push_back(open(**backend));
        must_run(*opened.back(), "x = 1");
      },
      "Backend::run(python x = 1), pooled", one_shot, rounds / 4, warmup / 4, /*target=*/1.0,
      close_opened);
  opened.clear();
  cordon::bench::print(vs_create);
  cordon::bench::print_json(vs_create);
  if (!vs_create.met()) ++missed;
  // The same without the first call: the sandbox and its interpreter, which the open
  // starts and waits for (or takes from the backend's session pool).
  const auto vs_open = cordon::bench::compare(
      "opening a python session (no call yet) vs a pooled one-shot python call", "open_session",
      [&] { opened.push_back(open(**backend)); }, "Backend::run(python x = 1), pooled", one_shot,
      rounds / 4, warmup / 4, /*target=*/0, close_opened);
  opened.clear();
  cordon::bench::print(vs_open);
  cordon::bench::print_json(vs_open);

  // Idle cost on the host: the processes a session adds (this process's descendants, so
  // that other work on the machine is not counted) and what this process keeps for it,
  // per session over 20, against the bare REPL's own RSS.
  settle();
  const long self_before = rss_kb(::getpid());
  const std::set<pid_t> before = host_pids();
  std::vector<std::unique_ptr<cordon::BackendSession>> idle;
  constexpr int kIdle = 20;
  for (int i = 0; i < kIdle; ++i) {
    idle.push_back(open(**backend));
    must_run(*idle.back(), "x = 1");
  }
  long python_kb = 0;
  long other_kb = 0;
  long session_anon_kb = 0;
  for (const pid_t pid : host_pids()) {
    if (before.contains(pid) || !descends_from_self(pid)) continue;
    (comm_of(pid).starts_with("python") ? python_kb : other_kb) += rss_kb(pid);
    session_anon_kb += anon_kb(pid);
  }
  const long host_kb = rss_kb(::getpid()) - self_before;
  const long per_session_kb = (python_kb + other_kb + host_kb) / kIdle;
  const long repl_kb = rss_kb(repl.pid());
  const bool idle_met = per_session_kb <= repl_kb + 2048;
  std::printf(
      "idle python session on the host: %ld kB each (over %d: its interpreter %ld kB, its "
      "other processes %ld kB, this process's share %ld kB) vs a bare REPL's %ld kB: "
      "+%ld kB (target <= +2048 kB)%s\n",
      per_session_kb, kIdle, python_kb / kIdle, other_kb / kIdle, host_kb / kIdle, repl_kb,
      per_session_kb - repl_kb, idle_met ? "" : "  MISSED");
  if (!idle_met) ++missed;
  // Reported beside it: the private part alone, the session's processes' against the
  // REPL's (this process's share is private already).
  const long repl_anon_kb = anon_kb(repl.pid());
  const long per_session_anon_kb = (session_anon_kb + host_kb) / kIdle;
  std::printf(
      "idle python session, private memory (RssAnon): %ld kB each vs a bare REPL's %ld kB: "
      "+%ld kB (reported)\n",
      per_session_anon_kb, repl_anon_kb, per_session_anon_kb - repl_anon_kb);
  idle.clear();

  // Many idle sessions at once, each answering afterwards.
  const auto many_start = Clock::now();
  std::vector<std::unique_ptr<cordon::BackendSession>> held;
  for (int i = 0; i < many; ++i) {
    auto session = (*backend)->open_session(python_session());
    if (!session) {
      std::printf("many: session %d refused: %s\n", i + 1, session.error().describe().c_str());
      break;
    }
    held.push_back(std::move(*session));
    must_run(*held.back(), "x = " + std::to_string(i));
  }
  int answering = 0;
  for (std::size_t i = 0; i < held.size(); ++i) {
    const cordon::RunResult r = held[i]->run(python("print(x)"), kNever, nullptr);
    if (r.ok() && r.stdout_data == std::to_string(i) + "\n") ++answering;
  }
  const bool many_met = answering >= many;
  std::printf(
      "%d idle python sessions at once: %d answered with their own state, in %.1f s "
      "(target: all %d)%s\n",
      static_cast<int>(held.size()), answering,
      std::chrono::duration<double>(Clock::now() - many_start).count(), many,
      many_met ? "" : "  MISSED");
  if (!many_met) ++missed;
  held.clear();

  container_call(registry, repl, rounds / 2, warmup / 2);

  std::printf("%s\n", missed == 0 ? "all targets met" : "some targets MISSED");
  return missed == 0 ? 0 : 1;
}
