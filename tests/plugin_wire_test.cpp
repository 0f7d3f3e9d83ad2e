// The JSON of the C plugin boundary (plugin_wire.h, result_json.h): what one side writes,
// the other reads back unchanged, bytes that are not UTF-8 included; what it cannot read is
// refused naming the field.
#include "cordon/plugin_wire.h"

#include <gtest/gtest.h>

#include "cordon/claims.h"
#include "cordon/result_json.h"
#include "cordon/text.h"

namespace cordon {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// Through text, as the boundary carries it.
json crossed(const json& value) { return json::parse(value.dump()); }

TEST(PluginWire, EveryRequestFieldRoundTripsWithAnyBytes) {
  RunRequest in;
  in.code = "print('\xff')\n";
  in.language = Language::kPython;
  in.timeout = milliseconds(2500);
  in.limits.memory_bytes = 1u << 28;
  in.limits.max_processes = 16;
  in.limits.cpu_time = milliseconds(900);
  in.limits.output_bytes = 4096;
  in.limits.scratch_bytes = 1u << 20;
  in.stdin_data = std::string("a\0b", 3);
  in.env = {{"NAME", "value \xc3"}, {"OTHER", ""}};
  in.input_files = {{"dir/\xe9.bin", std::string("\x00\xff", 2)}, {"a.txt", "text"}};
  in.artifact_globs = {"*.png", "out/\x80*"};
  in.artifact_max_bytes = 77;
  in.setup_bound = milliseconds(3000);
  in.tool_description = ToolDescriptionRef{"run_code", 3};
  in.network.allow = {"pypi.org", "10.0.0.0/8"};
  in.network.deny = {"evil.pypi.org"};
  in.network.max_bytes = 1u << 20;
  in.network.max_connections = 7;

  const json wire = crossed(wire::to_json(in));
  // Valid UTF-8 stays readable text; anything else is base64.
  EXPECT_EQ(wire["language"], "python");
  EXPECT_EQ(wire["env"][1], json::array({"OTHER", ""}));
  EXPECT_EQ(wire["code"], json({{"base64", base64_encode(in.code)}}));
  const Result<RunRequest> out = wire::request_from_json(wire);
  ASSERT_TRUE(out) << out.error().describe();
  EXPECT_EQ(out->code, in.code);
  EXPECT_EQ(out->language, in.language);
  EXPECT_EQ(out->timeout, in.timeout);
  EXPECT_EQ(out->limits.memory_bytes, in.limits.memory_bytes);
  EXPECT_EQ(out->limits.max_processes, in.limits.max_processes);
  EXPECT_EQ(out->limits.cpu_time, in.limits.cpu_time);
  EXPECT_EQ(out->limits.output_bytes, in.limits.output_bytes);
  EXPECT_EQ(out->limits.scratch_bytes, in.limits.scratch_bytes);
  EXPECT_EQ(out->stdin_data, in.stdin_data);
  EXPECT_EQ(out->env, in.env);
  EXPECT_EQ(out->input_files, in.input_files);
  EXPECT_EQ(out->artifact_globs, in.artifact_globs);
  EXPECT_EQ(out->artifact_max_bytes, in.artifact_max_bytes);
  EXPECT_EQ(out->setup_bound, in.setup_bound);
  ASSERT_TRUE(out->tool_description);
  EXPECT_EQ(out->tool_description->id, "run_code");
  EXPECT_EQ(out->tool_description->version, 3);
  EXPECT_EQ(out->network.allow, in.network.allow);
  EXPECT_EQ(out->network.deny, in.network.deny);
  EXPECT_EQ(out->network.max_bytes, in.network.max_bytes);
  EXPECT_EQ(out->network.max_connections, in.network.max_connections);

  // Unset stays unset.
  const Result<RunRequest> plain = wire::request_from_json(crossed(wire::to_json(RunRequest{})));
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->stdin_data);
  EXPECT_FALSE(plain->limits.memory_bytes);
  EXPECT_FALSE(plain->limits.cpu_time);
  EXPECT_FALSE(plain->tool_description);
  EXPECT_FALSE(plain->network.any());
  EXPECT_FALSE(plain->network.max_bytes);
}

TEST(PluginWire, MalformedRequestsAreRefusedNamingTheField) {
  struct Case {
    json request;
    std::string message;
  };
  const Case cases[] = {
      {json::array(), "a request is a JSON object"},
      {{{"code", 5}}, "'code' has an unexpected value: 5"},
      {{{"code", {{"base64", "!!"}}}}, "'code' has an unexpected value"},
      {{{"language", "ruby"}}, "ruby"},
      {{{"timeout_ms", "soon"}}, "'timeout_ms' has an unexpected value"},
      {{{"limits", {{"memory_bytes", -1}}}}, "'memory_bytes' has an unexpected value: -1"},
      {{{"env", {{"A"}}}}, "'env' has an unexpected value"},
      {{{"input_files", {{"a", 1}}}}, "'input_files' has an unexpected value"},
      {{{"tool_description", {{"version", 1}}}}, "'tool_description' has an unexpected value"},
      {{{"network", {{"allow", "pypi.org"}}}}, "'allow' has an unexpected value"},
      {{{"network", {{"max_connections", -1}}}}, "'max_connections' has an unexpected value"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.request.dump());
    const Result<RunRequest> out = wire::request_from_json(c.request);
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(out.error().message.find(c.message), std::string::npos) << out.error().message;
  }
}

