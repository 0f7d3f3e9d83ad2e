#include "cordon/result_json.h"

#include <gtest/gtest.h>

#include <csignal>
#include <set>
#include <string>

#include "cordon/backend.h"
#include "cordon/capabilities.h"
#include "cordon/json_number.h"
#include "cordon/text.h"

namespace cordon {
namespace {

using nlohmann::json;

Termination exited(int code) {
  Termination t;
  t.exited = true;
  t.exit_code = code;
  return t;
}

Termination oom_killed(int signal) {
  Termination t;
  t.oom_killed = true;
  t.signal = signal;
  return t;
}

Termination killed_at_deadline() {
  Termination t;
  t.deadline_passed = true;
  t.signal = SIGKILL;
  return t;
}

RunResult sample() {
  RunResult r;
  apply_termination(exited(0), r);
  r.stdout_data = "hello\n";
  r.stderr_data = "warn\n";
  r.wall_ms = 12;
  r.setup_ms = 3;
  r.cpu_ms = 5;
  r.max_rss_kb = 1024;
  r.backend = {"subprocess", "0.1.0"};
  r.enforced.push_back({Aspect::kTimeout, "deadline", "5 s"});
  r.enforced.push_back({Aspect::kOutput, "capped read", std::nullopt});
  r.artifacts.push_back(
      {"out/a.txt", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "abc"});
  return r;
}

TEST(ResultJson, SchemaFieldsAndTypes) {
  const json j = to_json(sample());
  const std::set<std::string> expected = {
      "schema_version",   "outcome",          "limit",          "ok",
      "stdout",           "stderr",           "stdout_lossy",   "stderr_lossy",
      "stdout_truncated", "stderr_truncated", "exit_code",      "signal",
      "timed_out",        "oom_killed",       "wall_ms",        "setup_ms",
      "cpu_ms",           "max_rss_kb",       "memory_peak_kb", "backend",
      "policy",           "enforced",         "artifacts",      "error",
      "tool_description", "network",          "environment",    "value",
      "state_lost",       "session"};
  std::set<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.insert(key);
  EXPECT_EQ(keys, expected);

  EXPECT_EQ(j["schema_version"], kResultSchemaVersion);
  EXPECT_EQ(j["outcome"], "ok");
  EXPECT_TRUE(j["limit"].is_null());
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["stdout"], "hello\n");
  EXPECT_EQ(j["stderr"], "warn\n");
  EXPECT_EQ(j["stdout_lossy"], false);
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["signal"], 0);
  EXPECT_EQ(j["timed_out"], false);
  EXPECT_EQ(j["wall_ms"], 12);
  EXPECT_EQ(j["setup_ms"], 3);
  EXPECT_EQ(j["cpu_ms"], 5);
  EXPECT_EQ(j["max_rss_kb"], 1024);
  EXPECT_TRUE(j["memory_peak_kb"].is_null());
  EXPECT_EQ(j["backend"], (json{{"name", "subprocess"}, {"version", "0.1.0"}}));
  EXPECT_TRUE(j["policy"].is_null());
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_TRUE(j["tool_description"].is_null());
  EXPECT_TRUE(j["network"].is_null());  // no allow-list: no network report
  ASSERT_EQ(j["enforced"].size(), 2u);
  EXPECT_EQ(j["enforced"][0],
            (json{{"aspect", "timeout"}, {"mechanism", "deadline"}, {"value", "5 s"}}));
  EXPECT_TRUE(j["enforced"][1]["value"].is_null());
  ASSERT_EQ(j["artifacts"].size(), 1u);
  EXPECT_EQ(j["artifacts"][0]["path"], "out/a.txt");
  EXPECT_EQ(j["artifacts"][0]["size"], 3);
  EXPECT_EQ(j["artifacts"][0]["content_base64"], "YWJj");
  EXPECT_EQ(j["artifacts"][0]["sha256"].get<std::string>().size(), 64u);
}

TEST(ResultJson, OptionalFieldsWhenSet) {
  RunResult r = sample();
  apply_termination(oom_killed(9), r);
  r.memory_peak_kb = 2048;
  r.policy = PolicyId{"default", "abc123"};
  r.tool_description = ToolDescriptionRef{"run_code", 3};
  const json j = to_json(r);
  EXPECT_EQ(j["outcome"], "limit_exceeded");
  EXPECT_EQ(j["limit"], "memory");
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["oom_killed"], true);
  EXPECT_EQ(j["exit_code"], -1);
  EXPECT_EQ(j["signal"], 9);
  EXPECT_EQ(j["memory_peak_kb"], 2048);
  EXPECT_EQ(j["policy"], (json{{"name", "default"}, {"hash", "abc123"}}));
  EXPECT_EQ(j["tool_description"], (json{{"id", "run_code"}, {"version", 3}}));
}

