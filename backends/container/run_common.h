// Small pieces both of the container backend's run paths use (runtime mode in
// container_backend.cpp, engine mode in engine_run.cpp). The same helpers exist in the
// other backends; they belong in the shared run driver once it lands in core/.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "cordon/capabilities.h"
#include "cordon/observer.h"
#include "cordon/proc/output_pump.h"
#include "cordon/request.h"
#include "cordon/result.h"

namespace cordon::oci {

[[nodiscard]] inline std::int64_t ms_between(std::chrono::steady_clock::time_point a,
                                             std::chrono::steady_clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

// Reports state changes once each, and kFinished on every way out of run().
class StateReporter {
 public:
  explicit StateReporter(RunObserver* observer) : observer_(observer) {}
  StateReporter(const StateReporter&) = delete;
  StateReporter& operator=(const StateReporter&) = delete;
  ~StateReporter() { set(RunState::kFinished); }
  void set(RunState state) {
    if (observer_ != nullptr && !finished_) observer_->on_state(state);
    if (state == RunState::kFinished) finished_ = true;
  }

 private:
  RunObserver* observer_;
  bool finished_ = false;
};

// A result carrying what the pump captured and the code's wall time.
[[nodiscard]] inline RunResult captured_result(BackendId id, const RunRequest& request,
                                               proc::OutputPump& pump,
                                               std::chrono::steady_clock::time_point start,
                                               std::chrono::steady_clock::time_point end) {
  RunResult result;
  result.backend = std::move(id);
  result.tool_description = request.tool_description;
  result.stdout_data = std::move(pump.out().data);
  result.stderr_data = std::move(pump.err().data);
  result.stdout_truncated = pump.out().truncated;
  result.stderr_truncated = pump.err().truncated;
  result.wall_ms = ms_between(start, end);
  return result;
}

}  // namespace cordon::oci
