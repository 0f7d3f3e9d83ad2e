// A thread that lives as long as its object and runs what it is handed. Linux's parent-death
// signal (PR_SET_PDEATHSIG, which a sandbox's set-up process and init set) follows the
// *thread* that created a child, not its process: a child that must live as long as an
// object, not as long as whichever thread happened to create it, is created on the
// object's keeper. It still dies with cordon, whose death ends the keeper too.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace cordon::ns {

class KeeperThread {
 public:
  KeeperThread();
  // Ends the thread once the job at hand (if any) has run: the children it created get
  // their parent-death signal now.
  ~KeeperThread();
  KeeperThread(const KeeperThread&) = delete;
  KeeperThread& operator=(const KeeperThread&) = delete;

  // Runs `job` on the keeper and returns once it has run; one job at a time.
  void run(const std::function<void()>& job);

 private:
  void loop();

  std::mutex run_mutex_;  // held by run() for the whole job: one caller at a time
  std::mutex mutex_;
  std::condition_variable cv_;
  const std::function<void()>* job_ = nullptr;
  bool stop_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace cordon::ns
