// A run_code tool call as a model makes it (cli/tool_call.h): the arguments checked
// against the real rendered inputSchema, one test per field and rule, each error naming
// the field; and the CallToolResult a finished run becomes, for every outcome.
#include "tool_call.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "cordon/result_json.h"
#include "cordon/session.h"
#include "cordon/text.h"
#include "prompts/tool_description.h"
#include "prompts/tool_render.h"
#include "schema_check.h"

namespace cordon::cli {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// A run_code template rendered as `cordon prompt` renders it (claims marked unverified: no
// audit report is needed for the schema); the latest when `version` is unset.
json rendered_schema(std::optional<int> version) {
  const auto tool = prompts::find_template("run_code", version);
  EXPECT_TRUE(tool.has_value());
  const prompts::RenderContext ctx{.backend_name = "test",
                                   .capabilities = {},
                                   .timeout = std::chrono::seconds(10),
                                   .languages = {Language::kPython, Language::kBash, Language::kSh},
                                   .report = nullptr,
                                   .unverified = true};
  const auto rendered = prompts::render_tool(*tool, ctx);
  EXPECT_TRUE(rendered.has_value()) << rendered.error().describe();
  return rendered ? rendered->input_schema : json();
}

const json& latest_schema() {
  static const json schema = rendered_schema(std::nullopt);
  return schema;
}

ToolCallDefaults defaults() {
  ToolCallDefaults d;
  d.max_timeout = std::chrono::seconds(10);
  return d;
}

// A valid call as a strict-mode model writes it: every property, null where unused.
json args(json overrides = json::object()) {
  json a{{"code", "echo hi"},
         {"language", "sh"},
         {"timeout", nullptr},
         {"files", nullptr},
         {"collect", nullptr}};
  for (const auto& [k, v] : overrides.items()) a[k] = v;
  return a;
}

// The error message of a call that must be refused.
std::string refused(const json& arguments, const ToolCallDefaults& d = defaults()) {
  const Result<RunRequest> r = request_from_tool_call(arguments, latest_schema(), d);
  EXPECT_FALSE(r.has_value()) << arguments.dump();
  if (r) return "";
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  return r.error().message;
}

RunRequest accepted(const json& arguments, const ToolCallDefaults& d = defaults()) {
  Result<RunRequest> r = request_from_tool_call(arguments, latest_schema(), d);
  EXPECT_TRUE(r.has_value()) << arguments.dump() << ": " << r.error().message;
  return r ? *r : RunRequest{};
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

TEST(ToolCallArgs, TheLatestTemplateOffersFilesAndCollect) {
  const json& props = latest_schema()["properties"];
  EXPECT_TRUE(props.contains("files"));
  EXPECT_TRUE(props.contains("collect"));
}

TEST(ToolCallArgs, AValidCallBuildsTheRequest) {
  const RunRequest r = accepted(args({{"code", "print(1)"}, {"language", "python"}}));
  EXPECT_EQ(r.code, "print(1)");
  EXPECT_EQ(r.language, Language::kPython);
  EXPECT_EQ(r.timeout, milliseconds(10000));
  EXPECT_TRUE(r.input_files.empty());
  EXPECT_TRUE(r.artifact_globs.empty());
}

TEST(ToolCallArgs, TheOperatorsLimitsEnvAndDescriptionAreKept) {
  ToolCallDefaults d = defaults();
  d.limits.memory_bytes = 128u << 20;
  d.limits.max_processes = 7;
  d.env = {{"MODE", "test"}};
  d.tool_description = ToolDescriptionRef{.id = "run_code", .version = 3};
  d.max_artifact_bytes = 1234;
  const RunRequest r = accepted(args(), d);
  EXPECT_EQ(r.limits.memory_bytes, 128u << 20);
  EXPECT_EQ(r.limits.max_processes, 7u);
  ASSERT_EQ(r.env.size(), 1u);
  EXPECT_EQ(r.env[0].first, "MODE");
  ASSERT_TRUE(r.tool_description.has_value());
  EXPECT_EQ(r.tool_description->version, 3);
  EXPECT_EQ(r.artifact_max_bytes, 1234u);
}

TEST(ToolCallArgs, ArgumentsMustBeAnObject) {
  EXPECT_TRUE(starts_with(refused(json::array()), "arguments: must be"));
  EXPECT_TRUE(starts_with(refused(json("code")), "arguments: must be"));
}

json file(const std::string& name, const std::string& content) {
  return json{{"name", name}, {"content_base64", base64_encode(content)}};
}

TEST(ToolCallArgs, TheCodeMissingIsNamed) {
  json a = args();
  a.erase("code");
  const std::string m = refused(a);
  EXPECT_TRUE(starts_with(m, "code: missing")) << m;
}

// What a model writes first (issue #40): the program alone. The language is the schema's
// stated default, python where the backend runs it; the rest as the descriptions say.
TEST(ToolCallArgs, TheCodeAloneIsACall) {
  EXPECT_EQ(latest_schema()["required"], json::array({"code"}));
  EXPECT_EQ(latest_schema()["properties"]["language"]["default"], "python");
  const RunRequest r = accepted(json{{"code", "print(6*7)"}});
  EXPECT_EQ(r.code, "print(6*7)");
  EXPECT_EQ(r.language, Language::kPython);
  EXPECT_EQ(r.timeout, milliseconds(10000));
  EXPECT_TRUE(r.input_files.empty());
  EXPECT_TRUE(r.artifact_globs.empty());
}

// Each optional field left out means what null means, and both are what a call without it
// gets; a value given is used.
TEST(ToolCallArgs, AnOptionalFieldLeftOutOrNullIsTheSame) {
  const json full = args({{"language", "bash"},
                          {"timeout", 2},
                          {"files", json::array({file("in.txt", "x")})},
                          {"collect", json::array({"*.png"})}});
  const RunRequest given = accepted(full);
  EXPECT_EQ(given.language, Language::kBash);
  EXPECT_EQ(given.timeout, milliseconds(2000));
  EXPECT_EQ(given.input_files.size(), 1U);
  EXPECT_EQ(given.artifact_globs.size(), 1U);
  for (const char* name : {"language", "timeout", "files", "collect"}) {
    SCOPED_TRACE(name);
    json left_out = full;
    left_out.erase(name);
    json null = full;
    null[name] = nullptr;
    const RunRequest a = accepted(left_out);
    const RunRequest b = accepted(null);
    EXPECT_EQ(a.language, b.language);
    EXPECT_EQ(a.timeout, b.timeout);
    EXPECT_EQ(a.input_files, b.input_files);
    EXPECT_EQ(a.artifact_globs, b.artifact_globs);
    EXPECT_EQ(a.language,
              std::string_view(name) == "language" ? Language::kPython : Language::kBash);
    EXPECT_EQ(a.timeout,
              std::string_view(name) == "timeout" ? milliseconds(10000) : milliseconds(2000));
    EXPECT_EQ(a.input_files.empty(), std::string_view(name) == "files");
    EXPECT_EQ(a.artifact_globs.empty(), std::string_view(name) == "collect");
  }
}

// A released template that requires every property, as strict mode does (v3): a nullable
// one left out is null; the language, which takes no null and states no default, is still
// asked for.
TEST(ToolCallArgs, UnderV3ANullableFieldLeftOutIsNull) {
  const json v3 = rendered_schema(3);
  ASSERT_EQ(v3["required"].size(), 5U);
  const Result<RunRequest> r =
      request_from_tool_call(json{{"code", "echo hi"}, {"language", "sh"}}, v3, defaults());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->timeout, milliseconds(10000));
  const Result<RunRequest> no_language =
      request_from_tool_call(json{{"code", "echo hi"}}, v3, defaults());
  ASSERT_FALSE(no_language.has_value());
  EXPECT_TRUE(starts_with(no_language.error().message, "language: missing"))
      << no_language.error().message;
}

TEST(ToolCallArgs, CodeOfTheWrongType) {
  EXPECT_EQ(refused(args({{"code", 42}})), "code: must be a string; got the number 42");
  EXPECT_EQ(refused(args({{"code", nullptr}})), "code: must be a string; got null");
}

TEST(ToolCallArgs, CodeOverTheSizeLimit) {
  const std::string m = refused(args({{"code", std::string(kMaxCodeBytes + 1, 'x')}}));
  EXPECT_TRUE(starts_with(m, "code: must be at most 1 MiB")) << m;
}

TEST(ToolCallArgs, LanguageOutsideTheEnum) {
  EXPECT_EQ(refused(args({{"language", "cobol"}})),
            "language: must be one of python, bash or sh; got \"cobol\"");
  EXPECT_EQ(refused(args({{"language", 1}})), "language: must be a string; got the number 1");
}

TEST(ToolCallArgs, AnExtraPropertyIsRefused) {
  const std::string m = refused(args({{"stdin", "x"}}));
  EXPECT_TRUE(starts_with(m, "stdin: unknown property; the properties are code, ")) << m;
}

TEST(ToolCallArgs, TimeoutNullIsTheMaximum) {
  EXPECT_EQ(accepted(args()).timeout, milliseconds(10000));
}

TEST(ToolCallArgs, TimeoutInSecondsRoundedUpToMilliseconds) {
  EXPECT_EQ(accepted(args({{"timeout", 0.3}})).timeout, milliseconds(300));
  EXPECT_EQ(accepted(args({{"timeout", 2}})).timeout, milliseconds(2000));
  EXPECT_EQ(accepted(args({{"timeout", 0.0001}})).timeout, milliseconds(1));
  EXPECT_EQ(accepted(args({{"timeout", 10}})).timeout, milliseconds(10000));
}

TEST(ToolCallArgs, TimeoutAboveTheMaximumIsRefusedNamingIt) {
  EXPECT_EQ(refused(args({{"timeout", 30}})),
            "timeout: must be at most 10 seconds (the operator's limit); got 30");
  EXPECT_TRUE(starts_with(refused(args({{"timeout", 1e300}})), "timeout: must be at most 10"));
  ToolCallDefaults d = defaults();
  d.max_timeout = milliseconds(1500);
  EXPECT_TRUE(starts_with(refused(args({{"timeout", 2}}), d), "timeout: must be at most 1.5 "));
}

TEST(ToolCallArgs, TimeoutZeroOrNegativeNeverMeansUnbounded) {
  for (const json& t : {json(0), json(-1), json(-0.5), json(0.0)}) {
    const std::string m = refused(args({{"timeout", t}}));
    EXPECT_TRUE(starts_with(m, "timeout: must be more than 0 seconds; left out or null, 10 s"))
        << m;
  }
}

TEST(ToolCallArgs, AZeroMaximumIsTheDefaultTimeoutNeverUnbounded) {
  ToolCallDefaults d = defaults();
  d.max_timeout = milliseconds(0);
  EXPECT_EQ(accepted(args(), d).timeout, kDefaultTimeout);
  EXPECT_EQ(accepted(args({{"timeout", 1}}), d).timeout, milliseconds(1000));
}

TEST(ToolCallArgs, TimeoutOfTheWrongType) {
  EXPECT_EQ(refused(args({{"timeout", "5s"}})), "timeout: must be a number; got a string");
}

TEST(ToolCallArgs, FilesAreDecodedIntoTheWorkingDirectory) {
  const RunRequest r = accepted(
      args({{"files",
             json::array({file("data.csv", "a,b\n"), file("in/x.bin", std::string("\0\1", 2))})}}));
  ASSERT_EQ(r.input_files.size(), 2u);
  EXPECT_EQ(r.input_files.at("data.csv"), "a,b\n");
  EXPECT_EQ(r.input_files.at("in/x.bin"), std::string("\0\1", 2));
}

TEST(ToolCallArgs, FilesWithABadNameAreRefused) {
  for (const std::string name : {"../x", "/etc/passwd", "", "a/../../b", "."}) {
    const std::string m = refused(args({{"files", json::array({file(name, "x")})}}));
    EXPECT_TRUE(starts_with(m, "files[0].name: ")) << name << ": " << m;
  }
  const std::string twice =
      refused(args({{"files", json::array({file("a", "1"), file("a", "2")})}}));
  EXPECT_EQ(twice, "files[1].name: \"a\" is given twice");
}

TEST(ToolCallArgs, FilesWithBadBase64AreRefused) {
  for (const char* bad : {"not base64!", "QQ=Q", "A", "QUJD===="}) {
    json f{{"name", "a.txt"}, {"content_base64", bad}};
    const std::string m = refused(args({{"files", json::array({f})}}));
    EXPECT_TRUE(starts_with(m, "files[0].content_base64: is not valid base64")) << bad << ": " << m;
  }
}

TEST(ToolCallArgs, FilesOverTheSizeLimitAreRefused) {
  ToolCallDefaults d = defaults();
  d.max_input_bytes = 10;
  EXPECT_EQ(accepted(args({{"files", json::array({file("a", std::string(10, 'x'))})}}), d)
                .input_files.size(),
            1u);
  std::string m = refused(args({{"files", json::array({file("a", std::string(11, 'x'))})}}), d);
  EXPECT_TRUE(starts_with(m, "files[0].content_base64: the files may hold at most 10 B")) << m;
  // Together, too.
  m = refused(args({{"files", json::array({file("a", "123456"), file("b", "123456")})}}), d);
  EXPECT_TRUE(starts_with(m, "files[1].content_base64: ")) << m;
}

TEST(ToolCallArgs, FilesOfTheWrongShapeAreRefused) {
  EXPECT_EQ(refused(args({{"files", "a.txt"}})), "files: must be an array; got a string");
  EXPECT_TRUE(starts_with(refused(args({{"files", json::array({json{{"name", "a"}}})}})),
                          "files[0].content_base64: missing"));
  json extra = file("a", "x");
  extra["mode"] = 755;
  EXPECT_TRUE(starts_with(refused(args({{"files", json::array({extra})}})),
                          "files[0].mode: unknown property"));
  json many = json::array();
  for (int i = 0; i < 65; ++i) many.push_back(file("f" + std::to_string(i), ""));
  EXPECT_EQ(refused(args({{"files", many}})), "files: must have at most 64 items; got 65");
}

TEST(ToolCallArgs, CollectPatternsAreKept) {
  const RunRequest r = accepted(args({{"collect", json::array({"*.png", "out/*.csv"})}}));
  EXPECT_EQ(r.artifact_globs, (std::vector<std::string>{"*.png", "out/*.csv"}));
}

TEST(ToolCallArgs, CollectBadPatternsAreRefused) {
  EXPECT_TRUE(starts_with(refused(args({{"collect", json::array({"/etc/*"})}})),
                          "collect[0]: must be relative"));
  EXPECT_TRUE(starts_with(refused(args({{"collect", json::array({"ok", "../*"})}})),
                          "collect[1]: must not climb out"));
  EXPECT_TRUE(starts_with(refused(args({{"collect", json::array({"a/../../b"})}})),
                          "collect[0]: must not climb out"));
  EXPECT_TRUE(starts_with(refused(args({{"collect", json::array({""})}})),
                          "collect[0]: must not be empty"));
  EXPECT_EQ(refused(args({{"collect", json::array({1})}})),
            "collect[0]: must be a string; got the number 1");
  json many = json::array();
  for (int i = 0; i < 17; ++i) many.push_back("*.txt");
  EXPECT_EQ(refused(args({{"collect", many}})), "collect: must have at most 16 items; got 17");
}

// Keywords the released templates do not use yet, on a schema of their own.
TEST(SchemaCheck, MinimumMaximumMaxLengthAndInteger) {
  const json schema{{"type", "object"},
                    {"properties",
                     {{"n", {{"type", "integer"}, {"minimum", 1}, {"maximum", 5}}},
                      {"s", {{"type", "string"}, {"maxLength", 3}}}}}};
  EXPECT_TRUE(check_schema(json{{"n", 3}, {"s", "äöü"}}, schema).has_value());
  EXPECT_TRUE(check_schema(json{{"n", 2.0}}, schema).has_value());
  EXPECT_EQ(check_schema(json{{"n", 0}}, schema).error().message, "n: must be at least 1; got 0");
  EXPECT_EQ(check_schema(json{{"n", 6}}, schema).error().message, "n: must be at most 5; got 6");
  EXPECT_EQ(check_schema(json{{"n", 2.5}}, schema).error().message,
            "n: must be an integer; got the number 2.5");
  EXPECT_EQ(check_schema(json{{"s", "abcd"}}, schema).error().message,
            "s: must be at most 3 characters long; got 4");
}

TEST(SchemaCheck, ShownValuesAreCut) {
  const std::string shown = shown_value(json(std::string(500, 'x')));
  EXPECT_LT(shown.size(), 60u);
  EXPECT_EQ(shown.back(), '"');
}

// --- results ---

RunResult finished(Outcome outcome) {
  RunResult r;
  r.outcome = outcome;
  r.wall_ms = 1200;
  r.backend = {"namespace", "0.1.0"};
  r.enforced = {{Aspect::kTimeout, "deadline", "5 s"},
                {Aspect::kOutput, "capture cap per stream", "1 MiB"},
                {Aspect::kMemory, "cgroup memory.max", "128 MiB"}};
  r.tool_description = ToolDescriptionRef{.id = "run_code", .version = 3};
  return r;
}

std::string text_of(const json& result) { return result["content"][0]["text"].get<std::string>(); }

TEST(ToolResult, OkIsNotAnErrorAndCarriesTheResultJson) {
  RunResult r = finished(Outcome::kOk);
  r.exit_code = 0;
  r.stdout_data = "42\n";
  const json out = tool_result(r, /*structured=*/true);
  EXPECT_FALSE(out["isError"].get<bool>());
  ASSERT_EQ(out["content"].size(), 1u);
  EXPECT_EQ(out["content"][0]["type"], "text");
  EXPECT_EQ(text_of(out), "ok: the code ran and exited 0 after 1.2 s\n--- stdout ---\n42\n");
  EXPECT_EQ(out["structuredContent"]["outcome"], "ok");
  EXPECT_EQ(out["structuredContent"]["stdout"], "42\n");
  EXPECT_EQ(out["structuredContent"]["tool_description"],
            (json{{"id", "run_code"}, {"version", 3}}));
  EXPECT_FALSE(tool_result(r, /*structured=*/false).contains("structuredContent"));
}

// A model learns from the text that its session's variables are gone, files kept.
TEST(ToolResult, AStateLostCallSaysTheInterpreterWasRestarted) {
  RunResult r = finished(Outcome::kTimedOut);
  r.state_lost = true;
  EXPECT_NE(text_of(tool_result(r, /*structured=*/false)).find(kStateLostWords), std::string::npos);
  r.state_lost = false;
  EXPECT_EQ(text_of(tool_result(r, /*structured=*/false)).find(kStateLostWords), std::string::npos);
}

TEST(ToolResult, FailedNamesTheExitStatusAndShowsStderr) {
  RunResult r = finished(Outcome::kFailed);
  r.exit_code = 3;
  r.stderr_data = "oops\n";
  const json out = tool_result(r, true);
  EXPECT_TRUE(out["isError"].get<bool>());
  EXPECT_EQ(text_of(out),
            "failed: the code exited with status 3 after 1.2 s; see stderr for what went wrong\n"
            "--- stderr ---\noops\n");
  EXPECT_EQ(out["structuredContent"]["exit_code"], 3);
}

TEST(ToolResult, SignaledNamesTheSignal) {
  RunResult r = finished(Outcome::kSignaled);
  r.signal = 11;
  EXPECT_NE(outcome_sentence(r).find("signal 11 (SIGSEGV)"), std::string::npos);
}

TEST(ToolResult, TimedOutSaysWhatToTry) {
  const RunResult r = finished(Outcome::kTimedOut);
  EXPECT_EQ(outcome_sentence(r),
            "timed out after 5 s: every process was stopped; try less work or a larger timeout if "
            "allowed");
  EXPECT_TRUE(tool_result(r, true)["isError"].get<bool>());
}

TEST(ToolResult, AMemoryLimitNamesMemoryAndTheLimit) {
  RunResult r = finished(Outcome::kLimitExceeded);
  r.limit = LimitKind::kMemory;
  r.oom_killed = true;
  const std::string s = outcome_sentence(r);
  EXPECT_NE(s.find("memory"), std::string::npos) << s;
  EXPECT_NE(s.find("128 MiB"), std::string::npos) << s;
  EXPECT_TRUE(tool_result(r, true)["isError"].get<bool>());
  r.limit = LimitKind::kProcesses;
  EXPECT_NE(outcome_sentence(r).find("processes"), std::string::npos);
}

TEST(ToolResult, TheNetworkLimitSaysWhichAndThatTheCodeFailedOnItsOwn) {
  RunResult r = finished(Outcome::kLimitExceeded);
  r.limit = LimitKind::kNetwork;
  r.exit_code = 1;
  r.network = NetworkReport{};
  r.network->access.allow = {"pypi.org"};
  r.network->access.max_connections = 1;
  r.network->limit_reached = "connections";
  EXPECT_EQ(outcome_sentence(r),
            "failed at the run's network limit (at most 1 connection): the proxy refused or cut "
            "what came past it, and the code exited with status 1 after 1.2 s; fetch less, or "
            "fewer things");
  r.network->access.max_bytes = 1U << 20;
  r.network->limit_reached = "bytes";
  EXPECT_NE(outcome_sentence(r).find("(at most 1 MiB in and out)"), std::string::npos);
  EXPECT_TRUE(tool_result(r, true)["isError"].get<bool>());
  EXPECT_EQ(tool_result(r, true)["structuredContent"]["limit"], "network");
}

// What the proxy let through and refused is in the text a model reads, not only in
// structuredContent: a refused host is something the model can act on.
TEST(ToolResult, TheConnectionsOfARunWithAListAreListed) {
  RunResult r = finished(Outcome::kOk);
  r.exit_code = 0;
  r.network = NetworkReport{};
  r.network->access.allow = {"pypi.org"};
  NetConnection allowed;
  allowed.allowed = true;
  allowed.method = "CONNECT";
  allowed.host = "pypi.org";
  allowed.port = 443;
  allowed.bytes_out = 100;
  allowed.bytes_in = 2048;
  NetConnection denied;
  denied.method = "CONNECT";
  denied.host = "evil.example";
  denied.port = 443;
  denied.why = "evil.example is not on the allow-list";
  r.network->connections = {allowed, denied};
  EXPECT_EQ(text_of(tool_result(r, true)),
            "ok: the code ran and exited 0 after 1.2 s\n(no output on stdout or stderr)\n"
            "--- network ---\n"
            "allowed CONNECT pypi.org:443: 100 B out, 2 KiB in\n"
            "denied CONNECT evil.example:443: evil.example is not on the allow-list\n");
  r.network->connections.clear();
  EXPECT_NE(text_of(tool_result(r, true)).find("--- network ---\nno connection was asked for\n"),
            std::string::npos);
  r.network.reset();
  EXPECT_EQ(text_of(tool_result(r, true)).find("network"), std::string::npos);
}

TEST(ToolCallArgs, TheOperatorsAllowListReachesEveryCall) {
  ToolCallDefaults d = defaults();
  d.network.allow = {"pypi.org", "*.pythonhosted.org"};
  d.network.max_bytes = 1U << 20;
  const RunRequest r = accepted(args(), d);
  EXPECT_EQ(r.network.allow, d.network.allow);
  EXPECT_EQ(r.network.max_bytes, 1U << 20);
  EXPECT_FALSE(accepted(args()).network.any());
}

TEST(ToolResult, ASandboxErrorSaysItIsNotTheCode) {
  RunResult r = sandbox_error({"namespace", "0.1.0"}, "clone: Operation not permitted");
  const std::string s = outcome_sentence(r);
  EXPECT_TRUE(starts_with(s, "sandbox error: the sandbox failed, not the code (clone: ")) << s;
  const json out = tool_result(r, true);
  EXPECT_TRUE(out["isError"].get<bool>());
  EXPECT_EQ(out["structuredContent"]["outcome"], "sandbox_error");
}

TEST(ToolResult, CancelledSaysEveryProcessStopped) {
  EXPECT_NE(outcome_sentence(finished(Outcome::kCancelled)).find("every process was stopped"),
            std::string::npos);
}

TEST(ToolResult, TruncationIsNoted) {
  RunResult r = finished(Outcome::kOk);
  r.stdout_data = "aaaa";
  r.stdout_truncated = true;
  r.stderr_truncated = true;
  EXPECT_NE(text_of(tool_result(r, true))
                .find("[stdout and stderr cut off at 1 MiB per stream: only the beginning"),
            std::string::npos);
}

TEST(ToolResult, InvalidUtf8OutputStaysValidJson) {
  RunResult r = finished(Outcome::kOk);
  r.stdout_data = "a\xff\xfe b";
  const json out = tool_result(r, true);
  EXPECT_NO_THROW((void)out.dump());
  EXPECT_NE(text_of(out).find("a\xEF\xBF\xBD"), std::string::npos);
}

TEST(ToolResult, ArtifactsAreEmbeddedResourcesNamedAsTheArtifactsDirNamesThem) {
  RunResult r = finished(Outcome::kOk);
  r.artifacts = {Artifact{.path = "out/report.csv", .size = 4, .sha256 = "", .content = "a,b\n"},
                 Artifact{.path = "../up/pic one.png",
                          .size = 3,
                          .sha256 = "",
                          .content = std::string("\x89PN", 3)},
                 Artifact{.path = "/", .size = 0, .sha256 = "", .content = ""}};
  const json out = tool_result(r, true);
  ASSERT_EQ(out["content"].size(), 3u);
  const json& csv = out["content"][1];
  EXPECT_EQ(csv["type"], "resource");
  EXPECT_EQ(csv["resource"]["uri"], "file:///out/report.csv");
  EXPECT_EQ(csv["resource"]["mimeType"], "text/csv");
  EXPECT_EQ(csv["resource"]["text"], "a,b\n");
  const json& png = out["content"][2]["resource"];
  EXPECT_EQ(png["uri"], "file:///__/up/pic%20one.png");
  EXPECT_EQ(png["mimeType"], "image/png");
  EXPECT_EQ(png["blob"], base64_encode(std::string("\x89PN", 3)));
  EXPECT_FALSE(png.contains("text"));
  const std::string text = text_of(out);
  EXPECT_NE(text.find("Collected files, attached below: out/report.csv (4 B), __/up/pic one.png"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("not attached"), std::string::npos) << text;  // "/" has no usable name
  EXPECT_EQ(out["structuredContent"]["artifacts"].size(), 3u);
}

// The MCP SDK validates structuredContent against the tool's outputSchema: every result
// shape must pass it.
TEST(ToolResult, StructuredContentSatisfiesTheOutputSchema) {
  for (const Outcome o : {Outcome::kOk, Outcome::kFailed, Outcome::kSignaled, Outcome::kTimedOut,
                          Outcome::kLimitExceeded, Outcome::kCancelled, Outcome::kSandboxError}) {
    RunResult r = finished(o);
    if (o == Outcome::kLimitExceeded) r.limit = LimitKind::kDisk;
    if (o == Outcome::kSandboxError) r.error = "broken";
    r.cpu_ms = 3;
    r.policy = PolicyId{.name = "default", .hash = "abc"};
    r.artifacts = {Artifact{.path = "a", .size = 1, .sha256 = "00", .content = "x"}};
    const Status s = check_schema(tool_result(r, true)["structuredContent"], result_json_schema());
    EXPECT_TRUE(s.has_value()) << to_string(o) << ": " << s.error().message;
  }
  const Status bare = check_schema(to_json(RunResult{}), result_json_schema());
  EXPECT_TRUE(bare.has_value()) << bare.error().message;
}

TEST(ToolResult, AnErrorResultCarriesTheMessage) {
  const json out = tool_error_result("language: must be one of python, bash or sh; got \"x\"");
  EXPECT_TRUE(out["isError"].get<bool>());
  EXPECT_EQ(out["content"][0]["type"], "text");
  EXPECT_EQ(text_of(out), "language: must be one of python, bash or sh; got \"x\"");
  EXPECT_FALSE(out.contains("structuredContent"));
}

}  // namespace
}  // namespace cordon::cli
