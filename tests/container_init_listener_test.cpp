// The container init's listener checks its peer (issue #40, item 12): only a process the
// backend recognises as the container's (its cgroup lists it) is taken as the init's
// connection; any other process that reaches /.cordon/init.sock is refused.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "init_listener.h"
#include "proc_test_support.h"

namespace cordon::oci {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

int connect_to(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A connection made by another process (a child that connects, then waits for its end).
// Returns the child's pid; it exits 0 once cordon's side closed the connection (EOF).
pid_t connect_from_child(const std::string& path) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = connect_to(path);
    if (fd < 0) ::_exit(2);
    char c = 0;
    ::_exit(::read(fd, &c, 1) == 0 ? 0 : 1);
  }
  return pid;
}

// A listener, and an intruder (another process) connected to it first.
class InitListener : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = listen_for_init(path_);
    ASSERT_TRUE(made.has_value()) << made.error().describe();
    listener_ = std::move(*made);
    intruder_ = connect_from_child(path_);
    ASSERT_GT(intruder_, 0);
    std::this_thread::sleep_for(100ms);  // its connection is queued first
  }
  testing::ScratchDir dir_;
  std::string path_ = dir_.path + "/init.sock";
  UniqueFd listener_;
  pid_t intruder_ = -1;
};

TEST_F(InitListener, AWrongPeerIsRefusedAndTheInitIsStillTaken) {
  const std::string& path = path_;
  const pid_t intruder = intruder_;
  // Only this test process counts as the container's.
  const int init = connect_to(path);
  ASSERT_GE(init, 0);
  const pid_t self = ::getpid();
  auto conn = accept_init(std::move(listener_), path, Clock::now() + 5s, /*runner=*/-1,
                          [self](pid_t peer) { return peer == self; });
  ASSERT_TRUE(conn.has_value()) << conn.error().describe();
  ucred peer{};
  socklen_t len = sizeof(peer);
  ASSERT_EQ(::getsockopt(conn->get(), SOL_SOCKET, SO_PEERCRED, &peer, &len), 0);
  EXPECT_EQ(peer.pid, self);
  conn->reset();  // (so that a wrongly taken intruder is not left waiting)
  // The intruder's connection was closed unused: it read EOF.
  int status = 0;
  ASSERT_EQ(::waitpid(intruder, &status, 0), intruder);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_FALSE(std::filesystem::exists(path));  // the listener's file is gone
  ::close(init);
}

TEST_F(InitListener, OnlyWrongPeersTimeOutAndSaySo) {
  const pid_t intruder = intruder_;
  auto conn = accept_init(std::move(listener_), path_, Clock::now() + 500ms, /*runner=*/-1,
                          [](pid_t) { return false; });
  ASSERT_FALSE(conn.has_value());
  EXPECT_NE(conn.error().message.find("refused a connection from pid " + std::to_string(intruder)),
            std::string::npos)
      << conn.error().message;
  int status = 0;
  ASSERT_EQ(::waitpid(intruder, &status, 0), intruder);
}

}  // namespace
}  // namespace cordon::oci
