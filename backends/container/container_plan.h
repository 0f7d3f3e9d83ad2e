// A container run as plain data: the OCI config.json (runtime-spec 1.0) of its bundle,
// what to create in the bundle's root directory, and the payload the in-container init
// receives (argv, environment, code file). Built without touching the system from the
// shared policy (core/policy: the same root-filesystem plan and seccomp policy as the
// namespace backend, rendered by oci_mounts.h / oci_seccomp.h), unit-tested without a
// runtime, printed by `cordon plan`.
//
// The bundle depends only on the run's limits (BundleKey), not on its code: a container
// can be created before its request is known (the warm pool), and the code arrives at
// start through the init's control socket (init_protocol.h).
#pragma once

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/net/resolver.h"
#include "cordon/plan.h"
#include "cordon/policy/fs_plan.h"
#include "cordon/proc/init_protocol.h"
#include "cordon/request.h"
#include "cordon/result.h"

namespace cordon::oci {

inline constexpr std::uint64_t kDefaultMemoryCeiling = 512ULL << 20;
inline constexpr std::uint64_t kDefaultProcessCeiling = 256;
inline constexpr std::uint64_t kDefaultScratchBytes = 64ULL << 20;
inline constexpr std::uint32_t kSandboxUid = 65534;
inline constexpr std::uint32_t kSandboxGid = 65534;
inline constexpr rlim_t kSandboxNofile = 1024;
// Inside the container: the init (a read-only bind of the host's cordon-oci-init) and,
// for code too long for argv, the code file (written into the bundle's root directory).
inline constexpr const char* kInitPath = "/.cordon-init";
inline constexpr const char* kCodeDir = "/.cordon";  // the bundle's code/ directory, read-only
inline constexpr const char* kCodeFile = "/.cordon/code";
// A run with a network allow-list: the egress proxy's socket, made when the run starts (so a
// pooled container, built before, sees it too) in a directory of the bundle's code/ whose
// name is drawn per run, kRelayDirBytes from the kernel's CSPRNG (proxy_socket_path()). The
// order hands the path to the init's relay alone: /.cordon is 0711, so the code can neither
// list it nor name the socket, and the relay holds the only way in, as the namespace
// backend's holds a directory fd (issue #40). The init and its relay are not dumpable: the
// code (the same uid) cannot read the path from their memory.
inline constexpr std::size_t kRelayDirBytes = 16;
// The socket's path inside the container for the directory named `secret`.
[[nodiscard]] std::string proxy_socket_path(const std::string& secret);
// The init's control channel (cordon/proc/oci_init_channel.h): cordon's listener in the
// bundle's code/ directory, there only until the init connected, before any code runs.
inline constexpr const char* kInitSocket = "/.cordon/init.sock";
inline constexpr const char* kScratchDir = "/tmp";
// Under runsc, with cordon's own root: the library every process of the code preloads so
// that coreutils' stat calls work under Debian's gVisor (preload/gvisor_stat.cpp), a
// read-only bind of the instance's copy of cordon-gvisor-stat.so.
inline constexpr const char* kGvisorStatPath = "/.cordon-gvisor-stat.so";
inline constexpr const char* kGvisorStatHelper = "cordon-gvisor-stat.so";

// Settings of one backend instance. The test-only switches turn one protection off at a
// time for positive controls (the same probe must succeed without it).
struct ContainerOptions {
  std::string runtime = "runc";  // "runc", "crun" or "runsc", found on PATH
  // runsc's gVisor platform (BackendOptions::runsc_platform); empty: $CORDON_RUNSC_PLATFORM
  // or the default (runsc_platform.h).
  std::string runsc_platform;
  // Engine mode (engine_run.h): "podman" or "docker" on PATH runs `image`; empty: cordon
  // writes bundles for `runtime` (the OCI runtime mode).
  std::string engine;
  std::string image;
  // A root filesystem directory (e.g. an unpacked image) used read-only instead of the
  // minimal root built from the host's /usr. Must hold the interpreters at /usr/bin.
  std::string rootfs;
  // An environment's directory: the host-built root shows its /usr, top-level aliases,
  // ld.so.cache and alternatives instead of the host's (FsOptions::system_root), as the
  // namespace backend does. Empty: the host's. Not with `rootfs` or an engine.
  std::string system_root;
  std::string system_root_digest;  // as the front end pinned it; stated in the claim
  // Where bundles, runtime state and instance locks live; empty: /run/cordon-oci for root.
  std::string runtime_dir;
  std::uint64_t default_memory_bytes = kDefaultMemoryCeiling;
  std::uint64_t default_max_processes = kDefaultProcessCeiling;
  double cpus = 1.0;              // CPU bandwidth (linux.resources.cpu quota/period); 0: none
  std::size_t pool_size = 0;      // warm containers kept by this instance (0: no pool)
  bool network_namespace = true;  // test only: off shares the host's network
  bool seccomp = true;            // test only: off = no syscall filter
  bool drop_capabilities = true;  // test only: off = the runtime's default capability set
  // Tests only: names for the egress proxy to resolve instead of the host's resolver, so a
  // test's "domains" lead to servers on this machine (net/resolver.h).
  std::shared_ptr<net::Resolver> resolver_for_test;
};

// Whether the runs of `options` preload kGvisorStatPath: runsc in the OCI runtime mode with
// cordon's host-built root (a user's root filesystem may hold another libc, or none).
[[nodiscard]] bool preloads_gvisor_stat(const ContainerOptions& options);

// What a bundle depends on: the effective limits of the run.
struct BundleKey {
  std::uint64_t memory_bytes = kDefaultMemoryCeiling;
  std::uint64_t max_processes = kDefaultProcessCeiling;
  std::uint64_t scratch_bytes = kDefaultScratchBytes;
  std::optional<std::chrono::milliseconds> cpu_time;
  friend bool operator==(const BundleKey&, const BundleKey&) = default;
};

// The request's limits with the instance's default ceilings where it sets none.
[[nodiscard]] BundleKey bundle_key(const Limits& limits, const ContainerOptions& options);

struct BundleInputs {
  BundleKey key;
  ContainerOptions options;
  policy::HostLayout layout;
  std::string init_host_path;  // the host's cordon-oci-init
  // The host's cordon-gvisor-stat.so, bound at kGvisorStatPath (preloads_gvisor_stat()).
  std::string gvisor_stat_host_path;
  std::string scratch_host_path;  // the host directory (a sized tmpfs) bound at /tmp
  std::string code_host_path;     // the host directory bound read-only at kCodeDir
  // The host-built root directory, shared by every container of the instance (read-only
  // inside each); unused when options.rootfs names the user's.
  std::string rootfs_host_path;
  // Relative: below the runtime's (= cordon's) own cgroup; "<parent cordon owns>/c".
  std::string cgroups_path;
  std::optional<rlim_t> nofile_hard;
  // Set when the sandbox's syscall policy is applied (options.seccomp).
  std::optional<nlohmann::json> seccomp;
};

struct BundlePlan {
  nlohmann::json config;                    // config.json
  std::vector<policy::FsStep> rootfs_prep;  // kMkdir/kMkfile/kWriteFile/kSymlink, in order
};

[[nodiscard]] Result<BundlePlan> make_bundle_plan(const BundleInputs& inputs);

// The bundle as every backend's plan says it (cordon/plan.h; `cordon plan`): namespaces,
// the filesystem steps (the root, the files written into it, the mounts, masked and
// read-only paths, in the order they take effect), user, hostname, network, Linux
// capabilities, rlimits, cwd. Read from `plan.config` itself, so the text rendered from
// it says what the config.json beside it says.
[[nodiscard]] Plan plan_view(const BundlePlan& plan);

// The policy's OCI seccomp section as `runtime` applies it. runsc (release 2022-12-19, with
// --oci-seccomp) ignores errnoRet and defaultErrnoRet and answers every refused syscall
// with EPERM. The policy refuses clone3 with ENOSYS (its flags are in memory, where a
// filter cannot check them) so that libc falls back to clone, whose flags it checks; given
// EPERM instead, glibc's pthread_create fails and no thread starts (python's threading,
// node). Under runsc clone3 is passed to the sentry, which does not implement it and
// answers ENOSYS itself, so libc still falls back to the checked clone.
[[nodiscard]] nlohmann::json oci_seccomp_for_runtime(nlohmann::json seccomp,
                                                     const std::string& runtime);

// What the init receives once the container is started.
struct RunPayload {
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::optional<std::string> code_file;  // contents for kCodeFile, when argv cannot hold it
  // With a network allow-list: the init relays 127.0.0.1:relay_port to relay_socket
  // (proxy_socket_path(), set by the run once the proxy listens).
  std::uint16_t relay_port = 0;
  std::string relay_socket;
};

// The interpreter and its argv as the container sees them, a clean environment (and, with
// a network allow-list, the proxy's variables and the relay).
[[nodiscard]] Result<RunPayload> make_run_payload(const RunRequest& request,
                                                  const ContainerOptions& options);

// The order the init reads (init_protocol.h): its header and records; a session's calls
// are kSessionRun orders (oci_init_channel.h).
[[nodiscard]] std::string encode_init_request(const RunPayload& payload,
                                              std::chrono::milliseconds backstop,
                                              init::OrderKind kind = init::OrderKind::kRun);

}  // namespace cordon::oci
