// The child side of a namespace sandbox: B (the sandbox's PID 1 until it execs
// cordon-ns-init). See child_setup.h for the layout and why.
// Everything below sandbox_child_main runs between clone and exec: async-signal-safe
// calls only, no allocation, no locks; every value was prepared by PreparedChild::make
// (prepared_child.cpp), in cordon or, decoded, in cordon-ns-spawner (setup_spawner.h).
// Nothing here may need libcordon-core: cordon-ns-spawner links this file statically.
#include "child_setup.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "cordon/policy/seccomp_install.h"
#include "cordon/proc/fd_passing.h"
#include "cordon/proc/kernel_sigset.h"
#include "mount_apply.h"

namespace cordon::ns {
namespace {

// B's fd slots. B first moves the fds it needs here and closes everything else it got
// from the parent (other runs' pipe ends included), so nothing of the caller's survives
// into the sandbox. The report pipe and the channel sit where cordon-ns-init expects them
// (init_protocol.h: the channel becomes its control socket); the others are CLOEXEC and
// vanish at the exec of init.
enum Slot : int {
  kReportSlot = kInitReportFd,
  kChannelSlot = kInitControlFd,
  kInitExeSlot = 5,
  kGoSlot = 6,
  kFirstFreeSlot = 7,
};
constexpr int kSlotCount = kFirstFreeSlot - kReportSlot;

// Raw id syscalls: glibc's setresuid/setgroups broadcast the change to every thread it
// knows of (SIGSETXID) and wait for them, but after clone the threads glibc remembers are
// the parent's, which do not exist here: the wrapper would hang or fail.
int set_ids(uid_t uid, gid_t gid) {
  if (::syscall(SYS_setresgid, gid, gid, gid) != 0) return errno;
  if (::syscall(SYS_setresuid, uid, uid, uid) != 0) return errno;
  return 0;
}

[[noreturn]] void fail(int channel, ChildStage stage, int err, int step = -1) {
  init::Event msg;
  msg.kind = init::EventKind::kFailed;
  msg.stage = static_cast<std::int32_t>(stage);
  msg.error = err != 0 ? err : EINVAL;
  msg.step = step;
  // MSG_NOSIGNAL: a parent that gave up must not turn our report into a SIGPIPE.
  (void)::send(channel, &msg, sizeof(msg), MSG_NOSIGNAL);
  ::_exit(126);
}

int bring_loopback_up() {
  // A new network namespace has only `lo`, and it is down: local servers and clients in
  // the sandbox (a test's http.server, multiprocessing managers) need it. There is no
  // other interface and no route, so nothing leaves the namespace.
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return errno;
  struct ifreq ifr{};
  std::memcpy(ifr.ifr_name, "lo", 3);
  int err = 0;
  if (::ioctl(s, SIOCGIFFLAGS, &ifr) != 0) {
    err = errno;
  } else {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    if (::ioctl(s, SIOCSIFFLAGS, &ifr) != 0) err = errno;
  }
  ::close(s);
  return err;
}

int send_fd(int channel, int fd) {
  init::Event msg;
  msg.kind = init::EventKind::kTmpFd;
  return cordon::proc::send_with_fds(channel, &msg, sizeof(msg), &fd, 1);
}

int capset_raw(const __user_cap_data_struct (&data)[2]) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  return ::syscall(SYS_capset, &header, data) == 0 ? 0 : errno;
}

int drop_capabilities() {
  // The ambient set first (it would re-grant caps at exec), then the bounding set (which
  // needs CAP_SETPCAP, so while we still have it), then permitted/effective/inheritable.
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) return errno;
  for (int cap = 0; cap < 64; ++cap) {
    // EINVAL: past the kernel's last capability.
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return errno;
  }
  const __user_cap_data_struct none[2] = {};
  return capset_raw(none);
}

// Test only (NamespaceOptions::drop_capabilities = false): keep the user namespace's
// capabilities across exec through the ambient set, so a positive control can show that
// a syscall the filter denies would otherwise succeed.
int keep_capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return errno;
  data[0].inheritable = data[0].permitted;
  data[1].inheritable = data[1].permitted;
  if (const int err = capset_raw(data); err != 0) return err;
  for (int cap = 0; cap < 64; ++cap) (void)::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0);
  return 0;
}

}  // namespace

