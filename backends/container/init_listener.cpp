#include "init_listener.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>

#include "cordon/scope_exit.h"

namespace cordon::oci {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

Result<UniqueFd> listen_for_init(const fs::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string& p = path.native();
  if (p.size() >= sizeof(addr.sun_path)) {
    return fail(ErrorCode::kSystem, "control socket path too long: " + p);
  }
  std::memcpy(addr.sun_path, p.data(), p.size());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return fail_errno("socket for the container's init");
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return fail_errno("bind " + p);
  }
  // connect() needs write permission on the socket file; bind() applied the umask.
  if (::chmod(p.c_str(), 0666) != 0) return fail_errno("chmod " + p);
  if (::listen(fd.get(), /*backlog=*/1) != 0) return fail_errno("listen on " + p);
  return fd;
}

Result<UniqueFd> accept_init(UniqueFd listener, const fs::path& path, Clock::time_point until,
                             int runner, const std::function<bool(pid_t)>& is_container_process) {
  ScopeExit gone([&] { ::unlink(path.c_str()); });
  std::string refused;  // the last peer refused, for the timeout's message
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now()).count();
    if (left <= 0) {
      return fail(ErrorCode::kTimeout, "the container's init did not connect in time" + refused);
    }
    std::array<pollfd, 2> pfd = {pollfd{listener.get(), POLLIN, 0}, pollfd{runner, POLLIN, 0}};
    const int n = ::poll(pfd.data(), pfd.size(), static_cast<int>(left));
    if (n < 0 && errno != EINTR) return fail_errno("poll for the container's init");
    if (n <= 0) continue;
    if ((pfd[0].revents & POLLIN) == 0 && (pfd[1].revents & POLLIN) != 0) {
      return fail(ErrorCode::kSystem,
                  "the runtime ended before the container's init connected" + refused);
    }
    if ((pfd[0].revents & POLLIN) == 0) continue;
    UniqueFd conn(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn) {
      if (errno != EINTR && errno != ECONNABORTED) {
        return fail_errno("accept the container's init");
      }
      continue;
    }
    // The credentials are the peer's at connect(); its pid is translated into our PID
    // namespace, 0 when it has none here (then it is no process of a container we started).
    ucred peer{};
    socklen_t len = sizeof(peer);
    if (::getsockopt(conn.get(), SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
      return fail_errno("SO_PEERCRED of the container's init");
    }
    if (peer.pid > 0 && is_container_process(peer.pid)) return conn;
    refused = " (refused a connection from pid " + std::to_string(peer.pid) + ", uid " +
              std::to_string(peer.uid) + ": no process of the container)";
  }
}

}  // namespace cordon::oci
