// Sandboxes built ahead of time, so a run does not pay for building one (the container
// backend's started containers, the namespace backend's built namespaces).
//
// Each item serves exactly one run and is destroyed after it: nothing carries from one
// run to the next. A background thread keeps `size` items ready and destroys the used
// ones, so neither building nor removal is on a run's path. That thread also keeps off the
// time around runs (Busy): while one is in flight, and for `settle` after the last one
// ended (its caller is still answering), it builds only when the pool ran dry and destroys
// used items only once `size` of them wait; so at most `size` items are ready, and at most
// 2 x `size` wait for their destruction (past that, retire() destroys at once). A pool lives as
// long as its backend instance inside a long-running process (a library user, the inspector, a
// server); a one-shot CLI call has nothing to gain from it. The backends make their pooled
// sandboxes die with the process that holds the pool.
//
// At exit every live pool's thread is stopped (a build in progress finishes first) by a
// handler registered with atexit when the pool is made, before the static destructors of
// what was made earlier run: a backend kept in a static object is destroyed after statics
// its pools' builds use (issue #40, item 13). Statics made later (on the pool's thread, or
// after the pool) are destroyed before that handler runs: what a build uses is therefore
// never-destroyed (`static T& x = *new T`) or trivially destructible.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "cordon/error.h"

namespace cordon {

namespace detail {
// The process-wide list of the live pools' thread stops that the exit handler runs
// (warm_pool.cpp); the first registration registers the handler.
void register_pool_stop(const void* pool, std::function<void()> stop);
// Once this returns, the exit handler does not call (or is done calling) the pool's stop.
void unregister_pool_stop(const void* pool);
}  // namespace detail

template <typename T>
class WarmPool {
 public:
  using Make = std::function<Result<T>()>;
  using Destroy = std::function<void(T&)>;
  using Clock = std::chrono::steady_clock;

  // How long the pool keeps still after the last run in flight ended: the run's caller
  // still sends its result (an MCP response: ~0.1-0.3 ms), and on a machine of few cores a
  // build or a teardown (several ms of CPU, RCU waits) started then delays it more than
  // the refill gains. An agent's next call comes tens of ms later.
  static constexpr std::chrono::milliseconds kDefaultSettle{3};

  // `make` and `destroy` run on the pool's own thread (and `destroy` in the destructor).
  WarmPool(std::size_t size, Make make, Destroy destroy,
           std::chrono::milliseconds settle = kDefaultSettle)
      : size_(size), settle_(settle), make_(std::move(make)), destroy_(std::move(destroy)) {
    thread_ = std::thread([this] { loop(); });
    detail::register_pool_stop(this, [this] { stop_thread(); });
  }
  WarmPool(const WarmPool&) = delete;
  WarmPool& operator=(const WarmPool&) = delete;
  // Stops the thread, destroys every ready and retired item.
  ~WarmPool() {
    detail::unregister_pool_stop(this);
    stop_thread();
    for (auto& item : ready_) destroy_(item);
    for (auto& item : retired_) destroy_(item);
  }

  // Marks a run in flight for as long as it lives. While one is (and for `settle` after
  // the last one), the pool builds nothing unless it ran dry and destroys used items only
  // once `size` of them wait: on a machine of few cores a build or a teardown competes
  // with the run for them, and the pool catches up in the gaps between runs instead.
  class Busy {
   public:
    explicit Busy(WarmPool* pool) : pool_(pool) {
      std::lock_guard lock(pool_->mu_);
      ++pool_->in_flight_;
    }
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;
    ~Busy() {
      {
        std::lock_guard lock(pool_->mu_);
        if (--pool_->in_flight_ != 0) return;  // nothing the thread may do has changed
        pool_->settled_at_ = Clock::now() + pool_->settle_;
        // Nothing waits for the quiet: the thread sleeps on. A session's calls are tens of
        // microseconds apart, and each wake-up would be a futex call on their path and the
        // thread competing with the next call for one of two cores.
        if (!pool_->settling()) return;
      }
      pool_->cv_.notify_all();
    }

   private:
    WarmPool* pool_;
  };

