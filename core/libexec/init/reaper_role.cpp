// cordon-init's "reaper" role, cordon-reaper: the fallback subreaper (see
// cordon/proc/reaper.h for why it exists), and its "subreaper" role, cordon-subreap: the
// parent of an OCI runtime cordon starts attached (runsc), which reaps what the runtime's
// tree leaves (roles.h). argv here starts at the role's name.
//
// Started by ReaperProcess::start with the code's environment, cwd and stdio, and the
// control socket at fd 3. It starts the code, then waits for either the code's main
// process to end or cordon to ask (a byte, or EOF when cordon died); either way it kills
// every descendant, reaps them all, reports, and exits. Compiled with spawn.cpp only; it
// does not link libcordon-core.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cordon/proc/init_end.h"
#include "cordon/proc/init_protocol.h"
#include "cordon/proc/reaper_protocol.h"
#include "cordon/proc/spawn.h"
#include "roles.h"

namespace {

using cordon::init::Event;
using cordon::init::EventKind;
using cordon::proc::kReaperControlFd;

template <class Message>
void send_message(const Message& msg) {
  // MSG_NOSIGNAL: cordon may be gone; the helper must still finish killing the tree.
  (void)::send(kReaperControlFd, &msg, sizeof(msg), MSG_NOSIGNAL);
}

// pid -> ppid of every process visible in /proc.
std::unordered_map<pid_t, pid_t> process_parents() {
  std::unordered_map<pid_t, pid_t> parents;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return parents;
  while (const struct dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    const std::string path = std::string("/proc/") + entry->d_name + "/stat";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[512];
    const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
    ::close(fd);
    if (n <= 0) continue;
    buf[n] = '\0';
    // "pid (comm) state ppid ...": comm may contain spaces and parentheses, so parse from
    // the last ')'.
    const char* paren = std::strrchr(buf, ')');
    if (paren == nullptr || paren[1] == '\0') continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(paren + 2, "%c %d", &state, &ppid) != 2) continue;
    parents[static_cast<pid_t>(pid)] = ppid;
  }
  ::closedir(dir);
  return parents;
}

// SIGKILLs every process whose parent chain leads to us. Orphans of the tree are our
// children (we are their subreaper), so the chain is never broken by a dead middle.
void kill_descendants() {
  const pid_t self = ::getpid();
  const auto parents = process_parents();
  std::unordered_set<pid_t> tree{self};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, ppid] : parents) {
      if (!tree.contains(pid) && tree.contains(ppid)) {
        tree.insert(pid);
        grew = true;
      }
    }
  }
  for (const pid_t pid : tree) {
    if (pid != self) ::kill(pid, SIGKILL);
  }
}

// In the runtime's child before exec: it dies with the subreaper (a SIGKILL of the
// subreaper, as cordon gives a runtime it stops waiting for, still ends the runtime).
int die_with_subreaper(void* /*arg*/) {
  return ::prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 ? 0 : errno;
}

int usage() {
  static const char msg[] =
      "cordon-reaper: internal helper of cordon; not meant to be run by hand\n";
  (void)::write(2, msg, sizeof(msg) - 1);
  return 2;
}

}  // namespace

namespace cordon::init {

int reaper_main(int argc, char** argv) {
  // argv: <parent pid> <path> <n> {<resource> <soft> <hard>}*n -- <code argv...>
  if (argc < 5) return usage();
  const auto parent = static_cast<pid_t>(std::strtol(argv[1], nullptr, 10));

  // Die with cordon. Then check it has not died already (the race PR_SET_PDEATHSIG
  // leaves open); on EOF of the control socket we would kill the tree anyway.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) return 1;
  // Orphans of the code's tree are reparented to us instead of to PID 1.
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return 1;
  // The code may signal its parent (us) by accident or on purpose; only SIGKILL should
  // stop the helper, and then cordon notices the missing report.
  for (const int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2}) {
    ::signal(sig, SIG_IGN);
  }

  cordon::proc::SpawnOptions code;
  code.path = argv[2];
  const long nlimits = std::strtol(argv[3], nullptr, 10);
  int i = 4;
  for (long k = 0; k < nlimits; ++k) {
    if (i + 2 >= argc) return usage();
    code.rlimits.push_back({static_cast<int>(std::strtol(argv[i], nullptr, 10)),
                            static_cast<rlim_t>(std::strtoull(argv[i + 1], nullptr, 10)),
                            static_cast<rlim_t>(std::strtoull(argv[i + 2], nullptr, 10))});
    i += 3;
  }
  if (i >= argc || std::strcmp(argv[i], "--") != 0) return usage();
  for (++i; i < argc; ++i) code.argv.emplace_back(argv[i]);
  for (char** e = environ; *e != nullptr; ++e) code.env.emplace_back(*e);
  code.stdin_fd = 0;
  code.stdout_fd = 1;
  code.stderr_fd = 2;
  code.new_session = true;

