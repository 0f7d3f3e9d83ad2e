// The container backend: each run in a container of an existing OCI runtime (runc here;
// crun and runsc are probed), described by a bundle cordon writes (container_plan.h) from
// the same policy as the namespace backend: a read-only minimal root with the host's /usr
// (or a user-named root directory), loopback-only network namespace, memory/pids/CPU in
// linux.resources, no capabilities, no_new_privs, uid 65534, a sized tmpfs /tmp, the
// runtime's masked and read-only paths, the cordon-default seccomp policy.
//
// Cold runs: write the bundle, `runc run --detach` (the container's stdio are cordon's
// pipes, with no relay by the runtime), hand the code to the init inside (cordon-init oci)
// on its control socket, pump output; at the deadline or on cancel `runc kill`; once no
// process of the container is left, read its cgroup counters (OOM kill, pids limit,
// peaks) while the stopped container still holds them; then `runc delete --force`,
// unmount the scratch, remove the bundle. With ContainerOptions::pool_size > 0 runs take containers
// created and started ahead of time (cordon/warm_pool.h) whose limits match theirs.
//
// Host objects are named per backend instance and swept at start when their instance is
// dead (instance.h). See docs/THREAT_MODEL.md for what holds and what does not.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "container_plan.h"
#include "cordon/backend.h"
#include "cordon/net/run_network.h"
#include "cordon/proc/cgroup_layout.h"
#include "cordon/warm_pool.h"
#include "engine_run.h"
#include "instance.h"
#include "live_container.h"
#include "runtime_cli.h"

namespace cordon::oci {

class ContainerBackend final : public Backend {
 public:
  // Stores the options; the host is looked at by probe() and changed by prepare().
  explicit ContainerBackend(ContainerOptions options = {});
  ~ContainerBackend() override;
  ContainerBackend(const ContainerBackend&) = delete;
  ContainerBackend& operator=(const ContainerBackend&) = delete;

  [[nodiscard]] std::string_view name() const override { return "container"; }
  [[nodiscard]] std::string_view version() const override { return "0.1.0"; }
  // "runsc" under gVisor (listed as "container (runsc)"), else "".
  [[nodiscard]] std::string variant() const override;
  // Found once (discover()), read-only: the runtime (`runc --version`-style questions) or
  // the engine and its image, the cgroup hierarchies, the host layout, cordon-oci-init.
  [[nodiscard]] Probe probe() const override;
  [[nodiscard]] Capabilities capabilities(const Limits& limits) const override;
  // Acquires the instance (its lock and directories under the runtime directory), sweeps
  // what dead instances left (containers killed, cgroups, mounts, bundles), copies
  // cordon-oci-init, writes the shared root directory (or the engine's seccomp profile),
  // starts the warm pool. Fails, and every run with it, when the probe says unavailable.
  [[nodiscard]] Result<void> prepare() override;
  [[nodiscard]] RunResult run(const RunRequest& request, const CancelToken& cancel,
                              RunObserver* observer) override;
  [[nodiscard]] Result<Plan> describe_plan(const RunRequest& request) const override;
  // A session (container_session.h): one container of its own (never a pooled one) kept
  // across calls, on runc and runsc. Refused with the reason in engine mode, with crun, and
  // with a network allow-list.
  [[nodiscard]] Result<std::unique_ptr<BackendSession>> open_session(
      const SessionOptions& options) override;

  [[nodiscard]] const ContainerOptions& options() const { return options_; }
  // The warm pool, when options().pool_size > 0 (null otherwise); prepares the backend first.
  [[nodiscard]] WarmPool<LiveContainer>* pool() {
    (void)prepare();
    return pool_.get();
  }
  [[nodiscard]] const RuntimeCli& runtime() const { return runtime_; }

 private:
  friend class ContainerSession;  // launches, runs in and removes its container

