// Turns SIGINT, SIGTERM and SIGHUP sent to cordon into a cancellation of the run, so the
// backend tears the sandbox down instead of cordon dying and leaving it behind.
//
// The handler only writes the signal number to a self-pipe (async-signal-safe); a watcher
// thread reads it and calls CancelSource::cancel(), which need not be signal-safe. The
// handlers are caught, not ignored, so exec resets them to the default in the code's
// processes: the sandboxed code never inherits cordon's dispositions.
#pragma once

#include <atomic>
#include <thread>

#include "cordon/cancel.h"
#include "cordon/unique_fd.h"

namespace cordon::cli {

class SignalCanceller {
 public:
  // Installs the handlers (one SignalCanceller at a time per process).
  explicit SignalCanceller(CancelSource source);
  SignalCanceller(const SignalCanceller&) = delete;
  SignalCanceller& operator=(const SignalCanceller&) = delete;
  // Restores the previous dispositions and stops the watcher.
  ~SignalCanceller();

  // The signal that cancelled the run, 0 if none arrived.
  [[nodiscard]] int received() const { return received_.load(); }

 private:
  void watch();

  CancelSource source_;
  UniqueFd read_end_;
  UniqueFd write_end_;
  std::atomic<int> received_{0};
  std::thread watcher_;
};

// Makes writes to a closed stdout/stderr fail with EPIPE instead of killing cordon
// mid-run (which would leave the sandbox behind). A no-op handler, not SIG_IGN: an
// ignored SIGPIPE would be inherited by the sandboxed code across exec.
void catch_sigpipe();

}  // namespace cordon::cli
