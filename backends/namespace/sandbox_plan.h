// A run of the namespace backend as plain data: which namespaces, which ids map to which
// host ids, the root filesystem plan, the seccomp policy, rlimits, argv and environment.
// Built in the parent without touching the system (plan, then apply: child_setup.h does
// the syscalls), unit-tested without privileges, and printable as JSON for
// `cordon plan --json`.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"
#include "cordon/net/resolver.h"
#include "cordon/policy/fs_plan.h"
#include "cordon/proc/spawn.h"
#include "cordon/request.h"
#include "cordon/result.h"

namespace cordon::ns {

// The ceilings a run gets when its request sets none (NamespaceOptions can override them).
inline constexpr std::uint64_t kDefaultMemoryCeiling = 512ULL << 20;
inline constexpr std::uint64_t kDefaultProcessCeiling = 256;

// Test-only switches and host-specific settings of the backend. Production code uses the
// defaults; the integration tests turn one protection off at a time for positive controls
// (the same probe must succeed without it, so a broken probe cannot read as "blocked").
struct NamespaceOptions {
  bool network_namespace = true;  // off: the code shares the host's network
  bool seccomp = true;            // off: no syscall filter
  bool drop_capabilities = true;  // off: the code keeps its capabilities in its user namespace
  bool use_cgroups = true;        // off: limits fall back to rlimits (as for a non-root user)
  bool hide_usr_local = true;
  // off: /proc/sys is not made read-only. The host's sysctls stay out of reach (they
  // need host root, which no sandbox id maps to); with capabilities kept the code can set
  // those of its own network namespace: the kernel-tunable attempt's positive control.
  bool readonly_proc_sys = true;
  std::vector<std::string> extra_ro_paths;  // absolute host paths exposed read-only
  // An environment's directory (cordon environment add; --rootfs): its /usr, top-level
  // aliases, ld.so.cache and alternatives instead of the host's (FsOptions::system_root),
  // /usr/local included (an environment's is part of it). Empty: the host's.
  std::string system_root;
  std::string system_root_digest;  // as the front end pinned it; stated in the claim
  // When cordon runs as root, each concurrent run's sandbox user maps to its own host uid
  // (and gid) uid_base + slot, slot in [0, uid_slots). Runs never share a host uid.
  std::uint32_t uid_base = 200000;
  std::uint32_t uid_slots = 4096;
  // Where uid-slot lock files live; empty: /run/cordon for root, else
  // $XDG_RUNTIME_DIR/cordon or /tmp/cordon-<uid>.
  std::string runtime_dir;
  // Ceilings a run gets when its request sets none: an isolating backend never runs
  // without memory and process limits (a missing ceiling is a threat we hold). Both must
  // be above 0; the request's own values always win.
  std::uint64_t default_memory_bytes = kDefaultMemoryCeiling;
  std::uint64_t default_max_processes = kDefaultProcessCeiling;
  // Sandboxes built ahead of time (namespaces, root filesystem, limit groups, uid slot),
  // each waiting for one run's code: a run with the default limits then pays only for
  // starting its code. 0: every run builds its own. For long-running processes; the
  // plugin takes the pool_size option, else reads CORDON_NAMESPACE_POOL_SIZE.
  std::size_t pool_size = 0;
  // With a pool: a second pool of the same size whose sandboxes hold `python3 -c <loader>`
  // already started and waiting for its code (prestart_loader.h), taken by python runs
  // that start exactly as it did (default limits and environment, code passed with -c, no
  // stdin); other runs take the plain pool. Off by default; the plugin reads
  // CORDON_NAMESPACE_PRESTART=python.
  bool prestart_python = false;
  // With a pool: another pool of the same size whose sandboxes hold the run's own
  // `sh -c <placeholder>` already through its exec and dynamic loading, stopped before the
  // shell's main() by a preloaded library that then takes the code
  // (preload/sh_preload.cpp), for sh runs that start exactly as it did (as for python).
  // Off by default; the plugin reads CORDON_NAMESPACE_PRESTART=sh (or python,sh).
  bool prestart_sh = false;
  // Who clones each sandbox's set-up process (setup_spawner.h): cordon-ns-spawner, a small
  // helper started on the first build, or this process. The helper pays off in a
  // long-lived process that builds many sandboxes (a fifth of the CPU per call of
  // `cordon mcp`); a one-shot run would pay its start for a single clone. kWithPool: the
  // helper when pool_size > 0. Without the helper (not installed, or gone), this process
  // clones: the same set-up, no less isolation. kAlways fails the build instead (tests).
  // The plugin reads CORDON_NAMESPACE_SPAWNER (pool, always, never).
  enum class Spawner { kWithPool, kAlways, kNever };
  Spawner setup_spawner = Spawner::kWithPool;
  // Tests only: called in cordon's process right before it releases the set-up process
  // (the "go" byte), with that process's pid, so a test can make it die there.
  void (*before_go_for_test)(pid_t setup_process) = nullptr;
  // Tests only: resolves the names of a run's network allow-list instead of the host's
  // resolver, so a test's "domains" lead to servers on this machine (net/resolver.h).
  std::shared_ptr<net::Resolver> resolver_for_test;
};

// One line of /proc/<pid>/uid_map or gid_map.
struct IdMapping {
  std::uint32_t inside = 65534;
  std::uint32_t outside = 0;
  std::uint32_t count = 1;
};

// A file the child writes into the sandbox before the root becomes read-only: the input
// files (under the working directory) and the code file when the code is too long for argv.
struct SandboxFile {
  std::string path;  // absolute inside the sandbox
  std::string data;
  std::uint32_t mode = 0644;
  bool directory = false;  // mkdir instead of a file
};

struct NamedRlimit {
  proc::RlimitSetting setting;
  std::string name;  // "RLIMIT_NOFILE"
};

// Who runs cordon, as far as the plan is concerned.
struct HostIdentity {
  bool root = false;      // euid 0: may map any host id, uses uid slots
  std::uint32_t uid = 0;  // host uid the sandbox user maps to (slot uid for root)
  std::uint32_t gid = 0;
};

// What the limit group could place by cgroup (the rest falls back to rlimits).
struct CgroupCoverage {
  bool memory = false;
  bool processes = false;
  bool cpu = false;
};

struct SandboxPlan {
  unsigned long clone_flags = 0;
  std::vector<std::string> namespaces;  // "user", "pid", ... for JSON and capabilities
  IdMapping uid_map;
  IdMapping gid_map;
  bool deny_setgroups = true;  // an unprivileged writer must deny setgroups to map gids
  bool clear_groups = false;   // root: setgroups(0, NULL) in the child, so no host group stays
  policy::FsPlan fs;
  std::vector<SandboxFile> files;
  std::string cwd = "/tmp";
  std::string executable;  // the interpreter, absolute inside the sandbox
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::vector<NamedRlimit> rlimits;
  bool loopback_up = true;
  bool drop_capabilities = true;
  bool seccomp = true;
  std::string policy_name;
  int policy_version = 0;
  std::string policy_hash;
};

struct PlanInputs {
  const RunRequest* request = nullptr;
  NamespaceOptions options;
  policy::HostLayout layout;
  HostIdentity host;
  CgroupCoverage cgroups;
  std::string policy_name;
  int policy_version = 0;
  std::string policy_hash;
  // The hard limits of the calling process: rlimits are only ever lowered (root here has
  // no CAP_SYS_RESOURCE, so raising one in the child would fail).
  std::optional<rlim_t> nofile_hard;
  // Where the interpreter is looked up (cordon/interpreter.h's find_interpreter when
  // unset); a backend may answer from what it found for an earlier run.
  std::function<Result<std::filesystem::path>(Language, std::string_view search_path,
                                              const std::filesystem::path& root)>
      find_interpreter;
  // The sandbox's root is already made (a pooled sandbox, built for the same filesystem:
  // NamespaceBackend::pool_fits): the plan then has no mount steps (the order carries none
  // and nothing applies them again), only the filesystem's home, working directory, ids
  // and hostname. Building the steps again was ~8% of a pooled call's CPU on the
  // worker's path (2026-12-04).
  bool filesystem_made = false;
};

inline constexpr std::uint32_t kSandboxUid = 65534;
inline constexpr std::uint32_t kSandboxGid = 65534;
inline constexpr std::uint64_t kDefaultScratchBytes = 64ULL << 20;
inline constexpr rlim_t kSandboxNofile = 1024;
inline constexpr const char* kCodeFile = "/.cordon-code";

// The limits a run is held to: the request's, with the options' default ceilings for
// memory and processes where the request leaves them unset.
[[nodiscard]] Limits with_default_ceilings(const Limits& requested,
                                           const NamespaceOptions& options);

// Pure: inputs in, plan out. Fails on an invalid request or options.
[[nodiscard]] Result<SandboxPlan> make_sandbox_plan(const PlanInputs& inputs);

// The plan as `cordon plan` shows it (cordon/plan.h): namespaces, id maps, mounts, seccomp
// policy and hash, rlimits, argv; the files, env and gid map in its `extra`.
[[nodiscard]] Plan to_plan(const SandboxPlan& plan);

// "<inside> <outside> <count>\n", as the kernel reads a map.
[[nodiscard]] std::string map_line(const IdMapping& m);

}  // namespace cordon::ns
