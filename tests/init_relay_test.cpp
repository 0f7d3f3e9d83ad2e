// cordon-init's network relay (core/libexec/init/relay.h): 127.0.0.1:PORT to a unix socket,
// bytes copied both ways, half-closes passed on, many connections at once, and nothing left
// when its parent dies. Loopback and a unix socket in a temporary directory only.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "proc_test_support.h"
#include "relay.h"

namespace cordon::init {
namespace {

using namespace std::chrono_literals;

int unix_listener(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd, 128) != 0) {
    return -1;
  }
  return fd;
}

int tcp_connect(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Everything `fd` sends until EOF, within `limit` (then what came so far).
std::string read_all(int fd, std::chrono::milliseconds limit = 10s) {
  std::string out;
  const auto until = std::chrono::steady_clock::now() + limit;
  char buf[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    pollfd pfd{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) return out;
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// One connection through the relay: `data`, a half-close, then the whole reply.
std::string exchange(std::uint16_t port, const std::string& data) {
  const int c = tcp_connect(port);
  if (c < 0) return "(no connection)";
  const bool sent = write_all(c, data);
  ::shutdown(c, SHUT_WR);
  std::string reply = sent ? read_all(c) : "(send failed)";
  ::close(c);
  return reply;
}

// The proxy's stand-in: on each connection, reads to EOF, then answers "<n> bytes:" and the
// bytes reversed, then closes. So a reply proves the client's half-close came through.
class EchoServer {
 public:
  explicit EchoServer(int listen_fd) : fd_(listen_fd) {
    thread_ = std::thread([this] {
      for (;;) {
        const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;  // shut down
        ++accepted_;
        workers_.emplace_back([c] {
          std::string got = read_all(c);
          const std::string head = std::to_string(got.size()) + " bytes:";
          (void)write_all(c, head + std::string(got.rbegin(), got.rend()));
          ::close(c);
        });
      }
    });
  }
  EchoServer(const EchoServer&) = delete;
  EchoServer& operator=(const EchoServer&) = delete;
  ~EchoServer() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    for (std::thread& w : workers_) w.join();
    ::close(fd_);
  }
  [[nodiscard]] int accepted() const { return accepted_; }

 private:
  int fd_;
  std::atomic<int> accepted_{0};
  std::thread thread_;
  std::vector<std::thread> workers_;
};

class InitRelay : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cordon-relay-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    socket_path_ = dir_ + "/proxy.sock";
  }
  void TearDown() override {
    stop_relay();
    ::unlink(socket_path_.c_str());
    ::rmdir(dir_.c_str());
  }

  // Starts the relay on a free port before any thread of the test exists (a fork of a
  // threaded process may not allocate).
  void start(const std::string& path) {
    const int probe = relay_listen(0, &port_);
    ASSERT_GE(probe, 0);
    ::close(probe);  // the port is free again: the relay binds it itself
    relay_ = start_relay(port_, path.c_str());
    ASSERT_GT(relay_, 0) << std::strerror(static_cast<int>(-relay_));
  }
  void stop_relay() {
    if (relay_ <= 0) return;
    ::kill(relay_, SIGKILL);
    ::waitpid(relay_, nullptr, 0);
    relay_ = 0;
  }

  std::string dir_;
  std::string socket_path_;
  std::uint16_t port_ = 0;
  pid_t relay_ = 0;
};

