#include "cordon/net/egress_proxy.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>

#include "cordon/net/proxy_request.h"

namespace cordon::net {

namespace {

constexpr std::size_t kTunnelBuffer = 16 * 1024;

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 60'000));
}

// Waits for `events` on `fd` or for the stop eventfd; false on stop, timeout or error.
bool wait_for(int fd, short events, int stop_fd, Clock::time_point deadline) {
  for (;;) {
    pollfd fds[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
    const int timeout = remaining_ms(deadline);
    const int n = ::poll(fds, 2, timeout);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || (fds[1].revents & POLLIN) != 0) return false;
    return true;
  }
}

bool send_all(int fd, std::string_view data, int stop_fd, Clock::time_point deadline) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd, POLLOUT, stop_fd, deadline)) return false;
      continue;
    }
    return false;
  }
  return true;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 431:
      return "Request Header Fields Too Large";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

// The answer to a request the proxy does not carry: the reason in a header a program can read
// and in the body a person reads.
std::string refusal(int status, const std::string& why) {
  std::string header_value = why;
  std::replace_if(
      header_value.begin(), header_value.end(), [](char c) { return c == '\r' || c == '\n'; }, ' ');
  const std::string body = "cordon: " + why + "\n";
  return "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nX-Cordon-Denied: " +
         header_value + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// A non-blocking connection to address:port within the deadline; the fd or -errno.
int connect_to(const IpAddress& target, std::uint16_t port, int stop_fd,
               Clock::time_point deadline) {
  // ::ffff:a.b.c.d is a.b.c.d to the kernel: connected as IPv4, so it works on a host
  // without IPv6 too (NAT64's 64:ff9b::/96 is a real IPv6 route and stays one).
  static const IpAddress kMapped = *IpAddress::parse("::ffff:0:0");
  const IpAddress address =
      target.within(kMapped, 96) ? target.embedded_v4().value_or(target) : target;
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (address.v6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    std::memcpy(&in6->sin6_addr, address.bytes.data(), 16);
    length = sizeof(sockaddr_in6);
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    std::memcpy(&in->sin_addr, address.bytes.data(), 4);
    length = sizeof(sockaddr_in);
  }
  UniqueFd fd(::socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return -errno;
  // The proxy forwards what it is given as it comes: small writes (a TLS handshake, an
  // interactive protocol) must not wait for Nagle's algorithm on the way out.
  const int one = 1;
  (void)::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&storage), length) == 0) {
    return fd.release();
  }
  if (errno != EINPROGRESS) return -errno;
  if (!wait_for(fd.get(), POLLOUT, stop_fd, deadline)) return -ETIMEDOUT;
  int error = 0;
  socklen_t size = sizeof(error);
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size) != 0) return -errno;
  if (error != 0) return -error;
  return fd.release();
}

}  // namespace

Result<std::unique_ptr<EgressProxy>> EgressProxy::start(std::string socket_path, NetPolicy policy,
                                                        std::shared_ptr<Resolver> resolver,
                                                        EgressLimits limits) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    return fail(ErrorCode::kInvalidArgument, "egress proxy socket path too long: " + socket_path);
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listener) return fail_errno("egress proxy: socket");
  if (::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return fail_errno("egress proxy: bind " + socket_path);
  }
  // The sandbox's uid (65534, or a mapped one) must be able to connect; who may reach the
  // socket at all is decided by its directory (0711, made per run) and the sandbox's mounts.
  if (::chmod(socket_path.c_str(), 0666) != 0 || ::listen(listener.get(), 128) != 0) {
    const int err = errno;
    ::unlink(socket_path.c_str());
    return fail_errno("egress proxy: listen on " + socket_path, err);
  }
  UniqueFd stop_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stop_fd) {
    const int err = errno;
    ::unlink(socket_path.c_str());
    return fail_errno("egress proxy: eventfd", err);
  }
  std::unique_ptr<EgressProxy> proxy(new EgressProxy(std::move(socket_path), std::move(policy),
                                                     std::move(resolver), limits,
                                                     std::move(listener), std::move(stop_fd)));
  proxy->acceptor_ = std::thread([raw = proxy.get()] { raw->accept_loop(); });
  return proxy;
}

EgressProxy::EgressProxy(std::string socket_path, NetPolicy policy,
                         std::shared_ptr<Resolver> resolver, EgressLimits limits, UniqueFd listener,
                         UniqueFd stop_fd)
    : socket_path_(std::move(socket_path)),
      policy_(std::move(policy)),
      resolver_(std::move(resolver)),
      limits_(limits),
      listener_(std::move(listener)),
      stop_fd_(std::move(stop_fd)) {}

EgressProxy::~EgressProxy() { stop(); }

void EgressProxy::stop() {
  {
    const std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
  }
  const std::uint64_t one = 1;
  (void)!::write(stop_fd_.get(), &one, sizeof(one));
  if (acceptor_.joinable()) acceptor_.join();
  std::list<Worker> workers;
  {
    const std::lock_guard lock(mutex_);
    workers.swap(workers_);
  }
  for (Worker& worker : workers) worker.thread.join();
  listener_.reset();
  ::unlink(socket_path_.c_str());
}

