#include "sandbox_kernel.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <utility>

#include "cordon/proc/pipe.h"

namespace cordon::ns {
namespace {

// The inode of this process's PID namespace: the kernel sweeps only in another one.
Result<std::uint64_t> host_pidns_inode() {
  struct stat st{};
  if (::stat("/proc/self/ns/pid", &st) != 0) return fail_errno("stat /proc/self/ns/pid");
  return static_cast<std::uint64_t>(st.st_ino);
}

}  // namespace

Result<SandboxKernel> SandboxKernel::launch(SandboxProcess& sandbox, SandboxPlan plan,
                                            const net::RunNetwork* network) {
  auto inode = host_pidns_inode();
  if (!inode) return std::unexpected(inode.error());
  plan.argv = kernel_argv(plan.executable, *inode);
  plan.files.clear();
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return fail_errno("socketpair for the session's interpreter");
  }
  UniqueFd host_end(sv[0]);
  const UniqueFd kernel_end(sv[1]);
  auto out = proc::make_pipe();
  if (!out) return std::unexpected(out.error());
  auto err = proc::make_pipe();
  if (!err) return std::unexpected(err.error());
  CodeOrder order;
  order.plan = &plan;
  order.stdin_fd = kernel_end.get();
  order.stdout_fd = out->write.get();
  order.stderr_fd = err->write.get();
  if (network != nullptr) {
    order.relay_port = net::RunNetwork::port();
    order.relay_dir_fd = network->dir_fd();
    order.relay_socket = net::RunNetwork::socket_name();
  }
  if (auto st = sandbox.launch_session(order); !st) return std::unexpected(st.error());
  // Our copies of the kernel's ends close here: its end of the channel and the pipes' write
  // ends are then only the kernel's, so its death is EOF on each.
  return SandboxKernel(std::move(plan), KernelClient(std::move(host_end)), std::move(out->read),
                       std::move(err->read));
}

Status SandboxKernel::wait_ready(Clock::time_point until) {
  KernelCall empty;
  empty.language = "python";
  const KernelCallResult answer = client_.call(empty, until, CancelToken{});
  if (answer.outcome != KernelOutcome::kReply) {
    return fail(ErrorCode::kUnavailable,
                "the session's interpreter did not start: " + answer.detail);
  }
  if (answer.reply.exit_code != 0) {
    return fail(ErrorCode::kUnavailable, "the session's interpreter failed its first empty cell");
  }
  return {};
}

Result<init::Report> SandboxKernel::end(SandboxProcess& sandbox, Clock::time_point kill_at,
                                        Clock::time_point until, bool* asked) {
  *asked = false;
  auto report = sandbox.session_report(kill_at);
  if (report || report.error().code != ErrorCode::kTimeout) return report;
  *asked = true;
  if (auto st = sandbox.end_session_run(); !st) return std::unexpected(st.error());
  return sandbox.session_report(until);
}

}  // namespace cordon::ns