TEST_F(InitRelay, BytesGoBothWaysAndAHalfCloseIsPassedOn) {
  const int listener = unix_listener(socket_path_);
  ASSERT_GE(listener, 0);
  start(socket_path_);
  EchoServer proxy(listener);
  const int c = tcp_connect(port_);
  ASSERT_GE(c, 0);
  // Larger than every buffer on the way, so the relay waits for room in both directions.
  std::string sent(4u << 20, '\0');
  for (std::size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<char>('a' + i % 26);
  std::thread writer([&] {
    EXPECT_TRUE(write_all(c, sent));
    ::shutdown(c, SHUT_WR);  // the server answers only after this EOF
  });
  const std::string reply = read_all(c, 30s);
  writer.join();
  ::close(c);
  const std::string head = std::to_string(sent.size()) + " bytes:";
  ASSERT_EQ(reply.substr(0, head.size()), head);
  EXPECT_TRUE(reply.substr(head.size()) == std::string(sent.rbegin(), sent.rend()))
      << "reply of " << reply.size() << " bytes differs";
}

TEST_F(InitRelay, ManyConnectionsAtOnceStayApart) {
  const int listener = unix_listener(socket_path_);
  ASSERT_GE(listener, 0);
  start(socket_path_);
  EchoServer proxy(listener);
  constexpr int kClients = 24;
  std::vector<std::thread> clients;
  std::atomic<int> right{0};
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      const int c = tcp_connect(port_);
      if (c < 0) return;
      const std::string mine = "client-" + std::to_string(i) + std::string(1000 * i, 'x');
      if (!write_all(c, mine)) return;
      ::shutdown(c, SHUT_WR);
      const std::string reply = read_all(c);
      ::close(c);
      if (reply ==
          std::to_string(mine.size()) + " bytes:" + std::string(mine.rbegin(), mine.rend())) {
        ++right;
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(right.load(), kClients);
  EXPECT_EQ(proxy.accepted(), kClients);
}

TEST_F(InitRelay, WithoutTheProxyAConnectionEndsAtOnce) {
  start(dir_ + "/nobody-listens.sock");
  const int c = tcp_connect(port_);
  ASSERT_GE(c, 0);
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(read_all(c, 5s), "");
  EXPECT_LT(std::chrono::steady_clock::now() - before, 4s) << "EOF, not a hang";
  ::close(c);
  // The relay carries on for the next connection.
  const int listener = unix_listener(dir_ + "/nobody-listens.sock");
  ASSERT_GE(listener, 0);
  EchoServer proxy(listener);
  EXPECT_EQ(exchange(port_, "hi"), "2 bytes:ih");
  ::unlink((dir_ + "/nobody-listens.sock").c_str());
}

// The socket reached through a directory fd the relay keeps (/proc/self/fd/N/NAME), as in a
// sandbox built before its run's socket existed; every other fd of the caller is closed.
TEST_F(InitRelay, TheSocketCanBeReachedThroughAKeptDirectoryFd) {
  const int listener = unix_listener(socket_path_);
  ASSERT_GE(listener, 0);
  const int dir = ::open(dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir, 0);
  const std::string through = "/proc/self/fd/" + std::to_string(dir) + "/proxy.sock";
  const int probe = relay_listen(0, &port_);
  ASSERT_GE(probe, 0);
  ::close(probe);
  relay_ = start_relay(port_, through.c_str(), dir);
  ASSERT_GT(relay_, 0);
  ::close(dir);
  EchoServer proxy(listener);
  EXPECT_EQ(exchange(port_, "abc"), "3 bytes:cba");
  // Only the listener and the directory stay open in the relay (and nothing of ours, e.g.
  // the unix listener, which would keep the proxy's socket alive).
  // The connection's own pair closes once both halves are done: wait for that, then look.
  auto open_fds = [&] {
    std::vector<std::string> fds;
    const std::string dir_of_fds = "/proc/" + std::to_string(relay_) + "/fd";
    for (const auto& e : std::filesystem::directory_iterator(dir_of_fds)) {
      fds.push_back(std::filesystem::read_symlink(e.path()).string());
    }
    return fds;
  };
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (open_fds().size() > 2 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(10ms);
  }
  const std::vector<std::string> fds = open_fds();
  EXPECT_EQ(fds.size(), 2u) << ::testing::PrintToString(fds);
}

TEST_F(InitRelay, APortInUseIsTheCallersErrorBeforeAnythingRuns) {
  std::uint16_t taken = 0;
  const int holder = relay_listen(0, &taken);
  ASSERT_GE(holder, 0);
  EXPECT_EQ(start_relay(taken, socket_path_.c_str()), -EADDRINUSE);
  ::close(holder);
}

// The relay dies with the process that started it (PR_SET_PDEATHSIG): an init killed with
// its sandbox leaves no relay behind.
TEST_F(InitRelay, TheRelayDiesWithItsParent) {
  int pid_pipe[2];
  ASSERT_EQ(::pipe(pid_pipe), 0);
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    const pid_t relay = start_relay(0, socket_path_.c_str());
    (void)::write(pid_pipe[1], &relay, sizeof(relay));
    ::pause();
    ::_exit(0);
  }
  ::close(pid_pipe[1]);
  pid_t relay = 0;
  ASSERT_EQ(::read(pid_pipe[0], &relay, sizeof(relay)), static_cast<ssize_t>(sizeof(relay)));
  ::close(pid_pipe[0]);
  ASSERT_GT(relay, 0);
  EXPECT_EQ(::kill(relay, 0), 0) << "running while its parent lives";
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  // Reparented to us (or init) and killed: gone from /proc within a wide bound.
  const auto until = std::chrono::steady_clock::now() + 5s;
  bool gone = false;
  while (!gone && std::chrono::steady_clock::now() < until) {
    (void)::waitpid(relay, nullptr, WNOHANG);  // ours to reap when we are its subreaper
    gone = ::access(("/proc/" + std::to_string(relay) + "/status").c_str(), F_OK) != 0 ||
           testing::read_file("/proc/" + std::to_string(relay) + "/status")
                   .value_or("")
                   .find("State:\tZ") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone) << "relay " << relay << " outlived its parent";
}

}  // namespace
}  // namespace cordon::init
