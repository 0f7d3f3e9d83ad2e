// FsPlan -> OCI mounts, maskedPaths, readonlyPaths and the files to pre-create.
#include "cordon/policy/oci_mounts.h"

#include <sstream>

namespace cordon::policy {
namespace {

bool strictly_under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.starts_with(dir) &&
         (dir == "/" || path[dir.size()] == '/');
}

// The runtime supplies these itself (runtime-spec "Default Devices" and /dev symlinks).
bool runtime_provides(const std::string& target) {
  return strictly_under(target, "/dev") && target != "/dev/shm";
}

nlohmann::json options_of(const FsStep& s) {
  nlohmann::json opts = nlohmann::json::array();
  if (s.op == FsOp::kBind) opts.push_back("bind");
  if (s.read_only) opts.push_back("ro");
  if (s.nosuid) opts.push_back("nosuid");
  if (s.nodev) opts.push_back("nodev");
  if (s.noexec) opts.push_back("noexec");
  std::stringstream data(s.data);
  for (std::string item; std::getline(data, item, ',');) {
    if (!item.empty()) opts.push_back(item);
  }
  return opts;
}

}  // namespace

OciFilesystem to_oci_filesystem(const FsPlan& plan) {
  OciFilesystem out;
  std::vector<std::string> mount_targets;  // mounted over: nothing to prepare beneath them
  for (const FsStep& s : plan.steps) {
    if ((s.op == FsOp::kTmpfs || s.op == FsOp::kProc || s.op == FsOp::kBind) && s.target != "/") {
      mount_targets.push_back(s.target);
    }
  }
  const auto hidden_by_mount = [&mount_targets](const std::string& path) {
    for (const std::string& m : mount_targets) {
      if (strictly_under(path, m)) return true;
    }
    return false;
  };

  for (const FsStep& s : plan.steps) {
    switch (s.op) {
      case FsOp::kTmpfs: {
        if (s.target == "/") break;  // the bundle's rootfs directory plays this part
        FsStep mount = s;
        // The runtime creates its device nodes in /dev (the namespace backend binds them
        // instead, and a bind keeps its own flags): nodev there would make them unusable.
        if (s.target == "/dev") mount.nodev = false;
        out.mounts.push_back({{"destination", s.target},
                              {"type", "tmpfs"},
                              {"source", "tmpfs"},
                              {"options", options_of(mount)}});
        break;
      }
      case FsOp::kBind:
        if (runtime_provides(s.target)) break;
        out.mounts.push_back({{"destination", s.target},
                              {"type", "bind"},
                              {"source", s.source},
                              {"options", options_of(s)}});
        break;
      case FsOp::kProc:
        out.mounts.push_back({{"destination", s.target},
                              {"type", "proc"},
                              {"source", "proc"},
                              {"options", options_of(s)}});
        break;
      case FsOp::kMask:
        out.masked_paths.push_back(s.target);
        break;
      case FsOp::kReadonly:
        out.readonly_paths.push_back(s.target);
        break;
      case FsOp::kMkdir:
      case FsOp::kMkfile:
      case FsOp::kWriteFile:
      case FsOp::kSymlink:
        if (!hidden_by_mount(s.target)) out.rootfs_prep.push_back(s);
        break;
      case FsOp::kRemountReadonly:
        if (s.target == "/") out.root_readonly = true;
        break;
      case FsOp::kMakePrivate:
      case FsOp::kPivotRoot:
      case FsOp::kDetachOldRoot:
        break;  // the runtime's own business
    }
  }
  return out;
}

}  // namespace cordon::policy
