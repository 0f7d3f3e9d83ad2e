// The plan's one JSON form (cordon/plan.h): written by a plugin, read once by the loader.
#include "cordon/plan.h"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "cordon/plugin_wire.h"

namespace cordon {
namespace {

using nlohmann::json;

Plan full_plan() {
  Plan plan;
  plan.backend_name = "namespace";
  plan.backend_version = "0.1.0";
  plan.choice_requested = "auto";
  plan.choice_reason = "isolates every aspect";
  plan.isolates = true;
  plan.timeout_ms = 5000;
  plan.namespaces = std::vector<std::string>{"user", "pid", "net"};
  PlanFilesystem fs;
  fs.steps.push_back({.op = "bind", .target = "/usr", .source = "/usr", .flags = {"ro"}});
  fs.steps.push_back(
      {.op = "write_file", .target = "/etc/passwd", .contents = "x\n", .mode = "0644"});
  fs.steps.push_back({.op = "bind", .target = "/etc/ld.so.cache", .optional = true});
  fs.extra = {{"home", "/tmp"}};
  plan.filesystem.emplace(std::move(fs));
  plan.user = PlanUser{.uid = 65534, .gid = 65534};
  plan.uid_map = "65534 100000 1";
  plan.hostname = "cordon";
  plan.network = "loopback only";
  plan.linux_capabilities = "all dropped";
  plan.seccomp = PlanSeccomp{.policy = "cordon-default",
                             .version = 2,
                             .hash = "sha256:ab",
                             .rules = SyscallRuleCounts{3, 1, 2, 0, "fails with ENOSYS"}};
  plan.limits.push_back({.aspect = Aspect::kMemory,
                         .value = "256 MiB",
                         .by = "cgroup memory limit",
                         .enforcement = Enforcement::kEnforced,
                         .is_default = true});
  plan.limits.push_back({.aspect = Aspect::kDisk, .value = std::nullopt, .by = "not enforced"});
  Capabilities caps;
  caps.aspects.push_back(capability(Aspect::kNetwork, Enforcement::kEnforced, "netns", {}, ""));
  plan.aspects = caps;
  plan.rlimits.push_back({.resource = "RLIMIT_NOFILE",
                          .soft = 1024,
                          .hard = std::numeric_limits<std::uint64_t>::max()});
  plan.argv = {"/usr/bin/python3", "-c", "print(1)"};
  plan.cwd = "/tmp";
  plan.extra = {{"oci_config", {{"ociVersion", "1.0.2"}}}, {"env", {"PATH=/usr/bin"}}};
  return plan;
}

// Every member survives the JSON form and comes back equal: what the plugin built is what
// the front end renders.
TEST(PlanJson, EveryMemberRoundTrips) {
  const Plan plan = full_plan();
  const json j = to_json(plan);
  Result<Plan> back = plan_from_json(j);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(to_json(*back), j);
  EXPECT_EQ(back->filesystem, plan.filesystem);
  EXPECT_EQ(back->seccomp, plan.seccomp);
  EXPECT_EQ(back->limits, plan.limits);
  EXPECT_EQ(back->rlimits, plan.rlimits);
  EXPECT_EQ(back->user, plan.user);
  EXPECT_EQ(back->namespaces, plan.namespaces);
  EXPECT_EQ(back->extra, plan.extra);
  EXPECT_EQ(back->choice_reason, plan.choice_reason);
  ASSERT_TRUE(back->aspects);
  EXPECT_EQ(back->aspects->aspects.size(), 1U);
}

// "Not stated" (absent) and "none" (null, empty) stay apart both ways.
TEST(PlanJson, NotStatedIsNotNone) {
  Result<Plan> unstated = plan_from_json(json{{"backend", {{"name", "x"}}}});
  ASSERT_TRUE(unstated);
  EXPECT_FALSE(unstated->filesystem);
  EXPECT_FALSE(unstated->namespaces);
  EXPECT_FALSE(unstated->isolates);
  EXPECT_FALSE(to_json(*unstated).contains("filesystem"));

  Result<Plan> none = plan_from_json(
      json{{"filesystem", nullptr}, {"namespaces", json::array()}, {"seccomp", nullptr}});
  ASSERT_TRUE(none);
  ASSERT_TRUE(none->filesystem);
  EXPECT_FALSE(*none->filesystem);
  ASSERT_TRUE(none->namespaces);
  EXPECT_TRUE(none->namespaces->empty());
  EXPECT_FALSE(none->seccomp);
  EXPECT_TRUE(to_json(*none)["filesystem"].is_null());
}

// A known member of the wrong shape is refused, naming it; nothing is guessed.
TEST(PlanJson, AKnownMemberOfTheWrongShapeIsRefusedByName) {
  const struct {
    json plan;
    std::string names;
  } cases[] = {
      {json{{"namespaces", "user"}}, "namespaces"},
      {json{{"namespaces", json::array({1})}}, "namespaces"},
      {json{{"isolates", "yes"}}, "isolates"},
      {json{{"timeout_ms", 1.5}}, "timeout_ms"},
      {json{{"filesystem", {{"steps", "bind"}}}}, "filesystem.steps"},
      {json{{"filesystem", {{"steps", json::array({{{"op", 3}}})}}}}, "op"},
      {json{{"user", {{"uid", "root"}}}}, "uid"},
      {json{{"seccomp", "on"}}, "seccomp"},
      {json{{"seccomp", {{"rules", {{"allowed", "many"}}}}}}, "allowed"},
      {json{{"limits", json::array({{{"by", "cgroup"}}})}}, "limits"},
      {json{{"limits", json::array({{{"memory", 5}}})}}, "limits"},
      {json{{"limits", json::array({{{"memory", "1 MiB"}, {"enforcement", "mostly"}}})}},
       "enforcement"},
      {json{{"rlimits", json::array({{{"resource", "RLIMIT_AS"}, {"soft", -1}}})}}, "soft"},
      {json{{"argv", json::array({"sh", 1})}}, "argv"},
      {json{{"aspects", "all"}}, ""},
      {json::array(), "object"},
  };
  for (const auto& c : cases) {
    Result<Plan> plan = plan_from_json(c.plan);
    ASSERT_FALSE(plan) << c.plan.dump();
    EXPECT_NE(plan.error().message.find(c.names), std::string::npos)
        << c.plan.dump() << ": " << plan.error().message;
  }
}

// Across the plugin boundary a malformed plan is the plugin's failure, not the request's.
TEST(PlanJson, AMalformedPlanFromAPluginIsThePluginsError) {
  Result<Plan> plan = wire::plan_from_json(json{{"plan", {{"namespaces", 7}}}});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ErrorCode::kPlugin);
  EXPECT_NE(plan.error().message.find("namespaces"), std::string::npos) << plan.error().message;
  Result<Plan> ok = wire::plan_from_json(wire::to_json(Result<Plan>(full_plan())));
  ASSERT_TRUE(ok) << ok.error().describe();
  EXPECT_EQ(to_json(*ok), to_json(full_plan()));
}

// A backend's own member never overrides a shared one, in either direction.
TEST(PlanJson, ExtraNeverOverridesASharedMember) {
  Plan plan;
  plan.backend_name = "x";
  plan.cwd = "/tmp";
  plan.extra = {{"cwd", "/root"}, {"runtime", "crun"}};
  const json j = to_json(plan);
  EXPECT_EQ(j["cwd"], "/tmp");
  EXPECT_EQ(j["runtime"], "crun");
  Result<Plan> back = plan_from_json(j);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->extra, json({{"runtime", "crun"}}));
}

}  // namespace
}  // namespace cordon