// The environment the code ran in (issue #17): its name and digest, read back as written.
TEST(ResultJson, EnvironmentNameAndDigest) {
  RunResult r = sample();
  EXPECT_TRUE(to_json(r)["environment"].is_null());
  r.environment = EnvironmentRef{.name = "sci", .digest = "sha256:" + std::string(64, 'a')};
  const json j = to_json(r);
  EXPECT_EQ(j["environment"],
            (json{{"name", "sci"}, {"digest", "sha256:" + std::string(64, 'a')}}));
  Result<RunResult> back = result_from_json(j);
  ASSERT_TRUE(back.has_value()) << back.error().describe();
  EXPECT_EQ(back->environment, r.environment);
  json bad = j;
  bad["environment"]["digest"] = 7;
  EXPECT_FALSE(result_from_json(bad).has_value());
}

// A session's call (issue #41): the cell's value, whether the interpreter was lost, and
// which session and call; unset for a one-shot call. Read back as written.
TEST(ResultJson, SessionCallFields) {
  RunResult r = sample();
  json j = to_json(r);
  EXPECT_TRUE(j["value"].is_null());
  EXPECT_EQ(j["state_lost"], false);
  EXPECT_TRUE(j["session"].is_null());
  r.value = "42";
  r.state_lost = true;
  r.session = SessionCallRef{.id = std::string(32, 'f'), .call = 3};
  j = to_json(r);
  EXPECT_EQ(j["value"], "42");
  EXPECT_EQ(j["state_lost"], true);
  EXPECT_EQ(j["session"], (json{{"id", std::string(32, 'f')}, {"call", 3}}));
  Result<RunResult> back = result_from_json(j);
  ASSERT_TRUE(back.has_value()) << back.error().describe();
  EXPECT_EQ(back->value, r.value);
  EXPECT_TRUE(back->state_lost);
  EXPECT_EQ(back->session, r.session);
  json bad = j;
  bad["session"]["call"] = "three";
  EXPECT_FALSE(result_from_json(bad).has_value());
}

// The backend's variant (issue #18: "container (runsc)") is part of its identity: written
// only when there is one, read back, and its label is what lists and the history show.
TEST(ResultJson, BackendVariant) {
  RunResult r = sample();
  EXPECT_FALSE(to_json(r)["backend"].contains("variant"));
  r.backend = BackendId{.name = "container", .version = "0.1.0", .variant = "runsc"};
  const json j = to_json(r);
  EXPECT_EQ(j["backend"]["variant"], "runsc");
  Result<RunResult> back = result_from_json(j);
  ASSERT_TRUE(back.has_value()) << back.error().describe();
  EXPECT_EQ(back->backend.variant, "runsc");
  EXPECT_EQ(backend_label(back->backend), "container (runsc)");
  EXPECT_EQ(backend_label("namespace", ""), "namespace");
  json bad = j;
  bad["backend"]["variant"] = 7;
  EXPECT_FALSE(result_from_json(bad).has_value());
}

// A run with an allow-list (issue #16, schema 3): the list and limits it ran with, each
// connection asked for, and a limit that was reached.
TEST(ResultJson, NetworkReportShape) {
  RunResult r = sample();
  NetworkReport report;
  report.access.allow = {"pypi.org", "*.pythonhosted.org"};
  report.access.deny = {"evil.pypi.org"};
  report.access.max_bytes = 1000;
  report.connections = {
      {"CONNECT", "pypi.org", 443, "151.101.0.223", true, "allowed by pypi.org", 517, 4096},
      {"GET", "evil.pypi.org", 80, "", false, "denied by --deny-net evil.pypi.org", 0, 0}};
  report.dropped = 2;
  report.limit_reached = "bytes";
  r.network = report;
  r.outcome = Outcome::kLimitExceeded;
  r.limit = LimitKind::kNetwork;
  const json j = to_json(r);
  EXPECT_EQ(j["schema_version"], 6);  // 4: "limit" may be "network"; 5: "environment"; 6: sessions
  EXPECT_EQ(j["limit"], "network");
  const json& n = j["network"];
  EXPECT_EQ(n["allow"], json::array({"pypi.org", "*.pythonhosted.org"}));
  EXPECT_EQ(n["deny"], json::array({"evil.pypi.org"}));
  EXPECT_EQ(n["max_bytes"], 1000);
  EXPECT_TRUE(n["max_connections"].is_null());
  ASSERT_EQ(n["connections"].size(), 2u);
  EXPECT_EQ(n["connections"][0], (json{{"method", "CONNECT"},
                                       {"host", "pypi.org"},
                                       {"port", 443},
                                       {"address", "151.101.0.223"},
                                       {"allowed", true},
                                       {"why", "allowed by pypi.org"},
                                       {"bytes_out", 517},
                                       {"bytes_in", 4096}}));
  EXPECT_EQ(n["connections"][1]["allowed"], false);
  EXPECT_EQ(n["dropped"], 2);
  EXPECT_EQ(n["limit_reached"], "bytes");
  const Result<RunResult> back = result_from_json(j);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(to_json(*back), j);
  json bad = j;
  bad["network"]["connections"][0]["port"] = "https";
  EXPECT_FALSE(result_from_json(bad));
  bad = j;
  bad["network"]["allow"] = "pypi.org";
  EXPECT_FALSE(result_from_json(bad));
}

