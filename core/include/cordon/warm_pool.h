// Sandboxes built ahead of time, so a run does not pay for building one (the container
// backend's started containers, the namespace backend's built namespaces).
//
// Each item serves exactly one run and is destroyed after it: nothing carries from one
// run to the next. A background thread keeps `size` items ready and destroys the used
// ones, so neither building nor removal is on a run's path. A pool lives as long as its
// backend instance inside a long-running process (a library user, the inspector, a
// server); a one-shot CLI call has nothing to gain from it. The backends make their
// pooled sandboxes die with the process that holds the pool.
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

template <typename T>
class WarmPool {
 public:
  using Make = std::function<Result<T>()>;
  using Destroy = std::function<void(T&)>;

  // `make` and `destroy` run on the pool's own thread (and `destroy` in the destructor).
  WarmPool(std::size_t size, Make make, Destroy destroy)
      : size_(size), make_(std::move(make)), destroy_(std::move(destroy)) {
    thread_ = std::thread([this] { loop(); });
  }
  WarmPool(const WarmPool&) = delete;
  WarmPool& operator=(const WarmPool&) = delete;
  // Stops the thread, destroys every ready and retired item.
  ~WarmPool() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    for (auto& item : ready_) destroy_(item);
    for (auto& item : retired_) destroy_(item);
  }

  // Marks a run in flight for as long as it lives. While one is, the pool builds nothing
  // unless it ran dry: on a machine of few cores a build competes with the run for them,
  // and the pool catches up in the gaps between runs instead. Used items are destroyed at
  // once all the same (cheap, and they hold processes and cgroups).
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
        --pool_->in_flight_;
      }
      pool_->cv_.notify_all();
    }

   private:
    WarmPool* pool_;
  };

  // A ready item, or nullopt when none is ready (the caller builds its own).
  [[nodiscard]] std::optional<T> take() {
    std::optional<T> out;
    {
      std::lock_guard lock(mu_);
      if (ready_.empty()) return std::nullopt;
      out = std::move(ready_.front());
      ready_.pop_front();
    }
    cv_.notify_all();
    return out;
  }
  // Hands a used item back for destruction in the background.
  void retire(T item) {
    {
      std::lock_guard lock(mu_);
      retired_.push_back(std::move(item));
    }
    cv_.notify_all();
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
  // Why the last build failed ("" when it did not).
  [[nodiscard]] std::string last_error() {
    std::lock_guard lock(mu_);
    return last_error_;
  }

 private:
  [[nodiscard]] bool may_build() const {
    return ready_.size() < size_ && (in_flight_ == 0 || ready_.empty());
  }

  // Destroy what was used first (it holds memory and cgroups), then refill.
  void loop() {
    std::unique_lock lock(mu_);
    int failures = 0;
    while (!stop_) {
      if (!retired_.empty()) {
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
      cv_.wait(lock, [this] { return stop_ || !retired_.empty() || may_build(); });
    }
  }

  std::size_t size_;
  Make make_;
  Destroy destroy_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> ready_;
  std::deque<T> retired_;
  std::string last_error_;
  std::size_t in_flight_ = 0;  // Busy tokens alive
  bool stop_ = false;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace cordon
