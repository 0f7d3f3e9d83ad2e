// `cordon plan`'s completion and text rendering, on hand-made plans: no plugin is loaded.
#include "frontend/plan_text.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <string>

#include "cordon/policy/syscall_policy.h"
#include "frontend/prompt_render.h"

namespace cordon::frontend {
namespace {

using nlohmann::json;

// A plan as a plugin's JSON answer is read on the loader's side.
Plan read(const json& j) {
  Result<Plan> plan = plan_from_json(j);
  EXPECT_TRUE(plan) << plan.error().describe();
  return plan ? *plan : Plan{};
}

Capabilities unisolated() {
  Capabilities caps;
  for (const Aspect aspect : kAllAspects) {
    Capability c;
    c.aspect = aspect;
    if (aspect == Aspect::kTimeout) {
      c.enforcement = Enforcement::kEnforced;
      c.mechanism = "deadline, whole-tree kill";
    }
    caps.aspects.push_back(c);
  }
  return caps;
}

TEST(PlanTextTest, RuleCountsByKind) {
  policy::SyscallPolicy p;
  p.rules.push_back({"read", policy::Verdict::allow(), {}});
  p.rules.push_back({"write", policy::Verdict::allow(), {}});
  p.rules.push_back({"ptrace", policy::Verdict::error(EPERM), {}});
  p.rules.push_back({"kexec_load", policy::Verdict::kill_process(), {}});
  policy::ArgCondition namespace_flags;
  namespace_flags.mask = 1;
  namespace_flags.on_match = policy::Verdict::error(EPERM);
  p.rules.push_back({"clone", policy::Verdict::allow(), namespace_flags});
  const SyscallRuleCounts counts = syscall_rule_counts(p);
  EXPECT_EQ(counts.allowed, 2);
  EXPECT_EQ(counts.by_argument, 1);
  EXPECT_EQ(counts.denied, 1);
  EXPECT_EQ(counts.killed, 1);
  EXPECT_EQ(counts.otherwise, "fails with ENOSYS");
}

TEST(PlanTextTest, CompletionAddsAspectsLimitsAndKnownPolicyCounts) {
  RunRequest request;
  request.limits.memory_bytes = 128U << 20;
  const json backend_plan = {{"backend", {{"name", "x"}, {"version", "1"}}},
                             {"limits", json::array({{{"memory", "128 MiB"}, {"by", "cgroup"}}})},
                             {"seccomp",
                              {{"policy", "cordon-default"},
                               {"version", 1},
                               {"hash", policy::content_hash(policy::default_syscall_policy())}}}};
  const json plan = to_json(complete_plan(read(backend_plan), request, unisolated()));
  EXPECT_FALSE(plan["isolates"].get<bool>());
  EXPECT_EQ(plan["aspects"].size(), std::size(kAllAspects));
  int memory = 0;
  bool timeout = false;
  for (const json& entry : plan["limits"]) {
    memory += entry.contains("memory") ? 1 : 0;
    timeout = timeout || entry.contains("timeout");
  }
  EXPECT_EQ(memory, 1) << "the backend's own entry is kept, not doubled: " << plan["limits"];
  EXPECT_TRUE(timeout) << plan["limits"];
  ASSERT_TRUE(plan["seccomp"].contains("rules")) << plan["seccomp"];
  EXPECT_GT(plan["seccomp"]["rules"]["allowed"].get<int>(), 100);
  EXPECT_GT(plan["seccomp"]["rules"]["denied"].get<int>(), 10);

  json unknown = backend_plan;
  unknown["seccomp"]["hash"] = "sha256:0000";
  EXPECT_FALSE(complete_plan(read(unknown), request, unisolated()).seccomp->rules)
      << "counts only for a policy known by its hash";
}

TEST(PlanTextTest, TextShowsMountsOnePerLineWithSizesAndFlags) {
  const json plan = {
      {"backend", {{"name", "namespace"}, {"version", "0.1.0"}}},
      {"isolates", true},
      {"namespaces", {"user", "pid", "net"}},
      {"filesystem",
       {{"steps",
         {{{"op", "bind"},
           {"target", "/usr"},
           {"source", "/usr"},
           {"flags", {"ro", "nosuid", "nodev"}}},
          {{"op", "mkdir"}, {"target", "/tmp"}, {"mode", "1777"}},
          {{"op", "tmpfs"},
           {"target", "/tmp"},
           {"options", "size=67108864,mode=1777"},
           {"flags", {"nosuid", "nodev"}}},
          {{"op", "write_file"}, {"target", "/etc/passwd"}, {"contents", "x\n"}},
          {{"op", "pivot_root"}, {"target", "/"}}}}}},
      {"seccomp",
       {{"policy", "cordon-default"},
        {"version", 1},
        {"hash", "sha256:ab"},
        {"rules", {{"allowed", 3}, {"by_argument", 1}, {"denied", 2}, {"otherwise", "ENOSYS"}}}}},
      {"limits", json::array({{{"memory", "128 MiB"}, {"by", "cgroup"}}})}};
  const std::string text = render_plan_text(read(plan));
  EXPECT_NE(text.find("namespaces: user pid net\n"), std::string::npos) << text;
  EXPECT_NE(text.find("/usr                   from /usr [ro,nosuid,nodev]\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("/tmp                   size 64 MiB, mode 1777 [rw,nosuid,nodev]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pivot_root"), std::string::npos) << text;
  EXPECT_NE(text.find("/etc/passwd"), std::string::npos) << text;
  EXPECT_NE(text.find("seccomp: policy cordon-default v1, sha256:ab"), std::string::npos) << text;
  EXPECT_NE(text.find("3 syscalls allowed"), std::string::npos) << text;
  EXPECT_NE(text.find("2 denied explicitly"), std::string::npos) << text;
  EXPECT_NE(text.find("memory     128 MiB            by cgroup"), std::string::npos) << text;
}

TEST(PlanTextTest, TextOfAPlanWithoutIsolationSaysSo) {
  RunRequest request;
  // As Backend::describe_plan() says it: no namespaces, no filesystem of its own.
  Plan plan = complete_plan(read({{"backend", {{"name", "subprocess"}, {"version", "0.1.0"}}},
                                  {"namespaces", json::array()},
                                  {"filesystem", nullptr},
                                  {"seccomp", nullptr}}),
                            request, unisolated());
  const std::string text = render_plan_text(plan);
  EXPECT_NE(text.find("isolation: no isolation — not enforced: network, filesystem, "
                      "environment, process_tree"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("namespaces: none"), std::string::npos) << text;
  EXPECT_NE(text.find("mounts: none"), std::string::npos) << text;
  EXPECT_NE(text.find("seccomp: none"), std::string::npos) << text;
  EXPECT_NE(text.find("timeout    5 s"), std::string::npos) << text;

  // A plan that leaves them out says nothing about them: "none" would be a claim.
  plan.namespaces.reset();
  plan.filesystem.reset();
  const std::string unstated = render_plan_text(plan);
  EXPECT_NE(unstated.find("namespaces: not stated by this backend's plan"), std::string::npos)
      << unstated;
  EXPECT_NE(unstated.find("mounts: not stated by this backend's plan"), std::string::npos)
      << unstated;
}

// A backend whose plans find only some interpreters (as a container on a root of its own
// would): the languages are those it can plan, in the table's order.
class SomeLanguages final : public Backend {
 public:
  [[nodiscard]] std::string_view name() const override { return "some"; }
  [[nodiscard]] std::string_view version() const override { return "1"; }
  [[nodiscard]] Probe probe() const override { return {true, ""}; }
  [[nodiscard]] Capabilities capabilities(const Limits& /*limits*/) const override {
    return unisolated();
  }
  [[nodiscard]] RunResult run(const RunRequest& /*request*/, const CancelToken& /*cancel*/,
                              RunObserver* /*observer*/) override {
    return sandbox_error({"some", "1"}, "runs nothing");
  }
  [[nodiscard]] Result<Plan> describe_plan(const RunRequest& request) const override {
    if (request.language == Language::kJavaScript || request.language == Language::kBash) {
      return fail(ErrorCode::kNotFound, "no interpreter below this root");
    }
    Plan plan;
    plan.argv = {"/usr/bin/x", "-c", ""};
    return plan;
  }
};

TEST(PlanTextTest, TheLanguagesAreThoseTheBackendCanPlan) {
  const SomeLanguages backend;
  EXPECT_EQ(available_languages(backend),
            (std::vector<Language>{Language::kPython, Language::kSh, Language::kPerl}));
  Plan plan;
  plan.backend_name = "some";
  plan.languages = {"python", "sh", "perl"};
  EXPECT_NE(render_plan_text(plan).find("languages here: python, sh, perl\n"), std::string::npos);
  const json j = to_json(plan);
  EXPECT_EQ(j["languages"], json::array({"python", "sh", "perl"}));
  EXPECT_EQ(read(j).languages, plan.languages);
  EXPECT_FALSE(to_json(Plan{}).contains("languages"));
}

}  // namespace
}  // namespace cordon::frontend
