// Claims as data (cordon/claims.h): the words rendered from a mechanism and a value, the
// run's `enforced` rendered from the same declaration, and the audit's policy hash over
// the data, not the words (issue #14).
#include "cordon/claims.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "audit/catalogue.h"
#include "audit/report.h"
#include "cordon/backend.h"
#include "cordon/proc/cgroup2.h"
#include "cordon/temp_dir.h"

namespace cordon {
namespace {

using Unit = Quantity::Unit;

// The words each backend has always shown, from their data.
TEST(Claims, MechanismsRenderTheWordsBackendsShow) {
  const std::pair<Mechanism, std::string> cases[] = {
      {{"rlimit", {{"resource", "RLIMIT_AS"}, {"per", "process"}}}, "RLIMIT_AS per process"},
      {{"rlimit", {{"resource", "RLIMIT_NPROC"}, {"per", "uid"}}}, "RLIMIT_NPROC per uid"},
      {{"rlimit", {{"resource", "RLIMIT_NPROC"}, {"per", "run_uid"}}},
       "RLIMIT_NPROC (uid of this run only)"},
      {cgroup_mechanism("cgroup v1 memory.limit_in_bytes + memory.memsw.limit_in_bytes"),
       "cgroup v1 memory.limit_in_bytes + memory.memsw.limit_in_bytes"},
      {cgroup_mechanism("cgroup v2 pids.max"), "cgroup v2 pids.max"},
      {{"cgroup", {{"controller", "memory"}, {"group", "container_parent"}}},
       "cgroup memory limit (container's parent group)"},
      {{"engine", {{"flag", "--memory"}}}, "engine --memory"},
      {{"namespace", {{"type", "network"}, {"interfaces", "lo"}}},
       "network namespace with loopback only"},
      {{"namespace", {{"type", "pid"}, {"runtime", "runc"}}}, "PID namespace (runc)"},
      {{"root_fs", {{"root", "fresh"}, {"tmpfs_bytes", "67108864"}}},
       "fresh root, /usr read-only, tmpfs /tmp 64 MiB"},
      {{"root_fs", {{"image", "debian"}, {"tmpfs_bytes", "67108864"}}},
       "image debian read-only, tmpfs /tmp 64 MiB"},
      {{"seccomp", {{"policy", "cordon-default"}, {"version", "1"}, {"hash", "sha256:ab"}}},
       "seccomp cordon-default v1 sha256:ab"},
      {{"deadline", {{"kill", "cgroup.kill"}}}, "deadline + cgroup.kill"},
      {{"deadline", {{"kill", "subreaper_helper"}}}, "deadline + subreaper helper"},
      {{"deadline", {{"kill", "runtime"}, {"runtime", "podman"}}},
       "deadline + podman kill of the container"},
      {{"clean_environment", {{"mount_namespace", "yes"}}}, "clean environment + mount namespace"},
      {{"tmpfs", {}}, "tmpfs size"},
      {{"capture_cap", {}}, "capture cap per stream"},
      {{}, ""},
  };
  for (const auto& [mechanism, words] : cases) {
    EXPECT_EQ(render_mechanism(mechanism), words) << mechanism.kind;
  }
  // Words LimitGroup may one day use that do not parse stay as they are.
  EXPECT_EQ(render_mechanism(cgroup_mechanism("a cgroup")), "a cgroup");
  EXPECT_EQ(render_value({Unit::kBytes, 256U << 20, ""}), "256 MiB");
  EXPECT_EQ(render_value({Unit::kCount, 32, ""}), "32");
  EXPECT_EQ(render_value({Unit::kMilliseconds, 2000, ""}), "2 s");
  EXPECT_EQ(render_value({Unit::kCpus, 0, "0.5"}), "0.5 CPU");
}

TEST(Claims, EnforcedIsTheDeclarationsEnforcedAspectsInTheSameWords) {
  Capabilities decl;
  decl.aspects = {no_claim(Aspect::kNetwork, "host network"),
                  claim(Aspect::kMemory, Enforcement::kPartial,
                        {"rlimit", {{"resource", "RLIMIT_AS"}, {"per", "process"}}},
                        Quantity{Unit::kBytes, 128U << 20, ""}, "per process"),
                  claim(Aspect::kProcessTree, Enforcement::kEnforced,
                        {"namespace", {{"type", "pid"}}}, std::nullopt, "own processes only"),
                  output_claim(1U << 20),
                  claim(Aspect::kTimeout, Enforcement::kEnforced,
                        {"deadline", {{"kill", "cgroup.kill"}}}, std::nullopt, "whole tree")};
  const std::vector<Enforced> enforced = enforced_from(decl);
  ASSERT_EQ(enforced.size(), 2U);  // none is not enforced; timeout and output: the driver's
  EXPECT_EQ(enforced[0].aspect, Aspect::kMemory);
  EXPECT_EQ(enforced[0].mechanism, "RLIMIT_AS per process");
  EXPECT_EQ(enforced[0].value, "128 MiB");
  EXPECT_EQ(enforced[1].aspect, Aspect::kProcessTree);
  EXPECT_EQ(enforced[1].mechanism, "PID namespace");
  EXPECT_FALSE(enforced[1].value.has_value());
}

TEST(Claims, ADefaultCeilingIsSaidInTheDetail) {
  const Capability c =
      claim(Aspect::kMemory, Enforcement::kEnforced, cgroup_mechanism("cgroup v2 memory.max"),
            Quantity{Unit::kBytes, 512U << 20, ""}, "the whole sandbox", std::nullopt,
            {std::string(kDefaultCeiling)});
  EXPECT_EQ(c.detail, "default ceiling (the request set none); the whole sandbox");
  EXPECT_EQ(c.value, "512 MiB");
}

// A backend whose one claim can be reworded or changed, for the policy hash.
class OneClaimBackend final : public Backend {
 public:
  explicit OneClaimBackend(Capability memory) : memory_(std::move(memory)) {}
  [[nodiscard]] std::string_view name() const override { return "one-claim"; }
  [[nodiscard]] std::string_view version() const override { return "1"; }
  [[nodiscard]] Probe probe() const override { return {true, ""}; }
  [[nodiscard]] Capabilities capabilities(const Limits& /*limits*/) const override {
    Capabilities caps;
    caps.aspects = {memory_, output_claim(1U << 20)};
    return caps;
  }
  [[nodiscard]] RunResult run(const RunRequest& /*request*/, const CancelToken& /*cancel*/,
                              RunObserver* /*observer*/) override {
    return sandbox_error({"one-claim", "1"}, "runs nothing");
  }

