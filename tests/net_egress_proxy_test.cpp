// The egress proxy end to end (issue #16), against servers on this machine only: a loopback
// listener the test owns, reached as a "domain" the test's resolver maps to 127.0.0.1 and an
// address rule allows explicitly. Nothing here sends a packet off the machine.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cordon/net/egress_proxy.h"
#include "loopback_server.h"
#include "proc_test_support.h"

namespace cordon::net {
namespace {

using namespace std::chrono_literals;

using testing::LoopbackServer;

std::string read_all(int fd) {
  std::string out;
  char buf[16384];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) {
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::string read_head(int fd) { return testing::read_http_head(fd); }

void echo(int fd) {
  char buf[16384];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) {
    for (ssize_t off = 0; off < n;) {
      const ssize_t w = ::send(fd, buf + off, static_cast<std::size_t>(n - off), MSG_NOSIGNAL);
      if (w <= 0) return;
      off += w;
    }
  }
}

int connect_unix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << path;
  return fd;
}

void send_text(int fd, const std::string& text) {
  ASSERT_EQ(::send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
}

IpAddress loopback() { return *IpAddress::parse("127.0.0.1"); }

struct Fixture {
  testing::ScratchDir dir;
  std::unique_ptr<EgressProxy> proxy;

  Fixture(const std::vector<std::string>& allow, const std::vector<std::string>& deny,
          EgressLimits limits = {}) {
    auto policy = NetPolicy::make(allow, deny);
    EXPECT_TRUE(policy.has_value()) << policy.error().describe();
    auto resolver =
        std::make_shared<StaticResolver>(std::map<std::string, std::vector<IpAddress>, std::less<>>{
            {"api.test", {loopback()}}, {"rebind.test", {loopback()}}});
    auto started = EgressProxy::start(dir.path + "/proxy.sock", std::move(*policy),
                                      std::move(resolver), limits);
    EXPECT_TRUE(started.has_value()) << started.error().describe();
    proxy = std::move(*started);
  }
  [[nodiscard]] int client() const { return connect_unix(proxy->socket_path()); }
};

std::string allow_api(std::uint16_t port) { return "api.test:" + std::to_string(port); }

TEST(EgressProxy, ConnectToAnAllowedNameTunnelsBothWaysAndCountsBytes) {
  LoopbackServer server(echo);
  Fixture f({allow_api(server.port()), "127.0.0.1"}, {});
  const int c = f.client();
  send_text(c, "CONNECT api.test:" + std::to_string(server.port()) + " HTTP/1.1\r\n\r\n");
  const std::string head = read_head(c);
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0U) << head;
  const std::string payload(1 << 20, 'x');  // 1 MiB through the tunnel and back
  std::thread writer([&] {
    send_text(c, payload);
    ::shutdown(c, SHUT_WR);
  });
  const std::string back = read_all(c);
  writer.join();
  ::close(c);
  EXPECT_EQ(back.size(), payload.size());
  EXPECT_EQ(back, payload);
  f.proxy->stop();
  const auto events = f.proxy->events();
  ASSERT_EQ(events.size(), 1U);
  EXPECT_TRUE(events[0].allowed) << events[0].why;
  EXPECT_EQ(events[0].method, "CONNECT");
  EXPECT_EQ(events[0].host, "api.test");
  EXPECT_EQ(events[0].port, server.port());
  EXPECT_EQ(events[0].address, "127.0.0.1");
  EXPECT_EQ(events[0].bytes_out, payload.size());
  EXPECT_EQ(events[0].bytes_in, payload.size());
  EXPECT_FALSE(f.proxy->limit_reached().has_value());
}

TEST(EgressProxy, PlainHttpReachesTheTargetInOriginFormWithoutProxyHeaders) {
  std::string seen;
  LoopbackServer server([&](int fd) {
    seen = read_head(fd);
    char body[5];
    ASSERT_EQ(::recv(fd, body, 5, MSG_WAITALL), 5);
    seen.append(body, 5);
    send_text(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi");
  });
  Fixture f({allow_api(server.port()), "127.0.0.1"}, {});
  const int c = f.client();
  const std::string port = std::to_string(server.port());
  send_text(c, "POST http://api.test:" + port + "/v1/x HTTP/1.1\r\nHost: api.test:" + port +
                   "\r\nProxy-Authorization: Basic eDp5\r\nContent-Length: 5\r\n\r\nhello");
  const std::string answer = read_all(c);
  ::close(c);
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
  EXPECT_EQ(answer.substr(answer.size() - 2), "hi");
  EXPECT_EQ(seen.rfind("POST /v1/x HTTP/1.1\r\n", 0), 0U) << seen;
  EXPECT_EQ(seen.find("Proxy-"), std::string::npos) << seen;
  EXPECT_EQ(seen.substr(seen.size() - 5), "hello");
}

TEST(EgressProxy, ANameNotOnTheListIsDeniedWithTheReasonAndNothingIsConnected) {
  LoopbackServer server(echo);
  Fixture f({allow_api(server.port()), "127.0.0.1"}, {});
  const int c = f.client();
  send_text(c, "CONNECT other.test:" + std::to_string(server.port()) + " HTTP/1.1\r\n\r\n");
  const std::string answer = read_all(c);
  ::close(c);
  EXPECT_EQ(answer.rfind("HTTP/1.1 403", 0), 0U) << answer;
  EXPECT_NE(answer.find("X-Cordon-Denied: "), std::string::npos) << answer;
  f.proxy->stop();
  EXPECT_EQ(server.accepted(), 0);
  const auto events = f.proxy->events();
  ASSERT_EQ(events.size(), 1U);
  EXPECT_FALSE(events[0].allowed);
  EXPECT_EQ(events[0].host, "other.test");
  EXPECT_FALSE(events[0].why.empty());
  EXPECT_NE(answer.find(events[0].why), std::string::npos) << answer;
}

TEST(EgressProxy, AnAllowedNameThatResolvesToADeniedAddressIsNotConnected) {
  LoopbackServer server(echo);
  // No address rule for 127.0.0.1: the name is allowed, where it leads is not (rebinding).
  Fixture f({"rebind.test:" + std::to_string(server.port())}, {});
  const int c = f.client();
  send_text(c, "CONNECT rebind.test:" + std::to_string(server.port()) + " HTTP/1.1\r\n\r\n");
  const std::string answer = read_all(c);
  ::close(c);
  EXPECT_EQ(answer.rfind("HTTP/1.1 403", 0), 0U) << answer;
  f.proxy->stop();
  EXPECT_EQ(server.accepted(), 0);
  ASSERT_EQ(f.proxy->events().size(), 1U);
  EXPECT_NE(f.proxy->events()[0].why.find("127.0.0.1"), std::string::npos)
      << f.proxy->events()[0].why;
}

TEST(EgressProxy, ASecondHostHeaderIsRefusedBeforeAnyConnection) {
  LoopbackServer server(echo);
  Fixture f({allow_api(server.port()), "127.0.0.1"}, {});
  const int c = f.client();
  const std::string port = std::to_string(server.port());
  send_text(c, "GET http://api.test:" + port + "/ HTTP/1.1\r\nHost: api.test:" + port +
                   "\r\nHost: 169.254.169.254\r\n\r\n");
  const std::string answer = read_all(c);
  ::close(c);
  EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0U) << answer;
  f.proxy->stop();
  EXPECT_EQ(server.accepted(), 0);
  ASSERT_EQ(f.proxy->events().size(), 1U);
  EXPECT_FALSE(f.proxy->events()[0].allowed);
}

TEST(EgressProxy, ANameThatDoesNotResolveIsABadGateway) {
  Fixture f({"nowhere.test:443"}, {});
  const int c = f.client();
  send_text(c, "CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n");
  const std::string answer = read_all(c);
  ::close(c);
  EXPECT_EQ(answer.rfind("HTTP/1.1 502", 0), 0U) << answer;
  EXPECT_NE(answer.find("could not resolve nowhere.test"), std::string::npos) << answer;
}

TEST(EgressProxy, TheConnectionLimitRefusesTheNextRequestAndSaysSo) {
  LoopbackServer server(echo);
  EgressLimits limits;
  limits.max_connections = 1;
  Fixture f({allow_api(server.port()), "127.0.0.1"}, {}, limits);
  const std::string connect =
      "CONNECT api.test:" + std::to_string(server.port()) + " HTTP/1.1\r\n\r\n";
  const int first = f.client();
  send_text(first, connect);
  EXPECT_EQ(read_head(first).rfind("HTTP/1.1 200", 0), 0U);
  send_text(first, "ping");  // echoed once the server has accepted the tunnel's connection
  char pong[4];
  EXPECT_EQ(::recv(first, pong, 4, MSG_WAITALL), 4);
  const int second = f.client();
  send_text(second, connect);
  const std::string answer = read_all(second);
  EXPECT_EQ(answer.rfind("HTTP/1.1 403", 0), 0U) << answer;
  EXPECT_NE(answer.find("connection limit (1)"), std::string::npos) << answer;
  ::close(first);
  ::close(second);
  f.proxy->stop();
  EXPECT_EQ(f.proxy->limit_reached(), "connections");
  EXPECT_EQ(server.accepted(), 1);
}

TEST(EgressProxy, TheByteLimitCutsATransferOff) {
  LoopbackServer server([](int fd) {
    const std::string chunk(64 * 1024, 'y');
    for (int i = 0; i < 64; ++i) {  // 4 MiB, far over the limit
      if (::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) <= 0) return;
    }
  });
  EgressLimits limits;
  limits.max_bytes = 100'000;
  Fixture f({allow_api(server.port()), "127.0.0.1"}, {}, limits);
  const int c = f.client();
  send_text(c, "CONNECT api.test:" + std::to_string(server.port()) + " HTTP/1.1\r\n\r\n");
  EXPECT_EQ(read_head(c).rfind("HTTP/1.1 200", 0), 0U);
  const std::string got = read_all(c);
  ::close(c);
  // One buffer of 16 KiB may pass after the limit, no more.
  EXPECT_GE(got.size(), 50'000U);
  EXPECT_LE(got.size(), 100'000U + 16 * 1024U);
  f.proxy->stop();
  EXPECT_EQ(f.proxy->limit_reached(), "bytes");
  ASSERT_EQ(f.proxy->events().size(), 1U);
  EXPECT_NE(f.proxy->events()[0].why.find("byte limit"), std::string::npos);
}

TEST(EgressProxy, StopEndsOpenTunnelsAndRemovesTheSocket) {
  LoopbackServer server([](int fd) { read_all(fd); });  // holds the tunnel open
  Fixture f({allow_api(server.port()), "127.0.0.1"}, {});
  const int c = f.client();
  send_text(c, "CONNECT api.test:" + std::to_string(server.port()) + " HTTP/1.1\r\n\r\n");
  EXPECT_EQ(read_head(c).rfind("HTTP/1.1 200", 0), 0U);
  const auto started = std::chrono::steady_clock::now();
  f.proxy->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);  // wide slack; it is immediate
  EXPECT_EQ(read_all(c), "");                                 // EOF: the tunnel is gone
  ::close(c);
  EXPECT_NE(::access(f.proxy->socket_path().c_str(), F_OK), 0);
}

TEST(EgressProxy, AClientThatSendsNothingAndLeavesIsNoEvent) {
  Fixture f({"api.test:443"}, {});
  ::close(f.client());
  const int c = f.client();
  send_text(c, "CONNECT api.test:1 HTTP/1.1\r\n\r\n");  // a marker that the first one is done
  read_all(c);
  ::close(c);
  f.proxy->stop();
  const auto events = f.proxy->events();
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].port, 1);
}

