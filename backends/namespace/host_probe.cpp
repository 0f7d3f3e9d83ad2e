// Finding cordon-ns-init and explaining why namespaces cannot be had on this host.
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "cordon/install_layout.h"
#include "namespace_backend.h"

namespace cordon::ns {
namespace fs = std::filesystem;
namespace {

std::optional<std::string> read_sysctl(const char* path) {
  std::ifstream in(path);
  std::string value;
  if (!in || !(in >> value)) return std::nullopt;
  return value;
}

int exit_at_once(void*) { return 0; }

}  // namespace

std::optional<fs::path> find_ns_init() { return find_libexec_helper("cordon-init"); }

std::string namespace_unavailable_reason(unsigned long clone_flags) {
  // One real attempt: a child in all the namespaces that exits at once (about 1 ms). No
  // CLONE_VM, so it shares nothing with us; it touches nothing.
  constexpr std::size_t kStack = 16 * 1024;
  void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return std::string("mmap: ") + std::strerror(errno);
  const long pid = ::clone(exit_at_once, static_cast<char*>(stack) + kStack,
                           static_cast<int>(clone_flags | SIGCHLD), nullptr);
  const int err = errno;
  if (pid > 0) {
    int status = 0;
    while (::waitpid(static_cast<pid_t>(pid), &status, __WALL) < 0 && errno == EINTR) {
    }
  }
  ::munmap(stack, kStack);
  if (pid > 0) return "";

  return "cannot create user/PID/mount/network namespaces (clone: " +
         std::string(std::strerror(err)) + ")" + namespace_refusal_hint(err);
}

std::string namespace_refusal_hint(int err) {
  std::string why;
  if (auto v = read_sysctl("/proc/sys/kernel/unprivileged_userns_clone"); v && *v == "0") {
    why +=
        "; unprivileged user namespaces are disabled: sysctl kernel.unprivileged_userns_clone=0"
        " (set it to 1, or run cordon as root)";
  }
  if (auto v = read_sysctl("/proc/sys/user/max_user_namespaces"); v && *v == "0") {
    why += "; sysctl user.max_user_namespaces=0 (set it above 0)";
  }
  if (auto v = read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
      v && *v == "1") {
    why +=
        "; AppArmor restricts unprivileged user namespaces: "
        "kernel.apparmor_restrict_unprivileged_userns=1 (set it to 0 or give cordon an "
        "AppArmor profile with 'userns,')";
  }
  if (err == EPERM && ::geteuid() == 0) {
    why +=
        "; root was refused: cordon itself may run in a container or under a seccomp "
        "filter that forbids namespaces";
  }
  if (err == ENOSPC) why += "; a namespace count limit (user.max_*_namespaces) is reached";
  return why;
}

std::string namespace_known_blocker() {
  // Only settings that refuse for certain; anything else is found out by the run's own
  // clone, which fails closed and explains itself with namespace_refusal_hint().
  if (auto v = read_sysctl("/proc/sys/user/max_user_namespaces"); v && *v == "0") {
    return "cannot create user namespaces: sysctl user.max_user_namespaces=0 (set it above 0)";
  }
  if (::geteuid() == 0) return "";
  if (auto v = read_sysctl("/proc/sys/kernel/unprivileged_userns_clone"); v && *v == "0") {
    return "unprivileged user namespaces are disabled: sysctl "
           "kernel.unprivileged_userns_clone=0 (set it to 1, or run cordon as root)";
  }
  return "";
}

}  // namespace cordon::ns