std::vector<NetConnection> EgressProxy::events() const {
  const std::lock_guard lock(mutex_);
  return events_;
}

std::size_t EgressProxy::dropped_events() const {
  const std::lock_guard lock(mutex_);
  return dropped_;
}

std::optional<std::string> EgressProxy::limit_reached() const {
  const std::lock_guard lock(mutex_);
  return limit_;
}

std::size_t EgressProxy::add_event(NetConnection event) {
  const std::lock_guard lock(mutex_);
  if (events_.size() >= kMaxNetConnections) {
    ++dropped_;
    return SIZE_MAX;
  }
  events_.push_back(std::move(event));
  return events_.size() - 1;
}

void EgressProxy::note_limit(const char* which) {
  const std::lock_guard lock(mutex_);
  if (!limit_) limit_ = which;
}

void EgressProxy::refuse(int client, int status, const std::string& why, NetConnection event) {
  event.allowed = false;
  event.why = why;
  add_event(std::move(event));
  (void)send_all(client, refusal(status, why), stop_fd_.get(), Clock::now() + limits_.head_timeout);
}

void EgressProxy::accept_loop() {
  for (;;) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_fd_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if ((fds[1].revents & POLLIN) != 0) return;
    UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!client) continue;  // EAGAIN, ECONNABORTED, EMFILE: the next poll tries again
    const std::lock_guard lock(mutex_);
    // Join what finished, so a long run's connections do not pile up threads.
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (it->done->load()) {
        it->thread.join();
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
    if (active_.load() >= kMaxProxyConnectionsAtOnce) {
      const std::string answer = refusal(503, "more than 64 connections at once through the proxy");
      (void)::send(client.get(), answer.data(), answer.size(), MSG_NOSIGNAL);
      continue;
    }
    ++active_;
    auto done = std::make_shared<std::atomic<bool>>(false);
    const int fd = client.release();
    try {
      workers_.push_back(Worker{std::thread([this, done, fd] {
                                  serve(UniqueFd(fd));
                                  --active_;
                                  done->store(true);
                                }),
                                done});
    } catch (const std::system_error&) {
      // No thread to be had (the host's thread limit): this connection is answered, cordon
      // goes on.
      --active_;
      const std::string answer = refusal(503, "the proxy could not take the connection");
      (void)::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::close(fd);
    }
  }
}

void EgressProxy::serve(UniqueFd client) {
  const int stop = stop_fd_.get();
  const auto head_deadline = Clock::now() + limits_.head_timeout;
  std::string received;
  ProxyHead head;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::recv(client.get(), buffer, sizeof(buffer), 0);
    if (n > 0) {
      received.append(buffer, static_cast<std::size_t>(n));
      head = parse_proxy_head(received);
      if (head.state != ProxyHead::State::kNeedMore) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (wait_for(client.get(), POLLIN, stop, head_deadline)) continue;
      if (Clock::now() >= head_deadline && !received.empty()) {
        refuse(client.get(), 400, "the request head did not arrive within 10 s", {});
      }
      return;
    }
    return;  // closed before a request: not an attempt to reach anything
  }
  if (head.state == ProxyHead::State::kRefused) {
    refuse(client.get(), head.status, head.why, {});
    return;
  }
  const ProxyRequest& request = head.request;
  NetConnection event;
  event.method = request.method;
  event.host = request.host;
  event.port = request.port;
  const std::string target = format_endpoint(request.host, request.port);

  if (limits_.max_connections != 0 && ++requests_ > limits_.max_connections) {
    note_limit("connections");
    refuse(client.get(), 403,
           "the run's connection limit (" + std::to_string(limits_.max_connections) +
               ") is reached; " + target + " was not connected",
           std::move(event));
    return;
  }
  if (limits_.max_bytes != 0 && bytes_.load() >= limits_.max_bytes) {
    note_limit("bytes");
    refuse(client.get(), 403,
           "the run's network byte limit (" + std::to_string(limits_.max_bytes) +
               " bytes) is reached; " + target + " was not connected",
           std::move(event));
    return;
  }
  const Decision named = policy_.check_target(request.host, request.port);
  if (!named.allowed) {
    refuse(client.get(), 403, named.why, std::move(event));
    return;
  }
  std::vector<IpAddress> addresses;
  if (auto literal = IpAddress::parse(request.host)) {
    addresses.push_back(*literal);
  } else {
    // The stop eventfd ends the wait: a run's end never waits on DNS (issue #40, item 11).
    auto resolved = resolver_->resolve(request.host, stop);
    if (!resolved) {
      refuse(client.get(), 502, resolved.error().message, std::move(event));
      return;
    }
    addresses = std::move(*resolved);
  }
  const auto connect_deadline = Clock::now() + limits_.connect_timeout;
  UniqueFd upstream;
  std::optional<Decision> denial;
  std::string connect_error;
  for (const IpAddress& address : addresses) {
    const Decision decision = policy_.check_address(request.host, request.port, address);
    if (!decision.allowed) {
      if (!denial) denial = decision;
      continue;
    }
    const int fd = connect_to(address, request.port, stop, connect_deadline);
    if (fd >= 0) {
      upstream.reset(fd);
      event.address = address.to_string();
      event.why = decision.why;
      break;
    }
    connect_error =
        "could not connect to " + target + " (" + address.to_string() + "): " + std::strerror(-fd);
  }
  if (!upstream) {
    if (!connect_error.empty()) {
      refuse(client.get(), 502, connect_error, std::move(event));
    } else {
      refuse(client.get(), 403, denial ? denial->why : target + " has no address",
             std::move(event));
    }
    return;
  }
  event.allowed = true;
  const std::size_t index = add_event(std::move(event));
  const auto reply_deadline = Clock::now() + limits_.head_timeout;
  const std::string_view rest = std::string_view(received).substr(head.consumed);
  bool sent = true;
  if (request.connect) {
    sent =
        send_all(client.get(), "HTTP/1.1 200 Connection established\r\n\r\n", stop, reply_deadline);
  } else {
    sent = send_all(upstream.get(), request.upstream_head, stop, reply_deadline);
  }
  if (sent && !rest.empty()) sent = send_all(upstream.get(), rest, stop, reply_deadline);
  if (!sent) return;
  // What went to the target on the code's behalf: the request's head as sent (plain HTTP)
  // and what came after it.
  const std::uint64_t sent_bytes =
      (request.connect ? 0 : request.upstream_head.size()) + rest.size();
  if (index != SIZE_MAX) {
    const std::lock_guard lock(mutex_);
    events_[index].bytes_out += sent_bytes;
  }
  bytes_ += sent_bytes;
  tunnel(client.get(), upstream.get(), index);
}

