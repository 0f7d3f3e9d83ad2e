// The pool's background thread: destroy what was used first (it holds memory and a
// cgroup), then refill.
#include "warm_pool.h"

namespace cordon::oci {

WarmPool::WarmPool(std::size_t size, Make make, Destroy destroy)
    : size_(size), make_(std::move(make)), destroy_(std::move(destroy)) {
  thread_ = std::thread([this] { loop(); });
}

WarmPool::~WarmPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  for (auto& c : ready_) destroy_(c);
  for (auto& c : retired_) destroy_(c);
}

std::optional<LiveContainer> WarmPool::take() {
  std::optional<LiveContainer> out;
  {
    std::lock_guard lock(mu_);
    if (ready_.empty()) return std::nullopt;
    out = std::move(ready_.front());
    ready_.pop_front();
  }
  cv_.notify_all();
  return out;
}

void WarmPool::retire(LiveContainer container) {
  {
    std::lock_guard lock(mu_);
    retired_.push_back(std::move(container));
  }
  cv_.notify_all();
}

bool WarmPool::wait_ready(std::chrono::steady_clock::time_point until) {
  std::unique_lock lock(mu_);
  return cv_.wait_until(lock, until, [this] { return ready_.size() >= size_; });
}

std::size_t WarmPool::ready_count() {
  std::lock_guard lock(mu_);
  return ready_.size();
}

std::string WarmPool::last_error() {
  std::lock_guard lock(mu_);
  return last_error_;
}

void WarmPool::loop() {
  std::unique_lock lock(mu_);
  int failures = 0;
  while (!stop_) {
    if (!retired_.empty()) {
      LiveContainer c = std::move(retired_.front());
      retired_.pop_front();
      lock.unlock();
      destroy_(c);
      lock.lock();
      continue;
    }
    if (ready_.size() < size_) {
      lock.unlock();
      auto made = make_();
      lock.lock();
      if (made) {
        failures = 0;
        ready_.push_back(std::move(*made));
        cv_.notify_all();
      } else {
        last_error_ = made.error().describe();
        // Back off: a host that refuses containers must not be hammered.
        ++failures;
        cv_.wait_for(lock, std::chrono::milliseconds(std::min(100 * failures, 2000)),
                     [this] { return stop_; });
      }
      continue;
    }
    cv_.wait(lock, [this] { return stop_ || !retired_.empty() || ready_.size() < size_; });
  }
}

}  // namespace cordon::oci
