#include "audit/host_probes.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <utility>

#include "cordon/text.h"

namespace cordon::audit {
namespace {

namespace fs = std::filesystem;

Result<UniqueFd> make_socket(int domain, int type) {
  UniqueFd fd(::socket(domain, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return fail_errno("socket");
  return fd;
}

Result<int> bound_port(const UniqueFd& fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return fail_errno("getsockname");
  }
  return ntohs(addr.sin_port);
}

Result<UniqueFd> bind_loopback(int type) {
  Result<UniqueFd> fd = make_socket(AF_INET, type);
  if (!fd) return fd;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd->get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return fail_errno("bind 127.0.0.1");
  }
  return fd;
}

}  // namespace

std::string read_small_file(const fs::path& path) {
  // read(2), not a stream: a /proc file of a process that exits mid-read fails with ESRCH,
  // which libstdc++'s stream iterators turn into an exception.
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  std::string out;
  if (!fd) return out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

namespace {

bool zombie_or_gone(const std::string& pid_dir) {
  const std::string stat = read_small_file(pid_dir + "/stat");
  const auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z';
}

}  // namespace

Result<Listener> Listener::tcp_loopback() {
  Result<UniqueFd> fd = bind_loopback(SOCK_STREAM);
  if (!fd) return std::unexpected(fd.error());
  if (::listen(fd->get(), 16) != 0) return fail_errno("listen");
  const Result<int> port = bound_port(*fd);
  if (!port) return std::unexpected(port.error());
  return Listener(std::move(*fd), /*datagram=*/false, *port);
}

Result<Listener> Listener::udp_loopback() {
  Result<UniqueFd> fd = bind_loopback(SOCK_DGRAM);
  if (!fd) return std::unexpected(fd.error());
  const Result<int> port = bound_port(*fd);
  if (!port) return std::unexpected(port.error());
  return Listener(std::move(*fd), /*datagram=*/true, *port);
}

Result<Listener> Listener::abstract_unix(const std::string& name) {
  Result<UniqueFd> fd = make_socket(AF_UNIX, SOCK_STREAM);
  if (!fd) return std::unexpected(fd.error());
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (name.size() + 1 > sizeof(addr.sun_path)) {
    return fail(ErrorCode::kInvalidArgument, "abstract socket name too long");
  }
  // sun_path[0] stays NUL: the abstract namespace, bound to the network namespace.
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::bind(fd->get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    return fail_errno("bind abstract unix socket");
  }
  if (::listen(fd->get(), 16) != 0) return fail_errno("listen");
  return Listener(std::move(*fd), /*datagram=*/false, 0);
}

Result<Listener> Listener::path_unix(const fs::path& path) {
  Result<UniqueFd> fd = make_socket(AF_UNIX, SOCK_STREAM);
  if (!fd) return std::unexpected(fd.error());
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string p = path.string();
  if (p.size() + 1 > sizeof(addr.sun_path)) {
    return fail(ErrorCode::kInvalidArgument, "unix socket path too long: " + p);
  }
  std::memcpy(addr.sun_path, p.data(), p.size());
  if (::bind(fd->get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return fail_errno("bind " + p);
  }
  // Any uid may connect if it can see the path: what stops a sandbox must be that it
  // cannot see it, not a permission bit.
  if (::chmod(p.c_str(), 0777) != 0) return fail_errno("chmod " + p);
  if (::listen(fd->get(), 16) != 0) return fail_errno("listen");
  return Listener(std::move(*fd), /*datagram=*/false, 0);
}

bool Listener::reached() {
  bool any = false;
  for (;;) {
    if (datagram_) {
      char buf[512];
      if (::recv(fd_.get(), buf, sizeof(buf), MSG_DONTWAIT) < 0) break;
    } else {
      const UniqueFd conn(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!conn) break;
    }
    any = true;
  }
  return any;
}

std::vector<pid_t> host_processes_with(const std::string& needle) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(name));
    if (pid == ::getpid()) continue;
    const std::string dir = "/proc/" + name;
    if (read_small_file(dir + "/cmdline").find(needle) == std::string::npos) continue;
    if (zombie_or_gone(dir)) continue;
    out.push_back(pid);
  }
  return out;
}

int kill_host_processes_with(const std::string& needle) {
  int killed = 0;
  for (const pid_t pid : host_processes_with(needle)) {
    if (::kill(pid, SIGKILL) == 0) ++killed;
  }
  return killed;
}

Result<MarkedProcess> MarkedProcess::start(const std::string& argv0,
                                           const std::vector<std::string>& env) {
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  char* argv[] = {const_cast<char*>(argv0.c_str()), const_cast<char*>("600"), nullptr};
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return fail_errno("fork");
  if (pid == 0) {
    // Only async-signal-safe calls here. Dies with the audit even if the audit is killed:
    // a planted canary never outlives it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::execve("/bin/sleep", argv, envp.data());
    ::_exit(127);
  }
  return MarkedProcess(pid);
}

MarkedProcess::MarkedProcess(MarkedProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), reaped_(other.reaped_) {}

MarkedProcess& MarkedProcess::operator=(MarkedProcess&& other) noexcept {
  if (this != &other) {
    stop();
    pid_ = std::exchange(other.pid_, -1);
    reaped_ = other.reaped_;
  }
  return *this;
}

MarkedProcess::~MarkedProcess() { stop(); }

void MarkedProcess::stop() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  reaped_ = false;
}

bool MarkedProcess::alive() {
  if (pid_ <= 0 || reaped_) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) reaped_ = true;
  return r == 0;
}

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  return hex_encode(raw);
}

}  // namespace cordon::audit
