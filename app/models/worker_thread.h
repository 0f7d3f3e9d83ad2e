// One piece of core work on a thread of its own, for a QObject of the GUI thread (the
// controllers). A std::thread rather than QtConcurrent: every hand-over between the GUI
// thread and the worker then goes through the thread's start and join and the std::mutex
// of the caller's shared state, which ThreadSanitizer checks. Qt's own (a QThreadPool
// thread taking the task, the QFuture's result) goes through Qt's futex-based QMutex,
// invisible to TSan in Debian's uninstrumented Qt, so the tsan preset could not tell a race
// in the controllers from Qt's hand-over.
#pragma once

#include <QObject>
#include <functional>
#include <thread>

namespace cordon::inspector {

class WorkerThread {
 public:
  WorkerThread() = default;
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;
  ~WorkerThread() { join(); }

  // Runs `work` on a new thread. Once it has returned, the thread is joined and `done` is
  // called on `owner`'s thread (queued), unless `owner` is gone by then. `owner` owns this
  // object, and joins (join()) before it goes.
  void start(QObject* owner, std::function<void()> work, std::function<void()> done) {
    thread_ = std::thread([this, owner, work = std::move(work), done = std::move(done)] {
      work();
      QMetaObject::invokeMethod(
          owner,
          [this, done] {
            join();
            done();
          },
          Qt::QueuedConnection);
    });
  }

  // From start() until `done` is called.
  [[nodiscard]] bool running() const { return thread_.joinable(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

}  // namespace cordon::inspector