// Issue #40, item 11: a run's end never waits on DNS. A lookup that blocks for 10 s (the
// test's lookup, standing in for a getaddrinfo whose server does not answer) is abandoned
// by stop(), which returns at once; the lookup ending later, after the proxy and its
// resolver are gone, touches nothing of theirs.
TEST(EgressProxy, StopDoesNotWaitForAPendingLookup) {
  struct Gate {
    std::mutex mutex;
    std::condition_variable cv;
    bool entered = false;
    bool open = false;
    bool finished = false;
  };
  auto gate = std::make_shared<Gate>();
  auto blocking = [gate](const std::string& /*host*/) -> Result<std::vector<IpAddress>> {
    std::unique_lock lock(gate->mutex);
    gate->entered = true;
    gate->cv.notify_all();
    gate->cv.wait_for(lock, 10s, [&] { return gate->open; });
    gate->finished = true;
    gate->cv.notify_all();
    return std::vector<IpAddress>{loopback()};
  };
  testing::ScratchDir dir;
  auto policy = NetPolicy::make({"slow.test:443"}, {});
  ASSERT_TRUE(policy.has_value()) << policy.error().describe();
  auto started = EgressProxy::start(dir.path + "/proxy.sock", std::move(*policy),
                                    std::make_shared<SystemResolver>(10s, blocking), {});
  ASSERT_TRUE(started.has_value()) << started.error().describe();
  std::unique_ptr<EgressProxy> proxy = std::move(*started);
  const int c = connect_unix(proxy->socket_path());
  send_text(c, "CONNECT slow.test:443 HTTP/1.1\r\n\r\n");
  {
    std::unique_lock lock(gate->mutex);
    ASSERT_TRUE(gate->cv.wait_for(lock, 5s, [&] { return gate->entered; }));
  }
  const auto before = std::chrono::steady_clock::now();
  proxy->stop();
  const auto took = std::chrono::steady_clock::now() - before;
  EXPECT_LT(took, 2s) << "stop waited "
                      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                      << " ms for a pending lookup";
  ::close(c);
  proxy.reset();  // the resolver goes with it: the lookup's thread holds nothing of it
  {
    std::unique_lock lock(gate->mutex);
    gate->open = true;
    gate->cv.notify_all();
    ASSERT_TRUE(gate->cv.wait_for(lock, 5s, [&] { return gate->finished; }));
  }
  // Let the abandoned thread store its result and end (a crash would end the test here).
  std::this_thread::sleep_for(100ms);
}

}  // namespace
}  // namespace cordon::net
