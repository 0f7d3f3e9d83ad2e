#include "cordon/cancel.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>

#include <chrono>
#include <thread>
#include <vector>

namespace cordon {
namespace {

bool readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN) != 0;
}

TEST(Cancel, DefaultTokenIsNeverCancelled) {
  const CancelToken token;
  EXPECT_FALSE(token.cancelled());
  EXPECT_EQ(token.wait_fd(), -1);
}

TEST(Cancel, TokenSeesCancelAndFdBecomesReadable) {
  CancelSource source;
  const CancelToken token = source.token();
  ASSERT_GE(token.wait_fd(), 0);
  EXPECT_FALSE(token.cancelled());
  EXPECT_FALSE(readable(token.wait_fd(), 0));
  source.cancel();
  EXPECT_TRUE(source.cancelled());
  EXPECT_TRUE(token.cancelled());
  EXPECT_TRUE(readable(token.wait_fd(), 0));
  source.cancel();  // idempotent
  EXPECT_TRUE(readable(token.wait_fd(), 0));
}

TEST(Cancel, FdIsCloseOnExecAndNonBlocking) {
  CancelSource source;
  const int fd = source.token().wait_fd();
  EXPECT_TRUE(::fcntl(fd, F_GETFD) & FD_CLOEXEC);
  EXPECT_TRUE(::fcntl(fd, F_GETFL) & O_NONBLOCK);
}

TEST(Cancel, CancelFromAnotherThreadWakesPoll) {
  CancelSource source;
  const CancelToken token = source.token();
  const auto start = std::chrono::steady_clock::now();
  std::thread canceller([&source] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    source.cancel();
  });
  // Correctness bound, not a performance target: poll must wake, long before 10 s.
  EXPECT_TRUE(readable(token.wait_fd(), 10'000));
  canceller.join();
  EXPECT_TRUE(token.cancelled());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(Cancel, ManyThreadsCancellingAtOnce) {
  CancelSource source;
  std::vector<std::thread> threads;
  threads.reserve(8);
  for (int i = 0; i < 8; ++i) threads.emplace_back([&source] { source.cancel(); });
  for (auto& t : threads) t.join();
  EXPECT_TRUE(source.token().cancelled());
  EXPECT_TRUE(readable(source.token().wait_fd(), 0));
}

// A plugin's view of its caller's source (plugin_abi.h's cancel_fd): only the fd crosses.
TEST(Cancel, TokenFollowingAnFdSeesTheSourceCancel) {
  CancelSource source;
  const int fd = source.token().wait_fd();
  const CancelToken follower = CancelToken::following(fd);
  EXPECT_EQ(follower.wait_fd(), fd);
  EXPECT_FALSE(follower.cancelled());
  const std::vector<CancelToken> copies(2, follower);  // a run hands its token on by value
  source.cancel();
  EXPECT_TRUE(follower.cancelled());
  EXPECT_TRUE(copies[1].cancelled());
  EXPECT_TRUE(readable(fd, 0));  // polled, never read: still readable for every waiter
  EXPECT_TRUE(source.token().cancelled());

  const CancelToken none = CancelToken::following(-1);
  EXPECT_FALSE(none.cancelled());
  EXPECT_EQ(none.wait_fd(), -1);
}

TEST(Cancel, TokenOutlivesSource) {
  CancelToken token;
  {
    CancelSource source;
    token = source.token();
    source.cancel();
  }
  EXPECT_TRUE(token.cancelled());
  EXPECT_TRUE(readable(token.wait_fd(), 0));
}

}  // namespace
}  // namespace cordon
