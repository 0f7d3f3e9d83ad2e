// Engine mode: the run goes to a Docker-compatible engine (podman here) with the second
// design document's flag set, instead of cordon writing a bundle:
//   --network none --memory --memory-swap --cpus --pids-limit --read-only
//   --read-only-tmpfs=false --tmpfs /tmp:size=… --security-opt no-new-privileges
//   --security-opt seccomp=<the shared policy> --cap-drop ALL --user 65534:65534
// plus, for podman 4.3 on this machine kind, --runtime runc (its default crun refuses
// cgroup v1 hybrid hosts) and --ulimit nofile/nproc within the current hard limits (root
// here lacks CAP_SYS_RESOURCE), and --cgroups=no-conmon with --cgroup-parent set to a
// group cordon owns below its own memory cgroup (podman's cgroupfs manager would
// otherwise use /libpod_parent, outside it, and leave a conmon group behind). That group
// holds the memory limit and the OOM eventfd, as in the OCI runtime mode: podman on this
// host reports State.OOMKilled false for an OOM kill, and removes the container's own
// group before it could be read; --memory is passed 1 MiB higher, as a second line. The
// code goes in argv, stdin on stdin; the image is
// named by the caller (by digest where they give one), and never pulled (--pull never: a
// missing image is a sandbox error, not a registry request). The container is not --rm'd:
// its exit status is read first, then `rm -f` removes it whatever happened.
//
// The deadline counts from the code's start, as in the other modes, not from the engine's:
// `podman run` takes 0.2 s here and seconds on a loaded host, and a 5 s timeout once
// expired before `true` had started. The code runs under a one-line /usr/bin/sh wrapper
// that writes a byte to a FIFO bound in at /dev/cordon-start and then execs it; cordon
// waits for that byte within the set-up bound, then hands the run to the driver. A FIFO
// rather than an inherited fd because docker passes no fds into a container, and the
// wrapper's redirection closes it before the code runs (the path stays, inert: nobody
// reads it any more). An engine that ends before the byte came never started the code:
// a sandbox error with the engine's own words, not the code's exit status 125.
//
// The image's /tmp must be mode 1777: runc gives a tmpfs mounted over an existing
// directory that directory's mode (the tmpfs mode= option is overridden).
//
// Not offered in engine mode (refused with the reason): input files, artifacts, and code
// too long for argv; a warm pool.
#pragma once

#include <string>
#include <vector>

#include "container_plan.h"
#include "cordon/cancel.h"
#include "cordon/observer.h"
#include "cordon/proc/cgroup_layout.h"
#include "cordon/request.h"
#include "cordon/result.h"
#include "cordon/run_driver.h"
#include "runtime_cli.h"

namespace cordon::oci {

struct EngineSettings {
  std::filesystem::path engine;  // the podman (or docker) binary
  std::string image;
  std::string seccomp_file;  // the shared policy as a profile file; empty: none
  std::string policy_name;
  std::string policy_hash;
  int policy_version = 0;
  // cordon's own cgroup in the memory hierarchy ("/process_api/…"), under which each run
  // gets a parent group of cordon's own (container_cgroups.h) as --cgroup-parent; empty:
  // no memory hierarchy found, and the engine's default parent is used.
  std::string memory_own;
  std::vector<proc::CgroupHierarchy> hierarchies;
  // Where each run's directory (its start FIFO) is made, named like its container without
  // kEnginePrefix, so that the sweep of a dead instance's "<instance>-" names removes it.
  std::filesystem::path runs_dir;
};

// Inside the container, where the start FIFO is bound.
inline constexpr const char* kEngineStartPath = "/dev/cordon-start";

// The `run` argv for one request, with `start_fifo` (the host's path) bound at
// kEngineStartPath (pure; unit-tested).
[[nodiscard]] Result<std::vector<std::string>> engine_run_argv(
    const EngineSettings& settings, const ContainerOptions& options, const RunRequest& request,
    const std::string& name, const std::filesystem::path& start_fifo);

// Runs `request` in a new engine container called `name` through the run driver
// (cordon/run_driver.h) once its code started, and removes it and `run_dir` (made here, for
// the start FIFO). The engine's start is set-up, bounded by `setup_until`. `frame` carries
// the backend's id and policy.
[[nodiscard]] RunResult run_in_engine(const EngineSettings& settings,
                                      const ContainerOptions& options, const RunRequest& request,
                                      const std::string& name, const std::filesystem::path& run_dir,
                                      RunClock::time_point setup_until, const CancelToken& cancel,
                                      RunStateReporter& state, RunFrame frame);

// Removes containers whose names start with `prefix` (a dead instance's).
void sweep_engine_containers(const std::filesystem::path& engine, const std::string& prefix);

}  // namespace cordon::oci
