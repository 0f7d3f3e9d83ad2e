// The interface every backend implements. Backends are plugins (plugin_abi.h).
//
// Backend never crosses the plugin boundary: the boundary is C (plugin_abi.h), and each
// side wraps it in a Backend (plugin_export.h in the plugin, plugin_backend.cpp in the
// loader). A virtual function added here is served to plugins only once the C descriptor
// carries it (a new minor, appended) and both wrappers map it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cordon/cancel.h"
#include "cordon/capabilities.h"
#include "cordon/observer.h"
#include "cordon/plan.h"
#include "cordon/request.h"
#include "cordon/result.h"
#include "cordon/session.h"

namespace cordon {

// Another configuration of a backend that this host offers, made by creating the backend
// with one more option: the container backend under gVisor's runsc. A front end that lists
// backends (`cordon backends`, `audit --all`, the inspector) lists it as a backend of its
// own, "container (runsc)"; `auto` never picks one (it is chosen only when asked).
struct BackendVariant {
  std::string label;    // "runsc": listed as "container (runsc)"
  std::string runtime;  // the BackendOptions::runtime it is created with
  bool operator==(const BackendVariant&) const = default;
};

struct Probe {
  bool available = false;
  std::string reason;  // why not, in words a user can act on; may explain caveats if available
  // This backend's own variant (Backend::variant()), "" for the plain one.
  std::string variant{};  // NOLINT(readability-redundant-member-init): g++'s missing-initializer
  // The other variants this host has (found, not necessarily usable: each is probed itself).
  std::vector<BackendVariant> variants{};  // NOLINT(readability-redundant-member-init): as above
};

// How every list shows a backend: "container (runsc)", or the name alone.
[[nodiscard]] std::string backend_label(std::string_view name, std::string_view variant);
[[nodiscard]] inline std::string backend_label(const BackendId& id) {
  return backend_label(id.name, id.variant);
}

class Backend {
 public:
  virtual ~Backend() = default;

  [[nodiscard]] virtual std::string_view name() const = 0;
  [[nodiscard]] virtual std::string_view version() const = 0;
  // Which configuration of this backend it is, when it has more than one that enforce
  // different things ("runsc" for the container backend under gVisor), else "". Part of
  // its identity: results (BackendId), history and audit reports carry it. Crosses the
  // plugin boundary in the probe JSON, so it needs no descriptor entry of its own.
  [[nodiscard]] virtual std::string variant() const { return {}; }

  // Construction only stores the options: it reads nothing of the host and changes
  // nothing, so `cordon backends` and `cordon plan` can make every backend for free.

  // Whether this backend can run on this host, and why not. Read-only: it may read /proc
  // and /sys and ask a tool its version (found once, then cached), but it creates, removes
  // and kills nothing. capabilities() and describe_plan() answer from the same facts.
  [[nodiscard]] virtual Probe probe() const = 0;

  // The explicit step that may change the host before runs: sweeping what a killed cordon
  // left (its cgroups, temp dirs, uid slots, containers), acquiring the backend's runtime
  // directory, starting a warm pool. Idempotent and thread-safe: the work is done once, and
  // a failure is remembered and returned again (each run then fails closed with it as a
  // sandbox error). run() calls it itself when nobody did, so callers need not; the front
  // ends that run code call it up front, `cordon backends` and `cordon plan` never do.
  // Default: nothing to prepare.
  [[nodiscard]] virtual Result<void> prepare();

  // What a run with these limits would have enforced on this host, per aspect.
  [[nodiscard]] virtual Capabilities capabilities(const Limits& limits) const = 0;

  // Runs the request to completion. Never throws and never returns an API error for
  // the run itself: a sandbox failure is a RunResult with outcome kSandboxError.
  // Several runs may proceed at once on different threads of one process.
  // `observer` may be null.
  [[nodiscard]] virtual RunResult run(const RunRequest& request, const CancelToken& cancel,
                                      RunObserver* observer) = 0;

  // The plan a run of `request` would apply on this host (plan.h), without running
  // anything and without creating any host object (process, cgroup, mount, file): what
  // `cordon plan` and `cordon run --dry-run` print. Fails only on an invalid request.
  //
  // Every plan names its backend, the effective timeout and its limits (plan_limits()).
  // This default answers for a backend without a plan of its own and says no more than
  // capabilities() does: the limits, `aspects` (the full per-aspect capabilities),
  // `isolates`, no namespaces, no filesystem of its own and no seccomp filter. A backend
  // that builds a real plan (namespaces, mounts, seccomp policy and hash, rlimits)
  // overrides it (see the namespace backend).
  [[nodiscard]] virtual Result<Plan> describe_plan(const RunRequest& request) const;

  // Opens a session (session.h): a sandbox kept across calls. The default refuses
  // (kUnavailable) with the reason: a backend that cannot keep one session's files and
  // processes from another's never holds one.
  [[nodiscard]] virtual Result<std::unique_ptr<BackendSession>> open_session(
      const SessionOptions& options);
};

// A backend's prepare() work, done once whichever thread asks first; every call, later or
// concurrent, returns what that one returned (a failure is remembered: fail closed). A
// call that throws leaves it undone, for the next call to try again.
class PrepareOnce {
 public:
  template <typename Work>
  [[nodiscard]] Result<void> operator()(Work&& work) {
    std::call_once(once_, [&] {
      status_ = std::forward<Work>(work)();
      done_.store(true, std::memory_order_release);
    });
    return status_;
  }
  // Whether the work was done (successfully or not); its writes are then visible.
  [[nodiscard]] bool done() const { return done_.load(std::memory_order_acquire); }

 private:
  std::once_flag once_;
  Result<void> status_;
  std::atomic<bool> done_{false};
};

// What every backend checks first in run() and describe_plan(), before anything starts:
// validate(request), then check_limits() of the request's limits against
// backend.capabilities(request.limits) (limit_check.h). A run refused here is a sandbox
// error "invalid request: ..."; a plan, an error.
[[nodiscard]] Status check_request(const Backend& backend, const RunRequest& request);

// The limits of a plan, in the declaration's words: one per limit aspect (timeout,
// memory, processes, cpu, disk, output) that was asked for or that the backend enforces
// anyway, as `capabilities` states it. `cordon plan` also uses it to fill in limits a
// backend's own plan leaves out.
[[nodiscard]] std::vector<PlanLimit> plan_limits(const RunRequest& request,
                                                 const Capabilities& capabilities);

}  // namespace cordon