const char* to_string(ChildStage stage) {
  switch (stage) {
    case ChildStage::kFds:
      return "arrange fds";
    case ChildStage::kWaitGo:
      return "wait for the parent";
    case ChildStage::kGroups:
      return "clear supplementary groups";
    case ChildStage::kMount:
      return "mount";
    case ChildStage::kHostname:
      return "sethostname";
    case ChildStage::kLoopback:
      return "bring up lo";
    case ChildStage::kTmpFd:
      return "open /tmp";
    case ChildStage::kIds:
      return "set uid/gid";
    case ChildStage::kCapabilities:
      return "drop capabilities";
    case ChildStage::kSeccomp:
      return "seccomp";
    case ChildStage::kExecInit:
      return "execve cordon-ns-init";
    case ChildStage::kLimitGroups:
      return "join the limit groups";
  }
  return "child set-up";
}

int sandbox_child_main(void* arg) {
  auto* p = static_cast<ChildPlan*>(arg);

  // The parent blocked every signal across clone; reset every disposition before any can
  // be delivered, so none of the parent's handlers ever runs here.
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < _NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
  }
  // Die with the thread that started us (it owns the run). If it is already gone, the go
  // pipe's write end is closed and the read below sees EOF.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);

  // Into the cgroup v1 limit groups first, before we allocate or start anything: a thread
  // writing "0" to `tasks` moves itself without the kernel's global threadgroup lock (see
  // LimitGroup::self_join_fds). We are single-threaded, so the thread is the process. A
  // failure is reported after "go", as the parent expects nothing from us before.
  int join_error = 0;
  for (std::size_t i = 0; i < p->join_fd_count && join_error == 0; ++i) {
    const ssize_t written = ::write(p->join_fds[i], "0", 1);
    if (written != 1) join_error = written < 0 ? errno : EIO;
  }

  // Move our fds to fixed slots (via a high range, so no source is clobbered), then
  // close everything else inherited from the parent.
  const int sources[kSlotCount] = {p->report_fd, p->channel_fd, p->init_exe_fd, p->go_fd};
  int high[kSlotCount];
  for (int i = 0; i < kSlotCount; ++i) {
    high[i] = ::fcntl(sources[i], F_DUPFD_CLOEXEC, static_cast<int>(kFirstFreeSlot));
    if (high[i] < 0) fail(p->channel_fd, ChildStage::kFds, errno);
  }
  for (int i = 0; i < kSlotCount; ++i) {
    if (::dup3(high[i], kReportSlot + i, O_CLOEXEC) < 0) fail(high[1], ChildStage::kFds, errno);
  }
  if (::close_range(kFirstFreeSlot, ~0U, 0) != 0) fail(kChannelSlot, ChildStage::kFds, errno);

  // Wait until the parent has written our id maps and placed us in the limit groups.
  char go = 0;
  ssize_t n = 0;
  do {
    n = ::read(kGoSlot, &go, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1) ::_exit(125);  // the parent gave up or died: nothing to report to
  ::close(kGoSlot);
  if (join_error != 0) fail(kChannelSlot, ChildStage::kLimitGroups, join_error);
  // From here our memory (a copy of the parent's) must not be readable by the code,
  // which will run as the same uid: not dumpable, so no /proc/1/mem, environ or fd.
  ::prctl(PR_SET_DUMPABLE, 0);

  // Root's maps allow setgroups: drop every supplementary group of the caller.
  if (p->clear_groups && ::syscall(SYS_setgroups, 0, nullptr) != 0) {
    fail(kChannelSlot, ChildStage::kGroups, errno);
  }
  // Become the sandbox user now, not only in C: files this process creates (the root
  // tmpfs's tree, input files) need an fsuid mapped in our user namespace, and a root
  // caller's kuid 0 is not (EOVERFLOW). The capabilities of our own user namespace stay:
  // the setuid rule that clears them concerns the namespace's uid 0, which is unmapped.
  if (const int err = set_ids(p->uid, p->gid); err != 0) fail(kChannelSlot, ChildStage::kIds, err);
  // A change of euid clears the parent-death signal: set it again, then make sure the
  // parent did not die in between (its end of the channel would be closed).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  {
    struct pollfd pfd{kChannelSlot, 0, 0};
    if (::poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLERR)) != 0) ::_exit(125);
  }

  // Modes in the plan are exact.
  ::umask(0);
  // Every bind source is opened before the first mount step: the new root is assembled on
  // a tmpfs over kStaging (/tmp), which hides whatever lies below the host's /tmp, so a
  // source there (an environment tree, a build tree under /tmp), or one whose path leads
  // there through a symlink, would otherwise be gone by the time it is bound. The bind then
  // goes through /proc/self/fd/N, which names the opened directory whatever now covers its
  // path. The fds are CLOEXEC and closed before the exec of init anyway.
  PreopenedSources preopened;
  if (const int err = preopened.open_sources(p->mounts, p->mount_count); err != 0) {
    fail(kChannelSlot, ChildStage::kMount, err, preopened.failed_step());
  }
  for (std::size_t i = 0; i < p->mount_count; ++i) {
    if (preopened.skip(i)) continue;  // an optional bind whose source is missing
    if (const int err = apply_mount(preopened.step(p->mounts, i)); err != 0) {
      fail(kChannelSlot, ChildStage::kMount, err, static_cast<int>(i));
    }
  }
  if (::sethostname(p->hostname, p->hostname_len) != 0) {
    fail(kChannelSlot, ChildStage::kHostname, errno);
  }
  if (p->loopback_up) {
    if (const int err = bring_loopback_up(); err != 0)
      fail(kChannelSlot, ChildStage::kLoopback, err);
  }
  if (p->send_tmp_fd) {
    // The parent collects artifacts through this after the namespace is gone: an open fd
    // keeps the (detached) tmpfs alive.
    const int tmp = ::open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (tmp < 0) fail(kChannelSlot, ChildStage::kTmpFd, errno);
    if (const int err = send_fd(kChannelSlot, tmp); err != 0) {
      fail(kChannelSlot, ChildStage::kTmpFd, err);
    }
    ::close(tmp);
  }

  // Nothing started from here on may hold a capability: the init (and the code after it)
  // runs as the sandbox user, whose exec clears the permitted and effective sets, but the
  // bounding and inheritable sets survive exec and only we can still empty them. The
  // test-only keep mode raises the ambient set instead, so the code keeps them.
  const int cap_err = p->drop_capabilities ? drop_capabilities() : keep_capabilities();
  if (cap_err != 0) fail(kChannelSlot, ChildStage::kCapabilities, cap_err);

  // Become cordon-ns-init: a fresh image (nothing of the parent's memory), an empty
  // environment, /dev/null as stdio, the report pipe at 3 and the channel at 4 (its
  // control socket), nothing else.
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) fail(kChannelSlot, ChildStage::kExecInit, errno);
  for (int fd = 0; fd <= 2; ++fd) {
    if (::dup2(null, fd) < 0) fail(kChannelSlot, ChildStage::kExecInit, errno);
  }
  ::close(null);
  if (::fcntl(kReportSlot, F_SETFD, 0) != 0 || ::fcntl(kChannelSlot, F_SETFD, 0) != 0) {
    fail(kChannelSlot, ChildStage::kExecInit, errno);
  }
  if (::close_range(kGoSlot, ~0U, 0) != 0) fail(kChannelSlot, ChildStage::kExecInit, errno);
  // Last: no_new_privs and the filter (which allows execveat and everything the init
  // does). From here every process of the sandbox runs under them.
  if (p->seccomp_filter != nullptr) {
    if (const int err = policy::install_seccomp_filter(p->seccomp_filter, p->seccomp_count);
        err != 0) {
      fail(kChannelSlot, ChildStage::kSeccomp, err);
    }
  } else if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    fail(kChannelSlot, ChildStage::kSeccomp, errno);
  }
  ::syscall(SYS_execveat, kInitExeSlot, "", p->init_argv, p->init_envp, AT_EMPTY_PATH);
  fail(kChannelSlot, ChildStage::kExecInit, errno);
}

long clone_setup_process(void* stack_top, unsigned long flags, ChildPlan* plan, int* pidfd) {
  const proc::KernelSigset all = proc::KernelSigset::all();
  proc::KernelSigset old{};
  proc::raw_sigprocmask(SIG_SETMASK, &all, &old);
  // No CLONE_VM: see child_setup.h. CLONE_PIDFD: a pid-reuse-proof handle, atomically.
  const long pid = ::clone(sandbox_child_main, stack_top,
                           static_cast<int>(flags | CLONE_PIDFD | SIGCHLD), plan, pidfd);
  const int clone_errno = errno;
  proc::raw_sigprocmask(SIG_SETMASK, &old, nullptr);
  errno = clone_errno;
  return pid;
}

}  // namespace cordon::ns
