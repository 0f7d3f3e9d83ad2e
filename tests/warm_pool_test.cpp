// cordon::WarmPool on plain items: items are built ahead by the pool's thread, each taken
// once, used ones destroyed; while a run is in flight (Busy), and for the settle time after
// it, the pool builds only when it ran dry and destroys used items only when `size` wait.
#include "cordon/warm_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace cordon {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

struct Counters {
  std::atomic<int> next{1};
  std::mutex mu;
  std::vector<int> destroyed;
};

std::unique_ptr<WarmPool<int>> make_pool(
    std::size_t size, Counters& c,
    std::chrono::milliseconds settle = WarmPool<int>::kDefaultSettle) {
  return std::make_unique<WarmPool<int>>(
      size, [&c]() -> Result<int> { return c.next++; },
      [&c](int& item) {
        std::lock_guard lock(c.mu);
        c.destroyed.push_back(item);
      },
      settle);
}

std::size_t destroyed(Counters& c) {
  std::lock_guard lock(c.mu);
  return c.destroyed.size();
}

// Until `count` items were destroyed (or 5 s passed).
bool wait_destroyed(Counters& c, std::size_t count) {
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (destroyed(c) < count && Clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  return destroyed(c) >= count;
}

// Gives the pool's thread time to act (or to show that it does not).
void let_it_work() { std::this_thread::sleep_for(milliseconds(50)); }

TEST(WarmPool, FillsUpAndHandsOutEachItemOnce) {
  Counters c;
  auto pool = make_pool(3, c);
  ASSERT_TRUE(pool->wait_ready(Clock::now() + std::chrono::seconds(5)));
  EXPECT_EQ(pool->ready_count(), 3u);
  std::set<int> seen;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(pool->wait_ready(Clock::now() + std::chrono::seconds(5), 1));
    auto item = pool->take();
    ASSERT_TRUE(item.has_value());
    EXPECT_TRUE(seen.insert(*item).second) << "item " << *item << " handed out twice";
  }
}

TEST(WarmPool, RetiredItemsAndReadyOnesAreDestroyed) {
  Counters c;
  auto pool = make_pool(2, c);
  ASSERT_TRUE(pool->wait_ready(Clock::now() + std::chrono::seconds(5)));
  auto item = pool->take();
  ASSERT_TRUE(item.has_value());
  pool->retire(*item);
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < until) {
    {
      std::lock_guard lock(c.mu);
      if (!c.destroyed.empty()) break;
    }
    std::this_thread::sleep_for(milliseconds(1));
  }
  {
    std::lock_guard lock(c.mu);
    ASSERT_EQ(c.destroyed.size(), 1u);
    EXPECT_EQ(c.destroyed[0], *item);
  }
  ASSERT_TRUE(pool->wait_ready(Clock::now() + std::chrono::seconds(5)));
  pool.reset();  // the two ready ones go with the pool
  EXPECT_EQ(c.destroyed.size(), 3u);
}

TEST(WarmPool, BuildsNothingWhileARunIsInFlightUnlessItRanDry) {
  Counters c;
  auto pool = make_pool(2, c);
  ASSERT_TRUE(pool->wait_ready(Clock::now() + std::chrono::seconds(5)));
  {
    WarmPool<int>::Busy busy(pool.get());
    ASSERT_TRUE(pool->take().has_value());
    let_it_work();
    EXPECT_EQ(pool->ready_count(), 1u) << "refilled during a run";
    ASSERT_TRUE(pool->take().has_value());  // now dry: it builds even during the run
    EXPECT_TRUE(pool->wait_ready(Clock::now() + std::chrono::seconds(5), 1));
    let_it_work();
    EXPECT_EQ(pool->ready_count(), 1u) << "went on past dry during a run";
  }
  // The run is over: the pool fills up again.
  EXPECT_TRUE(pool->wait_ready(Clock::now() + std::chrono::seconds(5)));
  EXPECT_EQ(pool->ready_count(), 2u);
}

