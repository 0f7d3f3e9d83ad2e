// cordon-ns-spawner: clones the set-up processes of namespace sandboxes for a long-lived
// cordon (setup_spawner.h says why and when). Static and single-threaded; its whole state
// is one request at a time. Protocol: spawner_protocol.h.
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string_view>

#include "child_plan_wire.h"
#include "child_setup.h"
#include "cordon/proc/fd_passing.h"
#include "spawner_protocol.h"

namespace cordon::ns {
namespace {

// The set-up process's stack: each clone gets a copy of this process's memory, so one
// mapping serves them all.
void* g_stack = nullptr;

// Clones the set-up process of the plan in `fds[0]`; its pid (or -1) and pidfd.
int spawn(const SpawnRequest& req, const int* fds, int count, long* pid, int* pidfd) {
  if (req.magic != kSpawnRequestMagic || count < kSpawnFixedFds) return EPROTO;
  struct stat st{};
  if (::fstat(fds[0], &st) != 0) return errno;
  if (req.plan_size == 0 || static_cast<std::uint64_t>(st.st_size) != req.plan_size) return EPROTO;
  void* map = ::mmap(nullptr, req.plan_size, PROT_READ, MAP_PRIVATE, fds[0], 0);
  if (map == MAP_FAILED) return errno;
  DecodedChildPlan d;
  int err = 0;
  if (decode_child_plan({static_cast<const char*>(map), req.plan_size}, d) != nullptr ||
      count != kSpawnFixedFds + static_cast<int>(d.plan.join_fd_count)) {
    err = EPROTO;
  } else {
    d.plan.go_fd = fds[1];
    d.plan.channel_fd = fds[2];
    d.plan.report_fd = fds[3];
    d.plan.init_exe_fd = fds[4];
    for (std::size_t i = 0; i < d.plan.join_fd_count; ++i) d.plan.join_fds[i] = fds[5 + i];
    // CLONE_PARENT: the set-up process is the child of our parent (cordon), which waits
    // for it through the pidfd and whose thread its parent-death signal follows; we hold
    // nothing of it after this.
    *pid = clone_setup_process(static_cast<char*>(g_stack) + kSetupStackBytes,
                               d.clone_flags | CLONE_PARENT, &d.plan, pidfd);
    err = *pid < 0 ? errno : 0;
  }
  ::munmap(map, req.plan_size);
  return err;
}

}  // namespace
}  // namespace cordon::ns

int main() {
  using namespace cordon::ns;
  // Die with the cordon thread that started us (SetupSpawner's keeper), as the set-up
  // processes do; if it is gone already, the socket's EOF below ends us.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Hold no directory of the host busy; the set-up process builds its root from "/".
  if (::chdir("/") != 0) return 1;
  g_stack = ::mmap(nullptr, kSetupStackBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (g_stack == MAP_FAILED) return 1;
  for (;;) {
    SpawnRequest req;
    int fds[cordon::proc::kMaxPassedFds];
    int count = 0;
    const ssize_t n = cordon::proc::receive_with_fds(kSpawnerSocketFd, &req, sizeof(req), fds,
                                                     cordon::proc::kMaxPassedFds, &count);
    if (n <= 0) return n == 0 ? 0 : 1;  // cordon closed its end: done
    SpawnReply reply;
    long pid = -1;
    int pidfd = -1;
    reply.error =
        n == static_cast<ssize_t>(sizeof(req)) ? spawn(req, fds, count, &pid, &pidfd) : EPROTO;
    reply.pid = pid;
    // Ours are copies: the set-up process has its own, cordon keeps the originals.
    for (int i = 0; i < count; ++i) ::close(fds[i]);
    const int sent = cordon::proc::send_with_fds(kSpawnerSocketFd, &reply, sizeof(reply), &pidfd,
                                                 pidfd >= 0 ? 1 : 0);
    if (pidfd >= 0) ::close(pidfd);
    if (sent != 0) return 1;
  }
}
