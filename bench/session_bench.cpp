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
//   idle cost:  host RSS of an idle python session (its processes, and what the host
//               process keeps for it) against a bare python REPL's own RSS   target <= +2 MiB
//   many:       200 idle python sessions at once, each still answering    target: all 200
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

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

void must_run(cordon::BackendSession& session, const std::string& code) {
  const cordon::RunResult r = session.run(python(code), kNever, nullptr);
  if (!r.ok())
    die("a session call failed: " + r.stdout_data + r.stderr_data + r.error.value_or(""));
}

std::unique_ptr<cordon::BackendSession> open(cordon::Backend& backend) {
  auto session = backend.open_session(python_session());
  if (!session) die("open_session: " + session.error().describe());
  return std::move(*session);
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
    call("x = 0");
  }
  BareRepl(const BareRepl&) = delete;
  BareRepl& operator=(const BareRepl&) = delete;
  ~BareRepl() {
    ::close(in_);
    ::close(out_);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  void call(const std::string& line) {
    const std::string sent = line + "\n";
    if (::write(in_, sent.data(), sent.size()) != static_cast<ssize_t>(sent.size())) die("write");
    char buf[8];
    std::size_t got = 0;
    while (got < 3) {
      const ssize_t n = ::read(out_, buf + got, sizeof buf - got);
      if (n <= 0) die("the bare REPL died");
      got += static_cast<std::size_t>(n);
    }
  }
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
};

// Resident set of `pid` in kB (VmRSS), 0 when gone.
long rss_kb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmRSS:")) return std::stol(line.substr(6));
  }
  return 0;
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

}  // namespace

int main(int argc, char** argv) {
  const int rounds = arg_int(argc, argv, "--rounds", 200);
  const int warmup = arg_int(argc, argv, "--warmup", 20);
  const int many = arg_int(argc, argv, "--many", 200);
  int missed = 0;

  cordon::PluginRegistry registry;
  registry.discover(cordon::PluginRegistry::default_search_path());
  auto backend = registry.create("namespace");
  if (!backend) die(backend.error().describe());
  if (!(*backend)->probe().available) die("namespace unavailable: " + (*backend)->probe().reason);

  // A warm session: its interpreter started, `x` defined.
  std::unique_ptr<cordon::BackendSession> warm = open(**backend);
  must_run(*warm, "x = 0");
  const auto session_call = [&] { must_run(*warm, "x += 1"); };

  BareRepl repl;
  const auto vs_repl = cordon::bench::compare(
      "python `x += 1`: a warm session vs a bare python REPL over a pipe (unsandboxed)",
      "BackendSession::run(x += 1)", session_call, "bare REPL round trip",
      [&] { repl.call("x += 1"); }, rounds, warmup, /*target=*/2.0);
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

  // One-shot through the pool with python started ahead, as `cordon mcp` holds it.
  cordon::BackendOptions pooled_options;
  pooled_options.pool_size = 2;
  pooled_options.prestart = "python";
  auto pooled = registry.create("namespace", pooled_options);
  if (!pooled) die(pooled.error().describe());
  const auto one_shot = [&] {
    const cordon::RunResult r = (*pooled)->run(python("x = 1"), kNever, nullptr);
    if (!r.ok()) die("a pooled one-shot failed: " + r.error.value_or(r.stderr_data));
  };
  // Between the one-shot calls the pool refills, as between a server's requests.
  const auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(60)); };
  const auto vs_pool = cordon::bench::compare(
      "python `x += 1`: a warm session vs a one-shot call through the pool (python ahead)",
      "BackendSession::run(x += 1)", session_call, "Backend::run(python x = 1), pooled", one_shot,
      rounds / 2, warmup / 2, /*target=*/0, settle);
  cordon::bench::print(vs_pool);
  cordon::bench::print_json(vs_pool);

  // Creating a session and its first python call (its interpreter started) against the
  // pooled one-shot; the sessions are closed untimed, before the next round.
  std::vector<std::unique_ptr<cordon::BackendSession>> opened;
  const auto vs_create = cordon::bench::compare(
      "creating a python session (open + first call) vs a pooled one-shot python call",
      "open_session + run(x = 1)",
      [&] {
        opened.push_back(open(**backend));
        must_run(*opened.back(), "x = 1");
      },
      "Backend::run(python x = 1), pooled", one_shot, rounds / 4, warmup / 4, /*target=*/1.0,
      [&] {
        opened.clear();
        settle();
      });
  opened.clear();
  cordon::bench::print(vs_create);
  cordon::bench::print_json(vs_create);
  if (!vs_create.met()) ++missed;

  // Idle cost on the host: the processes a session adds and what this process keeps for
  // it, per session over 20, against the bare REPL's own RSS.
  const long self_before = rss_kb(::getpid());
  const std::set<pid_t> before = host_pids();
  std::vector<std::unique_ptr<cordon::BackendSession>> idle;
  for (int i = 0; i < 20; ++i) {
    idle.push_back(open(**backend));
    must_run(*idle.back(), "x = 1");
  }
  long added_kb = 0;
  for (const pid_t pid : host_pids()) {
    if (!before.contains(pid)) added_kb += rss_kb(pid);
  }
  const long per_session_kb = (added_kb + rss_kb(::getpid()) - self_before) / 20;
  const long repl_kb = rss_kb(repl.pid());
  const bool idle_met = per_session_kb <= repl_kb + 2048;
  std::printf(
      "idle python session on the host: %ld kB each (its processes and this process's share, "
      "over 20) vs a bare REPL's %ld kB: +%ld kB (target <= +2048 kB)%s\n",
      per_session_kb, repl_kb, per_session_kb - repl_kb, idle_met ? "" : "  MISSED");
  if (!idle_met) ++missed;
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

  std::printf("%s\n", missed == 0 ? "all targets met" : "some targets MISSED");
  return missed == 0 ? 0 : 1;
}
