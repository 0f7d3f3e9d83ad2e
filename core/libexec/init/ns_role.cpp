// cordon-init's "ns" role, cordon-ns-init: PID 1 of a namespace sandbox (the protocol is
// cordon/proc/init_protocol.h, over the channel of cordon/proc/ns_init_channel.h).
//
// The sandbox's set-up process execs it once the sandbox is built and before any code
// exists, so no process in the sandbox ever carries cordon's memory, environment or fds:
// this image is small and static, its environment is empty, and its only fds are
// /dev/null (0-2), the report pipe (3) and the control socket (4). It holds no capability
// either (the set-up process emptied the bounding set, and the exec of a non-root uid
// clears the rest), and it runs under the sandbox's seccomp filter with no_new_privs like
// everything in the sandbox: the set-up process installed both right before this exec,
// so every syscall below is one the policy allows.
//
// It waits for the order, starts the code from it, reaps every process reparented to it
// (orphans of the code's tree), and when the code's main process ends it kills and reaps
// every other process of the PID namespace (setsid'd and nohup'd descendants die with the
// run), writes the main process's status and resource use to fd 3 and exits.
//
// PID 1 of a namespace receives only signals it has a handler for from inside the
// namespace, so the code cannot kill it (not even with SIGKILL); cordon kills it from
// outside at the deadline, which takes the whole namespace down. PR_SET_PDEATHSIG was set
// before exec and survives it (no credential change): if the cordon thread that built the
// sandbox dies, so does the sandbox.
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cordon/proc/fd_passing.h"
#include "cordon/proc/init_end.h"
#include "cordon/proc/init_protocol.h"
#include "cordon/proc/kernel_sigset.h"
#include "cordon/proc/ns_init_channel.h"
#include "relay.h"
#include "roles.h"

