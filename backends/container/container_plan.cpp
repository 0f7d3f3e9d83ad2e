// make_bundle_plan / make_run_payload: limits and request in, config.json and payload out.
#include "container_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cordon/interpreter.h"
#include "cordon/net/run_network.h"
#include "cordon/policy/oci_mounts.h"
#include "cordon/proc/oci_init_channel.h"
#include "cordon/units.h"

namespace cordon::oci {
namespace {

using nlohmann::json;

rlim_t clamp(rlim_t wanted, const std::optional<rlim_t>& hard) {
  if (hard && *hard != RLIM_INFINITY) return std::min(wanted, *hard);
  return wanted;
}

json rlimit(const char* type, rlim_t soft, rlim_t hard) {
  return {{"type", type}, {"soft", soft}, {"hard", hard}};
}

// The mounts when the user names a root filesystem: only what the runtime cannot supply
// (/proc, /dev with /dev/shm, /tmp) on top of the read-only directory.
policy::OciFilesystem minimal_filesystem(std::uint64_t shm_bytes) {
  policy::OciFilesystem fs;
  fs.mounts.push_back({{"destination", "/proc"},
                       {"type", "proc"},
                       {"source", "proc"},
                       {"options", {"nosuid", "nodev", "noexec"}}});
  fs.mounts.push_back({{"destination", "/dev"},
                       {"type", "tmpfs"},
                       {"source", "tmpfs"},
                       {"options", {"nosuid", "noexec", "mode=755", "size=65536"}}});
  fs.mounts.push_back(
      {{"destination", "/dev/shm"},
       {"type", "tmpfs"},
       {"source", "tmpfs"},
       {"options",
        {"nosuid", "nodev", "noexec", "mode=1777", "size=" + std::to_string(shm_bytes)}}});
  return fs;
}

}  // namespace

std::string proxy_socket_path(const std::string& secret) {
  return std::string(kCodeDir) + "/" + secret + "/" + net::RunNetwork::socket_name();
}

bool preloads_gvisor_stat(const ContainerOptions& options) {
  return options.runtime == "runsc" && options.engine.empty() && options.rootfs.empty();
}

BundleKey bundle_key(const Limits& limits, const ContainerOptions& options) {
  BundleKey k;
  k.memory_bytes = limits.memory_bytes.value_or(options.default_memory_bytes);
  k.max_processes = limits.max_processes.value_or(options.default_max_processes);
  k.scratch_bytes = limits.scratch_bytes.value_or(kDefaultScratchBytes);
  k.cpu_time = limits.cpu_time;
  return k;
}

Result<BundlePlan> make_bundle_plan(const BundleInputs& in) {
  const BundleKey& key = in.key;
  if (key.memory_bytes == 0 || key.max_processes == 0 || key.scratch_bytes == 0) {
    return fail(ErrorCode::kInvalidArgument, "memory, process and scratch ceilings must be > 0");
  }
  if (in.init_host_path.empty() || in.scratch_host_path.empty() || in.code_host_path.empty() ||
      in.cgroups_path.empty() || in.cgroups_path.front() == '/' ||
      (in.options.rootfs.empty() && in.rootfs_host_path.empty()) ||
      (preloads_gvisor_stat(in.options) && in.gvisor_stat_host_path.empty())) {
    return fail(ErrorCode::kInvalidArgument,
                "bundle needs the init, the scratch and code directories, a root directory "
                "and a relative cgroups path");
  }
  BundlePlan plan;

  // The root filesystem: the shared plan (as the namespace backend builds it) or the
  // user's directory; read-only either way.
  policy::OciFilesystem fs;
  std::string root_path = in.rootfs_host_path;
  if (in.options.rootfs.empty()) {
    policy::FsOptions fo;
    fo.system_root = in.options.system_root.empty() ? "/" : in.options.system_root;
    fo.hide_usr_local = in.options.system_root.empty();
    fo.layout = in.layout;
    fo.uid = kSandboxUid;
    fo.gid = kSandboxGid;
    fo.tmp_size_bytes = key.scratch_bytes;
    auto fs_plan = policy::make_fs_plan(fo);
    if (!fs_plan) return std::unexpected(fs_plan.error());
    fs = policy::to_oci_filesystem(*fs_plan);
    plan.rootfs_prep = fs.rootfs_prep;
    // Mount points of cordon's own mounts, made once in the shared root.
    plan.rootfs_prep.push_back({.op = policy::FsOp::kMkdir, .target = kCodeDir, .mode = 0755});
    plan.rootfs_prep.push_back({.op = policy::FsOp::kMkfile, .target = kInitPath});
    if (preloads_gvisor_stat(in.options)) {
      plan.rootfs_prep.push_back({.op = policy::FsOp::kMkfile, .target = kGvisorStatPath});
    }
  } else {
    if (in.options.rootfs.front() != '/') {
      return fail(ErrorCode::kInvalidArgument, "rootfs must be an absolute path");
    }
    fs = minimal_filesystem(16ULL << 20);
    root_path = in.options.rootfs;
  }
  // /tmp: the scratch directory cordon mounted (a tmpfs of the run's size) instead of a
  // tmpfs of the runtime's, so input files go in and artifacts come out from the host.
  json mounts = json::array();
  for (const json& m : fs.mounts) {
    if (m["destination"] != kScratchDir) mounts.push_back(m);
  }
  mounts.push_back({{"destination", kScratchDir},
                    {"type", "bind"},
                    {"source", in.scratch_host_path},
                    {"options", {"bind", "nosuid", "nodev"}}});
  mounts.push_back({{"destination", kCodeDir},
                    {"type", "bind"},
                    {"source", in.code_host_path},
                    {"options", {"bind", "ro", "nosuid", "nodev"}}});
  mounts.push_back({{"destination", kInitPath},
                    {"type", "bind"},
                    {"source", in.init_host_path},
                    {"options", {"bind", "ro", "nosuid", "nodev"}}});
  if (preloads_gvisor_stat(in.options)) {
    mounts.push_back({{"destination", kGvisorStatPath},
                      {"type", "bind"},
                      {"source", in.gvisor_stat_host_path},
                      {"options", {"bind", "ro", "nosuid", "nodev"}}});
  }

  // The process: the init, as 65534 with nothing else.
  const rlim_t nofile = clamp(kSandboxNofile, in.nofile_hard);
  const rlim_t fsize = key.scratch_bytes + (1ULL << 20);
  json rlimits = json::array({rlimit("RLIMIT_CORE", 0, 0), rlimit("RLIMIT_NOFILE", nofile, nofile),
                              rlimit("RLIMIT_FSIZE", fsize, fsize)});
  if (key.cpu_time) {
    const auto secs =
        static_cast<rlim_t>(std::max<std::int64_t>((key.cpu_time->count() + 999) / 1000, 1));
    rlimits.push_back(rlimit("RLIMIT_CPU", secs, secs + 1));
  }
  json caps = json::array();
  if (!in.options.drop_capabilities) {
    // Test only: the capability set `runc spec` gives by default.
    caps = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_SYS_ADMIN"};
  }
  json process = {
      {"terminal", false},
      {"user", {{"uid", kSandboxUid}, {"gid", kSandboxGid}}},
      // cordon-init in its container role, connecting to cordon's control socket.
      {"args", {kInitPath, "oci", kInitConnectFlag, kInitSocket}},
      {"env", json::array()},
      {"cwd", kScratchDir},
      {"capabilities",
       {{"bounding", caps},
        {"effective", caps},
        {"permitted", caps},
        {"inheritable", json::array()},
        {"ambient", json::array()}}},
      {"rlimits", rlimits},
      {"noNewPrivileges", true},
  };

  json namespaces = json::array({{{"type", "pid"}},
                                 {{"type", "ipc"}},
                                 {{"type", "uts"}},
                                 {{"type", "mount"}},
                                 {{"type", "cgroup"}}});
  if (in.options.network_namespace) namespaces.push_back({{"type", "network"}});

  // Memory and processes are limited on the container's parent group, which cordon owns
  // (container_cgroups.h: the runtime deletes the container's own group, and with it the
  // v1 OOM count); CPU bandwidth and devices are the runtime's to set.
  json resources = {
      {"devices", json::array({{{"allow", false}, {"access", "rwm"}}})},
  };
  if (in.options.cpus > 0) {
    constexpr std::int64_t kPeriod = 100000;
    resources["cpu"] = {
        {"period", kPeriod},
        {"quota", static_cast<std::int64_t>(std::llround(in.options.cpus * kPeriod))}};
  }

  json linux_section = {
      {"namespaces", namespaces},
      {"cgroupsPath", in.cgroups_path},
      {"resources", resources},
      {"maskedPaths", fs.masked_paths},
      {"readonlyPaths", fs.readonly_paths},
  };
  if (in.seccomp) linux_section["seccomp"] = *in.seccomp;

  plan.config = {
      {"ociVersion", "1.0.2"},
      {"process", process},
      {"root", {{"path", root_path}, {"readonly", true}}},
      {"hostname", "cordon"},
      {"mounts", mounts},
      {"linux", linux_section},
  };
  return plan;
}

Plan plan_view(const BundlePlan& plan) {
  const json& config = plan.config;
  Plan view;
  view.namespaces.emplace();
  for (const json& ns : config.at("linux").at("namespaces")) {
    view.namespaces->push_back(ns.at("type").get<std::string>());
  }

  PlanFilesystem fs;
  const json& root = config.at("root");
  PlanStep root_step{.op = "root", .target = "/", .source = root.at("path").get<std::string>()};
  if (root.value("readonly", false)) root_step.flags = {"ro"};
  fs.steps.push_back(std::move(root_step));
  // What the backend writes into the root directory before the runtime starts.
  for (const policy::FsStep& step : plan.rootfs_prep) fs.steps.push_back(policy::plan_step(step));
  for (const json& m : config.at("mounts")) {
    PlanStep step{.op = m.at("type").get<std::string>(),
                  .target = m.at("destination").get<std::string>(),
                  .source = m.value("source", std::string())};
    for (const json& option : m.value("options", json::array())) {
      const std::string text = option.get<std::string>();
      if (text == "bind" || text == "rbind") continue;  // said by the op
      if (text.find('=') != std::string::npos) {
        step.options += (step.options.empty() ? "" : ",") + text;
      } else {
        step.flags.push_back(text);
      }
    }
    fs.steps.push_back(std::move(step));
  }
  for (const char* kind : {"maskedPaths", "readonlyPaths"}) {
    const std::string op = std::strcmp(kind, "maskedPaths") == 0 ? "mask" : "readonly";
    for (const json& path : config.at("linux").value(kind, json::array())) {
      fs.steps.push_back(PlanStep{.op = op, .target = path.get<std::string>()});
    }
  }
  view.filesystem.emplace(std::move(fs));

  const json& process = config.at("process");
  const json& user = process.at("user");
  view.user = PlanUser{.uid = user.value("uid", std::int64_t{0}),
                       .gid = user.value("gid", std::int64_t{0})};
  view.hostname = config.value("hostname", "");
  view.cwd = process.value("cwd", "");
  const bool own_network = std::ranges::find(*view.namespaces, "network") != view.namespaces->end();
  view.network =
      own_network ? "loopback only (new network namespace, no route out)" : "host network";
  const json effective = process.at("capabilities").value("effective", json::array());
  view.linux_capabilities =
      (effective.empty() ? std::string("all dropped") : "kept: " + effective.dump()) +
      (process.value("noNewPrivileges", false) ? "; no_new_privs" : "");
  for (const json& r : process.value("rlimits", json::array())) {
    view.rlimits.push_back({.resource = r.at("type").get<std::string>(),
                            .soft = r.at("soft").get<std::uint64_t>(),
                            .hard = r.at("hard").get<std::uint64_t>()});
  }
  return view;
}

Result<RunPayload> make_run_payload(const RunRequest& req, const ContainerOptions& options) {
  if (auto st = validate(req); !st) return std::unexpected(st.error());
  // /usr/local is hidden in the host-built root; a user's root is searched as it is.
  const std::string path_var =
      options.rootfs.empty() && options.system_root.empty() ? "/usr/bin:/bin" : kSandboxPath;
  const std::string& root = !options.rootfs.empty()        ? options.rootfs
                            : !options.system_root.empty() ? options.system_root
                                                           : std::string("/");
  auto interp = find_interpreter(req.language, path_var, root);
  if (!interp) return std::unexpected(interp.error());
  RunPayload p;
  bool needs_file = false;
  p.argv = interpreter_argv(req.language, *interp, req.code, kCodeFile, &needs_file);
  if (needs_file) p.code_file = req.code;
  p.env = {"PATH=" + path_var, "HOME=/tmp"};
  const auto has = [&req](std::string_view name) {
    return std::any_of(req.env.begin(), req.env.end(),
                       [name](const auto& kv) { return kv.first == name; });
  };
  if (!has("LANG")) p.env.emplace_back("LANG=C.UTF-8");
  // A caller's own LD_PRELOAD wins (its run, its choice).
  if (preloads_gvisor_stat(options) && !has("LD_PRELOAD")) {
    p.env.push_back(std::string("LD_PRELOAD=") + kGvisorStatPath);
  }
  for (const auto& [name, value] : req.env) p.env.push_back(name + "=" + value);
  if (req.network.any()) {
    for (const auto& [name, value] : net::proxy_environment(req.network))
      p.env.push_back(name + "=" + value);
    p.relay_port = net::kProxyPort;
  }
  return p;
}

std::string encode_init_request(const RunPayload& payload, std::chrono::milliseconds backstop,
                                init::OrderKind kind) {
  std::string records;
  if (!payload.argv.empty()) init::add_string(records, init::OrderTag::kExe, payload.argv[0]);
  for (const auto& s : payload.argv) init::add_string(records, init::OrderTag::kArg, s);
  for (const auto& s : payload.env) init::add_string(records, init::OrderTag::kEnv, s);
  const std::int64_t ms = backstop.count();
  init::add_record(records, init::OrderTag::kBackstop, 0,
                   std::string_view(reinterpret_cast<const char*>(&ms), sizeof(ms)));
  if (payload.relay_port != 0) {
    init::add_string(records, init::OrderTag::kRelay, payload.relay_socket, payload.relay_port);
  }
  init::OrderHeader h;
  h.kind = kind;
  h.size = static_cast<std::uint32_t>(records.size());
  std::string out(sizeof(h), '\0');
  std::memcpy(out.data(), &h, sizeof(h));
  return out + records;
}

nlohmann::json oci_seccomp_for_runtime(nlohmann::json seccomp, const std::string& runtime) {
  if (runtime != "runsc") return seccomp;
  // Out of any rule that names it (the policy's ENOSYS is the default action, but say it
  // once), then allowed.
  nlohmann::json rules = nlohmann::json::array();
  for (auto& rule : seccomp["syscalls"]) {
    auto& names = rule["names"];
    names.erase(std::remove(names.begin(), names.end(), "clone3"), names.end());
    if (!names.empty()) rules.push_back(std::move(rule));
  }
  rules.push_back({{"names", {"clone3"}}, {"action", "SCMP_ACT_ALLOW"}});
  seccomp["syscalls"] = std::move(rules);
  return seccomp;
}

}  // namespace cordon::oci
