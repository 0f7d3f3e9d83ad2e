// One call of a session's kernel (session_kernel.h) run to its RunResult, written once for
// every backend that keeps a kernel (namespace, container): the backend starts the kernel
// its own way and hands this its client, its output pipes and a way to end it.
//
// While KernelClient::call() waits for the reply (bounded by the call's deadline and the
// cancel token), the kernel's stdout/stderr pipes are read in the same poll into the run
// driver's OutputPump, with the call's output cap: a call that writes more than a pipe
// holds blocks the kernel at its flush until it is read. Then:
//  - a reply: what is left in the pipes is read without waiting (the kernel flushed before
//    replying); exit code or signal, `value` from the reply; the kernel lives on;
//  - anything else (the deadline, cancel, the kernel gone, a protocol error), or a reply
//    that says the sweep did not run when the backend relies on it: the kernel is lost.
//    end() kills every process of it, the pipes are drained to EOF (bounded), and the
//    result says state_lost. Timed out and cancelled are decided from the host's deadline
//    and the token, never from anything the kernel wrote.
// Never hangs on the kernel: every wait is bounded by the deadline or the drain bound.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "cordon/cancel.h"
#include "cordon/observer.h"
#include "cordon/request.h"
#include "cordon/result.h"
#include "cordon/run_driver.h"
#include "cordon/session_kernel.h"

namespace cordon {

// A started kernel, as the call driver borrows it.
struct StartedKernel {
  KernelClient* client = nullptr;
  // The read ends of the kernel's fd 1 and 2, kept open across calls (the driver reads
  // duplicates; O_NONBLOCK is set on them).
  int stdout_fd = -1;
  int stderr_fd = -1;
  // Ends every process of the kernel and waits until none is left, giving up at `until`;
  // returns the kernel process's wait status when known. Until `kill_at` the kernel may end
  // on its own (it closed its channel: sys.exit() runs python's clean-up after that), then
  // SIGKILL. Called once per lost kernel; afterwards the pipes' write ends are closed.
  std::function<std::optional<int>(RunClock::time_point kill_at, RunClock::time_point until)> end;
  // The kernel was started to sweep (--sweep-pidns): a reply with swept false means
  // something of the call may still run, and the kernel is treated as lost.
  bool expects_sweep = false;
};

// After the call (and the kernel's end when it was lost): the backend's own facts (an OOM
// kill, its limit group's measures) into `t` and `result`, before the outcome is decided.
// An OOM kill loses the kernel too, whichever process the OOM killer chose.
using KernelCallFacts = std::function<void(Termination& t, RunResult& result)>;

// Runs `call` in `kernel` with `request`'s timeout and output cap. Fills stdout/stderr (and
// their truncation), wall_ms, the outcome and exit facts, value and state_lost; the caller
// adds the backend, set-up time and what was enforced. A lost kernel's client answers every
// later call as gone: start another.
[[nodiscard]] RunResult run_kernel_call(StartedKernel& kernel, const KernelCall& call,
                                        const RunRequest& request, const CancelToken& cancel,
                                        RunObserver* observer, const KernelCallFacts& facts = {});

}  // namespace cordon
