// The network relay of cordon-init (issue #16): inside a sandbox whose network namespace has
// loopback only, it listens on 127.0.0.1:PORT and carries each connection made there to the
// unix socket of cordon's egress proxy, bound into the sandbox at a path. The code reaches the
// proxy as HTTP_PROXY=http://127.0.0.1:PORT; the proxy, in the host, decides what it may
// reach. The relay decides nothing: it copies bytes, so the code gains no path out that the
// proxy's socket does not already give it.
//
// It is a child of the init (forked before the code, so it is no descendant of the code and
// outside the code's session), dies with the init (PR_SET_PDEATHSIG) and is killed with every
// other process of the run when the code's main process ends (init_end.h). Single-threaded
// and poll-driven; its buffers are allocated per connection, charged to the sandbox like
// everything else in it.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace cordon::init {

// At most this many connections relayed at once; more wait in the listen backlog. The proxy
// bounds connections per run itself; this only bounds the relay's memory.
inline constexpr int kRelayMaxConnections = 64;

// Binds and listens on 127.0.0.1:`port` (0: any free port) in this network namespace.
// The listening fd, or -errno; `*bound` gets the port (may be null).
int relay_listen(std::uint16_t port, std::uint16_t* bound);

// Runs the relay on `listen_fd` to the unix stream socket at `unix_path` until killed. Closes
// every other fd first but `keep_fd` (-1: none): a directory the path may go through as
// /proc/self/fd/N/NAME, so a socket made after the sandbox was built (a pooled one) is
// reachable without a mount. Never returns.
[[noreturn]] void relay_main(int listen_fd, const char* unix_path, int keep_fd = -1);

// relay_listen() in this process, then forks relay_main(): a bind failure is the caller's to
// report before anything runs. The relay's pid, or -errno.
pid_t start_relay(std::uint16_t port, const char* unix_path, int keep_fd = -1);

}  // namespace cordon::init
