// Compiling a SyscallPolicy with libseccomp (parent side) and installing the exported
// BPF with raw syscalls (child side).
#include "cordon/policy/seccomp_compiler.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "cordon/policy/concrete_rules.h"
#include "cordon/policy/seccomp_install.h"
#include "cordon/unique_fd.h"

namespace cordon::policy {
namespace {

struct ContextDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using Context = std::unique_ptr<void, ContextDeleter>;

std::uint32_t to_scmp_action(const Verdict& v) {
  switch (v.kind) {
    case Verdict::Kind::kAllow:
      return SCMP_ACT_ALLOW;
    case Verdict::Kind::kErrno:
      return SCMP_ACT_ERRNO(static_cast<std::uint32_t>(v.errno_value));
    case Verdict::Kind::kKillProcess:
      return SCMP_ACT_KILL_PROCESS;
  }
  return SCMP_ACT_KILL_PROCESS;
}

// libseccomp returns -errno.
std::unexpected<Error> scmp_fail(const std::string& what, int rc) {
  return fail_errno("libseccomp: " + what, -rc);
}

Result<std::vector<sock_filter>> export_bpf(const Context& ctx) {
  // libseccomp 2.5 can only export to a file descriptor; a memfd keeps it off disk.
  UniqueFd fd(::memfd_create("cordon-seccomp", MFD_CLOEXEC));
  if (!fd) return fail_errno("memfd_create for the seccomp program");
  if (int rc = seccomp_export_bpf(ctx.get(), fd.get()); rc < 0) return scmp_fail("export", rc);
  const off_t size = ::lseek(fd.get(), 0, SEEK_END);
  if (size < 0) return fail_errno("lseek on the seccomp memfd");
  const auto bytes = static_cast<std::size_t>(size);
  if (bytes == 0 || bytes % sizeof(sock_filter) != 0) {
    return fail(ErrorCode::kInternal, "libseccomp exported " + std::to_string(bytes) +
                                          " bytes, not a whole number of BPF instructions");
  }
  if (bytes / sizeof(sock_filter) > BPF_MAXINSNS) {
    return fail(ErrorCode::kInvalidArgument,
                "seccomp program has " + std::to_string(bytes / sizeof(sock_filter)) +
                    " instructions, the kernel accepts at most " + std::to_string(BPF_MAXINSNS));
  }
  std::vector<sock_filter> program(bytes / sizeof(sock_filter));
  std::size_t done = 0;
  auto* out = reinterpret_cast<char*>(program.data());
  while (done < bytes) {
    const ssize_t n = ::pread(fd.get(), out + done, bytes - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail_errno("reading the seccomp memfd", n < 0 ? errno : EIO);
    done += static_cast<std::size_t>(n);
  }
  return program;
}

void add_once(std::vector<std::string>& list, const std::string& name) {
  if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
}

}  // namespace

Result<SeccompProgram> compile_seccomp(const SyscallPolicy& policy) {
  if (auto valid = validate(policy); !valid) return std::unexpected(valid.error());

  Context ctx(seccomp_init(to_scmp_action(policy.default_verdict)));
  if (!ctx) return fail(ErrorCode::kInternal, "seccomp_init failed");
  // Only the native architecture is in the filter; any other ABI (i386 via int 0x80 on
  // x86_64, x32, arm32 on arm64) reaches the bad-architecture action.
  if (int rc =
          seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, to_scmp_action(policy.foreign_arch));
      rc < 0) {
    return scmp_fail("set bad-architecture action", rc);
  }
  // A binary search over syscall numbers instead of a linear chain: ~200 rules would
  // otherwise cost ~200 compares on the hottest path of every late-numbered syscall.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2); rc < 0) {
    return scmp_fail("set optimisation level", rc);
  }

  const std::uint32_t native = seccomp_arch_native();
  const ArgLayout layout = (native == SCMP_ARCH_S390 || native == SCMP_ARCH_S390X)
                               ? ArgLayout::kS390
                               : ArgLayout::kGeneric;
  SeccompProgram program;
  for (const ConcreteRule& rule : expand_rules(policy, layout)) {
    const int nr = seccomp_syscall_resolve_name(rule.name.c_str());
    if (nr == __NR_SCMP_ERROR) {
      add_once(program.unknown_syscalls, rule.name);
      continue;
    }
    if (nr < 0) {  // a pseudo number: the call exists on other architectures only
      add_once(program.absent_on_arch, rule.name);
      continue;
    }
    // libseccomp rejects (EACCES) a rule whose action is the default; the rules of one
    // syscall are disjoint, so leaving it out means the same thing.
    if (rule.verdict == policy.default_verdict) continue;
    int rc = 0;
    if (rule.arg) {
      const scmp_arg_cmp cmp{rule.arg->index, SCMP_CMP_MASKED_EQ, rule.arg->mask, rule.arg->value};
      rc = seccomp_rule_add_exact_array(ctx.get(), to_scmp_action(rule.verdict), nr, 1, &cmp);
    } else {
      rc = seccomp_rule_add_exact_array(ctx.get(), to_scmp_action(rule.verdict), nr, 0, nullptr);
    }
    if (rc < 0) return scmp_fail("rule for " + rule.name, rc);
  }

  auto bpf = export_bpf(ctx);
  if (!bpf) return std::unexpected(bpf.error());
  program.instructions = std::move(*bpf);
  program.policy_name = policy.name;
  program.policy_version = policy.version;
  program.policy_hash = content_hash(policy);
  return program;
}

int apply_seccomp(const SeccompProgram& program) noexcept {
  return install_seccomp_filter(program.instructions.data(), program.instructions.size());
}

}  // namespace cordon::policy
