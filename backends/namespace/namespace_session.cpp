#include "namespace_session.h"

#include <chrono>
#include <utility>

#include "cordon/session_workspace.h"

namespace cordon::ns {
namespace {

constexpr auto kCloseBound = std::chrono::seconds(10);

}  // namespace

NamespaceSession::NamespaceSession(NamespaceBackend& backend, std::unique_ptr<KeeperThread> keeper,
                                   BuiltSandbox sandbox, UniqueFd workspace, SessionNetwork network,
                                   RunRequest base)
    : WorkspaceSession(std::move(workspace), sandbox.host.uid, sandbox.host.gid),
      backend_(backend),
      keeper_(std::move(keeper)),
      sandbox_(std::move(sandbox)),
      network_(std::move(network)),
      base_(std::move(base)) {}

NamespaceSession::~NamespaceSession() {
  const auto until = std::chrono::steady_clock::now() + kCloseBound;
  (void)sandbox_.process.close_session(until);
  close_workspace();
  if (sandbox_.limits) (void)sandbox_.limits->remove(until);
}

RunResult NamespaceSession::run(const RunRequest& request, const CancelToken& cancel,
                                RunObserver* observer) {
  ++calls_;
  // Nothing to run in: every call of a session whose sandbox died fails with why.
  if (const std::optional<SessionLoss> gone = loss()) {
    return sandbox_error(BackendId{std::string(backend_.name()), std::string(backend_.version())},
                         "the session " + gone->reason);
  }
  return backend_.run_in_kernel(sandbox_, kernel_, &network_, as_session_call(request, base_),
                                cancel, observer);
}

Status NamespaceSession::reset() {
  if (!kernel_) return {};
  kernel_.reset();
  const auto now = std::chrono::steady_clock::now();
  bool asked = false;
  auto ended = SandboxKernel::end(sandbox_.process, now, now + kCloseBound, &asked);
  if (!ended) return fail(ended.error().code, "end the interpreter: " + ended.error().describe());
  return {};
}

Status NamespaceSession::start_kernel(std::chrono::steady_clock::time_point until) {
  auto started = backend_.start_kernel(sandbox_, base_, network_.proxy.get(), until);
  if (!started) return std::unexpected(started.error());
  kernel_.emplace(std::move(*started));
  return {};
}

bool NamespaceSession::warm() {
  return !loss() && kernel_.has_value() && !kernel_->client().lost();
}

SessionStats NamespaceSession::stats() {
  // The session's limit group has counted every process of every call: its CPU time is the
  // session's.
  const auto usage = sandbox_.limits ? sandbox_.limits->usage() : std::nullopt;
  const std::optional<std::int64_t> cpu_ms =
      usage && usage->cpu_usec ? std::optional(static_cast<std::int64_t>(*usage->cpu_usec / 1000))
                               : std::nullopt;
  SessionStats s = workspace_stats(calls_, cpu_ms, usage);
  s.interpreter_alive = kernel_.has_value() && !kernel_->client().lost();
  return s;
}

std::optional<SessionLoss> NamespaceSession::loss() {
  if (!sandbox_.process.init_exited()) return std::nullopt;
  SessionLoss loss;
  loss.oom = sandbox_.limits && sandbox_.limits->stats().oom_killed;
  loss.reason = loss.oom ? "its sandbox ended: the memory limit's OOM killer ended its init"
                         : "its sandbox ended: its init died";
  return loss;
}

}  // namespace cordon::ns