TEST(WarmPool, UsedItemsWaitForTheRunsToEndButNeverMoreThanSizeOfThem) {
  Counters c;
  auto pool = make_pool(2, c);
  ASSERT_TRUE(pool->wait_ready(Clock::now() + std::chrono::seconds(5)));
  {
    WarmPool<int>::Busy busy(pool.get());
    auto first = pool->take();
    ASSERT_TRUE(first.has_value());
    pool->retire(*first);
    let_it_work();
    EXPECT_EQ(destroyed(c), 0u) << "destroyed during a run";
    EXPECT_EQ(pool->retired_count(), 1u);
    // Used items keep coming while runs go on: the pool destroys down to fewer than its
    // size waiting, and never holds more than its size ready.
    for (int i = 0; i < 6; ++i) {
      ASSERT_TRUE(pool->wait_ready(Clock::now() + std::chrono::seconds(5), 1));
      auto item = pool->take();
      ASSERT_TRUE(item.has_value());
      pool->retire(*item);
      EXPECT_TRUE(wait_destroyed(c, static_cast<std::size_t>(i) + 1));
      let_it_work();
      EXPECT_LE(pool->retired_count(), 1u);
      EXPECT_LE(pool->ready_count(), 2u);
    }
    EXPECT_EQ(destroyed(c), 6u);
  }
  // The runs are over: the last used item goes too, and the pool fills up.
  EXPECT_TRUE(wait_destroyed(c, 7));
  EXPECT_TRUE(pool->wait_ready(Clock::now() + std::chrono::seconds(5)));
  EXPECT_EQ(pool->retired_count(), 0u);
  EXPECT_EQ(pool->ready_count(), 2u);
}

TEST(WarmPool, KeepsStillForTheSettleTimeAfterTheLastRun) {
  Counters c;
  // A settle time far above the test's own steps: nothing may happen before it.
  auto pool = make_pool(2, c, std::chrono::seconds(2));
  ASSERT_TRUE(pool->wait_ready(Clock::now() + std::chrono::seconds(5)));
  {
    WarmPool<int>::Busy busy(pool.get());
    auto item = pool->take();
    ASSERT_TRUE(item.has_value());
    pool->retire(*item);
  }
  let_it_work();
  EXPECT_EQ(destroyed(c), 0u) << "destroyed while the caller may still answer";
  EXPECT_EQ(pool->ready_count(), 1u) << "built while the caller may still answer";
  // Then it catches up.
  EXPECT_TRUE(wait_destroyed(c, 1));
  EXPECT_TRUE(pool->wait_ready(Clock::now() + std::chrono::seconds(5)));
  // A pool that ran dry builds at once all the same.
  {
    WarmPool<int>::Busy busy(pool.get());
    ASSERT_TRUE(pool->take().has_value());
    ASSERT_TRUE(pool->take().has_value());
  }
  EXPECT_TRUE(pool->wait_ready(Clock::now() + milliseconds(1500), 1));
}

TEST(WarmPool, PastTwiceItsSizeWaitingAUsedItemIsDestroyedByTheCaller) {
  // The pool's thread is stuck in a destruction (a slow teardown) until the gate opens.
  Counters c;
  std::mutex gate;
  std::unique_lock closed(gate);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::thread::id> destroyed_on;
  WarmPool<int> pool(
      1, [&c]() -> Result<int> { return c.next++; },
      [&](int& item) {
        if (std::this_thread::get_id() != caller) {
          const std::lock_guard wait(gate);  // held only to wait for the gate
        }
        std::lock_guard lock(c.mu);
        c.destroyed.push_back(item);
        destroyed_on.push_back(std::this_thread::get_id());
      });
  ASSERT_TRUE(pool.wait_ready(Clock::now() + std::chrono::seconds(5)));
  pool.retire(100);  // the thread takes it and waits at the gate
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (pool.retired_count() > 0 && Clock::now() < until) let_it_work();
  ASSERT_EQ(pool.retired_count(), 0u);
  pool.retire(101);
  pool.retire(102);
  EXPECT_EQ(pool.retired_count(), 2u);
  EXPECT_EQ(destroyed(c), 0u);
  pool.retire(103);  // a third would pass 2 x size: destroyed here, at once
  {
    std::lock_guard lock(c.mu);
    ASSERT_EQ(c.destroyed, std::vector<int>{103});
    EXPECT_EQ(destroyed_on[0], caller);
  }
  EXPECT_EQ(pool.retired_count(), 2u);
  closed.unlock();
  EXPECT_TRUE(wait_destroyed(c, 4));
}

TEST(WarmPool, AFailingBuildIsReportedAndRetriedWithBackoff) {
  std::atomic<int> calls{0};
  WarmPool<int> pool(
      1,
      [&calls]() -> Result<int> {
        ++calls;
        return fail(ErrorCode::kUnavailable, "no sandboxes today");
      },
      [](int&) {});
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (pool.last_error().empty() && Clock::now() < until) let_it_work();
  EXPECT_EQ(pool.last_error(), "no sandboxes today");
  EXPECT_FALSE(pool.take().has_value());
  std::this_thread::sleep_for(milliseconds(250));
  // 100 ms, then 200 ms between tries: a handful in 250+ ms, not a busy loop.
  EXPECT_LE(calls.load(), 4);
}

}  // namespace
}  // namespace cordon