  cordon::proc::SpawnStage stage = cordon::proc::SpawnStage::kExec;
  auto child = cordon::proc::spawn(code, &stage);
  if (!child) {
    Event msg;
    msg.kind = EventKind::kFailed;
    msg.error = child.error().sys_errno;
    msg.stage = static_cast<std::int32_t>(stage);
    send_message(msg);
    return 1;
  }
  // Only the code holds its stdio from now on, so cordon sees EOF when the tree is gone.
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    for (int fd = 0; fd <= 2; ++fd) ::dup2(null_fd, fd);
    ::close(null_fd);
  }

  const pid_t main_pid = child->pid();
  {
    Event started;
    started.kind = EventKind::kStarted;
    started.pid = main_pid;
    send_message(started);
  }

  // Wait for the main process to end or for cordon to ask (a byte or EOF).
  for (;;) {
    struct pollfd pfd[2] = {{child->pidfd(), POLLIN, 0}, {kReaperControlFd, POLLIN, 0}};
    if (::poll(pfd, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pfd[0].revents != 0 || pfd[1].revents != 0) break;
  }

  // Signal the main process first (a no-op on a zombie, whose exit status stays), then
  // kill and reap everything (init_end.h), which records the main process's end. A walk
  // of /proc is not atomic: end_run repeats it until no child is left.
  (void)child->signal(SIGKILL);
  cordon::init::Report report;
  cordon::init::end_run(report, main_pid, kill_descendants, /*atomic=*/false);
  send_message(report);
  // Read what cordon sent (its "kill" byte): closing a socket with unread data makes
  // cordon's next recv fail with ECONNRESET (it copes, but needs not to).
  char drain[16];
  while (::recv(kReaperControlFd, drain, sizeof drain, MSG_DONTWAIT) > 0) {
  }
  // _Exit: `child` still holds the pid it no longer owns (reaped above); skip its destructor.
  std::_Exit(0);
}

int subreaper_main(int argc, char** argv) {
  // argv: subreaper -- <runtime argv...>
  if (argc < 3 || std::strcmp(argv[1], "--") != 0) return usage();
  // Orphans of the runtime's tree (gVisor's sandbox, gofer and stubs when their parent
  // goes) are reparented to us instead of to PID 1.
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return 125;
  cordon::proc::SpawnOptions runtime;
  runtime.path = argv[2];
  for (int i = 2; i < argc; ++i) runtime.argv.emplace_back(argv[i]);
  for (char** e = environ; *e != nullptr; ++e) runtime.env.emplace_back(*e);
  runtime.stdin_fd = 0;
  runtime.stdout_fd = 1;
  runtime.stderr_fd = 2;
  runtime.new_session = false;
  runtime.hook = die_with_subreaper;
  auto child = cordon::proc::spawn(runtime);
  if (!child) return 125;
  // Only the runtime holds the stdio from now on: cordon's pipes reach EOF with it.
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    for (int fd = 0; fd <= 2; ++fd) ::dup2(null_fd, fd);
    ::close(null_fd);
  }
  // The runtime's end, then every process left below us killed and reaped (init_end.h),
  // so that our own end (what cordon waits for) means nothing of the runtime is left.
  for (;;) {
    struct pollfd pfd{child->pidfd(), POLLIN, 0};
    if (::poll(&pfd, 1, -1) >= 0 || errno != EINTR) break;
  }
  cordon::init::Report report;
  cordon::init::end_run(report, child->pid(), kill_descendants, /*atomic=*/false);
  // The runtime's own status, as cordon would have seen it: its exit code, or its signal.
  const int status = report.status;
  if (report.main_reaped != 0 && WIFSIGNALED(status)) {
    ::signal(WTERMSIG(status), SIG_DFL);
    ::kill(::getpid(), WTERMSIG(status));
  }
  // _Exit: `child` still holds the pid it no longer owns (reaped above).
  std::_Exit(report.main_reaped != 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 125);
}

}  // namespace cordon::init
