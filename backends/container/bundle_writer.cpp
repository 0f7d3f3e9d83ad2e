// write_bundle / place_run_files: the only place the container backend writes files.
#include "bundle_writer.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cordon/unique_fd.h"
#include "cordon/workspace.h"

namespace cordon::oci {
namespace {

namespace fs = std::filesystem;

Status apply_prep(const fs::path& root, const policy::FsStep& s) {
  const fs::path target = root / s.target.substr(1);
  switch (s.op) {
    case policy::FsOp::kMkdir:
      if (::mkdir(target.c_str(), s.mode != 0 ? s.mode : 0755) != 0 && errno != EEXIST) {
        return fail_errno("mkdir " + target.string());
      }
      ::chmod(target.c_str(), s.mode != 0 ? s.mode : 0755);
      return {};
    case policy::FsOp::kMkfile:
      return write_new_file(target, "", 0444);
    case policy::FsOp::kWriteFile:
      return write_new_file(target, s.data, s.mode != 0 ? s.mode : 0444);
    case policy::FsOp::kSymlink:
      if (::symlink(s.source.c_str(), target.c_str()) != 0) {
        return fail_errno("symlink " + target.string());
      }
      return {};
    default:
      return fail(ErrorCode::kInternal,
                  "unexpected root preparation step " + std::string(policy::to_string(s.op)));
  }
}

}  // namespace

Status write_shared_rootfs(const fs::path& root, const BundlePlan& plan) {
  if (::mkdir(root.c_str(), 0755) != 0) return fail_errno("mkdir " + root.string());
  // umask may have narrowed it; the sandbox user must be able to enter its root.
  ::chmod(root.c_str(), 0755);
  for (const auto& step : plan.rootfs_prep) {
    if (auto st = apply_prep(root, step); !st) return st;
  }
  return {};
}

Status write_bundle(const fs::path& bundle, std::string_view config_json,
                    std::uint64_t scratch_bytes) {
  if (::mkdir(bundle.c_str(), 0700) != 0) return fail_errno("mkdir " + bundle.string());
  const fs::path code = bundle / "code";
  // 0711: the sandbox user may reach the files it is told of (the code, the init's socket)
  // but not list the directory, where a run's proxy socket has a secret name (kRelayDirBytes).
  if (::mkdir(code.c_str(), 0711) != 0) return fail_errno("mkdir " + code.string());
  ::chmod(code.c_str(), 0711);
  const fs::path scratch = bundle / "scratch";
  if (::mkdir(scratch.c_str(), 0700) != 0) return fail_errno("mkdir " + scratch.string());
  const std::string data = "size=" + std::to_string(scratch_bytes) + ",mode=1777";
  if (::mount("tmpfs", scratch.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, data.c_str()) != 0) {
    return fail_errno("mount the scratch tmpfs on " + scratch.string());
  }
  return write_new_file(bundle / "config.json", config_json, 0600);
}

Status place_run_files(const fs::path& bundle, const RunPayload& payload,
                       const std::map<std::string, std::string>& input_files) {
  if (payload.code_file) {
    if (auto st = write_new_file(bundle / "code" / "code", *payload.code_file, 0444); !st)
      return st;
  }
  if (input_files.empty()) return {};
  const fs::path scratch = bundle / "scratch";
  if (auto st = place_input_files(scratch, input_files); !st) return st;
  // The code runs as the sandbox user: give it what it was handed.
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(scratch, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    ::lchown(it->path().c_str(), kSandboxUid, kSandboxGid);
  }
  return {};
}

}  // namespace cordon::oci