  [[nodiscard]] Result<BundlePlan> plan_bundle(const BundleKey& key, const std::string& name) const;
  // config.json of container `name` with the limits of `key`, as text.
  [[nodiscard]] Result<std::string> config_text(const BundleKey& key,
                                                const std::string& name) const;
  // Writes a bundle and starts it detached (`run --detach`), for a cold run or the pool.
  [[nodiscard]] Result<LiveContainer> launch(const BundleKey& key, Clock::time_point until);
  void remove(LiveContainer& container);
  // The egress proxy of an allow-list, its socket in a directory of `bundle`'s code/ named
  // by kRelayDirBytes of secret (container_plan.h): the proxy, and the socket's path as the
  // container sees it (the order's relay_socket).
  struct BundleProxy {
    std::unique_ptr<net::RunNetwork> network;
    std::string relay_socket;
  };
  [[nodiscard]] Result<BundleProxy> start_bundle_proxy(const std::filesystem::path& bundle,
                                                       const NetworkAccess& access) const;
  // The one declaration of what a run with `limits` enforces here: capabilities() and
  // every run's `enforced` (runtime and engine mode) are rendered from it.
  [[nodiscard]] Capabilities declare(const Limits& limits) const;
  // Engine mode: finds the engine and asks it for the image (engine_); "" or why not.
  [[nodiscard]] std::string find_engine() const;
  // engine_ with the seccomp profile prepare() wrote (before it: where it will be).
  [[nodiscard]] EngineSettings engine_settings() const;
  // Fills in the host facts below, once, whichever call needs them first; read-only.
  void discover() const;
  // prepare()'s work, done once.
  [[nodiscard]] Status prepare_once();

  ContainerOptions options_;
  std::filesystem::path runtime_dir_;
  std::optional<nlohmann::json> seccomp_;
  std::string policy_name_;
  int policy_version_ = 0;
  std::string policy_hash_;
  // The host facts (discover()); written once, under discovered_, then only read.
  mutable std::once_flag discovered_;
  mutable RuntimeProbe runtime_probe_;
  // The runtime is runsc (gVisor), which launch(), declare() and a run's tree treat apart:
  // decided once, with the probe, rather than from runtime_probe_.name at each of them.
  mutable bool gvisor_ = false;
  mutable bool runsc_installed_ = false;  // runsc is on the PATH: probe() offers its variant
  mutable std::optional<policy::HostLayout> layout_;
  mutable std::vector<proc::CgroupHierarchy> hierarchies_;
  mutable std::filesystem::path init_source_;  // the installed cordon-oci-init
  // The installed cordon-gvisor-stat.so, when runs preload it (preloads_gvisor_stat()).
  mutable std::filesystem::path gvisor_stat_source_;
  mutable std::optional<EngineSettings> engine_;  // engine mode (no seccomp_file: see below)
  mutable Probe probe_;
  // Made by prepare().
  PrepareOnce prepared_;
  RuntimeCli runtime_;
  std::optional<Instance> instance_;
  std::atomic<bool> instance_ready_{false};  // instance_, init_path_, shared_rootfs_ are set
  std::filesystem::path init_path_;          // the instance's own copy of cordon-oci-init
  std::filesystem::path gvisor_stat_path_;   // and of cordon-gvisor-stat.so, when preloaded
  std::string engine_seccomp_file_;          // the engine's seccomp profile
  std::filesystem::path engine_dir_;         // holds the engine's seccomp profile
  std::filesystem::path shared_rootfs_;      // the host-built root of every container
  BundleKey default_key_;                    // the limits of a request that sets none
  std::string default_config_;               // its config.json with a placeholder name
  BundleKey pool_key_;
  std::unique_ptr<WarmPool<LiveContainer>> pool_;  // last: its thread uses everything above
};

// Engine containers are named kEnginePrefix + "<instance>-<n>".
inline constexpr const char* kEnginePrefix = "cordon-eng-";

// Where cordon-oci-init is: $CORDON_LIBEXEC_DIR, else the libexec folder of this tree
// (cordon/install_layout.h).
[[nodiscard]] std::optional<std::filesystem::path> find_oci_init();

// The default runtime directory: $CORDON_RUNTIME_DIR/oci, else cordon-oci-<euid> under
// default_run_parent() when that is a tmpfs (/dev/shm here), else /run/cordon-oci.
[[nodiscard]] std::filesystem::path default_oci_runtime_dir();

}  // namespace cordon::oci
