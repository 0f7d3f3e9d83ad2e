// A TCP server on a loopback address of this machine, for the network allow-list's tests
// (issue #16): nothing they do leaves the machine. Each connection is handed to `handler` on
// its own thread; the destructor stops accepting and joins them.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace cordon::testing {

class LoopbackServer {
 public:
  explicit LoopbackServer(std::function<void(int)> handler, const char* address = "127.0.0.1")
      : handler_(std::move(handler)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    EXPECT_EQ(::inet_pton(AF_INET, address, &addr.sin_addr), 1) << address;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << address;
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    EXPECT_EQ(::listen(fd_, 64), 0);
    acceptor_ = std::thread([this] {
      for (;;) {
        const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;
        ++accepted_;
        workers_.emplace_back([this, c] {
          handler_(c);
          ::close(c);
        });
      }
    });
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;
  ~LoopbackServer() {
    ::shutdown(fd_, SHUT_RDWR);
    acceptor_.join();
    for (auto& w : workers_) w.join();
    ::close(fd_);
  }
  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] int accepted() const { return accepted_.load(); }

 private:
  std::function<void(int)> handler_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<int> accepted_{0};
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

// Reads up to and including the blank line that ends an HTTP head.
inline std::string read_http_head(int fd) {
  std::string out;
  char c;
  while (out.find("\r\n\r\n") == std::string::npos && ::read(fd, &c, 1) == 1) out += c;
  return out;
}

// A server on the host's 127.0.0.2 (a sandbox's loopback is its own, and 127.0.0.1 is in
// NO_PROXY) answering every request "from host": what the network allow-list's tests reach
// through the proxy, allowed as an address ("127.0.0.2:PORT"), so no name is resolved and
// nothing leaves the machine.
class FromHostServer {
 public:
  FromHostServer()
      : server_(
            [](int c) {
              (void)read_http_head(c);
              const std::string reply = "HTTP/1.0 200 OK\r\nContent-Length: 9\r\n\r\nfrom host";
              (void)::write(c, reply.data(), reply.size());
            },
            "127.0.0.2") {}
  [[nodiscard]] std::uint16_t port() const { return server_.port(); }
  [[nodiscard]] std::string target() const { return "127.0.0.2:" + std::to_string(port()); }
  [[nodiscard]] int accepted() const { return server_.accepted(); }

 private:
  LoopbackServer server_;
};

}  // namespace cordon::testing
