// ContainerBackend::run as a short ordered list of steps, each returning a sandbox error
// on failure; the container's removal is one guard, whatever happened.
#include "container_backend.h"

#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <utility>

#include "bundle_writer.h"
#include "container_cgroups.h"
#include "cordon/claims.h"
#include "cordon/install_layout.h"
#include "cordon/limit_check.h"
#include "cordon/net/run_network.h"
#include "cordon/policy/oci_seccomp.h"
#include "cordon/policy/syscall_policy.h"
#include "cordon/proc/oci_init_channel.h"
#include "cordon/proc/pipe.h"
#include "cordon/proc/reaper.h"
#include "cordon/random_hex.h"
#include "cordon/run_driver.h"
#include "cordon/scope_exit.h"
#include "cordon/temp_dir.h"
#include "cordon/units.h"
#include "cordon/workspace.h"
#include "init_listener.h"
#include "init_report.h"
#include "runtime_record.h"

namespace cordon::oci {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// The limit values this backend honours (LimitRange), measured with runc 1.1.5 on Debian
// 12, kernel 6.18, cgroup v1. Memory: `python3 -c 'import json'` starts in a 6 MiB group
// (sh in 4 MiB; below that runc's own set-up fails); 16 MiB leaves headroom. Processes:
// runc's Go init counts its threads in the group before it execs the container's init;
// with 4 allowed one start in six failed ("can't get final child's PID from pipe"), with
// 5 none: 8 leaves headroom. pids.max is set one above the request, for the init.
constexpr LimitRange kMemoryRange{16ULL << 20, kCgroupMemoryMax};
constexpr LimitRange kProcessRange{8, kPidsMaxLimit - 1};
// Under gVisor (runsc 2022-12-19, platform ptrace) the same groups hold gVisor's own kernel:
// the sentry, the gofer and the ptrace stubs, ~20 MiB and ~64 host threads for an idle
// python before the code does anything. Below these a sandbox fails to start or is killed
// for gVisor's use, not the code's.
constexpr LimitRange kGvisorMemoryRange{64ULL << 20, kCgroupMemoryMax};
constexpr LimitRange kGvisorProcessRange{128, kPidsMaxLimit - 1};
// Scratch: the /tmp tmpfs cordon mounts; a size of 0 would be unlimited to tmpfs.

// Waits until an attached runtime's `run` (a pidfd; -1: none) has exited, without reaping
// it: it reaps the sandbox and deletes the container first, and holds the stdio's write
// ends until then.
Status wait_exited(int pidfd, Clock::time_point until) {
  if (pidfd < 0) return {};
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now()).count();
    if (left <= 0) return fail(ErrorCode::kTimeout, "the runtime did not end the container");
    pollfd pfd{pidfd, POLLIN, 0};
    const int n = ::poll(&pfd, 1, static_cast<int>(left));
    if (n > 0) return {};
    if (n < 0 && errno != EINTR) return fail_errno("poll the runtime");
  }
}