void EgressProxy::tunnel(int client, int upstream, std::size_t index) {
  // One direction of the copy: bytes read from `from` wait in `buffer` until `to` takes them.
  struct Direction {
    int from;
    int to;
    std::string buffer;
    std::size_t offset = 0;
    bool eof = false;
    std::uint64_t moved = 0;
  };
  Direction out{client, upstream, {}, 0, false, 0};
  Direction in{upstream, client, {}, 0, false, 0};
  out.buffer.reserve(kTunnelBuffer);
  in.buffer.reserve(kTunnelBuffer);
  bool over_limit = false;
  auto pending = [](const Direction& d) { return d.buffer.size() - d.offset; };
  for (;;) {
    const bool out_done = out.eof && pending(out) == 0;
    const bool in_done = in.eof && pending(in) == 0;
    if (out_done && in_done) break;
    pollfd fds[3] = {{client, 0, 0}, {upstream, 0, 0}, {stop_fd_.get(), POLLIN, 0}};
    if (!out.eof && pending(out) == 0) fds[0].events |= POLLIN;
    if (pending(in) != 0) fds[0].events |= POLLOUT;
    if (!in.eof && pending(in) == 0) fds[1].events |= POLLIN;
    if (pending(out) != 0) fds[1].events |= POLLOUT;
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if ((fds[2].revents & POLLIN) != 0) break;
    bool failed = false;
    for (Direction* d : {&out, &in}) {
      const pollfd& from = d->from == client ? fds[0] : fds[1];
      const pollfd& to = d->to == client ? fds[0] : fds[1];
      if (!d->eof && pending(*d) == 0 && (from.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        d->buffer.resize(kTunnelBuffer);
        const ssize_t n = ::recv(d->from, d->buffer.data(), kTunnelBuffer, 0);
        if (n > 0) {
          d->buffer.resize(static_cast<std::size_t>(n));
          d->offset = 0;
        } else {
          d->buffer.clear();
          d->offset = 0;
          if (n == 0) {
            d->eof = true;
            ::shutdown(d->to, SHUT_WR);
          } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            failed = true;
          }
        }
      }
      if (pending(*d) != 0 && (to.revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
        const ssize_t n = ::send(d->to, d->buffer.data() + d->offset, pending(*d), MSG_NOSIGNAL);
        if (n > 0) {
          d->offset += static_cast<std::size_t>(n);
          d->moved += static_cast<std::uint64_t>(n);
          const std::uint64_t total = bytes_ += static_cast<std::uint64_t>(n);
          if (limits_.max_bytes != 0 && total > limits_.max_bytes) over_limit = true;
          if (pending(*d) == 0) {
            d->buffer.clear();
            d->offset = 0;
          }
        } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          failed = true;
        }
      }
    }
    if (failed || over_limit) break;
  }
  if (over_limit) note_limit("bytes");
  if (index == SIZE_MAX) return;
  const std::lock_guard lock(mutex_);
  NetConnection& event = events_[index];
  event.bytes_out += out.moved;
  event.bytes_in += in.moved;
  if (over_limit) {
    event.why += "; cut off: the run's network byte limit (" + std::to_string(limits_.max_bytes) +
                 " bytes) was reached";
  }
}

}  // namespace cordon::net
