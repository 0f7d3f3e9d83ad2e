// PreparedChild: a SandboxPlan turned into the flat ChildPlan that the set-up process
// reads (child_setup.h), with the storage its pointers point into. Parent side only.
#include <sys/mman.h>
#include <sys/mount.h>

#include <deque>
#include <memory>
#include <string>

#include "child_setup.h"
#include "cordon/policy/fs_plan.h"

namespace cordon::ns {

PreparedChild::~PreparedChild() {
  if (stacks_ != nullptr) ::munmap(stacks_, stacks_size_);
}

void* PreparedChild::init_stack_top() const {
  return static_cast<char*>(stacks_) + kSetupStackBytes;
}

std::string PreparedChild::describe_mount(int index) const {
  if (index < 0 || static_cast<std::size_t>(index) >= mounts_.size()) return "mount step";
  const ChildMount& m = mounts_[static_cast<std::size_t>(index)];
  std::string out = std::string(policy::to_string(m.op)) + " " + m.target;
  if (m.source != nullptr && m.op != policy::FsOp::kWriteFile)
    out += std::string(" <- ") + m.source;
  return out;
}

Result<std::unique_ptr<PreparedChild>> PreparedChild::make(const SandboxPlan& plan,
                                                           const policy::SeccompProgram* seccomp,
                                                           const Fds& fds, bool want_tmp_fd) {
  std::unique_ptr<PreparedChild> pc(new PreparedChild());
  if (plan.seccomp && seccomp == nullptr) {
    return fail(ErrorCode::kInternal, "the plan asks for seccomp but no program was compiled");
  }
  auto keep = [&](std::string s) -> const char* {
    return pc->strings_.emplace_back(std::move(s)).c_str();
  };
  const std::string staging = kStaging;
  auto staged = [&](const std::string& target) {
    return keep(target == "/" ? staging : staging + target);
  };
  auto flags_of = [](const policy::FsStep& s) {
    unsigned long f = 0;
    if (s.nosuid) f |= MS_NOSUID;
    if (s.nodev) f |= MS_NODEV;
    if (s.noexec) f |= MS_NOEXEC;
    return f;
  };

  bool files_placed = false;
  for (const policy::FsStep& s : plan.fs.steps) {
    if (s.op == policy::FsOp::kRemountReadonly && s.target == "/" && !files_placed) {
      // Input files and the code file, while the root and /tmp are still writable.
      for (const SandboxFile& f : plan.files) {
        ChildMount m;
        m.op = f.directory ? policy::FsOp::kMkdir : policy::FsOp::kWriteFile;
        m.target = staged(f.path);
        const char* data = keep(f.data);
        m.data = data;
        m.data_len = f.data.size();
        m.mode = f.mode;
        pc->mounts_.push_back(m);
      }
      files_placed = true;
    }
    ChildMount m;
    m.op = s.op;
    m.mode = s.mode;
    m.flags = flags_of(s);
    m.read_only = s.read_only;
    m.optional = s.optional;
    switch (s.op) {
      case policy::FsOp::kMakePrivate:
        m.target = keep("/");
        break;
      case policy::FsOp::kDetachOldRoot:
        m.target = keep(".");
        break;
      default:
        m.target = staged(s.target);
    }
    if (s.op == policy::FsOp::kMask) m.source = keep("/dev/null");
    if (!s.source.empty()) m.source = keep(s.source);
    if (s.op == policy::FsOp::kWriteFile || s.op == policy::FsOp::kTmpfs) {
      const char* data = keep(s.data);
      m.data = data;
      m.data_len = s.data.size();
    }
    pc->mounts_.push_back(m);
  }
  if (!files_placed && !plan.files.empty()) {
    return fail(ErrorCode::kInternal, "filesystem plan has no final read-only remount of /");
  }

  // cordon-init in its namespace role (core/libexec/init/main.cpp).
  pc->init_argv_ = {const_cast<char*>(keep("cordon-init")), const_cast<char*>(keep("ns")), nullptr};
  pc->init_envp_ = {nullptr};

  pc->stacks_size_ = kSetupStackBytes;
  pc->stacks_ = ::mmap(nullptr, pc->stacks_size_, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
  if (pc->stacks_ == MAP_FAILED) {
    pc->stacks_ = nullptr;
    return fail_errno("mmap child stacks");
  }

  ChildPlan& cp = pc->plan_;
  cp.go_fd = fds.go;
  cp.channel_fd = fds.channel;
  cp.report_fd = fds.report;
  cp.init_exe_fd = fds.init_exe;
  if (fds.join_count > ChildPlan::kMaxJoinFds) {
    return fail(ErrorCode::kInternal, "too many limit groups for the sandbox set-up");
  }
  for (std::size_t i = 0; i < fds.join_count; ++i) cp.join_fds[i] = fds.join[i];
  cp.join_fd_count = fds.join_count;
  cp.mounts = pc->mounts_.data();
  cp.mount_count = pc->mounts_.size();
  cp.hostname = keep(plan.fs.hostname);
  cp.hostname_len = plan.fs.hostname.size();
  cp.loopback_up = plan.loopback_up;
  cp.clear_groups = plan.clear_groups;
  cp.drop_capabilities = plan.drop_capabilities;
  cp.send_tmp_fd = want_tmp_fd;
  cp.uid = plan.fs.uid;
  cp.gid = plan.fs.gid;
  if (plan.seccomp) {
    cp.seccomp_filter = seccomp->instructions.data();
    cp.seccomp_count = seccomp->instructions.size();
  }
  cp.init_argv = pc->init_argv_.data();
  cp.init_envp = pc->init_envp_.data();
  return pc;
}

}  // namespace cordon::ns