// What is waiting in a pipe now (the writer that failed has exited), up to 64 KiB.
std::string pending_text(int fd) {
  std::string out;
  pollfd pfd{fd, POLLIN, 0};
  while (out.size() < 65536 && ::poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN) != 0) {
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace

std::optional<fs::path> find_oci_init() { return find_libexec_helper("cordon-init"); }

fs::path default_oci_runtime_dir() {
  if (const char* dir = std::getenv("CORDON_RUNTIME_DIR"); dir != nullptr && dir[0] == '/') {
    return fs::path(dir) / "oci";
  }
  // Bundles are written and removed on every run: on a tmpfs that costs well under a
  // millisecond, on an ext4 /run ~20 ms (default_run_parent() says the same for run dirs).
  const fs::path parent = default_run_parent();
  return parent == "/tmp" ? fs::path("/run/cordon-oci")
                          : parent / ("cordon-oci-" + std::to_string(::geteuid()));
}

ContainerBackend::ContainerBackend(ContainerOptions options) : options_(std::move(options)) {
  runtime_dir_ =
      options_.runtime_dir.empty() ? default_oci_runtime_dir() : fs::path(options_.runtime_dir);
  const policy::SyscallPolicy& pol = policy::default_syscall_policy();
  policy_name_ = pol.name;
  policy_version_ = pol.version;
  policy_hash_ = policy::content_hash(pol);
  if (options_.seccomp) {
    seccomp_ = oci_seccomp_for_runtime(policy::to_oci_seccomp(pol), options_.runtime);
  }
}

void ContainerBackend::discover() const {
  std::call_once(discovered_, [this] {
    // `runc --version`-style questions and reads of /proc and /sys only: nothing is made.
    runtime_probe_ = probe_runtime(options_.runtime, options_.runsc_platform);
    gvisor_ = runtime_probe_.name == "runsc";
    runsc_installed_ = !find_tool("runsc").empty();
    std::string why = runtime_probe_.usable ? "" : runtime_probe_.reason;
    if (why.empty()) {
      if (auto h = proc::discover_cgroup_hierarchies("/sys/fs/cgroup")) {
        hierarchies_ = std::move(*h);
      }
      if (auto layout = policy::probe_host_layout(options_.system_root)) {
        layout_ = *layout;
      } else {
        why = "cannot read the host's filesystem layout: " + layout.error().describe();
      }
    }
    if (why.empty()) {
      if (auto init = find_oci_init()) {
        init_source_ = *init;
      } else {
        why = "the cordon-init helper was not found (set CORDON_LIBEXEC_DIR)";
      }
    }
    if (why.empty() && preloads_gvisor_stat(options_)) {
      if (auto lib = find_libexec_helper(kGvisorStatHelper)) {
        gvisor_stat_source_ = *lib;
      } else {
        why = std::string("the ") + kGvisorStatHelper +
              " helper runsc's runs preload was not found (set CORDON_LIBEXEC_DIR)";
      }
    }
    // Direct mode puts the limits on cgroups of its own (engine mode leaves them to the
    // engine).
    if (why.empty() && options_.engine.empty())
      why = ContainerCgroups::unavailable_reason(hierarchies_);
    if (why.empty() && !options_.system_root.empty() &&
        (!options_.rootfs.empty() || !options_.engine.empty())) {
      why = "an environment (system root) needs the OCI runtime mode and cordon's own root";
    }
    if (why.empty() && !options_.rootfs.empty() && !fs::is_directory(options_.rootfs)) {
      why = "root filesystem " + options_.rootfs + " is not a directory";
    }
    if (why.empty() && !options_.engine.empty()) why = find_engine();
    // What prepare() makes first: the probe looks without making it (issue #40), so that
    // "available" does not turn into a failed prepare for a reason that could be seen.
    if (why.empty()) {
      if (std::string bad = Instance::unusable(runtime_dir_); !bad.empty()) {
        why = "runtime directory: " + bad;
      }
    }
    if (!why.empty()) {
      probe_ = {false, why};
      return;
    }
    probe_ = {true, engine_
                        ? options_.engine + " at " + engine_->engine.string() + " with image " +
                              options_.image + " (engine mode, runtime " + runtime_probe_.name + ")"
                        : runtime_probe_.reason + "; crun: " + probe_runtime("crun").reason};
  });
}

Probe ContainerBackend::probe() const {
  discover();
  Probe out = probe_;
  out.variant = variant();
  // gVisor enforces other things than runc (its own kernel in front of the host's), so a
  // host that has it offers it as a backend of its own beside the runc one, for listing,
  // auditing and comparing; only runtime mode drives it.
  if (out.variant.empty() && options_.engine.empty() && runsc_installed_) {
    out.variants.push_back({.label = "runsc", .runtime = "runsc"});
  }
  return out;
}

std::string ContainerBackend::variant() const {
  // runc is the plain container backend; crun enforces what runc does, runsc does not.
  return options_.runtime == "runsc" ? "runsc" : "";
}

Result<void> ContainerBackend::prepare() {
  return prepared_([this]() -> Status {
    Status st = prepare_once();
    if (st) return st;
    // Which backend, with which runtime, and the step (each of prepare_once()'s failures
    // starts with its step).
    const std::string which =
        options_.engine.empty() ? "runtime " + options_.runtime : "engine " + options_.engine;
    return fail(st.error().code, "the container backend (" + which +
                                     ") could not be prepared: " + st.error().message);
  });
}

Status ContainerBackend::prepare_once() {
  discover();
  if (!probe_.available) return fail(ErrorCode::kUnavailable, "probe: " + probe_.reason);
  auto inst = Instance::acquire(runtime_dir_);
  if (!inst) {
    return fail(inst.error().code,
                "runtime directory " + runtime_dir_.string() + ": " + inst.error().describe());
  }
  instance_.emplace(std::move(*inst));
  runtime_ =
      RuntimeCli(runtime_probe_.path, instance_->state_dir(),
                 runtime_global_args(runtime_probe_, options_.network_namespace, options_.seccomp));
  // What instances of a killed cordon left: their containers, cgroups, mounts.
  const fs::path engine = options_.engine.empty() ? fs::path() : find_tool(options_.engine);
  (void)sweep_dead_instances(
      runtime_dir_, runtime_, hierarchies_,
      [&engine](const std::string& dead) {
        if (!engine.empty()) sweep_engine_containers(engine, kEnginePrefix + dead + "-");
      },
      instance_->id());
  // Every container of this instance binds the instance's own copy: removing or replacing
  // the installed helper while a long-lived cordon runs (an upgrade, a cleaned build tree)
  // must not break its later runs, and a bind mount cannot be made from a deleted file.
  // The copy goes with the instance (destructor, or the sweep of a dead instance's "<id>-"
  // names).
  std::error_code ec;
  const auto copy_helper = [&](const fs::path& source, const std::string& suffix,
                               fs::path& copy) -> Status {
    copy = instance_->bundles_dir() / (instance_->id() + suffix);
    fs::copy_file(source, copy, fs::copy_options::overwrite_existing, ec);
    if (!ec) return {};
    copy.clear();
    return fail(ErrorCode::kSystem, "copying the helper " + source.filename().string() +
                                        " to the instance: " + ec.message());
  };
  if (Status st = copy_helper(init_source_, "-init", init_path_); !st) return st;
  if (!gvisor_stat_source_.empty()) {
    if (Status st = copy_helper(gvisor_stat_source_, "-gvisor-stat.so", gvisor_stat_path_); !st)
      return st;
  }
  // One root directory for every container of this instance: read-only inside each, so it
  // can be shared; made once instead of per run.
  if (options_.engine.empty() && options_.rootfs.empty()) {
    shared_rootfs_ = instance_->bundles_dir() / (instance_->id() + "-rootfs");
  }
  instance_ready_.store(true, std::memory_order_release);
  if (!options_.engine.empty() && seccomp_) {
    // The shared policy as the engine's profile, in a directory swept with the instance.
    const fs::path dir = instance_->bundles_dir() / instance_->next_name();
    engine_seccomp_file_ = (dir / "seccomp.json").string();
    fs::create_directory(dir, ec);
    engine_dir_ = dir;
    std::ofstream(engine_seccomp_file_) << seccomp_->dump();
  }
  if (options_.engine.empty()) {
    default_key_ = bundle_key(Limits{}, options_);
    auto plan = plan_bundle(default_key_, "@CORDON-NAME@");
    if (!plan) return fail(plan.error().code, "root directory: " + plan.error().describe());
    default_config_ = plan->config.dump();
    if (options_.rootfs.empty()) {
      if (Status st = write_shared_rootfs(shared_rootfs_, *plan); !st) {
        return fail(st.error().code, "root directory: " + st.error().describe());
      }
    }
  }
  if (options_.pool_size > 0) {
    pool_key_ = bundle_key(Limits{}, options_);
    pool_ = std::make_unique<WarmPool<LiveContainer>>(
        options_.pool_size, [this] { return launch(pool_key_, Clock::now() + kDefaultSetupBound); },
        [this](LiveContainer& c) { remove(c); });
  }
  return {};
}

ContainerBackend::~ContainerBackend() {
  pool_.reset();
  if (!engine_dir_.empty()) (void)remove_tree(engine_dir_);
  if (!shared_rootfs_.empty()) (void)remove_tree(shared_rootfs_);
  // The instance's copies.
  if (!init_path_.empty()) ::unlink(init_path_.c_str());
  if (!gvisor_stat_path_.empty()) ::unlink(gvisor_stat_path_.c_str());
}

std::string ContainerBackend::find_engine() const {
  if (options_.engine != "podman" && options_.engine != "docker") {
    return "unknown engine '" + options_.engine + "' (podman or docker)";
  }
  EngineSettings s;
  s.engine = find_tool(options_.engine);
  if (s.engine.empty()) return options_.engine + " is not installed";
  if (options_.image.empty()) return "engine mode needs an image (CORDON_CONTAINER_IMAGE)";
  s.image = options_.image;
  const auto until = Clock::now() + kDefaultSetupBound;
  // A question only: `image inspect` changes nothing.
  if (auto st =
          run_tool({s.engine.string(), "image", "inspect", "--format", "{{.Id}}", s.image}, until);
      !st) {
    return "image " + s.image + " is not available to " + options_.engine +
           " (nothing can be pulled here: make it with `" + options_.engine +
           " import`): " + st.error().describe();
  }
  s.policy_name = policy_name_;
  s.policy_version = policy_version_;
  s.policy_hash = policy_hash_;
  // Podman's cgroupfs manager takes one parent path for every hierarchy; cordon's own
  // memory cgroup is the nested one here (the others are the hierarchies' roots).
  for (const auto& h : hierarchies_) {
    for (const auto& c : h.controllers) {
      if (c != "memory") continue;
      const std::string own = h.own_dir.string();
      const auto at = own.find("/memory/");
      if (at != std::string::npos) s.memory_own = own.substr(at + 7);
    }
  }
  s.hierarchies = hierarchies_;
  engine_ = std::move(s);
  return "";
}

EngineSettings ContainerBackend::engine_settings() const {
  EngineSettings s = *engine_;
  s.runs_dir = prepared_.done() && instance_ ? instance_->bundles_dir() : runtime_dir_ / "bundles";
  if (!seccomp_) return s;
  // Before prepare() wrote the profile, a plan names it where it will be.
  s.seccomp_file = prepared_.done() && !engine_seccomp_file_.empty()
                       ? engine_seccomp_file_
                       : (runtime_dir_ / "bundles" / "<instance>-<n>" / "seccomp.json").string();
  return s;
}

Result<BundlePlan> ContainerBackend::plan_bundle(const BundleKey& key,
                                                 const std::string& name) const {
  if (!layout_) return fail(ErrorCode::kUnavailable, probe_.reason);
  BundleInputs in;
  in.key = key;
  in.options = options_;
  in.layout = *layout_;
  // Before prepare() made the instance, a plan names its paths as they will be.
  const bool ready = instance_ready_.load(std::memory_order_acquire);
  const fs::path bundles = ready ? instance_->bundles_dir() : runtime_dir_ / "bundles";
  const std::string id = ready ? instance_->id() : "<instance>";
  in.init_host_path = ready ? init_path_.string() : (bundles / (id + "-init")).string();
  if (preloads_gvisor_stat(options_)) {
    in.gvisor_stat_host_path =
        ready ? gvisor_stat_path_.string() : (bundles / (id + "-gvisor-stat.so")).string();
  }
  in.scratch_host_path = (bundles / name / "scratch").string();
  in.code_host_path = (bundles / name / "code").string();
  in.rootfs_host_path = ready || !options_.rootfs.empty() ? shared_rootfs_.string()
                                                          : (bundles / (id + "-rootfs")).string();
  in.cgroups_path = kContainerPrefix + name + "/c";
  in.nofile_hard = hard_rlimit(RLIMIT_NOFILE);
  in.seccomp = seccomp_;
  return make_bundle_plan(in);
}

Result<std::string> ContainerBackend::config_text(const BundleKey& key,
                                                  const std::string& name) const {
  // The plan for the default limits is rendered once with a placeholder for the name
  // (it appears only in paths and the cgroups path); other limits are planned afresh.
  constexpr std::string_view kPlaceholder = "@CORDON-NAME@";
  if (!(key == default_key_) || default_config_.empty()) {
    auto plan = plan_bundle(key, name);
    if (!plan) return std::unexpected(plan.error());
    return plan->config.dump();
  }
  std::string out;
  out.reserve(default_config_.size() + 64);
  std::size_t from = 0;
  for (std::size_t at; (at = default_config_.find(kPlaceholder, from)) != std::string::npos;
       from = at + kPlaceholder.size()) {
    out.append(default_config_, from, at - from).append(name);
  }
  return out.append(default_config_, from);
}

void ContainerBackend::remove(LiveContainer& c) {
  if (c.name.empty() || !instance_) return;
  // A container whose init never connected (its start failed) has nothing that would end it.
  const bool connected = static_cast<bool>(c.ctl);
  c.ctl.reset();  // the init exits on EOF, if it still runs
  // An attached runtime's `run` deletes the container itself once it ended: only one
  // that did not end by itself in time (killed here, with its sandbox: runsc starts it
  // attached to its own life) leaves the runtime's state for `delete --force`.
  bool deleted = false;
  if (!c.runner.reaped()) {
    if (connected) (void)wait_exited(c.runner.pidfd(), Clock::now() + kDefaultSetupBound);
    auto ended = c.runner.try_wait();
    deleted = ended && ended->has_value() && (*ended)->exited();
    c.runner = proc::ChildProcess();  // kills and reaps one still running
  }
  // A bound of its own: the wait above may have used all of one.
  (void)remove_container_leftovers(instance_->bundles_dir(), c.name, runtime_, hierarchies_,
                                   Clock::now() + kDefaultSetupBound,
                                   /*runtime_deleted=*/deleted);
  c.name.clear();
}

Result<LiveContainer> ContainerBackend::launch(const BundleKey& key, Clock::time_point until) {
  LiveContainer c;
  const std::string name = instance_->next_name();
  auto config = config_text(key, name);
  if (!config) return std::unexpected(config.error());
  c.name = name;
  ScopeExit undo([&] { remove(c); });
  auto cgroups =
      ContainerCgroups::create(hierarchies_, c.id(), key.memory_bytes, key.max_processes);
  if (!cgroups) return std::unexpected(cgroups.error());
  c.cgroups = std::move(*cgroups);
  // gVisor's sentry dies when the pids group refuses it a thread, and runsc removes the
  // groups it made right after: a group made here is left for cordon to read and remove.
  if (gvisor_) {
    if (auto st = c.cgroups.make_own_pids_group(); !st) return std::unexpected(st.error());
  }
  const fs::path bundle = instance_->bundles_dir() / name;
  if (auto st = write_bundle(bundle, *config, key.scratch_bytes); !st) {
    return std::unexpected(st.error());
  }
  // Before the runtime makes anything: a sweep after cordon died asks the same runtime.
  if (auto st = record_runtime(bundle, runtime_); !st) return std::unexpected(st.error());
  // The init connects to this before anything else (oci_init_channel.h): one channel for
  // runc and runsc, which has no --preserve-fds.
  const fs::path ctl_path = bundle / "code" / kInitSocketName;
  auto listener = listen_for_init(ctl_path);
  if (!listener) return std::unexpected(listener.error());
  auto out = proc::make_pipe();
  auto err = proc::make_pipe();
  auto in = proc::make_pipe();
  if (!out || !err || !in) return fail(ErrorCode::kSystem, "cannot make the stdio pipes");
  c.stdout_read = std::move(out->read);
  c.stderr_read = std::move(err->read);
  c.stdin_write = std::move(in->write);
  if (gvisor_) {
    // runsc runs attached: its `run` in the foreground as cordon's child, not `run --detach`.
    // Its sandbox process is the child of whoever ran `create`/`run`; detached it is
    // orphaned, and on a host whose PID 1 reaps late its zombie kept `runsc delete` polling
    // for ~1-2 s per container (docs/notes-runsc.md). Attached, the foreground `runsc run`
    // hands these fds to the sandbox as they are (no relay), and reaps the sandbox and
    // deletes the container by itself as soon as it ends. runc stays detached: its
    // foreground mode relays the stdio through pipes of its own and blocks on a full one.
    // Under cordon-init's subreaper role: gVisor's stubs, orphaned when its sandbox ends, are
    // reaped before the runner's end says the container is gone (#40).
    auto runner = runtime_.start({"run", "--bundle", bundle.string(), c.id()}, in->read.get(),
                                 out->write.get(), err->write.get(), init_path_);
    if (!runner) return std::unexpected(runner.error());
    c.runner = std::move(*runner);
  } else if (auto st =
                 runtime_.call({"run", "--detach", "--bundle", bundle.string(), c.id()}, until,
                               /*keep_fds=*/{}, in->read.get(), out->write.get(), err->write.get());
             !st) {
    // Detached, the runtime gives the container cordon's pipes themselves as its stdio and
    // returns once it started. In the foreground (`runc run` without --detach) it would
    // relay the stdio through pipes of its own and, when the container ended, block
    // writing what it still held into pipes cordon no longer reads after a deadline:
    // nothing but the container's processes may hold a write end of the code's output.
    // The runtime says why on its stderr, the container's.
    const std::string said(last_line(pending_text(c.stderr_read.get())));
    return fail(st.error().code, st.error().message + said);
  }
  // Only a process of this container may be its init's connection (SO_PEERCRED, #40).
  auto ctl = accept_init(std::move(*listener), ctl_path, until, c.runner.pidfd(),
                         [&c](pid_t peer) { return c.cgroups.holds(peer); });
  if (!ctl) {
    const std::string said(last_line(pending_text(c.stderr_read.get())));
    return fail(ctl.error().code, ctl.error().message + (said.empty() ? "" : " (" + said + ")"));
  }
  c.ctl = std::move(*ctl);
  undo.dismiss();
  return c;
}

Capabilities ContainerBackend::capabilities(const Limits& limits) const {
  discover();
  return declare(limits);
}

Capabilities ContainerBackend::declare(const Limits& limits) const {
  using Unit = Quantity::Unit;
  const BundleKey key = bundle_key(limits, options_);
  // Who starts and kills the containers: the OCI runtime, or in engine mode the engine.
  const std::string rt = engine_ ? engine_->engine.filename().string() : runtime_probe_.name;
  // Engine mode without a memory cgroup of cordon's own: the engine's flags set the limits.
  const bool engine_limits = engine_ && engine_->memory_own.empty();
  const auto group_limit = [&](const char* controller, const char* flag) {
    return engine_limits
               ? Mechanism{"engine", {{"flag", flag}}}
               : Mechanism{"cgroup", {{"controller", controller}, {"group", "container_parent"}}};
  };
  Mechanism root{"root_fs", {}};
  if (engine_) {
    root.params.emplace_back("image", options_.image);
  } else {
    root.params.emplace_back("root", options_.rootfs.empty() ? "fresh" : options_.rootfs);
  }
  if (!options_.system_root.empty()) {
    root.params.emplace_back("environment", policy::environment_claim(options_.system_root,
                                                                      options_.system_root_digest));
  }
  root.params.emplace_back("tmpfs_bytes", std::to_string(key.scratch_bytes));
  // gVisor (runsc): the code's system calls go to gVisor's own kernel (the sentry), which
  // implements them in user space and reaches the host only through its own narrow set;
  // files come through its gofer. What cordon sets up is the same bundle; what enforces it,
  // and what the groups count, differ, and the words say so.
  const bool gvisor = !engine_ && gvisor_;  // the engine runs runc (engine_run.h)
  if (gvisor) root.params.emplace_back("served_by", "gvisor_gofer");
  Capabilities caps;
  // A run may have an allow-list in runtime mode: the proxy's socket in the bundle's code/
  // directory, relayed by the init (kRelay). Engine mode has no such directory of cordon's.
  caps.aspects.push_back(network_namespace_claim(
      options_.network_namespace,
      gvisor ? "gVisor's own network stack with loopback only (runsc --network=none), in an OCI "
               "network namespace without interfaces but lo; no route out; the host's loopback "
               "and abstract unix sockets are unreachable; host unix sockets bound into the "
               "sandbox can be connected to (--host-uds=open: only cordon's /.cordon is)"
             : "OCI network namespace without interfaces but lo; no route out; the host's "
               "loopback and abstract unix sockets are unreachable",
      /*egress_proxy=*/options_.network_namespace && options_.engine.empty()));
  caps.aspects.push_back(claim(
      Aspect::kFilesystem, Enforcement::kEnforced, root, std::nullopt,
      (gvisor ? std::string("gVisor's kernel over a read-only root its gofer serves")
              : rt + " mount namespace and pivot_root into a read-only root") +
          (options_.system_root.empty()
               ? std::string()
               : " (/usr, /bin and /lib* of the environment at " + options_.system_root + ")") +
          "; the host's /root, /home, "
          "/tmp, /run and /var are not visible; writable only /tmp (a tmpfs cordon mounted) "
          "and /dev/shm; " +
          (gvisor ? "/proc and /sys are gVisor's own, showing only the sandbox"
                  : "/proc and /sys paths masked or read-only as runtimes do")));
  caps.aspects.push_back(claim(Aspect::kEnvironment, Enforcement::kEnforced,
                               {"clean_environment", {{"mount_namespace", "yes"}}}, std::nullopt,
                               "only PATH, HOME, LANG and the request's variables; the "
                               "container's init starts with an empty environment"));
  caps.aspects.push_back(
      gvisor ? claim(Aspect::kProcessTree, Enforcement::kEnforced,
                     {"user_space_kernel",
                      {{"kernel", "gVisor"}, {"platform", runtime_probe_.platform}}},
                     std::nullopt,
                     "the code runs on gVisor's kernel (the sentry), which implements the system "
                     "calls itself in front of the host kernel; it sees only its sandbox's "
                     "processes; uid 65534 with no capabilities and no_new_privs; the sandbox is "
                     "killed at the deadline and on cancel, and its init ends it when cordon "
                     "dies. Not covered: a flaw in gVisor itself, or in the host system calls "
                     "the sentry makes")
             : claim(Aspect::kProcessTree, Enforcement::kEnforced,
                     {"namespace", {{"type", "pid"}, {"runtime", rt}}}, std::nullopt,
                     "the code sees only its container's processes; uid 65534 with no "
                     "capabilities and no_new_privs; the container is killed at the deadline "
                     "and on cancel, and its init ends it when cordon dies; concurrent "
                     "containers share the host uid 65534"));
  Capability filter = seccomp_claim(
      options_.seccomp, policy_name_, policy_version_, policy_hash_,
      gvisor ? "the namespace backend's allow-list, applied by gVisor's kernel to the code's "
               "system calls (runsc --oci-seccomp); a denied or unknown one fails with EPERM; "
               "gVisor also answers ENOSYS for calls it does not implement"
             : "the namespace backend's allow-list as OCI linux.seccomp; unknown syscalls fail "
               "with ENOSYS, dangerous ones with EPERM");
  if (gvisor && options_.seccomp) {
    // Who applies the filter is part of the claim's data (the audit's policy hash).
    filter.by.params.emplace_back("applied_by", "gvisor");
    filter.mechanism = render_mechanism(filter.by);
  }
  caps.aspects.push_back(std::move(filter));
  caps.aspects.push_back(
      claim(Aspect::kMemory, Enforcement::kEnforced, group_limit("memory", "--memory"),
            Quantity{Unit::kBytes, key.memory_bytes, ""},
            gvisor ? "the whole sandbox, gVisor's own kernel and gofer included (~20 MiB), swap "
                     "included; an OOM kill is reported as oom_killed"
                   : "the whole container, swap included; an OOM kill is reported as oom_killed",
            gvisor ? kGvisorMemoryRange : kMemoryRange,
            ceiling_conditions(limits.memory_bytes.has_value())));
  // Under gVisor the pids group counts host threads: gVisor's own (~64 for an idle python)
  // and several for each of the code's processes (ptrace platform: a stub per address
  // space, a host thread per task). The number still bounds the sandbox as a whole, so the
  // code never has more; it has fewer, and at the ceiling gVisor ends the whole sandbox
  // rather than failing one fork (the run is limit_exceeded, processes, all the same).
  caps.aspects.push_back(claim(
      Aspect::kProcesses, Enforcement::kEnforced, group_limit("pids", "--pids-limit"),
      Quantity{Unit::kCount, key.max_processes, ""},
      gvisor ? "every host thread of the sandbox, gVisor's own included: the code's processes "
               "are fewer than this (each costs gVisor several), and at the ceiling the "
               "sandbox ends as a whole instead of a fork failing"
             : "every process and thread of the container (its init not counted)",
      gvisor ? kGvisorProcessRange : kProcessRange,
      ceiling_conditions(limits.max_processes.has_value())));
  if (key.cpu_time) {
    // Whole seconds, rounded up, as the config's (or the engine's) RLIMIT_CPU has it.
    caps.aspects.push_back(rlimit_cpu_claim(*key.cpu_time, "container"));
  } else if (!engine_ && options_.cpus > 0) {
    // The config's linux.resources.cpu (quota/period); the engine is given no --cpus.
    char cpus[32];
    const auto [end, ec] = std::to_chars(cpus, cpus + sizeof(cpus), options_.cpus);
    caps.aspects.push_back(
        claim(Aspect::kCpu, Enforcement::kPartial, {"cgroup", {{"controller", "cpu"}}},
              Quantity{Unit::kCpus, 0, std::string(cpus, end)},
              "CPU time is bounded by the wall-clock timeout", rlimit_cpu_range()));
  } else {
    caps.aspects.push_back(no_claim(Aspect::kCpu, "CPU time is bounded by the wall-clock timeout",
                                    rlimit_cpu_range()));
  }
  caps.aspects.push_back(scratch_claim(key.scratch_bytes));
  caps.aspects.push_back(output_claim(effective_output_cap(limits)));
  caps.aspects.push_back(claim(Aspect::kTimeout, Enforcement::kEnforced,
                               {"deadline", {{"kill", "runtime"}, {"runtime", rt}}}, std::nullopt,
                               "every process of the container dies with its init; the init "
                               "also stops at a backstop deadline and when cordon dies"));
  return caps;
}

Result<Plan> ContainerBackend::describe_plan(const RunRequest& request) const {
  discover();
  if (auto st = check_request(*this, request); !st) return std::unexpected(st.error());
  const BundleKey key = bundle_key(request.limits, options_);
  auto payload = make_run_payload(request, options_);
  if (!payload) return std::unexpected(payload.error());
  Plan out;
  // What only this backend's plan says: the runtime, and the engine's command line or the
  // bundle's config.json itself.
  nlohmann::json extra = {{"runtime", runtime_probe_.name}, {"env", payload->env}};
  // runsc: the gVisor platform, and the flags every call of it gets (runtime_global_args()).
  if (!runtime_probe_.platform.empty()) {
    extra["platform"] = runtime_probe_.platform;
    extra["runtime_args"] =
        runtime_global_args(runtime_probe_, options_.network_namespace, options_.seccomp);
  }
  if (engine_) {
    const EngineSettings settings = engine_settings();
    if (auto argv =
            engine_run_argv(settings, options_, request, kEnginePrefix + std::string("<name>"),
                            settings.runs_dir / "<name>" / "start")) {
      extra["engine_argv"] = *argv;
    } else {
      return std::unexpected(argv.error());
    }
  } else if (auto plan = plan_bundle(key, "<name>")) {
    out = plan_view(*plan);
    extra["oci_config"] = plan->config;
  }
  out.backend_name = name();
  out.backend_version = version();
  out.timeout_ms = effective_timeout(request).count();
  out.argv = payload->argv;
  if (request.network.any()) out.network += net::plan_words(request.network);
  // The limits in the declaration's words (claims.h): engine mode's are the engine's flags.
  out.limits = plan_limits(request, capabilities(request.limits));
  if (options_.seccomp) {
    out.seccomp = PlanSeccomp{.policy = policy_name_,
                              .version = policy_version_,
                              .hash = policy_hash_,
                              .rules = std::nullopt};
  }
  out.extra = std::move(extra);
  return out;
}

namespace {

// A started container as the run driver sees it (cordon/run_driver.h).
class ContainerTree final : public StartedTree {
 public:
  // `gvisor`: the runtime is runsc, whose sentry dies when the pids group refuses it a thread.
  ContainerTree(LiveContainer& c, const RuntimeCli& runtime, std::filesystem::path scratch,
                std::function<void()> remove, bool gvisor)
      : c_(c),
        runtime_(runtime),
        scratch_(std::move(scratch)),
        remove_(std::move(remove)),
        gvisor_(gvisor) {}

  // Readable when the init reports the code's end, or closes (it died).
  [[nodiscard]] int exit_fd() const override { return c_.ctl.get(); }

  // The parent groups cordon owns hold the whole container's charge while it runs.
  [[nodiscard]] std::optional<ResourceSample> sample() const override { return c_.cgroups.usage(); }

  void kill() override {
    // The init reports and exits by itself (taking the container with it) when the code
    // ended: only a run still going (deadline, cancel) needs the runtime's kill.
    pollfd pfd{c_.ctl.get(), POLLIN, 0};
    if (::poll(&pfd, 1, 0) == 1) return;
    killed_ = runtime_.call({"kill", c_.id(), "KILL"}, Clock::now() + kDefaultSetupBound);
    // The init may have ended between the look and the kill: nothing was left to kill.
    if (!killed_ && ::poll(&pfd, 1, 0) == 1) killed_ = {};
  }

  [[nodiscard]] Status finish(RunClock::time_point until) override {
    // A report says the init killed and reaped every other process first
    // (core/libexec/init/oci_role.cpp); one that does not is refused before any figure is read
    // (init_report.h).
    auto report = receive_init_report(c_.ctl.get(), until);
    if (!report) return std::unexpected(report.error());
    report_ = *report;
    // Without one the init was killed (deadline, cancel) or died, and the kernel is
    // killing the rest: wait until the container's group is empty, so that no writer is
    // left when the figures are read and the artifacts collected.
    if (!report_) {
      if (auto st = c_.cgroups.wait_empty(until); !st) return st;
    }
    // An attached runtime (runsc) ends with its sandbox, after reaping it: the figures
    // below are final then, and the stdio pipes, whose write ends it holds too, reach EOF.
    // It also removes the container's own group, where a refused fork may be counted
    // (container_cgroups.cpp): that count is read before, while the group still is there.
    // (stats() consumes the v1 OOM eventfd's count: the first reading's is kept too.)
    if (c_.runner.pidfd() >= 0) {
      const ContainerStats before = c_.cgroups.stats();
      if (auto st = wait_exited(c_.runner.pidfd(), until); !st) return st;
      stats_ = c_.cgroups.stats();
      stats_.pids_limit_hit |= before.pids_limit_hit;
      stats_.oom_killed |= before.oom_killed;
    } else {
      // The container's cgroup counters, while cordon's parent groups and the stopped
      // container's own group (removed with the container) still hold them.
      stats_ = c_.cgroups.stats();
    }
    if (!killed_)
      return fail(ErrorCode::kSystem, "kill the container: " + killed_.error().describe());
    return {};
  }

  [[nodiscard]] Status describe_end(Termination& t, RunResult& result) override {
    return describe_container_end(report_, stats_, gvisor_, t, result);
  }

  [[nodiscard]] Result<std::filesystem::path> artifact_dir() override { return scratch_; }

  [[nodiscard]] Status teardown(RunClock::time_point /*until*/) override {
    done_ = true;
    remove_();
    return {};
  }

  ~ContainerTree() override {
    if (!done_) remove_();  // a path the driver cut short
  }
  ContainerTree(const ContainerTree&) = delete;
  ContainerTree& operator=(const ContainerTree&) = delete;

 private:
  LiveContainer& c_;
  const RuntimeCli& runtime_;
  std::filesystem::path scratch_;
  std::function<void()> remove_;
  Status killed_;
  std::optional<init::Report> report_;
  ContainerStats stats_;
  bool gvisor_;
  bool done_ = false;
};

}  // namespace

RunResult ContainerBackend::run(const RunRequest& request, const CancelToken& cancel,
                                RunObserver* observer) {
  // 1. The request, whether this host can do it at all, the instance (run_driver.h).
  const Probe host = probe();
  RunSetup setup(*this, request, observer, &host);
  if (setup.refused) return std::move(*setup.refused);
  const milliseconds timeout = effective_timeout(request);
  const BundleKey key = bundle_key(request.limits, options_);
  auto payload = make_run_payload(request, options_);
  if (!payload) return setup.error("plan: " + payload.error().describe());
  RunFrame frame = setup.frame();
  if (options_.seccomp) frame.policy = PolicyId{policy_name_, policy_hash_};
  // What the run enforces, rendered from the backend's one declaration (declare()).
  const Capabilities declared = declare(request.limits);
  frame.timeout_mechanism = declared.find(Aspect::kTimeout)->mechanism;
  frame.enforced = enforced_from(declared);
  if (engine_) {
    const std::string id = instance_->next_name();
    const EngineSettings settings = engine_settings();
    return run_in_engine(settings, options_, request, kEnginePrefix + id, settings.runs_dir / id,
                         setup.until, cancel, setup.state, std::move(frame));
  }

  // 2. A container: a warm one whose limits are this run's, else a cold one.
  std::optional<LiveContainer> pooled;
  if (pool_ && key == pool_key_) pooled = pool_->take();
  const bool from_pool = pooled.has_value();
  LiveContainer c;
  if (pooled) {
    c = std::move(*pooled);
  } else {
    auto launched = launch(key, setup.until);
    if (!launched) return setup.error("start the container: " + launched.error().describe());
    c = std::move(*launched);
  }
  // Whatever happens next, the container, its cgroups, mounts and bundle go (a pooled
  // one in the pool's background thread).
  const fs::path bundle = instance_->bundles_dir() / c.name;
  ContainerTree tree(
      c, runtime_, bundle / "scratch",
      [this, &c, from_pool] {
        if (c.name.empty()) return;
        if (from_pool) {
          c.ctl.reset();
          pool_->retire(std::exchange(c, LiveContainer{}));
        } else {
          remove(c);
        }
      },
      /*gvisor=*/gvisor_);

  // 3. The run's files, the network allow-list's proxy (its socket beside the code, in the
  //    directory the container sees read-only at /.cordon), then the code to the init.
  if (auto st = place_run_files(bundle, *payload, request.input_files); !st) {
    return setup.error("place files: " + st.error().describe());
  }
  std::unique_ptr<net::RunNetwork> network;
  if (request.network.any()) {
    auto proxy = start_bundle_proxy(bundle, request.network);
    if (!proxy) return setup.error("network proxy: " + proxy.error().describe());
    network = std::move(proxy->network);
    network->enforce_in(frame.enforced);
    payload->relay_socket = std::move(proxy->relay_socket);
  }
  if (cancel.cancelled()) return setup.cancelled();
  c.cgroups.mark_run_start();
  if (auto st =
          send_to_init(c.ctl.get(), encode_init_request(*payload, timeout + kInitBackstopMargin));
      !st) {
    return setup.error(st.error().describe());
  }

  // 4. The driver pumps, kills, reaps, decides and tears down (cordon/run_driver.h).
  RunPipes pipes{
      {std::move(c.stdout_read), UniqueFd()}, {std::move(c.stderr_read), UniqueFd()}, std::nullopt};
  if (request.stdin_data) {
    pipes.in = proc::Pipe{UniqueFd(), std::move(c.stdin_write)};
  } else {
    c.stdin_write.reset();  // EOF, as /dev/null would give
  }
  RunResult result =
      drive_run(request, cancel, setup.state, tree, std::move(pipes), std::move(frame));
  if (network) network->finish_into(result);
  return result;
}

Result<ContainerBackend::BundleProxy> ContainerBackend::start_bundle_proxy(
    const fs::path& bundle, const NetworkAccess& access) const {
  // In a directory of its own with a secret name (container_plan.h, kRelayDirBytes).
  auto secret = random_hex(kRelayDirBytes);
  if (!secret) return std::unexpected(secret.error());
  const fs::path dir = bundle / "code" / *secret;
  if (::mkdir(dir.c_str(), 0711) != 0) return fail_errno("mkdir " + dir.string());
  auto started = net::RunNetwork::start_in(access, dir, options_.resolver_for_test);
  if (!started) return std::unexpected(started.error());
  return BundleProxy{std::move(*started), proxy_socket_path(*secret)};
}

}  // namespace cordon::oci
