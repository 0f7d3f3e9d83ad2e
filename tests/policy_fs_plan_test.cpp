// The root-filesystem plan, checked as data: no privileges, no mounts.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cordon/policy/fs_plan.h"

namespace cordon::policy {
namespace {

HostLayout merged_usr_layout() {
  HostLayout l;
  l.top_level = {{"/bin", HostEntry::Kind::kSymlink, "usr/bin"},
                 {"/sbin", HostEntry::Kind::kSymlink, "usr/sbin"},
                 {"/lib", HostEntry::Kind::kSymlink, "usr/lib"},
                 {"/lib64", HostEntry::Kind::kSymlink, "usr/lib64"}};
  return l;
}

FsPlan plan_for(FsOptions o) {
  auto plan = make_fs_plan(o);
  EXPECT_TRUE(plan) << plan.error().describe();
  return plan ? *plan : FsPlan{};
}

FsPlan default_plan() {
  FsOptions o;
  o.layout = merged_usr_layout();
  return plan_for(o);
}

const FsStep* find(const FsPlan& p, FsOp op, const std::string& target) {
  for (const FsStep& s : p.steps) {
    if (s.op == op && s.target == target) return &s;
  }
  return nullptr;
}

std::ptrdiff_t index_of(const FsPlan& p, FsOp op, const std::string& target) {
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    if (p.steps[i].op == op && p.steps[i].target == target) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}

bool under(const std::string& path, const std::string& dir) {
  return path == dir || path.rfind(dir + "/", 0) == 0;
}

TEST(FsPlan, UsrIsBoundReadOnly) {
  const FsPlan p = default_plan();
  const FsStep* usr = find(p, FsOp::kBind, "/usr");
  ASSERT_NE(usr, nullptr);
  EXPECT_EQ(usr->source, "/usr");
  EXPECT_TRUE(usr->read_only);
  EXPECT_TRUE(usr->nosuid);
  EXPECT_TRUE(usr->nodev);
}

TEST(FsPlan, UsrLocalHiddenByDefaultVisibleWhenConfigured) {
  const FsPlan hidden = default_plan();
  const FsStep* mask = find(hidden, FsOp::kTmpfs, "/usr/local");
  ASSERT_NE(mask, nullptr);
  EXPECT_TRUE(mask->read_only);

  FsOptions o;
  o.layout = merged_usr_layout();
  o.hide_usr_local = false;
  const FsPlan shown = plan_for(o);
  for (const FsStep& s : shown.steps) EXPECT_FALSE(under(s.target, "/usr/local")) << s.target;
  EXPECT_NE(find(shown, FsOp::kBind, "/usr"), nullptr);
}

TEST(FsPlan, TopLevelAliasesFollowTheHostLayout) {
  const FsPlan merged = default_plan();
  const FsStep* bin = find(merged, FsOp::kSymlink, "/bin");
  ASSERT_NE(bin, nullptr);
  EXPECT_EQ(bin->source, "usr/bin");
  EXPECT_EQ(find(merged, FsOp::kBind, "/bin"), nullptr);

  FsOptions o;  // a split-/usr host without /lib64
  o.layout.top_level = {{"/bin", HostEntry::Kind::kDirectory, ""},
                        {"/lib", HostEntry::Kind::kDirectory, ""}};
  const FsPlan split = plan_for(o);
  const FsStep* bin_bind = find(split, FsOp::kBind, "/bin");
  ASSERT_NE(bin_bind, nullptr);
  EXPECT_TRUE(bin_bind->read_only);
  EXPECT_LT(index_of(split, FsOp::kMkdir, "/bin"), index_of(split, FsOp::kBind, "/bin"));
  for (const FsStep& s : split.steps) EXPECT_FALSE(under(s.target, "/lib64"));
}

TEST(FsPlan, EtcIsWrittenNotTakenFromTheHost) {
  const FsPlan p = default_plan();
  for (const FsStep& s : p.steps) {
    if (s.op == FsOp::kBind) {
      EXPECT_NE(s.source, "/etc") << "host /etc must not be bound";
      EXPECT_NE(s.source, "/etc/passwd");
      EXPECT_NE(s.source, "/etc/group");
      EXPECT_NE(s.source, "/etc/shadow");
    }
  }
  const FsStep* passwd = find(p, FsOp::kWriteFile, "/etc/passwd");
  ASSERT_NE(passwd, nullptr);
  EXPECT_NE(passwd->data.find("sandbox:x:65534:65534:sandbox:/tmp:/bin/sh\n"), std::string::npos);
  const FsStep* group = find(p, FsOp::kWriteFile, "/etc/group");
  ASSERT_NE(group, nullptr);
  EXPECT_NE(group->data.find("sandbox:x:65534:"), std::string::npos);
  const FsStep* hosts = find(p, FsOp::kWriteFile, "/etc/hosts");
  ASSERT_NE(hosts, nullptr);
  EXPECT_NE(hosts->data.find("localhost"), std::string::npos);
  EXPECT_NE(find(p, FsOp::kWriteFile, "/etc/nsswitch.conf"), nullptr);
  const FsStep* cache = find(p, FsOp::kBind, "/etc/ld.so.cache");
  ASSERT_NE(cache, nullptr);
  EXPECT_TRUE(cache->read_only);
}

// Debian's /usr/bin/awk, which, ... are symlinks through /etc/alternatives: the directory
// is bound read-only (never writable, never more of /etc), when the host has one.
TEST(FsPlan, AlternativesAreBoundReadOnlyWhenTheHostHasThem) {
  const FsPlan p = default_plan();
  const FsStep* alt = find(p, FsOp::kBind, "/etc/alternatives");
  ASSERT_NE(alt, nullptr);
  EXPECT_EQ(alt->source, "/etc/alternatives");
  EXPECT_TRUE(alt->read_only);
  EXPECT_TRUE(alt->nosuid);
  EXPECT_TRUE(alt->nodev);
  EXPECT_NE(find(p, FsOp::kMkdir, "/etc/alternatives"), nullptr);

  FsOptions o;
  o.layout.has_etc_alternatives = false;
  auto without = make_fs_plan(o);
  ASSERT_TRUE(without.has_value());
  EXPECT_EQ(find(*without, FsOp::kBind, "/etc/alternatives"), nullptr);
  EXPECT_EQ(find(*without, FsOp::kMkdir, "/etc/alternatives"), nullptr);
}

TEST(FsPlan, HostPrivateDirectoriesAreAbsent) {
  const FsPlan p = default_plan();
  for (const FsStep& s : p.steps) {
    for (const char* dir : {"/home", "/root", "/run", "/var", "/srv", "/mnt", "/media", "/opt"}) {
      EXPECT_FALSE(under(s.target, dir)) << to_string(s.op) << " " << s.target;
      EXPECT_FALSE(under(s.source, dir)) << to_string(s.op) << " " << s.source;
    }
    EXPECT_FALSE(s.op == FsOp::kBind && s.source == "/") << "the host root must not be bound";
    EXPECT_FALSE(s.op == FsOp::kBind && s.source == "/tmp") << "host /tmp must not be bound";
  }
}

TEST(FsPlan, ProcIsFreshWithKnobsReadOnlyAndSensitiveFilesMasked) {
  const FsPlan p = default_plan();
  const FsStep* proc = find(p, FsOp::kProc, "/proc");
  ASSERT_NE(proc, nullptr);
  EXPECT_TRUE(proc->nosuid && proc->nodev && proc->noexec);
  for (const char* ro :
       {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"}) {
    const std::ptrdiff_t i = index_of(p, FsOp::kReadonly, ro);
    EXPECT_GT(i, index_of(p, FsOp::kProc, "/proc")) << ro;
  }
  for (const char* masked : {"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug",
                             "/proc/kallsyms", "/proc/latency_stats", "/proc/acpi", "/proc/scsi"}) {
    const FsStep* m = find(p, FsOp::kMask, masked);
    ASSERT_NE(m, nullptr) << masked;
    EXPECT_TRUE(m->optional) << "kernels differ in what /proc has";
    EXPECT_GT(index_of(p, FsOp::kMask, masked), index_of(p, FsOp::kProc, "/proc"));
  }
}

TEST(FsPlan, DevIsMinimal) {
  const FsPlan p = default_plan();
  std::vector<std::string> dev_binds;
  for (const FsStep& s : p.steps) {
    if (s.op == FsOp::kBind && under(s.target, "/dev")) {
      dev_binds.push_back(s.target);
      EXPECT_EQ(s.source, s.target);
      EXPECT_FALSE(s.nodev) << "a device node behind nodev does not work";
    }
  }
  std::sort(dev_binds.begin(), dev_binds.end());
  EXPECT_EQ(dev_binds, (std::vector<std::string>{"/dev/full", "/dev/null", "/dev/random",
                                                 "/dev/urandom", "/dev/zero"}));
  const FsStep* fd = find(p, FsOp::kSymlink, "/dev/fd");
  ASSERT_NE(fd, nullptr);
  EXPECT_EQ(fd->source, "/proc/self/fd");
  EXPECT_NE(find(p, FsOp::kSymlink, "/dev/stdin"), nullptr);
  EXPECT_NE(find(p, FsOp::kTmpfs, "/dev/shm"), nullptr);
  EXPECT_GT(index_of(p, FsOp::kRemountReadonly, "/dev"), index_of(p, FsOp::kTmpfs, "/dev/shm"));
}

TEST(FsPlan, TmpIsSizeLimitedHomeAndCwd) {
  FsOptions o;
  o.layout = merged_usr_layout();
  o.tmp_size_bytes = 128ULL << 20;
  const FsPlan p = plan_for(o);
  const FsStep* tmp = find(p, FsOp::kTmpfs, "/tmp");
  ASSERT_NE(tmp, nullptr);
  EXPECT_NE(tmp->data.find("size=134217728"), std::string::npos) << tmp->data;
  EXPECT_NE(tmp->data.find("mode=1777"), std::string::npos);
  EXPECT_FALSE(tmp->read_only);
  EXPECT_EQ(p.home, "/tmp");
  EXPECT_EQ(p.cwd, "/tmp");
  const FsPlan default_p = default_plan();
  const FsStep* dflt = find(default_p, FsOp::kTmpfs, "/tmp");
  ASSERT_NE(dflt, nullptr);
  EXPECT_NE(dflt->data.find("size=67108864"), std::string::npos) << "64 MiB default";

  o.tmp_size_bytes = 0;  // tmpfs would read it as "unlimited"
  EXPECT_FALSE(make_fs_plan(o));
}

TEST(FsPlan, ExtraPathsAppearReadOnly) {
  FsOptions o;
  o.layout = merged_usr_layout();
  o.extra_ro_paths = {{"/opt/tools", true}, {"/etc/ssl/certs", true}, {"/srv/data.csv", false}};
  const FsPlan p = plan_for(o);
  for (const ExtraPath& e : o.extra_ro_paths) {
    const FsStep* b = find(p, FsOp::kBind, e.path);
    ASSERT_NE(b, nullptr) << e.path;
    EXPECT_EQ(b->source, e.path);
    EXPECT_TRUE(b->read_only) << e.path;
    const FsOp mountpoint = e.is_directory ? FsOp::kMkdir : FsOp::kMkfile;
    EXPECT_GE(index_of(p, mountpoint, e.path), 0) << e.path;
    EXPECT_LT(index_of(p, mountpoint, e.path), index_of(p, FsOp::kBind, e.path));
  }
  EXPECT_LT(index_of(p, FsOp::kMkdir, "/opt"), index_of(p, FsOp::kMkdir, "/opt/tools"));
}

TEST(FsPlan, BadExtraPathsAreRejected) {
  for (const char* bad : {"relative/path", "/", "/opt/../etc", "/opt/./x", "/opt/", "/proc/1",
                          "/dev/sda", "/tmp/x", "/usr/local/bin", "/bin/foo"}) {
    FsOptions o;
    o.layout = merged_usr_layout();
    o.extra_ro_paths = {{bad, true}};
    auto p = make_fs_plan(o);
    EXPECT_FALSE(p) << bad;
    if (!p) {
      EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument);
    }
  }
  FsOptions o;  // with /usr/local shown, a path under it is simply visible
  o.layout = merged_usr_layout();
  o.hide_usr_local = false;
  o.extra_ro_paths = {{"/usr/local/bin", true}};
  EXPECT_TRUE(make_fs_plan(o));
}

TEST(FsPlan, OrderingInvariants) {
  const FsPlan p = default_plan();
  ASSERT_GE(p.steps.size(), 4U);
  EXPECT_EQ(p.steps[0].op, FsOp::kMakePrivate);
  EXPECT_EQ(p.steps[1].op, FsOp::kTmpfs);
  EXPECT_EQ(p.steps[1].target, "/");
  const std::size_t n = p.steps.size();
  EXPECT_EQ(p.steps[n - 3].op, FsOp::kRemountReadonly);
  EXPECT_EQ(p.steps[n - 3].target, "/");
  EXPECT_EQ(p.steps[n - 2].op, FsOp::kPivotRoot);
  EXPECT_EQ(p.steps[n - 1].op, FsOp::kDetachOldRoot);
  // Every mount into the root tmpfs has its mountpoint created earlier (under /proc the
  // kernel provides them).
  for (std::size_t i = 2; i < n; ++i) {
    const FsStep& s = p.steps[i];
    if (s.op != FsOp::kBind && s.op != FsOp::kTmpfs && s.op != FsOp::kProc) continue;
    if (under(s.target, "/proc") || s.target == "/usr/local") continue;  // inside /usr bind
    const auto mk = std::find_if(
        p.steps.begin(), p.steps.begin() + static_cast<std::ptrdiff_t>(i), [&](const FsStep& e) {
          return (e.op == FsOp::kMkdir || e.op == FsOp::kMkfile) && e.target == s.target;
        });
    EXPECT_NE(mk, p.steps.begin() + static_cast<std::ptrdiff_t>(i))
        << "no mountpoint for " << s.target;
  }
}

TEST(FsPlan, HostnameAndIdentity) {
  FsOptions o;
  o.layout = merged_usr_layout();
  o.hostname = "box";
  o.uid = 1234;
  o.gid = 4321;
  const FsPlan p = plan_for(o);
  EXPECT_EQ(p.hostname, "box");
  EXPECT_EQ(p.uid, 1234U);
  const FsStep* passwd = find(p, FsOp::kWriteFile, "/etc/passwd");
  ASSERT_NE(passwd, nullptr);
  EXPECT_NE(passwd->data.find("sandbox:x:1234:4321:"), std::string::npos);
  o.hostname = "bad/name";
  EXPECT_FALSE(make_fs_plan(o));
}

TEST(FsPlan, PlanViewListsEveryStep) {
  const FsPlan p = default_plan();
  Plan plan;
  plan.filesystem.emplace(plan_filesystem(p));
  const nlohmann::json j = to_json(plan)["filesystem"];
  ASSERT_EQ(j["steps"].size(), p.steps.size());
  EXPECT_EQ(j["hostname"], "cordon");
  EXPECT_EQ(j["uid"], 65534);
  bool saw_usr = false;
  for (const auto& s : j["steps"]) {
    if (s["op"] == "bind" && s["target"] == "/usr") {
      saw_usr = true;
      EXPECT_EQ(s["flags"][0], "ro");
    }
  }
  EXPECT_TRUE(saw_usr);
}

TEST(HostLayout, ProbeMatchesThisHost) {
  auto layout = probe_host_layout();
  ASSERT_TRUE(layout) << layout.error().describe();
  FsOptions options;
  options.layout = *layout;
  auto plan = make_fs_plan(options);
  ASSERT_TRUE(plan) << plan.error().describe();
  // Whatever the host does with /bin, the plan reproduces it.
  bool bin_handled = false;
  for (const HostEntry& e : layout->top_level) {
    if (e.path != "/bin") continue;
    bin_handled = e.kind == HostEntry::Kind::kSymlink
                      ? find(*plan, FsOp::kSymlink, "/bin") != nullptr
                      : find(*plan, FsOp::kBind, "/bin") != nullptr;
  }
  EXPECT_TRUE(bin_handled);
}

TEST(HostLayout, DescribeExtraPathResolvesAndTypes) {
  auto dir = describe_extra_path("/usr/share");
  ASSERT_TRUE(dir) << dir.error().describe();
  EXPECT_TRUE(dir->is_directory);
  auto file = describe_extra_path("/etc/hostname");
  if (file) {
    EXPECT_FALSE(file->is_directory);
  }
  EXPECT_FALSE(describe_extra_path("/nonexistent/cordon/path"));
}

}  // namespace
}  // namespace cordon::policy