TEST(PluginWire, ResultRoundTripsThroughItsPublicJson) {
  RunResult in;
  in.outcome = Outcome::kLimitExceeded;
  in.limit = LimitKind::kMemory;
  in.stdout_data = "ok \xff\xfe";
  in.stderr_data = "plain";
  in.stdout_truncated = true;
  in.exit_code = -1;
  in.signal = 9;
  in.oom_killed = true;
  in.wall_ms = 120;
  in.setup_ms = 30;
  in.cpu_ms = 99;
  in.memory_peak_kb = 2048;
  in.backend = {"namespace", "0.1.0"};
  in.policy = PolicyId{"default", "abc123"};
  in.enforced = {{Aspect::kMemory, "cgroup v1", "256 MiB"}, {Aspect::kTimeout, "deadline", {}}};
  in.artifacts = {{"out/\xff.bin", 2, "hash", std::string("\x00\x01", 2)}};
  in.error = "why";
  in.tool_description = ToolDescriptionRef{"run_code", 2};

  json wire = to_json(in);
  with_raw_output(in, wire);
  EXPECT_TRUE(wire.contains("stdout_base64"));
  EXPECT_FALSE(wire.contains("stderr_base64"));  // valid text needs no second copy
  const Result<RunResult> out = result_from_json(crossed(wire));
  ASSERT_TRUE(out) << out.error().describe();
  // Equal field for field: the public JSON of both is the same, and the raw bytes too.
  EXPECT_EQ(to_json(*out), to_json(in));
  EXPECT_EQ(out->stdout_data, in.stdout_data);
  EXPECT_EQ(out->artifacts.at(0).path, in.artifacts[0].path);
  EXPECT_EQ(out->artifacts.at(0).content, in.artifacts[0].content);
  EXPECT_FALSE(out->max_rss_kb);

  // Without the raw copy (a plugin that sends only text), the text is taken.
  const Result<RunResult> text_only = result_from_json(crossed(to_json(in)));
  ASSERT_TRUE(text_only);
  EXPECT_EQ(text_only->stdout_data, "ok \xef\xbf\xbd\xef\xbf\xbd");
}

TEST(PluginWire, AResultWithoutAKnownOutcomeIsRefused) {
  for (const json& bad : {json::object(), json{{"outcome", "fine"}}, json{{"outcome", 1}},
                          json{{"outcome", "ok"}, {"limit", "height"}},
                          json{{"outcome", "ok"}, {"exit_code", "zero"}},
                          json{{"outcome", "ok"}, {"enforced", {{{"aspect", "luck"}}}}},
                          json{{"outcome", "ok"}, {"enforced", "all"}},
                          json{{"outcome", "ok"}, {"enforced", json::array({"memory"})}},
                          json{{"outcome", "ok"}, {"artifacts", {{{"path", 1}}}}}}) {
    SCOPED_TRACE(bad.dump());
    EXPECT_FALSE(result_from_json(bad));
  }
  const Result<RunResult> minimal = result_from_json(json{{"outcome", "failed"}});
  ASSERT_TRUE(minimal);
  EXPECT_EQ(minimal->outcome, Outcome::kFailed);
  EXPECT_EQ(minimal->exit_code, -1);
}