  // A ready item, or nullopt when none is ready (the caller builds its own).
  [[nodiscard]] std::optional<T> take() {
    std::optional<T> out;
    bool wake = false;
    {
      std::lock_guard lock(mu_);
      if (ready_.empty()) return std::nullopt;
      out = std::move(ready_.front());
      ready_.pop_front();
      wake = gives_work();
    }
    if (wake) cv_.notify_all();
    return out;
  }
  // Hands a used item back for destruction in the background (see Busy for when); with
  // 2 x `size` waiting already (the thread does not keep up), destroys it here instead.
  void retire(T item) {
    bool queued = false;
    bool wake = false;
    {
      std::lock_guard lock(mu_);
      if (retired_.size() < 2 * size_) {
        retired_.push_back(std::move(item));
        queued = true;
        wake = gives_work();
      }
    }
    if (!queued) {
      destroy_(item);
      return;
    }
    if (wake) cv_.notify_all();
  }
  // Blocks until `count` items (default: the pool's size) are ready or `until` passes
  // (benchmarks, tests).
  bool wait_ready(std::chrono::steady_clock::time_point until, std::size_t count = 0) {
    const std::size_t want = count == 0 ? size_ : std::min(count, size_);
    std::unique_lock lock(mu_);
    return cv_.wait_until(lock, until, [&] { return ready_.size() >= want; });
  }
  [[nodiscard]] std::size_t ready_count() {
    std::lock_guard lock(mu_);
    return ready_.size();
  }
  [[nodiscard]] std::size_t size() const { return size_; }
  // Used items handed back and not destroyed yet.
  [[nodiscard]] std::size_t retired_count() {
    std::lock_guard lock(mu_);
    return retired_.size();
  }
  // Why the last build failed ("" when it did not).
  [[nodiscard]] std::string last_error() {
    std::lock_guard lock(mu_);
    return last_error_;
  }

 private:
  // Ends the thread after what it does now; the pool keeps its items (take, retire work on).
  void stop_thread() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    // Not from the thread itself (exit() called by a build): it ends after this build.
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  }

  // No run in flight, and the last one ended `settle` ago.
  [[nodiscard]] bool quiet() const { return in_flight_ == 0 && Clock::now() >= settled_at_; }
  [[nodiscard]] bool may_destroy() const {
    return !retired_.empty() && (retired_.size() >= size_ || quiet());
  }
  [[nodiscard]] bool may_build() const {
    return ready_.size() < size_ && (ready_.empty() || quiet());
  }
  // Whether a take or retire just made may give the thread something to do or to wait
  // for: with runs in flight it acts only on an empty pool or a full retired queue, and
  // each wake-up of it is a futex call and an IPI on a run's path, its own thread then
  // competing with the run's code for one of the two cores.
  [[nodiscard]] bool gives_work() const {
    return in_flight_ == 0 || ready_.empty() || retired_.size() >= size_;
  }
  // Work that only waits for the settle time to pass.
  [[nodiscard]] bool settling() const {
    return in_flight_ == 0 && (!retired_.empty() || ready_.size() < size_);
  }

  // Destroy what was used first (it holds processes and cgroups), then refill.
  void loop() {
    std::unique_lock lock(mu_);
    int failures = 0;
    while (!stop_) {
      if (may_destroy()) {
        T item = std::move(retired_.front());
        retired_.pop_front();
        lock.unlock();
        destroy_(item);
        lock.lock();
        continue;
      }
      if (may_build()) {
        lock.unlock();
        auto made = make_();
        lock.lock();
        if (made) {
          failures = 0;
          ready_.push_back(std::move(*made));
          cv_.notify_all();
        } else {
          last_error_ = made.error().describe();
          // Back off: a host that refuses sandboxes must not be hammered.
          ++failures;
          cv_.wait_for(lock, std::chrono::milliseconds(std::min(100 * failures, 2000)),
                       [this] { return stop_; });
        }
        continue;
      }
      // Without a predicate: any change (a run starting or ending, an item retired or
      // taken) or the settle time passing sends the loop round again to decide anew.
      if (settling()) {
        cv_.wait_until(lock, settled_at_);
      } else {
        cv_.wait(lock);
      }
    }
  }

  std::size_t size_;
  std::chrono::milliseconds settle_;
  Make make_;
  Destroy destroy_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> ready_;
  std::deque<T> retired_;
  std::string last_error_;
  std::size_t in_flight_ = 0;     // Busy tokens alive
  Clock::time_point settled_at_;  // when the last Busy ended, plus settle_
  bool stop_ = false;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace cordon
