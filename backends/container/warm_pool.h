// Containers created and started ahead of time, so a run does not pay for creating one.
//
// Each container serves exactly one run and is destroyed after it: nothing carries from
// one run to the next. A background thread keeps `size` containers ready and destroys the
// used ones, so neither creation nor removal is on a run's path. A pool lives as long as
// its backend instance inside a long-running process (a library user, the inspector, a
// server); a one-shot CLI call has nothing to gain from it. Pooled containers die with the
// process that holds the pool: their inits read EOF on the control socket.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "cordon/error.h"
#include "live_container.h"

namespace cordon::oci {

class WarmPool {
 public:
  using Make = std::function<Result<LiveContainer>()>;
  using Destroy = std::function<void(LiveContainer&)>;

  WarmPool(std::size_t size, Make make, Destroy destroy);
  WarmPool(const WarmPool&) = delete;
  WarmPool& operator=(const WarmPool&) = delete;
  ~WarmPool();  // stops the thread, destroys every ready and used container

  // A ready container, or nullopt when none is ready (the caller runs cold).
  [[nodiscard]] std::optional<LiveContainer> take();
  // Hands a used container back for destruction in the background.
  void retire(LiveContainer container);
  // Blocks until `size` containers are ready or `until` passes (benchmarks, tests).
  bool wait_ready(std::chrono::steady_clock::time_point until);
  [[nodiscard]] std::size_t ready_count();
  // Why the last creation failed ("" when it did not).
  [[nodiscard]] std::string last_error();

 private:
  void loop();

  std::size_t size_;
  Make make_;
  Destroy destroy_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<LiveContainer> ready_;
  std::deque<LiveContainer> retired_;
  std::string last_error_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace cordon::oci
