// The sandbox's root filesystem as a plan: an ordered list of plain steps, built without
// touching the system, printable as JSON (`cordon plan --json`) and unit-testable. The
// namespace backend applies it in the child (sandboxed-api's mount tree, bubblewrap's
// SetupOp list); oci_mounts.h turns the same plan into an OCI config's mounts.
//
// Every `target` is an absolute path *inside* the sandbox; the apply step prefixes its
// staging directory until pivot_root. Bind `source`s are host paths.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/plan.h"
#include "cordon/request.h"

namespace cordon::policy {

// The root tmpfs: 1 MiB for the minimal /etc and the mount points, plus room for the code
// file of the largest code a request may carry (kMaxCodeBytes): the namespace backend
// writes code too long for argv at the root (/.cordon-code), outside the /tmp it runs in.
inline constexpr std::uint64_t kRootTmpfsBytes = (1ULL << 20) + kMaxCodeBytes;

// How the host lays out one top-level path (/bin, /lib64, ...).
struct HostEntry {
  enum class Kind { kAbsent, kSymlink, kDirectory };
  std::string path;
  Kind kind = Kind::kAbsent;
  std::string link_target;  // kSymlink: as readlink() returns it ("usr/bin")
};

struct HostLayout {
  std::vector<HostEntry> top_level;  // /bin /sbin /lib /lib32 /lib64 /libx32
  bool has_usr_local = true;         // a directory to hide
  bool has_ld_so_cache = true;       // /etc/ld.so.cache
  bool has_etc_alternatives = true;  // /etc/alternatives (Debian's update-alternatives)
};

// lstat/readlink of the paths above, below `root` (an environment's directory; "/" or "":
// the host's own). Cheap (a handful of syscalls); no privileges.
[[nodiscard]] Result<HostLayout> probe_host_layout(const std::string& root = "/");

// How a backend's filesystem claim names the environment it shows (`system_root`): its
// digest as the front end pinned it, else "unpinned <root>". The claim's data, so the policy
// hash, and every audit report bound to it, follows the environment's contents.
[[nodiscard]] std::string environment_claim(const std::string& system_root,
                                            const std::string& digest);

// An extra host path exposed read-only at the same place inside the sandbox.
struct ExtraPath {
  std::string path;  // absolute, normalised
  bool is_directory = true;
};
// lstat (following symlinks) of a path for ExtraPath; fails if it does not exist.
[[nodiscard]] Result<ExtraPath> describe_extra_path(const std::string& path);

struct FsOptions {
  // Where the distribution comes from: the directory whose /usr, top-level aliases,
  // /etc/ld.so.cache and /etc/alternatives the sandbox shows (an environment, e.g. a
  // debootstrap tree); "/": the host's. `layout` must be probed below the same root.
  std::string system_root = "/";
  std::vector<ExtraPath> extra_ro_paths;
  bool hide_usr_local = true;  // /usr/local holds site tools, not the distribution's
  std::uint64_t tmp_size_bytes = 64ULL << 20;
  std::uint64_t shm_size_bytes = 16ULL << 20;  // /dev/shm; 0: none
  std::string hostname = "cordon";
  std::uint32_t uid = 65534;
  std::uint32_t gid = 65534;
  std::string user_name = "sandbox";
  HostLayout layout;
};

enum class FsOp {
  kMakePrivate,      // MS_REC|MS_PRIVATE on the host "/" of the new mount namespace
  kTmpfs,            // mount tmpfs at target with `data` options
  kBind,             // bind source -> target (target must exist: see kMkdir/kMkfile)
  kProc,             // mount a fresh procfs at target (from inside the new PID namespace)
  kMkdir,            // mkdir target with `mode`
  kMkfile,           // create an empty file at target as a bind mountpoint
  kWriteFile,        // create target with `data` as contents and `mode`
  kSymlink,          // symlink target -> source
  kMask,             // hide target: /dev/null bound over a file, empty ro tmpfs over a dir
  kReadonly,         // bind target onto itself read-only
  kRemountReadonly,  // make the mount at target read-only (keeps submounts as they are)
  kPivotRoot,        // pivot_root into the staging root
  kDetachOldRoot,    // umount2(old root, MNT_DETACH)
};
[[nodiscard]] std::string_view to_string(FsOp op);

struct FsStep {
  FsOp op = FsOp::kMkdir;
  // The {} are for g++: -Wmissing-field-initializers flags designated initialisers that
  // skip a member without a default member initialiser.
  std::string target{};  // NOLINT(readability-redundant-member-init)
  std::string source{};  // NOLINT(readability-redundant-member-init)
  std::string data{};    // NOLINT(readability-redundant-member-init)
  std::uint32_t mode = 0;
  bool read_only = false;
  bool nosuid = false;
  bool nodev = false;
  bool noexec = false;
  // Skip when the target (kMask/kReadonly) or the source (kBind) does not exist: /proc
  // entries differ between kernels, /etc/ld.so.cache between distributions.
  bool optional = false;
  friend bool operator==(const FsStep&, const FsStep&) = default;
};

struct FsPlan {
  std::vector<FsStep> steps;
  std::string hostname;
  std::uint32_t uid = 65534;
  std::uint32_t gid = 65534;
  std::string home = "/tmp";
  std::string cwd = "/tmp";
};

// Pure: options (including the probed layout) in, plan out. Fails on extra paths that
// are relative, unnormalised, "/", inside /proc, /dev or /tmp (which the plan owns), or
// under a hidden /usr/local.
[[nodiscard]] Result<FsPlan> make_fs_plan(const FsOptions& options);
// The plan make_fs_plan() makes of `options` without its steps: hostname, ids, home and
// working directory, for a sandbox whose root was already made from the same options.
[[nodiscard]] FsPlan fs_plan_facts(const FsOptions& options);

// The steps as a plan shows them (plan.h: `cordon plan`): the step's op, target and source,
// its mount data or file contents, mode in octal, flags; the plan's hostname, uid, gid,
// home and cwd beside the steps.
[[nodiscard]] PlanStep plan_step(const FsStep& step);
[[nodiscard]] PlanFilesystem plan_filesystem(const FsPlan& plan);

}  // namespace cordon::policy
