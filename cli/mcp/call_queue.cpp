#include "mcp/call_queue.h"

#include <algorithm>
#include <utility>

namespace cordon::cli::mcp {

CallQueue::CallQueue(std::size_t workers, std::size_t capacity) : capacity_(capacity) {
  workers_.reserve(std::max<std::size_t>(workers, 1));
  for (std::size_t i = 0; i < std::max<std::size_t>(workers, 1); ++i) {
    workers_.emplace_back([this] { work(); });
  }
}

CallQueue::~CallQueue() {
  std::deque<std::shared_ptr<Job>> left;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    left.swap(queue_);
  }
  wake_.notify_all();
  for (const auto& job : left) job->drop();
  for (std::thread& worker : workers_) worker.join();
}

bool CallQueue::push(std::shared_ptr<Job> job) {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= capacity_) return false;
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
  return true;
}

bool CallQueue::withdraw(const Job* job) {
  const std::lock_guard lock(mutex_);
  const auto it =
      std::ranges::find_if(queue_, [&](const auto& queued) { return queued.get() == job; });
  if (it == queue_.end()) return false;
  queue_.erase(it);
  return true;
}

std::size_t CallQueue::queued() const {
  const std::lock_guard lock(mutex_);
  return queue_.size();
}

void CallQueue::work() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job->run();
  }
}

}  // namespace cordon::cli::mcp