 private:
  Capability memory_;
};

std::string hash_of(Capability memory) {
  Result<audit::Catalogue> catalogue = audit::builtin_catalogue();
  EXPECT_TRUE(catalogue.has_value());
  return audit::policy_hash(OneClaimBackend(std::move(memory)), *catalogue);
}

Capability memory_claim(std::string detail,
                        Mechanism mechanism = cgroup_mechanism("cgroup v1 memory.limit_in_bytes"),
                        std::uint64_t bytes = 256U << 20) {
  return claim(Aspect::kMemory, Enforcement::kEnforced, std::move(mechanism),
               Quantity{Unit::kBytes, bytes, ""}, std::move(detail),
               LimitRange{16U << 20, 1U << 30});
}

// Rewording a sentence keeps every stored report valid; what is enforced, how and how
// much is what the hash binds.
TEST(Claims, ThePolicyHashCoversTheDataNotTheWords) {
  const std::string base = hash_of(memory_claim("the whole sandbox"));
  EXPECT_EQ(hash_of(memory_claim("every process of the sandbox together")), base);
  // The mechanism's words come from its renderer: words changed there are not data either.
  Capability reworded = memory_claim("the whole sandbox");
  reworded.mechanism = "memory cgroup (v1)";
  EXPECT_EQ(hash_of(reworded), base);

  EXPECT_NE(hash_of(memory_claim("the whole sandbox", cgroup_mechanism("cgroup v2 memory.max"))),
            base);
  EXPECT_NE(hash_of(memory_claim("the whole sandbox",
                                 {"rlimit", {{"resource", "RLIMIT_AS"}, {"per", "process"}}})),
            base);
  EXPECT_NE(hash_of(memory_claim("the whole sandbox",
                                 cgroup_mechanism("cgroup v1 memory.limit_in_bytes"), 128U << 20)),
            base);
  Capability partial = memory_claim("the whole sandbox");
  partial.enforcement = Enforcement::kPartial;
  EXPECT_NE(hash_of(partial), base);
  Capability conditional = memory_claim("the whole sandbox");
  conditional.conditions = {std::string(kNoCgroup)};
  EXPECT_NE(hash_of(conditional), base);
}

// A description with an allow-list needs an audit made with that list: the policy hash
// covers it; without a list it is the hash reports were made under before lists existed.
TEST(Claims, ThePolicyHashCoversTheAllowList) {
  Result<audit::Catalogue> catalogue = audit::builtin_catalogue();
  ASSERT_TRUE(catalogue.has_value());
  const OneClaimBackend backend(memory_claim("the whole sandbox"));
  const std::string none = audit::policy_hash(backend, *catalogue);
  EXPECT_EQ(audit::policy_hash(backend, *catalogue, ""), none);
  NetworkAccess list;
  list.allow = {"pypi.org"};
  const audit::ReportBinding with = audit::binding_for(backend, *catalogue, list);
  EXPECT_NE(with.policy_hash, none);
  EXPECT_EQ(with.network, audit::network_binding(list));
  EXPECT_EQ(audit::binding_for(backend, *catalogue).policy_hash, none);
  list.allow = {"files.pythonhosted.org"};
  EXPECT_NE(audit::binding_for(backend, *catalogue, list).policy_hash, with.policy_hash);
}

// A declaration made from words only (no data) still binds its words.
TEST(Claims, WordsWithoutDataAreHashedAsWords) {
  Capabilities a;
  a.aspects = {capability(Aspect::kMemory, Enforcement::kEnforced, "RLIMIT_AS", "1 MiB", "x")};
  Capabilities b = a;
  b.aspects[0].mechanism = "RLIMIT_DATA";
  EXPECT_NE(claim_data(a), claim_data(b));
  b = a;
  b.aspects[0].detail = "y";
  EXPECT_EQ(claim_data(a), claim_data(b));
}

// The subprocess backend claims cgroup.kill only where its groups will have it
// (Cgroup2::create refuses a group without it, and the run then falls back to the
// helper): a directory that is not a cgroup, or a non-root cgroup without cgroup.kill, is
// no, whatever the kernel; the root cgroup (no cgroup.kill of its own) goes by release.
TEST(Claims, CgroupKillIsExpectedOnlyWhereGroupsWillHaveIt) {
  auto tmp = TempDir::create("cordon-claims-");
  ASSERT_TRUE(tmp.has_value()) << tmp.error().describe();
  const std::filesystem::path dir = tmp->path();
  EXPECT_FALSE(proc::cgroup_kill_expected(dir, "6.1.0"));  // a plain directory
  std::ofstream(dir / "cgroup.procs") << "";
  EXPECT_TRUE(proc::cgroup_kill_expected(dir, "6.1.0-18-amd64"));  // a root on 6.1
  EXPECT_TRUE(proc::cgroup_kill_expected(dir, "5.14.0"));
  EXPECT_FALSE(proc::cgroup_kill_expected(dir, "5.13.19"));
  EXPECT_FALSE(proc::cgroup_kill_expected(dir, "4.19.0"));
  EXPECT_FALSE(proc::cgroup_kill_expected(dir, "garbage"));
  std::ofstream(dir / "cgroup.type") << "domain\n";
  EXPECT_FALSE(proc::cgroup_kill_expected(dir, "6.1.0"));  // non-root, no cgroup.kill
  std::ofstream(dir / "cgroup.kill") << "";
  EXPECT_TRUE(proc::cgroup_kill_expected(dir, "4.19.0"));  // the file says so
}

}  // namespace
}  // namespace cordon
