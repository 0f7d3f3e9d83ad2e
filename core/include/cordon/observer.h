// Live view of a run: output chunks and state changes as they happen (the inspector and
// an MCP server stream them). Called on the thread that called run(); implementations
// must be quick and must not call back into the backend.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cordon {

enum class Stream { kStdout, kStderr };

enum class RunState {
  kPreparing,  // building the sandbox
  kRunning,    // the code has started; the deadline counts from here
  kStopping,   // the code ended or was killed; collecting and tearing down
  kFinished,
};

std::string_view to_string(RunState state);

// The sandbox's resource use while the code runs, as far as the backend can measure it
// (its limit groups); a backend that cannot measure sends none.
struct ResourceSample {
  std::chrono::milliseconds elapsed{0};       // since the code started
  std::optional<std::uint64_t> memory_bytes;  // charged to the run now, every process
  std::optional<std::uint64_t> cpu_usec;      // CPU time used so far, every process
};

// A sample from a group's readings (a negative or missing one is not measured): the CPU
// counted from `cpu_base_usec`, the group's figure when the run started (a counter read
// lower than it is not measured either). Nullopt when neither figure is.
[[nodiscard]] inline std::optional<ResourceSample> sample_of(
    std::optional<std::int64_t> memory_bytes, std::optional<std::int64_t> cpu_usec,
    std::int64_t cpu_base_usec) {
  ResourceSample out;
  if (memory_bytes && *memory_bytes >= 0) {
    out.memory_bytes = static_cast<std::uint64_t>(*memory_bytes);
  }
  if (cpu_usec && *cpu_usec >= cpu_base_usec && cpu_base_usec >= 0) {
    out.cpu_usec = static_cast<std::uint64_t>(*cpu_usec - cpu_base_usec);
  }
  if (!out.memory_bytes && !out.cpu_usec) return std::nullopt;
  return out;
}

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_state(RunState /*state*/) {}
  // Every chunk read, also past the cap (so a live view sees a flood as it happens);
  // `kept` says whether the chunk made it into the capped result.
  virtual void on_output(Stream /*stream*/, std::string_view /*chunk*/, bool /*kept*/) {}
  // Every ~150 ms while the code runs, when the backend can measure (StartedTree::sample).
  virtual void on_sample(const ResourceSample& /*sample*/) {}
};

}  // namespace cordon
