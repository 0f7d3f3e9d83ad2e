// The one loop that runs while the code runs: drains stdout and stderr concurrently,
// feeds stdin, and notices the main process's exit, the deadline and cancellation.
//
// Reads are non-blocking and the loop never waits on one stream while the other fills,
// so the code can never block on a full pipe. At most `cap_bytes` per stream are kept in
// memory; past the cap the pump keeps reading and discarding (so the writer is not stuck)
// and marks the stream truncated. Every chunk goes to RunObserver::on_output with `kept`.
//
// stdin bytes are written non-blocking as the pipe accepts them, then the write end is
// closed so the code sees EOF. A reader that went away is not an error (EPIPE). SIGPIPE:
// the writes go through write_no_sigpipe (pipe.h), which never raises one in the embedding
// process nor changes its disposition. Thread-safe; no global state.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "cordon/error.h"
#include "cordon/observer.h"
#include "cordon/unique_fd.h"

namespace cordon::proc {

using Clock = std::chrono::steady_clock;

struct StreamCapture {
  std::string data;  // at most the cap
  bool truncated = false;
  std::uint64_t total_bytes = 0;  // everything read, kept or not
  bool eof = false;
};

enum class StopReason {
  kExited,     // the exit fd became readable (the main process ended)
  kDeadline,   // still running at the deadline
  kCancelled,  // the cancel fd became readable first
};

struct PumpStop {
  StopReason reason = StopReason::kExited;
  Clock::time_point at;  // when the pump saw it: the end of the code's wall time
};

class OutputPump {
 public:
  // Takes the parent's ends: the read ends of stdout/stderr, and the write end of stdin
  // (invalid when the code reads /dev/null). `stdin_data` must outlive the pump.
  OutputPump(UniqueFd stdout_read, UniqueFd stderr_read, UniqueFd stdin_write,
             std::string_view stdin_data, std::uint64_t cap_bytes, RunObserver* observer);
  OutputPump(const OutputPump&) = delete;
  OutputPump& operator=(const OutputPump&) = delete;
  ~OutputPump();

  // Pumps until `exit_fd` is readable (a pidfd, or any fd that becomes readable when the
  // main process is gone), `cancel_fd` is readable (-1: never), or `deadline` passes.
  // An exit seen in the same wake-up as the deadline counts as an exit: the deadline
  // fires only for a process still running when the pump looks after it.
  [[nodiscard]] Result<PumpStop> run(int exit_fd, int cancel_fd, Clock::time_point deadline);

  // After the tree was killed: reads on until both streams reach EOF or `until` passes
  // (a descendant cordon could not kill might hold a write end). Closes stdin first.
  // Returns whether both streams reached EOF.
  [[nodiscard]] Result<bool> drain(Clock::time_point until);
  // Reads what the streams hold now, without waiting for more: for a writer that lives on
  // but is known to have written everything (a session's kernel after its reply).
  [[nodiscard]] Status drain_ready();

  // The read end of stdout (0) or stderr (1) while it has not reached EOF, else -1: for a
  // caller that polls them among its own fds and calls drain_ready() when one is readable.
  [[nodiscard]] int fd(int index) const { return fds_[index].get(); }

  [[nodiscard]] StreamCapture& out() { return out_; }
  [[nodiscard]] StreamCapture& err() { return err_; }

 private:
  [[nodiscard]] Status read_some(int index);
  [[nodiscard]] Status write_some();

  // Set from the constructor's arguments; clang-tidy mistakes the aggregate for a default.
  UniqueFd fds_[2];  // NOLINT(modernize-use-default-member-init) stdout, stderr read ends
  UniqueFd stdin_;
  std::string_view stdin_data_;
  std::size_t stdin_off_ = 0;
  std::uint64_t cap_;
  RunObserver* observer_;
  StreamCapture out_;
  StreamCapture err_;
  std::unique_ptr<char[]> buf_;
};

}  // namespace cordon::proc
