// The network allow-list's cost (issue #16), through the production proxy (core/net's
// EgressProxy, as a run with --allow-net starts it), against a direct loopback connection to
// the same server, measured in one run:
//
//   per connection: connect to the proxy's unix socket, CONNECT 127.0.0.1:PORT, one byte
//                   each way, close  vs  a TCP connect to 127.0.0.1:PORT, one byte, close
//   throughput:     16 MiB each way through a CONNECT tunnel  vs  the same directly
//
// Reported only (no target in the issue). Inside a sandbox the relay (cordon-init's, a
// poll-driven copier on the sandbox's loopback) adds one more hop on the same machine; it
// is not in these numbers.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cordon/net/egress_proxy.h"
#include "cordon/temp_dir.h"
#include "harness.h"

namespace {

constexpr std::size_t kBulk = 16U << 20;

// An echo server on 127.0.0.1, a thread per connection.
class EchoServer {
 public:
  EchoServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(fd_, 256) != 0) {
      std::perror("bench: echo server");
      std::exit(2);
    }
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] {
      for (;;) {
        const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;
        std::thread([c] {
          std::vector<char> buf(1 << 16);
          for (ssize_t n; (n = ::recv(c, buf.data(), buf.size(), 0)) > 0;) {
            for (ssize_t off = 0; off < n;) {
              const ssize_t w =
                  ::send(c, buf.data() + off, static_cast<std::size_t>(n - off), MSG_NOSIGNAL);
              if (w <= 0) break;
              off += w;
            }
          }
          ::close(c);
        }).detach();
      }
    });
  }
  ~EchoServer() {
    ::shutdown(fd_, SHUT_RDWR);
    acceptor_.join();
    ::close(fd_);
  }
  [[nodiscard]] std::uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread acceptor_;
};

void die(const char* what) {
  std::perror(what);
  std::exit(2);
}

int tcp_connect(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) die("connect");
  return fd;
}

// A tunnel through the proxy: the fd after its "200 Connection established".
int proxy_connect(const std::string& socket_path, std::uint16_t port) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof(addr.sun_path) - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) die("connect proxy");
  const std::string request = "CONNECT 127.0.0.1:" + std::to_string(port) + " HTTP/1.1\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) die("send");
  std::string head;
  char c;
  while (head.find("\r\n\r\n") == std::string::npos && ::recv(fd, &c, 1, 0) == 1) head += c;
  if (head.rfind("HTTP/1.1 200", 0) != 0) {
    std::fprintf(stderr, "bench: the proxy answered %s\n", head.c_str());
    std::exit(2);
  }
  return fd;
}

void ping(int fd) {
  char c = 'x';
  if (::send(fd, &c, 1, MSG_NOSIGNAL) != 1 || ::recv(fd, &c, 1, MSG_WAITALL) != 1) die("ping");
  ::close(fd);
}

// kBulk bytes out (from a second thread) and the same back.
void bulk(int fd) {
  static const std::string chunk(1 << 16, 'b');
  std::thread writer([fd] {
    for (std::size_t sent = 0; sent < kBulk; sent += chunk.size()) {
      if (::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) <= 0) die("bulk send");
    }
    ::shutdown(fd, SHUT_WR);
  });
  std::vector<char> buf(1 << 16);
  std::size_t got = 0;
  for (ssize_t n; (n = ::recv(fd, buf.data(), buf.size(), 0)) > 0;)
    got += static_cast<std::size_t>(n);
  writer.join();
  ::close(fd);
  if (got != kBulk) {
    std::fprintf(stderr, "bench: %zu of %zu bytes came back\n", got, kBulk);
    std::exit(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = cordon::bench::arg_int(argc, argv, "--rounds", 300);
  const int warmup = cordon::bench::arg_int(argc, argv, "--warmup", 20);
  EchoServer server;
  auto dir = cordon::TempDir::create("cordon-bench-proxy-");
  if (!dir) {
    std::fprintf(stderr, "bench: %s\n", dir.error().describe().c_str());
    return 2;
  }
  auto policy = cordon::net::NetPolicy::make({"127.0.0.1"}, {});
  auto proxy = cordon::net::EgressProxy::start(
      (dir->path() / "proxy.sock").string(), std::move(*policy),
      std::make_shared<cordon::net::StaticResolver>(
          std::map<std::string, std::vector<cordon::net::IpAddress>, std::less<>>{}),
      {});
  if (!proxy) {
    std::fprintf(stderr, "bench: %s\n", proxy.error().describe().c_str());
    return 2;
  }
  const std::string path = (*proxy)->socket_path();
  const std::uint16_t port = server.port();

  const auto connection = cordon::bench::compare(
      "per connection: through the egress proxy vs direct", "proxy CONNECT + 1 byte each way",
      [&] { ping(proxy_connect(path, port)); }, "TCP connect + 1 byte each way",
      [&] { ping(tcp_connect(port)); }, rounds, warmup, /*target=*/0);
  cordon::bench::print(connection);
  cordon::bench::print_json(connection);

  const int bulk_rounds = std::max(5, rounds / 20);
  const auto throughput = cordon::bench::compare(
      "throughput: 16 MiB each way through the egress proxy vs direct",
      "proxy tunnel, 16 MiB each way", [&] { bulk(proxy_connect(path, port)); },
      "direct TCP, 16 MiB each way", [&] { bulk(tcp_connect(port)); }, bulk_rounds,
      /*warmup=*/2, /*target=*/0);
  cordon::bench::print(throughput);
  cordon::bench::print_json(throughput);
  std::printf("proxy throughput: %.0f MiB/s each way (direct %.0f MiB/s)\n",
              16.0 / (throughput.candidate.median() / 1000.0),
              16.0 / (throughput.baseline.median() / 1000.0));
  (*proxy)->stop();
  return 0;
}
