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

  // Runs `work` on a new thread. Once it has returned, `owner`'s slot named `done_slot` (no
  // arguments) is invoked on owner's thread, queued (unless owner is gone by then); that
  // slot calls join() before it reads anything the work wrote. Named rather than a functor:
  // Qt then builds the event itself, so nothing the worker wrote is read on owner's thread
  // before the join (a functor's captures would be, through Qt's invisible hand-over).
  void start(QObject* owner, const char* done_slot, std::function<void()> work) {
    thread_ = std::thread([owner, done_slot, work = std::move(work)] {
      work();
      QMetaObject::invokeMethod(owner, done_slot, Qt::QueuedConnection);
    });
  }

  // From start() until the done slot has joined.
  [[nodiscard]] bool running() const { return thread_.joinable(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

}  // namespace cordon::inspector