// A figure that was not measured is null, never 0; the schema version says so.
TEST(ResultJson, UnmeasuredFiguresAreNull) {
  RunResult r;
  apply_termination(killed_at_deadline(), r);
  r.wall_ms = 1000;
  const json j = to_json(r);
  EXPECT_GE(j["schema_version"], 2);  // 2 made them null
  EXPECT_EQ(j["outcome"], "timed_out");
  EXPECT_EQ(j["signal"], SIGKILL);
  EXPECT_TRUE(j["cpu_ms"].is_null());
  EXPECT_TRUE(j["max_rss_kb"].is_null());
  EXPECT_TRUE(j["memory_peak_kb"].is_null());
  EXPECT_EQ(j["wall_ms"], 1000);
  // A measured 0 stays a 0.
  r.cpu_ms = 0;
  EXPECT_EQ(to_json(r)["cpu_ms"], 0);

  const json error = to_json(sandbox_error({"ns", "1"}, "clone failed"));
  EXPECT_TRUE(error["cpu_ms"].is_null());
  EXPECT_TRUE(error["max_rss_kb"].is_null());
}

// Figures read back from a stored Result of either schema version, as the inspector's
// History does: schema 1 wrote 0 for an unmeasured max_rss_kb.
TEST(ResultJson, FiguresReadFromEitherSchemaVersion) {
  const json v1 = json::parse(R"({"schema_version": 1, "outcome": "timed_out", "signal": 0,
      "cpu_ms": 0, "max_rss_kb": 0, "memory_peak_kb": 752, "wall_ms": 1008})");
  EXPECT_EQ(result_figure(v1, "max_rss_kb"), std::nullopt);
  EXPECT_EQ(result_figure(v1, "cpu_ms"), 0);
  EXPECT_EQ(result_figure(v1, "memory_peak_kb"), 752);
  EXPECT_EQ(result_figure(v1, "wall_ms"), 1008);
  const json v1_measured = json::parse(R"({"schema_version": 1, "max_rss_kb": 7996})");
  EXPECT_EQ(result_figure(v1_measured, "max_rss_kb"), 7996);

  RunResult r = sample();
  r.cpu_ms.reset();
  const json v2 = to_json(r);
  EXPECT_EQ(result_figure(v2, "cpu_ms"), std::nullopt);
  EXPECT_EQ(result_figure(v2, "max_rss_kb"), 1024);
  EXPECT_EQ(result_figure(v2, "memory_peak_kb"), std::nullopt);
  EXPECT_EQ(result_figure(v2, "no_such_field"), std::nullopt);
  EXPECT_EQ(result_figure(json("not an object"), "cpu_ms"), std::nullopt);
}

// Seen while writing result_json_fuzz: a figure stored as a float out of int64's range (a history
// row any process can write) was read with get<int64_t>(), undefined behaviour. Such a
// figure reads as not measured; an integral float still reads as its value.
TEST(ResultJson, FigureThatIsNoInt64ReadsAsUnmeasured) {
  const json stored = json::parse(
      R"({"schema_version": 2, "cpu_ms": 1e300, "wall_ms": -1e19, "max_rss_kb": 2048.0,
          "memory_peak_kb": 18446744073709551615, "signal": 0.5})");
  EXPECT_EQ(result_figure(stored, "cpu_ms"), std::nullopt);
  EXPECT_EQ(result_figure(stored, "wall_ms"), std::nullopt);
  EXPECT_EQ(result_figure(stored, "max_rss_kb"), 2048);
  EXPECT_EQ(result_figure(stored, "memory_peak_kb"), std::nullopt);
  EXPECT_EQ(result_figure(stored, "signal"), std::nullopt);
}

