// The OCI generators, checked against the runtime-spec field names (config-linux.md
// "Seccomp", config.md "Mounts") without running a runtime.
#include <gtest/gtest.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <set>

#include "cordon/policy/fs_plan.h"
#include "cordon/policy/oci_mounts.h"
#include "cordon/policy/oci_seccomp.h"
#include "cordon/policy/syscall_policy.h"

namespace cordon::policy {
namespace {

using nlohmann::json;

const std::set<std::string> kSpecActions = {
    "SCMP_ACT_KILL",  "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD",
    "SCMP_ACT_TRAP",  "SCMP_ACT_ERRNO",        "SCMP_ACT_TRACE",
    "SCMP_ACT_ALLOW", "SCMP_ACT_LOG",          "SCMP_ACT_NOTIFY"};
const std::set<std::string> kSpecOps = {"SCMP_CMP_NE",       "SCMP_CMP_LT", "SCMP_CMP_LE",
                                        "SCMP_CMP_EQ",       "SCMP_CMP_GE", "SCMP_CMP_GT",
                                        "SCMP_CMP_MASKED_EQ"};
const std::set<std::string> kSeccompKeys = {"defaultAction", "defaultErrnoRet", "architectures",
                                            "flags",         "listenerPath",    "listenerMetadata",
                                            "syscalls"};
const std::set<std::string> kSyscallKeys = {"names", "action", "errnoRet", "args"};
const std::set<std::string> kArgKeys = {"index", "value", "valueTwo", "op"};

// Which entries name `syscall`, as (action, errnoRet or -1, has args).
std::vector<json> entries_for(const json& seccomp, const std::string& syscall) {
  std::vector<json> out;
  for (const json& e : seccomp["syscalls"]) {
    for (const json& n : e["names"]) {
      if (n == syscall) out.push_back(e);
    }
  }
  return out;
}

TEST(OciSeccomp, UsesOnlySpecFieldsAndConstants) {
  const json s = to_oci_seccomp(default_syscall_policy());
  for (const auto& [k, v] : s.items()) EXPECT_TRUE(kSeccompKeys.contains(k)) << k;
  EXPECT_EQ(s["defaultAction"], "SCMP_ACT_ERRNO");
  EXPECT_EQ(s["defaultErrnoRet"], ENOSYS);
  ASSERT_EQ(s["architectures"].size(), 1U) << "native only: other ABIs get the bad-arch action";
#if defined(__x86_64__)
  EXPECT_EQ(s["architectures"][0], "SCMP_ARCH_X86_64");
#endif
  ASSERT_TRUE(s["syscalls"].is_array());
  for (const json& e : s["syscalls"]) {
    for (const auto& [k, v] : e.items()) EXPECT_TRUE(kSyscallKeys.contains(k)) << k;
    ASSERT_TRUE(e["names"].is_array());
    EXPECT_FALSE(e["names"].empty());
    EXPECT_TRUE(kSpecActions.contains(e["action"].get<std::string>())) << e["action"];
    if (e["action"] == "SCMP_ACT_ERRNO") {
      ASSERT_TRUE(e.contains("errnoRet")) << "the spec's default would be EPERM";
      EXPECT_TRUE(e["errnoRet"].is_number_unsigned());
    } else {
      EXPECT_FALSE(e.contains("errnoRet"));
    }
    if (!e.contains("args")) continue;
    // One comparison per entry: runc ORs several comparisons on the same argument.
    ASSERT_EQ(e["args"].size(), 1U);
    EXPECT_EQ(e["names"].size(), 1U);
    const json& a = e["args"][0];
    for (const auto& [k, v] : a.items()) EXPECT_TRUE(kArgKeys.contains(k)) << k;
    EXPECT_TRUE(kSpecOps.contains(a["op"].get<std::string>()));
    EXPECT_TRUE(a["index"].is_number_unsigned());
    EXPECT_LE(a["index"].get<unsigned>(), 5U);
    EXPECT_TRUE(a["value"].is_number_unsigned());
    EXPECT_TRUE(a["valueTwo"].is_number_unsigned());
  }
}

TEST(OciSeccomp, CarriesThePolicy) {
  const json s = to_oci_seccomp(default_syscall_policy());
  const auto ptrace = entries_for(s, "ptrace");
  ASSERT_EQ(ptrace.size(), 1U);
  EXPECT_EQ(ptrace[0]["action"], "SCMP_ACT_ERRNO");
  EXPECT_EQ(ptrace[0]["errnoRet"], EPERM);

  const auto read = entries_for(s, "read");
  ASSERT_EQ(read.size(), 1U);
  EXPECT_EQ(read[0]["action"], "SCMP_ACT_ALLOW");

  // clone3's ENOSYS equals the default: left out, same meaning.
  EXPECT_TRUE(entries_for(s, "clone3").empty());
  EXPECT_TRUE(entries_for(s, "listmount").empty());

  // clone: allowed when (flags & namespace bits) == 0, EPERM per namespace bit.
  const auto clone = entries_for(s, "clone");
  ASSERT_GE(clone.size(), 2U);
  bool saw_allow = false;
  for (const json& e : clone) {
    const json& a = e["args"][0];
    EXPECT_EQ(a["op"], "SCMP_CMP_MASKED_EQ");
    if (e["action"] == "SCMP_ACT_ALLOW") {
      saw_allow = true;
      EXPECT_EQ(a["valueTwo"], 0U);
      EXPECT_NE(a["value"].get<std::uint64_t>() & 0x10000000ULL, 0U) << "CLONE_NEWUSER in mask";
    } else {
      EXPECT_EQ(e["errnoRet"], EPERM);
      EXPECT_EQ(a["value"], a["valueTwo"]) << "one bit, set";
    }
  }
  EXPECT_TRUE(saw_allow);

  // ioctl TIOCSTI compared on the low 32 bits only.
  bool saw_tiocsti = false;
  for (const json& e : entries_for(s, "ioctl")) {
    const json& a = e["args"][0];
    EXPECT_EQ(a["index"], 1U);
    EXPECT_EQ(a["value"].get<std::uint64_t>() >> 32, 0U) << "upper half must be ignored";
    if (a["valueTwo"] == 0x5412U) {
      saw_tiocsti = true;
      EXPECT_EQ(e["errnoRet"], EPERM);
    }
  }
  EXPECT_TRUE(saw_tiocsti);
}

FsPlan sample_plan() {
  FsOptions o;
  o.layout.top_level = {{"/bin", HostEntry::Kind::kSymlink, "usr/bin"},
                        {"/lib", HostEntry::Kind::kSymlink, "usr/lib"}};
  o.extra_ro_paths = {{"/opt/tools", true}};
  o.tmp_size_bytes = 32ULL << 20;
  auto plan = make_fs_plan(o);
  EXPECT_TRUE(plan);
  return plan ? *plan : FsPlan{};
}

const json* mount_at(const OciFilesystem& fs, const std::string& destination) {
  for (const json& m : fs.mounts) {
    if (m["destination"] == destination) return &m;
  }
  return nullptr;
}

bool has_option(const json& m, const std::string& opt) {
  for (const json& o : m["options"]) {
    if (o == opt) return true;
  }
  return false;
}

TEST(OciFilesystem, MountsUseSpecFields) {
  const OciFilesystem fs = to_oci_filesystem(sample_plan());
  const std::set<std::string> keys = {"destination", "source",      "options",
                                      "type",        "uidMappings", "gidMappings"};
  for (const json& m : fs.mounts) {
    for (const auto& [k, v] : m.items()) EXPECT_TRUE(keys.contains(k)) << k;
    EXPECT_TRUE(m["destination"].get<std::string>().starts_with("/"));
    EXPECT_NE(m["destination"], "/") << "the root is root.path, not a mount";
  }
  EXPECT_TRUE(fs.root_readonly);
}

TEST(OciFilesystem, SamePlanSameSandbox) {
  const OciFilesystem fs = to_oci_filesystem(sample_plan());
  const json* usr = mount_at(fs, "/usr");
  ASSERT_NE(usr, nullptr);
  EXPECT_EQ((*usr)["type"], "bind");
  EXPECT_TRUE(has_option(*usr, "bind") && has_option(*usr, "ro") && has_option(*usr, "nosuid"));

  const json* local = mount_at(fs, "/usr/local");
  ASSERT_NE(local, nullptr);
  EXPECT_EQ((*local)["type"], "tmpfs");
  EXPECT_TRUE(has_option(*local, "ro"));

  const json* tmp = mount_at(fs, "/tmp");
  ASSERT_NE(tmp, nullptr);
  EXPECT_TRUE(has_option(*tmp, "size=33554432"));
  EXPECT_FALSE(has_option(*tmp, "ro"));

  const json* proc = mount_at(fs, "/proc");
  ASSERT_NE(proc, nullptr);
  EXPECT_EQ((*proc)["type"], "proc");

  const json* tools = mount_at(fs, "/opt/tools");
  ASSERT_NE(tools, nullptr);
  EXPECT_TRUE(has_option(*tools, "ro"));

  EXPECT_EQ(mount_at(fs, "/dev/null"), nullptr) << "the runtime supplies default devices";
  const json* dev = mount_at(fs, "/dev");
  ASSERT_NE(dev, nullptr);
  EXPECT_FALSE(has_option(*dev, "nodev")) << "the runtime's device nodes live there";

  const std::set<std::string> masked(fs.masked_paths.begin(), fs.masked_paths.end());
  for (const char* p : {"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug"}) {
    EXPECT_TRUE(masked.contains(p)) << p;
  }
  const std::set<std::string> ro(fs.readonly_paths.begin(), fs.readonly_paths.end());
  for (const char* p : {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"}) {
    EXPECT_TRUE(ro.contains(p)) << p;
  }
}

TEST(OciFilesystem, RootfsPrepHasEtcAndSymlinksButNothingUnderMounts) {
  const OciFilesystem fs = to_oci_filesystem(sample_plan());
  bool passwd = false;
  bool bin = false;
  for (const FsStep& s : fs.rootfs_prep) {
    EXPECT_TRUE(s.op == FsOp::kMkdir || s.op == FsOp::kMkfile || s.op == FsOp::kWriteFile ||
                s.op == FsOp::kSymlink);
    EXPECT_FALSE(s.target.starts_with("/dev/")) << s.target;
    EXPECT_FALSE(s.target.starts_with("/proc/")) << s.target;
    passwd = passwd || (s.op == FsOp::kWriteFile && s.target == "/etc/passwd");
    bin = bin || (s.op == FsOp::kSymlink && s.target == "/bin" && s.source == "usr/bin");
  }
  EXPECT_TRUE(passwd);
  EXPECT_TRUE(bin);
}

}  // namespace
}  // namespace cordon::policy
