// The tools/call workers: a fixed number of threads (--max-concurrent) taking jobs from a
// bounded queue (--max-queue). A job past the bound is refused at once, never dropped in
// silence; a queued job can be withdrawn (its request was cancelled) before it starts.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cordon::cli::mcp {

class Job {
 public:
  virtual ~Job() = default;
  // Runs on a worker thread.
  virtual void run() = 0;
  // Instead of run(), when the queue shuts down with the job still queued.
  virtual void drop() = 0;
};

class CallQueue {
 public:
  CallQueue(std::size_t workers, std::size_t capacity);
  CallQueue(const CallQueue&) = delete;
  CallQueue& operator=(const CallQueue&) = delete;
  // Drops what is still queued, waits for the running jobs, joins the workers.
  ~CallQueue();

  // Queues `job`; false when `capacity` jobs are already waiting.
  [[nodiscard]] bool push(std::shared_ptr<Job> job);
  // Takes `job` out of the queue; false when it is not there (running or done).
  [[nodiscard]] bool withdraw(const Job* job);
  // Jobs waiting for a worker.
  [[nodiscard]] std::size_t queued() const;
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  [[nodiscard]] std::size_t workers() const { return workers_.size(); }

 private:
  void work();

  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;  // last: started once everything above exists
};

}  // namespace cordon::cli::mcp
