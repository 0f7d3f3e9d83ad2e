#include "namespace_session.h"

#include <chrono>
#include <utility>

#include "cordon/session_workspace.h"

namespace cordon::ns {
namespace {

constexpr auto kCloseBound = std::chrono::seconds(10);

}  // namespace

NamespaceSession::NamespaceSession(NamespaceBackend& backend, BuiltSandbox sandbox,
                                   UniqueFd workspace, RunRequest base)
    : WorkspaceSession(std::move(workspace), sandbox.host.uid, sandbox.host.gid),
      backend_(backend),
      sandbox_(std::move(sandbox)),
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
  return backend_.run_in_session(sandbox_, &tree_cpu_us_,
                                 with_session_limits(request, base_.limits), cancel, observer);
}

SessionStats NamespaceSession::stats() {
  return workspace_stats(calls_, tree_cpu_us_ / 1000,
                         sandbox_.limits ? sandbox_.limits->usage() : std::nullopt);
}

}  // namespace cordon::ns
