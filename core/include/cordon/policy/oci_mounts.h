// FsPlan -> the filesystem parts of an OCI config.json, for the container backend. The
// runtime does pivot_root, the /dev basics and the masking itself, so the translation is:
//   kBind/kTmpfs/kProc           -> `mounts` entries
//   kMask / kReadonly            -> `linux.maskedPaths` / `linux.readonlyPaths`
//   kMkdir/kWriteFile/kSymlink   -> `rootfs_prep`: what the backend creates in the bundle's
//                                   rootfs directory before `runc create` (OCI has no
//                                   "write this file" or "make this symlink" mount)
//   the root tmpfs + final ro    -> `root.readonly = true`
// Differences from the namespace backend: /dev is the runtime's (it adds /dev/tty, /dev/pts
// per its defaults unless the backend lists devices) and is not remounted read-only.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "cordon/policy/fs_plan.h"

namespace cordon::policy {

struct OciFilesystem {
  nlohmann::json mounts = nlohmann::json::array();
  nlohmann::json masked_paths = nlohmann::json::array();
  nlohmann::json readonly_paths = nlohmann::json::array();
  bool root_readonly = true;
  std::vector<FsStep> rootfs_prep;  // kMkdir/kWriteFile/kSymlink, in order
};

[[nodiscard]] OciFilesystem to_oci_filesystem(const FsPlan& plan);

}  // namespace cordon::policy