TEST(PluginWire, CapabilitiesProbeAndPlanRoundTrip) {
  Capabilities in;
  in.aspects = {capability(Aspect::kNetwork, Enforcement::kEnforced, "netns", {}, "none at all"),
                capability(Aspect::kMemory, Enforcement::kPartial, "RLIMIT_AS", "1 GiB",
                           "per process", LimitRange{1024, 1u << 30})};
  const Result<Capabilities> out = capabilities_from_json(crossed(to_json(in)));
  ASSERT_TRUE(out) << out.error().describe();
  EXPECT_EQ(to_json(*out), to_json(in));
  EXPECT_EQ(out->aspects[1].range, (LimitRange{1024, 1u << 30}));
  EXPECT_FALSE(
      capabilities_from_json(json::array({json{{"aspect", "memory"}, {"enforcement", "mostly"}}})));
  EXPECT_FALSE(capabilities_from_json(json::object()));
  // Members of the wrong type are errors, never exceptions.
  EXPECT_FALSE(capabilities_from_json(json::array({json{{"aspect", 3}}})));
  EXPECT_FALSE(capabilities_from_json(
      json::array({json{{"aspect", "memory"}, {"enforcement", json::array()}}})));
  EXPECT_FALSE(capabilities_from_json(json::array({"memory"})));

  const Result<Probe> probe = wire::probe_from_json(crossed(wire::to_json(Probe{false, "no"})));
  ASSERT_TRUE(probe);
  EXPECT_FALSE(probe->available);
  EXPECT_EQ(probe->reason, "no");
  EXPECT_FALSE(wire::probe_from_json(json{{"reason", "x"}}));
  // A variant and the variants a host offers (issue #18) cross too; a plugin that says
  // nothing of them is read as the plain one with none.
  Probe gvisor{true, "runsc"};
  gvisor.variant = "runsc";
  gvisor.variants = {{.label = "other", .runtime = "other-rt"}};
  const Result<Probe> back = wire::probe_from_json(crossed(wire::to_json(gvisor)));
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(back->variant, "runsc");
  EXPECT_EQ(back->variants, gvisor.variants);
  EXPECT_TRUE(probe->variant.empty());
  EXPECT_TRUE(probe->variants.empty());
  EXPECT_FALSE(wire::probe_from_json(json{{"available", true}, {"variant", 3}}));
  EXPECT_FALSE(wire::probe_from_json(json{{"available", true}, {"variant", ""}}));
  EXPECT_FALSE(wire::probe_from_json(json{{"available", true}, {"variants", "runsc"}}));
  EXPECT_FALSE(wire::probe_from_json(
      json{{"available", true}, {"variants", json::array({json{{"label", "runsc"}}})}}));

  Plan sent;
  sent.backend_name = "x";
  sent.extra = {{"a", 1}};
  const Result<Plan> plan = wire::plan_from_json(crossed(wire::to_json(Result<Plan>(sent))));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->backend_name, "x");
  EXPECT_EQ(plan->extra, (json{{"a", 1}}));
  const Result<Plan> refused = wire::plan_from_json(
      crossed(wire::to_json(Result<Plan>(fail(ErrorCode::kInvalidArgument, "too big")))));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message, "too big");
  const Result<Plan> broken =
      wire::plan_from_json(crossed(wire::to_json(Result<Plan>(fail(ErrorCode::kSystem, "mount")))));
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().code, ErrorCode::kPlugin);
  EXPECT_FALSE(wire::plan_from_json(json::array()));
}

// A backend's declaration keeps its data across the boundary (issue #14): the audit's
// policy hash of a plugin's claims (claim_data) is the one the plugin computed itself, and
// a capability with a claim of the wrong shape is refused naming it.
TEST(PluginWire, DeclaredClaimsKeepTheirData) {
  Capabilities in;
  in.aspects = {
      claim(Aspect::kMemory, Enforcement::kPartial,
            {"rlimit", {{"resource", "RLIMIT_AS"}, {"per", "process"}}},
            Quantity{Quantity::Unit::kBytes, 256U << 20, ""}, "per process",
            LimitRange{1U << 20, 1U << 30}, {std::string(kDefaultCeiling), std::string(kNoCgroup)}),
      claim(Aspect::kCpu, Enforcement::kPartial, {"cgroup", {{"controller", "cpu"}}},
            Quantity{Quantity::Unit::kCpus, 0, "0.5"}, "bandwidth"),
      no_claim(Aspect::kDisk, "the host's free space")};
  const Result<Capabilities> out = capabilities_from_json(crossed(to_json(in)));
  ASSERT_TRUE(out) << out.error().describe();
  ASSERT_EQ(out->aspects.size(), 3U);
  EXPECT_EQ(out->aspects[0].by, in.aspects[0].by);
  EXPECT_EQ(out->aspects[0].quantity, in.aspects[0].quantity);
  EXPECT_EQ(out->aspects[0].conditions, in.aspects[0].conditions);
  EXPECT_EQ(out->aspects[1].quantity, in.aspects[1].quantity);
  EXPECT_EQ(claim_data(*out), claim_data(in));
  // Words alone (an older plugin's answer) still read; their hash is of the words.
  EXPECT_FALSE(to_json(in.aspects[2]).contains("claim"));

  json bad = to_json(in);
  bad[0]["claim"]["value"] = {{"unit", "furlongs"}, {"amount", 1}, {"text", ""}};
  const Result<Capabilities> refused = capabilities_from_json(bad);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("value"), std::string::npos) << refused.error().message;
  bad = to_json(in);
  bad[0]["claim"]["mechanism"]["params"] = json::array({json::array({"per"})});
  EXPECT_FALSE(capabilities_from_json(bad));
  bad = to_json(in);
  bad[0]["claim"]["conditions"] = "default_ceiling";
  EXPECT_FALSE(capabilities_from_json(bad));
}

}  // namespace
}  // namespace cordon
