// The container backend's bundle, checked against the OCI runtime-spec fields (config.md,
// config-linux.md) without running a runtime: what config.json says is what is enforced.
#include "container_plan.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "cordon/policy/oci_seccomp.h"
#include "cordon/policy/syscall_policy.h"
#include "cordon/proc/oci_init_channel.h"
#include "host_layout_support.h"
#include "init_report.h"

namespace cordon::oci {
namespace {

using nlohmann::json;

using testing::debian_layout;

BundleInputs inputs() {
  BundleInputs in;
  in.layout = debian_layout();
  in.init_host_path = "/opt/cordon/libexec/cordon-oci-init";
  in.scratch_host_path = "/run/cordon-oci/bundles/1-0-0/scratch";
  in.code_host_path = "/run/cordon-oci/bundles/1-0-0/code";
  in.rootfs_host_path = "/run/cordon-oci/bundles/1-0-rootfs";
  in.cgroups_path = "cordon-oci-1-0-0/c";
  in.nofile_hard = 20000;
  in.seccomp = policy::to_oci_seccomp(policy::default_syscall_policy());
  return in;
}

json config(const BundleInputs& in) {
  auto plan = make_bundle_plan(in);
  EXPECT_TRUE(plan.has_value()) << plan.error().describe();
  return plan ? plan->config : json();
}

const json* mount_at(const json& c, const std::string& dest) {
  for (const json& m : c["mounts"]) {
    if (m["destination"] == dest) return &m;
  }
  return nullptr;
}

bool has_option(const json& m, const std::string& opt) {
  for (const json& o : m["options"]) {
    if (o == opt) return true;
  }
  return false;
}

// runsc answers every refused syscall with EPERM, so the policy's ENOSYS for clone3 (libc's
// cue to fall back to the clone it checks) is instead left to the sentry, which does not
// implement it; runc gets the policy's section as it is.
TEST(ContainerPlan, RunscLeavesClone3ToTheSentry) {
  const nlohmann::json policy = {
      {"defaultAction", "SCMP_ACT_ERRNO"},
      {"defaultErrnoRet", 38},
      {"syscalls",
       {{{"names", {"read", "write"}}, {"action", "SCMP_ACT_ALLOW"}},
        {{"names", {"clone3"}}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", 38}},
        {{"names", {"bpf", "clone3"}}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", 1}}}}};
  EXPECT_EQ(oci_seccomp_for_runtime(policy, "runc"), policy);
  const nlohmann::json runsc = oci_seccomp_for_runtime(policy, "runsc");
  ASSERT_EQ(runsc["syscalls"].size(), 3U);
  EXPECT_EQ(runsc["syscalls"][0], policy["syscalls"][0]);
  EXPECT_EQ(runsc["syscalls"][1]["names"], nlohmann::json({"bpf"}));
  EXPECT_EQ(runsc["syscalls"][2],
            nlohmann::json({{"names", {"clone3"}}, {"action", "SCMP_ACT_ALLOW"}}));
  EXPECT_EQ(runsc["defaultErrnoRet"], 38);
}

// Debian's runsc refuses AT_NO_AUTOMOUNT, which coreutils passes on every stat (issue #40,
// item 4): under runsc with cordon's root, the code's processes preload the library that
// drops it (preload/gvisor_stat.cpp), bound read-only; runc and a user's root do not.
TEST(ContainerPlan, RunscPreloadsTheStatLibraryOverCordonsRootOnly) {
  BundleInputs in = inputs();
  in.options.runtime = "runsc";
  EXPECT_FALSE(make_bundle_plan(in).has_value()) << "the library's host path is required";
  in.gvisor_stat_host_path = "/run/cordon-oci/bundles/1-0-gvisor-stat.so";
  const json c = config(in);
  const json* m = mount_at(c, kGvisorStatPath);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ((*m)["source"], in.gvisor_stat_host_path);
  EXPECT_TRUE(has_option(*m, "ro"));
  const json runc = config(inputs());
  EXPECT_EQ(mount_at(runc, kGvisorStatPath), nullptr);

  RunRequest r;
  r.code = "ls /";
  ContainerOptions runsc;
  runsc.runtime = "runsc";
  const auto preload = std::string("LD_PRELOAD=") + kGvisorStatPath;
  auto p = make_run_payload(r, runsc);
  ASSERT_TRUE(p.has_value());
  EXPECT_NE(std::ranges::find(p->env, preload), p->env.end());
  p = make_run_payload(r, ContainerOptions{});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(std::ranges::find(p->env, preload), p->env.end());
  r.env.emplace_back("LD_PRELOAD", "/tmp/mine.so");  // the caller's wins
  p = make_run_payload(r, runsc);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(std::ranges::find(p->env, preload), p->env.end());
}

TEST(ContainerPlan, TopLevelFieldsAreTheSpecsOnly) {
  const json c = config(inputs());
  const std::set<std::string> spec = {"ociVersion", "process", "root",  "hostname",
                                      "mounts",     "linux",   "hooks", "annotations"};
  for (const auto& [k, v] : c.items()) EXPECT_TRUE(spec.contains(k)) << k;
  EXPECT_EQ(c["ociVersion"], "1.0.2");
  EXPECT_EQ(c["root"]["path"], "/run/cordon-oci/bundles/1-0-rootfs");
  EXPECT_EQ(c["root"]["readonly"], true);
  EXPECT_EQ(c["hostname"], "cordon");
}

TEST(ContainerPlan, ProcessIsTheInitAsNobodyWithNothing) {
  const json p = config(inputs())["process"];
  EXPECT_EQ(p["terminal"], false);
  EXPECT_EQ(p["user"]["uid"], 65534);
  EXPECT_EQ(p["user"]["gid"], 65534);
  EXPECT_FALSE(p["user"].contains("additionalGids"));
  EXPECT_EQ(p["args"], json::array({kInitPath, "oci", "--connect", kInitSocket}))
      << "the init connects to cordon's control socket (oci_init_channel.h)";
  EXPECT_TRUE(p["env"].empty()) << "the init starts with an empty environment";
  EXPECT_EQ(p["cwd"], "/tmp");
  EXPECT_EQ(p["noNewPrivileges"], true);
  for (const char* set : {"bounding", "effective", "permitted", "inheritable", "ambient"}) {
    ASSERT_TRUE(p["capabilities"].contains(set)) << set;
    EXPECT_TRUE(p["capabilities"][set].empty()) << set;
  }
  std::map<std::string, json> rl;
  for (const json& r : p["rlimits"]) rl[r["type"]] = r;
  EXPECT_EQ(rl["RLIMIT_CORE"]["hard"], 0);
  EXPECT_EQ(rl["RLIMIT_NOFILE"]["hard"], 1024);
  EXPECT_EQ(rl["RLIMIT_FSIZE"]["soft"], (64u << 20) + (1u << 20));
  EXPECT_FALSE(rl.contains("RLIMIT_CPU"));
}

TEST(ContainerPlan, NofileNeverAboveTheHardLimit) {
  BundleInputs in = inputs();
  in.nofile_hard = 512;
  // Named: a range-for over a member of the temporary config(in) would read freed memory
  // (the temporary dies before the loop runs; ASan caught it).
  const json c = config(in);
  for (const json& r : c.at("process").at("rlimits")) {
    if (r["type"] == "RLIMIT_NOFILE") {
      EXPECT_EQ(r["hard"], 512);
    }
  }
}

TEST(ContainerPlan, NamespacesNetworkAndCgroupsPath) {
  json c = config(inputs());
  std::set<std::string> ns;
  for (const json& n : c["linux"]["namespaces"]) {
    ns.insert(n["type"]);
    EXPECT_FALSE(n.contains("path")) << "new namespaces only, never a host one";
  }
  EXPECT_EQ(ns, (std::set<std::string>{"pid", "ipc", "uts", "mount", "cgroup", "network"}));
  EXPECT_EQ(c["linux"]["cgroupsPath"], "cordon-oci-1-0-0/c");
  // Positive control of the switch the attack tests use.
  BundleInputs in = inputs();
  in.options.network_namespace = false;
  c = config(in);
  for (const json& n : c["linux"]["namespaces"]) EXPECT_NE(n["type"], "network");
}

TEST(ContainerPlan, ResourcesCarryTheLimits) {
  BundleInputs in = inputs();
  in.key.memory_bytes = 128u << 20;
  in.key.max_processes = 32;
  in.key.cpu_time = std::chrono::milliseconds(1500);
  in.options.cpus = 0.5;
  auto plan = make_bundle_plan(in);
  ASSERT_TRUE(plan.has_value());
  const json r = plan->config["linux"]["resources"];
  // Memory and pids are on the parent group cordon owns (container_cgroups.h), so the
  // container's own group must not set a lower one: the OOM would happen there.
  EXPECT_FALSE(r.contains("memory"));
  EXPECT_FALSE(r.contains("pids"));
  EXPECT_EQ(r["cpu"]["quota"], 50000);
  EXPECT_EQ(r["cpu"]["period"], 100000);
  EXPECT_EQ(r["devices"][0]["allow"], false);
  bool cpu_rlimit = false;
  for (const json& rl : plan->config["process"]["rlimits"]) {
    if (rl["type"] == "RLIMIT_CPU") {
      cpu_rlimit = true;
      EXPECT_EQ(rl["soft"], 2);
    }
  }
  EXPECT_TRUE(cpu_rlimit);
  // What a run of it reports as enforced is the backend's declaration (claims.h), checked
  // against the run in ContainerTest.ARunEnforcesWhatCapabilitiesClaim.
}

TEST(ContainerPlan, FilesystemFromTheSharedPlan) {
  auto plan = make_bundle_plan(inputs());
  ASSERT_TRUE(plan.has_value());
  const json& c = plan->config;
  const json* usr = mount_at(c, "/usr");
  ASSERT_NE(usr, nullptr);
  EXPECT_EQ((*usr)["type"], "bind");
  EXPECT_TRUE(has_option(*usr, "ro"));
  const json* local = mount_at(c, "/usr/local");
  ASSERT_NE(local, nullptr) << "/usr/local hidden as in the namespace backend";
  EXPECT_EQ((*local)["type"], "tmpfs");
  const json* tmp = mount_at(c, "/tmp");
  ASSERT_NE(tmp, nullptr);
  EXPECT_EQ((*tmp)["type"], "bind") << "/tmp is the scratch tmpfs cordon mounted";
  EXPECT_EQ((*tmp)["source"], "/run/cordon-oci/bundles/1-0-0/scratch");
  const json* init = mount_at(c, kInitPath);
  ASSERT_NE(init, nullptr);
  EXPECT_TRUE(has_option(*init, "ro"));
  const json* code = mount_at(c, kCodeDir);
  ASSERT_NE(code, nullptr);
  EXPECT_TRUE(has_option(*code, "ro"));
  EXPECT_NE(mount_at(c, "/proc"), nullptr);
  EXPECT_NE(mount_at(c, "/dev/shm"), nullptr);
  // No host path other than /usr's, /etc/ld.so.cache, /etc/alternatives, the init and the
  // scratch.
  for (const json& m : c["mounts"]) {
    if (m["type"] != "bind") continue;
    const std::string src = m["source"];
    EXPECT_TRUE(src == "/usr" || src == "/etc/ld.so.cache" || src == "/etc/alternatives" ||
                src == inputs().init_host_path || src == inputs().scratch_host_path ||
                src == inputs().code_host_path)
        << src;
  }
  // The runtime's masks, from the same policy.
  std::set<std::string> masked(c["linux"]["maskedPaths"].begin(), c["linux"]["maskedPaths"].end());
  EXPECT_TRUE(masked.contains("/proc/kcore"));
  std::set<std::string> ro(c["linux"]["readonlyPaths"].begin(), c["linux"]["readonlyPaths"].end());
  EXPECT_TRUE(ro.contains("/proc/sys"));
  // /etc is written, never bound from the host; every mount point exists in the shared
  // root, so no runtime creates anything in it.
  bool passwd = false;
  std::set<std::string> made;
  for (const auto& s : plan->rootfs_prep) {
    if (s.target == "/etc/passwd") passwd = s.data.find("sandbox:x:65534") != std::string::npos;
    made.insert(s.target);
  }
  EXPECT_TRUE(passwd);
  for (const json& m : c["mounts"]) {
    const std::string dest = m["destination"];
    const bool below_mount = dest.starts_with("/dev/") || dest.starts_with("/usr/");
    EXPECT_TRUE(below_mount || made.contains(dest)) << dest;
  }
}

// `cordon plan` renders the keys every plan shares; the container's are read from its
// config, so every namespace and mount of the config is in them, in the config's order.
TEST(ContainerPlan, PlanViewHasEveryNamespaceAndMountOfTheConfig) {
  auto plan = make_bundle_plan(inputs());
  ASSERT_TRUE(plan.has_value());
  const json view = to_json(plan_view(*plan));
  const json& c = plan->config;
  std::vector<json> namespaces;
  for (const json& ns : c["linux"]["namespaces"]) namespaces.push_back(ns["type"]);
  EXPECT_EQ(view["namespaces"], json(namespaces));
  std::vector<std::string> targets;
  for (const json& step : view["filesystem"]["steps"]) targets.push_back(step["target"]);
  EXPECT_EQ(targets.front(), "/") << "the read-only root first";
  EXPECT_EQ(view["filesystem"]["steps"][0]["flags"], json({"ro"}));
  for (const json& m : c["mounts"]) {
    EXPECT_NE(std::ranges::find(targets, m["destination"].get<std::string>()), targets.end())
        << m["destination"];
  }
  for (const json& p : c["linux"]["maskedPaths"]) {
    EXPECT_NE(std::ranges::find(targets, p.get<std::string>()), targets.end()) << p;
  }
  const json* usr = nullptr;
  for (const json& step : view["filesystem"]["steps"]) {
    if (step["target"] == "/usr") usr = &step;
  }
  ASSERT_NE(usr, nullptr);
  EXPECT_EQ((*usr)["op"], "bind");
  EXPECT_EQ((*usr)["flags"], json({"ro", "nosuid", "nodev"}));
  EXPECT_EQ(view["user"], c["process"]["user"]);
  EXPECT_EQ(view["network"], "loopback only (new network namespace, no route out)");
}

TEST(ContainerPlan, SeccompIsTheSharedPolicy) {
  const json c = config(inputs());
  EXPECT_EQ(c["linux"]["seccomp"], policy::to_oci_seccomp(policy::default_syscall_policy()));
  BundleInputs in = inputs();
  in.seccomp.reset();
  EXPECT_FALSE(config(in)["linux"].contains("seccomp"));
}

TEST(ContainerPlan, UserRootfsIsUsedReadOnlyWithOnlyTheRuntimeMounts) {
  BundleInputs in = inputs();
  in.options.rootfs = "/srv/images/debian";
  const json c = config(in);
  EXPECT_EQ(c["root"]["path"], "/srv/images/debian");
  EXPECT_EQ(c["root"]["readonly"], true);
  EXPECT_EQ(mount_at(c, "/usr"), nullptr);
  EXPECT_NE(mount_at(c, "/tmp"), nullptr);
  in.options.rootfs = "relative/dir";
  EXPECT_FALSE(make_bundle_plan(in).has_value());
}

TEST(ContainerPlan, RefusesAbsoluteCgroupsPathAndZeroCeilings) {
  BundleInputs in = inputs();
  in.cgroups_path = "/cordon-oci-1/c";  // would land outside the caller's cgroup
  EXPECT_FALSE(make_bundle_plan(in).has_value());
  in = inputs();
  in.key.scratch_bytes = 0;
  EXPECT_FALSE(make_bundle_plan(in).has_value());
}

TEST(ContainerPlan, KeyTakesDefaultsAndTheRequestsLimits) {
  ContainerOptions o;
  Limits l;
  EXPECT_EQ(bundle_key(l, o), BundleKey{});
  l.memory_bytes = 1u << 20;
  EXPECT_EQ(bundle_key(l, o).memory_bytes, 1u << 20);
  EXPECT_FALSE(bundle_key(l, o) == BundleKey{});
}

TEST(ContainerPlan, PayloadAndItsEncoding) {
  RunRequest r;
  r.code = "echo hi";
  r.env = {{"A", "1"}};
  auto p = make_run_payload(r, ContainerOptions{});
  ASSERT_TRUE(p.has_value()) << p.error().describe();
  EXPECT_EQ(p->argv.back(), "echo hi");
  EXPECT_FALSE(p->code_file.has_value());
  EXPECT_EQ(p->env,
            (std::vector<std::string>{"PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8", "A=1"}));
  const std::string wire = encode_init_request(*p, std::chrono::milliseconds(7000));
  // The order of every process-tree helper (cordon/proc/init_protocol.h): a header, then
  // records that the helpers' own check accepts: the command, the environment, the backstop.
  init::OrderHeader h;
  ASSERT_GE(wire.size(), sizeof(h));
  std::memcpy(&h, wire.data(), sizeof(h));
  EXPECT_EQ(h.magic, init::kOrderMagic);
  EXPECT_EQ(h.kind, init::OrderKind::kRun);
  ASSERT_EQ(wire.size(), sizeof(h) + h.size);
  const std::string records = wire.substr(sizeof(h));
  EXPECT_EQ(init::check_order(records.data(), h.size, h.kind), 0);
  std::vector<std::string> args, env;
  std::string exe;
  std::int64_t backstop = 0;
  std::uint32_t offset = 0;
  while (const init::OrderRecord* rec = init::next_record(records.data(), h.size, &offset)) {
    const char* data = init::record_data(rec);
    if (rec->tag == init::OrderTag::kExe) exe = data;
    if (rec->tag == init::OrderTag::kArg) args.emplace_back(data);
    if (rec->tag == init::OrderTag::kEnv) env.emplace_back(data);
    if (rec->tag == init::OrderTag::kBackstop) std::memcpy(&backstop, data, sizeof(backstop));
  }
  EXPECT_EQ(exe, p->argv.front());
  EXPECT_EQ(args, p->argv);
  EXPECT_EQ(env, p->env);
  EXPECT_EQ(backstop, 7000);
  // Code too long for one argv string goes to the code file.
  r.code = std::string(200 * 1024, '#');
  p = make_run_payload(r, ContainerOptions{});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->argv.back(), kCodeFile);
  EXPECT_EQ(p->code_file, r.code);
}

// cordon reads the figures and collects the artifacts only after a report that says the
// init ended every other process of the container first (#11 item 18): an init that
// reports before (the old order, its orphans still running) is a sandbox error, not a
// result. An init that closes without a report is not an error here: the caller waits
// for the container's cgroup to empty.
TEST(ContainerPlan, AnInitReportIsTakenOnlyWhenItSaysEverythingWasReaped) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto send_report = [&](std::int32_t everything_reaped) {
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    init::Report r;
    r.magic = init::kReportMagic;
    r.main_reaped = 1;
    r.tree_cpu_us = 42;
    r.everything_reaped = everything_reaped;
    EXPECT_EQ(::write(sv[1], &r, sizeof(r)), static_cast<ssize_t>(sizeof(r)));
    ::close(sv[1]);
    auto got = receive_init_report(sv[0], until);
    ::close(sv[0]);
    return got;
  };
  const auto reaped = send_report(1);
  ASSERT_TRUE(reaped.has_value()) << reaped.error().describe();
  ASSERT_TRUE(reaped->has_value());
  EXPECT_EQ((*reaped)->tree_cpu_us, 42);

  const auto early = send_report(0);
  ASSERT_FALSE(early.has_value());
  EXPECT_NE(early.error().describe().find("without first ending its other processes"),
            std::string::npos)
      << early.error().describe();

  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  ::close(sv[1]);
  const auto none = receive_init_report(sv[0], until);
  ::close(sv[0]);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
}

}  // namespace
}  // namespace cordon::oci
