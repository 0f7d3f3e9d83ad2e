#include "keeper_thread.h"

namespace cordon::ns {

KeeperThread::KeeperThread() : thread_(&KeeperThread::loop, this) {}

KeeperThread::~KeeperThread() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void KeeperThread::run(const std::function<void()>& job) {
  const std::lock_guard one(run_mutex_);
  std::unique_lock lock(mutex_);
  job_ = &job;
  cv_.notify_all();
  cv_.wait(lock, [&] { return job_ == nullptr; });
}

void KeeperThread::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || job_ != nullptr; });
    if (job_ != nullptr) {
      const std::function<void()>* job = job_;
      lock.unlock();
      (*job)();
      lock.lock();
      job_ = nullptr;
      cv_.notify_all();
      continue;
    }
    return;  // stop_, and no job waits
  }
}

}  // namespace cordon::ns