namespace {

using cordon::init::Event;
using cordon::init::EventKind;
using cordon::init::OrderKind;
using cordon::init::OrderRecord;
using cordon::init::OrderTag;
using cordon::init::record_data;
using cordon::ns::CodeStage;

void send_event(const Event& ev) {
  // MSG_NOSIGNAL: a cordon that gave up must not turn our report into a SIGPIPE.
  (void)::send(cordon::ns::kInitControlFd, &ev, sizeof(ev), MSG_NOSIGNAL);
}

[[noreturn]] void fail(CodeStage stage, int err, int step = -1) {
  Event ev;
  ev.kind = EventKind::kFailed;
  ev.stage = static_cast<std::int32_t>(stage);
  ev.error = err != 0 ? err : EINVAL;
  ev.step = step;
  send_event(ev);
  ::_exit(126);
}

// The order, parsed in place: pointers into `buf`.
struct Order {
  OrderKind kind = OrderKind::kRun;
  const char* buf = nullptr;   // the order's records, mapped from the memfd
  const char* code = nullptr;  // kCode: for a prestarted interpreter
  std::uint32_t code_len = 0;
  const char* exe = nullptr;
  const char* cwd = "/";
  char** argv = nullptr;
  char** envp = nullptr;
  std::uint16_t relay_port = 0;  // 0: no relay
  const char* relay_path = nullptr;
  int relay_dir = -1;           // the socket's directory, when the order brought one
  int preload = -1;             // kPrestart: the library a prestarted shell preloads
  char relay_through[64] = {};  // /proc/self/fd/N/NAME: the path through relay_dir
  int stdio[3] = {-1, -1, -1};
};

const OrderRecord* next_record(const char* buf, std::uint32_t size, std::uint32_t* offset) {
  return cordon::init::next_record(buf, size, offset);
}

// Where an order that comes in its message is received (ns_init_channel.h): one buffer for
// each order this init can receive (a prestart's, then its run's; the first stays in use
// while the second arrives). Each is written to before we say we are ready for its order
// (touch_order_buffer), so that receiving one faults no page in on the run's path.
struct OrderMessage {
  char bytes[sizeof(cordon::init::OrderHeader) + cordon::ns::kInlineOrderMaxBytes];
};
// The records follow the header at its size: aligned enough for an OrderRecord (its
// 8-byte data is read with memcpy).
static_assert(sizeof(cordon::init::OrderHeader) % alignof(OrderRecord) == 0);
alignas(8) OrderMessage g_order_messages[2];
int g_orders_received = 0;
// A session's init (its first order was a kSessionRun): it serves order after order.
bool g_session = false;

void touch_order_buffer(int index) {
  volatile char* p = g_order_messages[index].bytes;
  for (std::size_t at = 0; at < sizeof(OrderMessage); at += 4096) p[at] = 0;
  p[sizeof(OrderMessage) - 1] = 0;
}

// Receives the order; false when cordon closed the socket instead (it gave the sandbox
// up: a pool being emptied).
bool receive_order(Order& order, std::uint32_t* size) {
  if (g_orders_received >= 2) fail(CodeStage::kOrder, EPROTO);
  char* message = g_order_messages[g_orders_received++].bytes;
  int fds[cordon::ns::kOrderFdCountWithRelayDir];
  int count = 0;
  cordon::init::OrderHeader header;
  ssize_t n = 0;
  for (;;) {
    n = cordon::proc::receive_with_fds(cordon::ns::kInitControlFd, message, sizeof(OrderMessage),
                                       fds, cordon::ns::kOrderFdCountWithRelayDir, &count);
    if (n == 0) return false;
    if (n < static_cast<ssize_t>(sizeof(header))) {
      fail(CodeStage::kOrder, n < 0 ? static_cast<int>(-n) : EPROTO);
    }
    std::memcpy(&header, message, sizeof(header));
    // A session's "end the run" that crossed the run's own end: there is no run to end.
    if (!g_session || header.kind != OrderKind::kEndRun || n != sizeof(header) || count != 0) {
      break;
    }
  }
  // Header alone: the records are in a memfd, passed first. Header and records: all here.
  const bool in_message = n > static_cast<ssize_t>(sizeof(header));
  const int memfds = in_message ? 0 : 1;
  if (header.magic != cordon::init::kOrderMagic || header.size == 0 ||
      (in_message && static_cast<std::uint64_t>(n) != sizeof(header) + header.size) ||
      (count != cordon::ns::kOrderFdCount - 1 + memfds &&
       count != cordon::ns::kOrderFdCountWithRelayDir - 1 + memfds)) {
    fail(CodeStage::kOrder, EPROTO);
  }
  if (count == cordon::ns::kOrderFdCountWithRelayDir - 1 + memfds) {
    // The extra fd: a run's relay directory, or a prestarted shell's preload library.
    if (header.kind == OrderKind::kPrestart) {
      // Above 0-5, which code_main fills by dup2 before it places the library at fd 5.
      order.preload = ::fcntl(fds[count - 1], F_DUPFD_CLOEXEC, 10);
      if (order.preload < 0) fail(CodeStage::kOrder, errno);
      ::close(fds[count - 1]);
    } else {
      order.relay_dir = fds[count - 1];
    }
  }
  if (in_message) {
    order.buf = message + sizeof(header);
  } else {
    // Mapped, not copied: input files can be large, and a copy would be charged to the
    // sandbox's memory limit on top of the tmpfs pages they are written to.
    struct stat st{};
    if (::fstat(fds[0], &st) != 0 || static_cast<std::uint64_t>(st.st_size) < header.size) {
      fail(CodeStage::kOrder, EPROTO);
    }
    void* mapped = ::mmap(nullptr, header.size, PROT_READ, MAP_PRIVATE, fds[0], 0);
    if (mapped == MAP_FAILED) fail(CodeStage::kOrder, errno);
    order.buf = static_cast<const char*>(mapped);
    ::close(fds[0]);
  }
  for (int i = 0; i < 3; ++i) order.stdio[i] = fds[memfds + i];
  order.kind = header.kind;
  *size = header.size;
  return true;
}

// Checks the whole order (init_protocol.h's check_order: nothing is acted on before), then
// creates the directories and files and fills argv/envp.
void apply_order(Order& order, std::uint32_t size) {
  if (const int err = cordon::init::check_order(order.buf, size, order.kind); err != 0) {
    fail(CodeStage::kOrder, err);
  }
  std::size_t args = 0;
  std::size_t envs = 0;
  std::uint32_t offset = 0;
  while (const OrderRecord* r = next_record(order.buf, size, &offset)) {
    if (r->tag == OrderTag::kArg) ++args;
    if (r->tag == OrderTag::kEnv) ++envs;
  }
  order.argv = static_cast<char**>(std::calloc(args + 1, sizeof(char*)));
  order.envp = static_cast<char**>(std::calloc(envs + 1, sizeof(char*)));
  if (order.argv == nullptr || order.envp == nullptr) fail(CodeStage::kOrder, ENOMEM);
  args = envs = 0;
  offset = 0;
  int file_index = 0;
  while (const OrderRecord* r = next_record(order.buf, size, &offset)) {
    char* data = const_cast<char*>(record_data(r));
    switch (r->tag) {
      case OrderTag::kExe:
        order.exe = data;
        break;
      case OrderTag::kArg:
        order.argv[args++] = data;
        break;
      case OrderTag::kEnv:
        order.envp[envs++] = data;
        break;
      case OrderTag::kCwd:
        order.cwd = data;
        break;
      case OrderTag::kDir:
        if (::mkdir(data, r->aux) != 0) fail(CodeStage::kWriteFile, errno, file_index);
        ++file_index;
        break;
      case OrderTag::kFile: {
        const std::size_t path_len = ::strnlen(data, r->len);
        const int fd = ::open(data, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, r->aux);
        if (fd < 0) fail(CodeStage::kWriteFile, errno, file_index);
        const char* p = data + path_len + 1;
        std::size_t left = r->len - path_len - 1;
        while (left > 0) {
          const ssize_t w = ::write(fd, p, left);
          if (w < 0 && errno == EINTR) continue;
          if (w <= 0) fail(CodeStage::kWriteFile, w < 0 ? errno : EIO, file_index);
          p += w;
          left -= static_cast<std::size_t>(w);
        }
        ::close(fd);
        ++file_index;
        break;
      }
      case OrderTag::kCode:
        order.code = data;
        order.code_len = r->len;
        break;
      case OrderTag::kRelay:
        order.relay_port = static_cast<std::uint16_t>(r->aux);
        order.relay_path = data;
        if (order.relay_dir >= 0) {
          // A name in the directory that came with the order, reached through our fd.
          if (std::strchr(data, '/') != nullptr ||
              std::snprintf(order.relay_through, sizeof(order.relay_through), "/proc/self/fd/%d/%s",
                            order.relay_dir,
                            data) >= static_cast<int>(sizeof(order.relay_through))) {
            fail(CodeStage::kOrder, EPROTO);
          }
          order.relay_path = order.relay_through;
        }
        break;
      default:  // kRlimit: applied in the code's process; kBackstop: cordon's deadline
        break;  // and PR_SET_PDEATHSIG end this sandbox
    }
  }
}

struct CodeFailure {
  CodeStage stage;
  std::int32_t error;
};

// How the code's process says why it could not start: it is our vfork child, sharing our
// memory while we stay suspended until it has exec'd or exited, so a variable of
// start_code's is the channel (a CLOEXEC pipe cost four more syscalls on every run's path).
[[noreturn]] void code_fail(volatile CodeFailure* failure, CodeStage stage, int err) {
  failure->stage = stage;
  failure->error = err != 0 ? err : EINVAL;
  ::_exit(127);
}

// The code's process (a fork of init, so under the same filter): its own session, the
// request's stdio, working directory and rlimits, only fds 0-2 (and for a prestarted
// interpreter its code pipe as fd 3, its ready pipe as fd 4 and a shell's preload library as
// fd 5), then exec.
[[noreturn]] void code_main(const Order& order, std::uint32_t size, volatile CodeFailure* failure,
                            int code_fd, int ready_fd) {
  if (::setsid() < 0) code_fail(failure, CodeStage::kSession, errno);
  if (g_session) {
    // A session's init blocks SIGCHLD (serve_session); the code gets the empty mask.
    const cordon::proc::KernelSigset none{};
    cordon::proc::raw_sigprocmask(SIG_SETMASK, &none, nullptr);
  }
  for (int i = 0; i < 3; ++i) {
    if (::dup2(order.stdio[i], i) < 0) code_fail(failure, CodeStage::kFds, errno);
  }
  // Neither the code pipe nor the ready pipe can be fd 3 or 4 here: the report pipe and
  // the control socket hold them in the init, so dup2 only replaces this process's copies.
  // The preload library is never 0-5 either: receive_order moved it above them.
  int keep_below = 3;
  if (code_fd >= 0) {
    if (::dup2(code_fd, cordon::ns::kPrestartCodeFd) < 0 ||
        ::dup2(ready_fd, cordon::ns::kPrestartReadyFd) < 0) {
      code_fail(failure, CodeStage::kFds, errno);
    }
    keep_below = cordon::ns::kPrestartReadyFd + 1;
    if (order.preload >= 0) {
      if (::dup2(order.preload, cordon::ns::kPrestartPreloadFd) < 0) {
        code_fail(failure, CodeStage::kFds, errno);
      }
      keep_below = cordon::ns::kPrestartPreloadFd + 1;
    }
  }
  if (::chdir(order.cwd) != 0) code_fail(failure, CodeStage::kChdir, errno);
  std::uint32_t offset = 0;
  while (const OrderRecord* r = next_record(order.buf, size, &offset)) {
    if (r->tag != OrderTag::kRlimit) continue;
    std::uint64_t v[2];
    std::memcpy(v, record_data(r), sizeof(v));
    const struct rlimit lim{v[0], v[1]};
    if (::setrlimit(static_cast<int>(r->aux), &lim) != 0) {
      code_fail(failure, CodeStage::kRlimit, errno);
    }
  }
  ::umask(022);
  // Only 0, 1, 2 reach the code (and a prestarted interpreter's 3, 4 and 5).
  if (::close_range(keep_below, ~0U, 0) != 0) code_fail(failure, CodeStage::kFds, errno);
  ::execve(order.exe, order.argv, order.envp);
  code_fail(failure, CodeStage::kExecCode, errno);
}

// Starts the code's process and waits until it has exec'd (or failed to: reported, and we
// exit). Our copies of the order's stdio go.
//
// vfork, not fork: we are single-threaded and static, and code_main only makes syscalls
// (through wrappers that set errno, ours to share while we are suspended) before it execs
// or _exits, so there is nothing a copy of our memory would protect; a fork would copy our
// page tables only for the exec to throw the copy away, on every run's path.
pid_t start_code(const Order& order, std::uint32_t size, int code_fd = -1, int ready_fd = -1) {
  volatile CodeFailure failure{CodeStage::kStartCode, 0};  // error 0: it exec'd
  // The denial of service the check warns of (the parent suspended) is what we want:
  // we have nothing to do until the code has exec'd. posix_spawn cannot set rlimits or
  // the umask in the child.
  const pid_t pid = ::vfork();  // NOLINT(bugprone-unsafe-functions): see above
  if (pid < 0) fail(CodeStage::kStartCode, errno);
  if (pid == 0) code_main(order, size, &failure, code_fd, ready_fd);
  for (const int fd : order.stdio) ::close(fd);
  // A failed start is reported on the control socket (cordon reads it once we are gone);
  // a successful one is not: cordon already waits for the code's end.
  if (failure.error != 0) fail(failure.stage, failure.error);
  return pid;
}

// The order's network relay, listening before the code starts (so the code cannot take its
// port first); a relay that cannot listen fails the run before the code runs.
void start_order_relay(Order& order) {
  if (order.relay_port == 0) {
    if (order.relay_dir >= 0) fail(CodeStage::kOrder, EPROTO);  // a directory for no relay
    return;
  }
  const pid_t relay =
      cordon::init::start_relay(order.relay_port, order.relay_path, order.relay_dir);
  if (relay < 0) fail(CodeStage::kRelay, static_cast<int>(-relay));
  if (order.relay_dir >= 0) ::close(order.relay_dir);  // the relay's now, not the code's
  order.relay_dir = -1;
}

// Until the run's order arrives (true) or cordon gives the sandbox up or the waiting
// interpreter dies (false): a pipe's write end reports POLLERR once no reader is left.
bool wait_for_run(int code_write) {
  for (;;) {
    struct pollfd pfd[2] = {{cordon::ns::kInitControlFd, POLLIN, 0}, {code_write, 0, 0}};
    if (::poll(pfd, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if ((pfd[1].revents & (POLLERR | POLLHUP)) != 0) return false;
    if ((pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) return true;
  }
}

// A kPrestart order: start the interpreter now with its code pipe, say ready again, and
// on the run's order write that order's files, then hand the code over. The interpreter's
// pid, or -1 when there will be no run.
pid_t run_prestarted(const Order& prestart, std::uint32_t size) {
  int code_pipe[2];
  int ready_pipe[2];
  if (::pipe2(code_pipe, O_CLOEXEC) != 0 || ::pipe2(ready_pipe, O_CLOEXEC) != 0) {
    fail(CodeStage::kStartCode, errno);
  }
  const pid_t pid = start_code(prestart, size, code_pipe[0], ready_pipe[1]);
  ::close(code_pipe[0]);
  ::close(ready_pipe[1]);
  if (prestart.preload >= 0) ::close(prestart.preload);
  // Ready once its start-up is done and the loader waits for the code (it writes one byte
  // and closes its end); EOF first: it died on the way.
  char byte = 0;
  ssize_t got = 0;
  do {
    got = ::read(ready_pipe[0], &byte, 1);
  } while (got < 0 && errno == EINTR);
  ::close(ready_pipe[0]);
  if (got != 1) fail(CodeStage::kStartCode, ECHILD);
  touch_order_buffer(1);
  send_event(Event{});  // kReady: the interpreter waits for its code
  if (!wait_for_run(code_pipe[1])) return -1;
  Order run;
  std::uint32_t run_size = 0;
  if (!receive_order(run, &run_size)) return -1;
  if (run.kind != OrderKind::kRunPrestarted) fail(CodeStage::kOrder, EPROTO);
  apply_order(run, run_size);
  start_order_relay(run);
  for (const int fd : run.stdio) ::close(fd);
  // Blocks while the code is larger than the pipe, until the loader has read it. EPIPE (the
  // interpreter died meanwhile) is not ours to report: its wait status is the run's end.
  // As PID 1 of the namespace we ignore the SIGPIPE of a default disposition.
  const char* p = run.code;
  std::size_t left = run.code_len;
  while (left > 0) {
    const ssize_t w = ::write(code_pipe[1], p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  ::close(code_pipe[1]);
  return pid;
}

// What an order of a session's init holds past its run: its mapping (a memfd's) and argv/envp.
void release_order(Order& order, std::uint32_t size) {
  const char* first = g_order_messages[0].bytes;
  const char* past = first + sizeof(g_order_messages);
  if (order.buf != nullptr && (order.buf < first || order.buf >= past)) {
    ::munmap(const_cast<char*>(order.buf), size);
  }
  std::free(static_cast<void*>(order.argv));
  std::free(static_cast<void*>(order.envp));
  order = Order{};
}

void on_sigchld(int /*sig*/) {}

// The control socket while a session's run goes on: true when cordon asks to end the run
// now (kEndRun); exits when cordon gave the session up (EOF). Anything else is ignored.
bool end_run_asked() {
  alignas(8) char message[sizeof(cordon::init::OrderHeader) + 8];
  int fds[cordon::ns::kOrderFdCountWithRelayDir];
  int count = 0;
  const ssize_t n =
      cordon::proc::receive_with_fds(cordon::ns::kInitControlFd, message, sizeof(message), fds,
                                     cordon::ns::kOrderFdCountWithRelayDir, &count);
  for (int i = 0; i < count; ++i) ::close(fds[i]);
  if (n == 0) ::_exit(0);  // the namespace goes with us
  if (n != static_cast<ssize_t>(sizeof(cordon::init::OrderHeader))) return false;
  cordon::init::OrderHeader header;
  std::memcpy(&header, message, sizeof(header));
  return header.magic == cordon::init::kOrderMagic && header.kind == OrderKind::kEndRun &&
         header.size == 0 && count == 0;
}

// A session's init: runs `order`, then each next kSessionRun order, one at a time, until
// cordon closes the control socket. Each run ends as a one-shot run does (end_run: every
// other process killed and reaped, then the report on fd 3), when its main process ends
// or when cordon sends kEndRun; the sandbox (its /tmp, its working directory) stays.
//
// SIGCHLD is blocked and handled (a no-op): ppoll unblocks it, so a child's end and the
// control socket wake the same wait, and orphans are reaped as they end. The code can
// send us SIGCHLD now (we have a handler): that only makes us look for children to reap.
[[noreturn]] void serve_session(Order order, std::uint32_t size) {
  struct sigaction sa{};
  sa.sa_handler = on_sigchld;
  ::sigemptyset(&sa.sa_mask);
  if (::sigaction(SIGCHLD, &sa, nullptr) != 0) fail(CodeStage::kOrder, errno);
  cordon::proc::KernelSigset chld{};
  chld.bits[0] = 1UL << (SIGCHLD - 1);
  cordon::proc::raw_sigprocmask(SIG_BLOCK, &chld, nullptr);
  const sigset_t none{};
  for (;;) {
    start_order_relay(order);
    const pid_t main_pid = start_code(order, size);
    cordon::init::Report report;
    for (bool main_ended = false; !main_ended;) {
      for (;;) {
        int status = 0;
        struct rusage ru{};
        const pid_t got = ::wait4(-1, &status, __WALL | WNOHANG, &ru);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        if (got == main_pid) {
          cordon::init::take_main_end(report, status, ru);
          main_ended = true;
        }
      }
      if (main_ended) break;
      struct pollfd pfd{cordon::ns::kInitControlFd, POLLIN, 0};
      if (::ppoll(&pfd, 1, nullptr, &none) > 0 && end_run_asked()) break;
    }
    cordon::init::end_run(report, main_pid, [] { ::kill(-1, SIGKILL); }, /*atomic=*/true);
    if (::write(cordon::ns::kInitReportFd, &report, sizeof(report)) !=
        static_cast<ssize_t>(sizeof(report))) {
      ::_exit(0);
    }
    release_order(order, size);
    // Both buffers were touched before the first order; the next order reuses the first.
    g_orders_received = 0;
    if (!receive_order(order, &size)) ::_exit(0);
    if (order.kind != OrderKind::kSessionRun) fail(CodeStage::kOrder, EPROTO);
    apply_order(order, size);
  }
}

}  // namespace

namespace cordon::init {

int ns_init_main() {
  // First: the code will run as our uid, so make /proc/1/{mem,environ,fd} unreadable to it.
  ::prctl(PR_SET_DUMPABLE, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The set-up process blocked every signal; we need none of them delivered (no handlers:
  // as PID 1 we ignore what the code sends), but wait4 must not be disturbed either, and
  // the code inherits our (empty) mask.
  const cordon::proc::KernelSigset none{};
  cordon::proc::raw_sigprocmask(SIG_SETMASK, &none, nullptr);

  touch_order_buffer(0);
  send_event(Event{});  // kReady
  Order order;
  std::uint32_t size = 0;
  if (!receive_order(order, &size)) return 0;
  apply_order(order, size);

  pid_t main_pid = -1;
  if (order.kind == OrderKind::kSessionRun) {
    g_session = true;
    serve_session(order, size);
  }
  if (order.kind == OrderKind::kRun) {
    start_order_relay(order);
    main_pid = start_code(order, size);
  } else if (order.kind == OrderKind::kPrestart) {
    main_pid = run_prestarted(order, size);
    if (main_pid < 0) return 0;  // given up, or the interpreter died while it waited
  } else {
    fail(CodeStage::kOrder, EPROTO);
  }
  ::close(cordon::ns::kInitControlFd);

  cordon::init::Report report;
  for (;;) {
    int status = 0;
    struct rusage ru{};
    const pid_t got = ::wait4(-1, &status, __WALL, &ru);
    if (got < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: the main process is gone without our seeing it (cannot happen)
    }
    if (got != main_pid) continue;
    cordon::init::take_main_end(report, status, ru);
    break;
  }
  // The main process has ended: end every other process of the namespace before saying
  // so (init_end.h), so that cordon need not wait for our own exit (which tears the
  // namespaces down) to know nothing of the code is left. kill(-1) reaches every process
  // here but us, atomically.
  cordon::init::end_run(report, main_pid, [] { ::kill(-1, SIGKILL); }, /*atomic=*/true);
  // One write of a small struct to a pipe is atomic.
  if (::write(cordon::ns::kInitReportFd, &report, sizeof(report)) !=
      static_cast<ssize_t>(sizeof(report))) {
    return 0;
  }
  // Then we wait to be killed rather than exit: our exit tears the namespaces down (the
  // mount namespace's unmounts wait for an RCU grace period, the network namespace's
  // cleanup runs on a kernel worker), and cordon wants that off the path of the run's
  // result. It kills us once the result is read (a warm pool: after the response went
  // out); PR_SET_PDEATHSIG covers its end. Nothing of the code is left to wait for.
  for (;;) {
    if (::poll(nullptr, 0, -1) < 0 && errno != EINTR) return 0;
  }
}

}  // namespace cordon::init
