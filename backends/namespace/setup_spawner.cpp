#include "setup_spawner.h"

#include <unistd.h>

#include <csignal>
#include <optional>
#include <string>

#include "child_plan_wire.h"
#include "cordon/install_layout.h"
#include "cordon/proc/fd_passing.h"
#include "cordon/proc/pipe.h"
#include "memfd_blob.h"
#include "spawner_protocol.h"

namespace cordon::ns {

std::optional<std::filesystem::path> find_ns_spawner() {
  return find_libexec_helper("cordon-ns-spawner");
}

Result<std::unique_ptr<SetupSpawner>> SetupSpawner::start(const std::filesystem::path& exe) {
  auto pair = proc::make_seqpacket_pair();
  if (!pair) return std::unexpected(pair.error());
  std::unique_ptr<SetupSpawner> s(new SetupSpawner());
  s->socket_ = std::move(pair->read);
  proc::SpawnOptions so;
  so.path = exe.string();
  so.argv = {"cordon-ns-spawner"};
  so.keep_fds = {pair->write.get()};  // at kSpawnerSocketFd (3)
  // On the keeper: the helper and every set-up process have it as their parent (the header).
  std::optional<Result<proc::ChildProcess>> helper;
  s->keeper_.run([&] { helper = proc::spawn(so); });
  pair->write.reset();
  if (!*helper) {
    return fail(helper->error().code, "start " + exe.string() + ": " + helper->error().describe());
  }
  s->helper_ = std::move(**helper);
  s->helper_pid_ = s->helper_.pid();
  return s;
}

SetupSpawner::~SetupSpawner() {
  {
    std::lock_guard lock(mutex_);
    socket_.reset();
  }
  // The socket is closed: the helper ends by itself; SIGKILL makes sure it does. Then the
  // keeper ends.
  if (helper_pid_ > 0) {
    (void)helper_.signal(SIGKILL);
    (void)helper_.wait();
  }
}

bool SetupSpawner::alive() const {
  std::lock_guard lock(mutex_);
  return !broken_;
}

Result<SetupSpawner::Spawned> SetupSpawner::clone_setup(const ChildPlan& plan,
                                                        std::uint64_t clone_flags) {
  const std::string bytes = encode_child_plan(plan, clone_flags);
  auto made = memfd_holding("cordon-setup-plan", bytes, "the set-up plan");
  if (!made) return std::unexpected(made.error());
  const UniqueFd memfd = std::move(*made);
  int fds[cordon::proc::kMaxPassedFds];
  int count = 0;
  for (const int fd :
       {memfd.get(), plan.go_fd, plan.channel_fd, plan.report_fd, plan.init_exe_fd}) {
    fds[count++] = fd;
  }
  for (std::size_t i = 0; i < plan.join_fd_count; ++i) fds[count++] = plan.join_fds[i];
  SpawnRequest req;
  req.plan_size = static_cast<std::uint32_t>(bytes.size());

  std::lock_guard lock(mutex_);
  if (broken_ || !socket_) return fail(ErrorCode::kUnavailable, "cordon-ns-spawner is gone");
  if (const int err = cordon::proc::send_with_fds(socket_.get(), &req, sizeof(req), fds, count);
      err != 0) {
    broken_ = true;
    return std::unexpected(Error{ErrorCode::kUnavailable, err, "send to cordon-ns-spawner"});
  }
  SpawnReply reply;
  int pidfd = -1;
  int got = 0;
  const ssize_t n =
      cordon::proc::receive_with_fds(socket_.get(), &reply, sizeof(reply), &pidfd, 1, &got);
  UniqueFd owned(got == 1 ? pidfd : -1);
  if (n != static_cast<ssize_t>(sizeof(reply))) {
    broken_ = true;
    return fail(ErrorCode::kUnavailable, "cordon-ns-spawner did not answer");
  }
  if (reply.pid <= 0) {
    return fail_errno("clone into new namespaces (cordon-ns-spawner)",
                      reply.error != 0 ? reply.error : EPROTO);
  }
  if (!owned) {
    broken_ = true;
    return fail(ErrorCode::kUnavailable, "cordon-ns-spawner sent no pidfd");
  }
  return Spawned{static_cast<pid_t>(reply.pid), std::move(owned)};
}

}  // namespace cordon::ns