TEST(JsonInteger, ReadsOnlyIntegersThatFit) {
  EXPECT_EQ(json_integer<int>(json(12)), 12);
  EXPECT_EQ(json_integer<int>(json(-12)), -12);
  EXPECT_EQ(json_integer<int>(json(1e3)), 1000);
  EXPECT_EQ(json_integer<int>(json(2147483648LL)), std::nullopt);
  EXPECT_EQ(json_integer<int>(json(-2147483648LL)), INT32_MIN);
  EXPECT_EQ(json_integer<int>(json(2147483648.0)), std::nullopt);
  EXPECT_EQ(json_integer<int>(json(1.5)), std::nullopt);
  EXPECT_EQ(json_integer<int>(json("12")), std::nullopt);
  EXPECT_EQ(json_integer<std::uint64_t>(json(-1)), std::nullopt);
  EXPECT_EQ(json_integer<std::uint64_t>(json(18446744073709551615ULL)), UINT64_MAX);
  EXPECT_EQ(json_integer<std::uint64_t>(json(1.8446744073709552e19)), std::nullopt);
  EXPECT_EQ(json_integer<std::int64_t>(json(9.2233720368547758e18)), std::nullopt);
  EXPECT_EQ(json_integer<std::int64_t>(json(-9.2233720368547758e18)), INT64_MIN);
  EXPECT_EQ(json_integer<std::uint32_t>(json(4294967296LL)), std::nullopt);
  const json object = json::parse(R"({"a": 1, "b": 1e300})");
  EXPECT_EQ(json_integer_member<int>(object, "a").value_or(-1), 1);
  EXPECT_FALSE(json_integer_member<int>(object, "b").has_value());
  EXPECT_FALSE(json_integer_member<int>(object, "c").has_value());
  EXPECT_EQ(json_integer_member<int>(object, "c", 7).value_or(-1), 7);
  EXPECT_EQ(json_integer_member<int>(json(5), "a", 7).value_or(-1), 7);
}

TEST(ResultJson, SandboxErrorHasReason) {
  const json j = to_json(sandbox_error({"ns", "1"}, "clone failed"));
  EXPECT_EQ(j["outcome"], "sandbox_error");
  EXPECT_EQ(j["error"], "clone failed");
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["exit_code"], -1);
}

TEST(ResultJson, ArbitraryBytesGiveValidJson) {
  std::string garbage;
  for (int i = 0; i < 256; ++i) garbage += static_cast<char>(i);
  garbage += "\xF0\x9F\x98";  // truncated at the very end
  RunResult r = sample();
  r.stdout_data = garbage;
  r.stderr_data = "ok \xC3\xA9";
  r.error = garbage;
  r.backend.name = garbage;
  r.artifacts.front().path = garbage;
  r.artifacts.front().content = garbage;
  r.enforced.front().mechanism = garbage;

  const json j = to_json(r);
  std::string dumped;
  ASSERT_NO_THROW(dumped = j.dump());
  const json back = json::parse(dumped);  // strict parser: throws on invalid UTF-8
  EXPECT_EQ(back["stdout_lossy"], true);
  EXPECT_EQ(back["stderr_lossy"], false);
  EXPECT_EQ(back["stderr"], "ok \xC3\xA9");
  EXPECT_EQ(back["stdout"], to_valid_utf8(garbage));
  EXPECT_EQ(back["artifacts"][0]["content_base64"], base64_encode(garbage));
  // The raw bytes stay on the struct for the API and the history.
  EXPECT_EQ(r.stdout_data, garbage);
}

TEST(CapabilityJson, Shape) {
  Capability cap = capability(Aspect::kMemory, Enforcement::kPartial, "RLIMIT_AS", "256 MiB",
                              "per process, not for the tree");
  EXPECT_EQ(to_json(cap), (json{{"aspect", "memory"},
                                {"enforcement", "partial"},
                                {"mechanism", "RLIMIT_AS"},
                                {"value", "256 MiB"},
                                {"detail", "per process, not for the tree"}}));
  cap.value.reset();
  EXPECT_TRUE(to_json(cap)["value"].is_null());

  Capabilities caps;
  caps.aspects.push_back(cap);
  caps.aspects.push_back(
      capability(Aspect::kTimeout, Enforcement::kEnforced, "deadline", "5 s", ""));
  const json list = to_json(caps);
  ASSERT_TRUE(list.is_array());
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1]["aspect"], "timeout");
  EXPECT_FALSE(list[0].contains("range")) << "only a capability with a range shows one";

  // The values a request may ask for, as numbers and as people read them.
  cap.range = LimitRange{32u << 20, 1u << 30};
  EXPECT_EQ(to_json(cap)["range"],
            (json{{"min", 32u << 20}, {"max", 1u << 30}, {"text", "32 MiB to 1 GiB"}}));
  EXPECT_EQ(list[1]["enforcement"], "enforced");
}

}  // namespace
}  // namespace cordon
