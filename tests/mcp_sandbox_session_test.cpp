// The session tools of `cordon mcp` (issue #41) over a real Service: namespace sessions
// (we are root) for files, the queue, cancellation, the cap, expiry and ownership across
// two MCP sessions; the fixture plugin's FixtureSession for what a kept interpreter
// answers (value, state_lost: the namespace backend runs a fresh python per call until the
// persistent kernel lands); refusals where no sessions are held.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "audit/catalogue.h"
#include "audit/report.h"
#include "cordon/plugin_registry.h"
#include "cordon/temp_dir.h"
#include "mcp/service.h"
#include "mcp/session.h"
#include "mcp_test_support.h"
#include "test_paths.h"

namespace cordon::cli::mcp {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using testing::RecordingSink;

constexpr milliseconds kWait{20000};

ServiceOptions options_for(const std::string& backend,
                           frontend::SessionRegistryOptions sessions = {}) {
  ::setenv("CORDON_PLUGIN_PATH",
           backend == "fixture" ? CORDON_TEST_FIXTURE_PLUGIN_DIR : testing::plugin_dir(), 1);
  ::setenv("CORDON_PLUGIN_PATH_ONLY", "1", 1);
  ::setenv("CORDON_NO_HISTORY", "1", 1);
  ServiceOptions options;
  options.run.backend = backend;
  options.run.timeout = "10s";
  options.run.allow_unisolated = backend != "namespace";  // the fixture isolates nothing
  options.no_audit = true;
  options.unverified = true;
  options.max_concurrent = 4;
  options.max_queue = 16;
  options.sessions = sessions;
  return options;
}

std::unique_ptr<Service> make_service(const ServiceOptions& options) {
  Result<std::unique_ptr<Service>> created = Service::create(options);
  EXPECT_TRUE(created) << created.error().describe();
  return created ? std::move(*created) : nullptr;
}

json request(int id, const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

json tool_call(int id, const std::string& name, json arguments) {
  return request(id, "tools/call", {{"name", name}, {"arguments", std::move(arguments)}});
}

std::string text_of(const json& response) {
  std::string text;
  for (const json& item : response["result"]["content"]) {
    if (item["type"] == "text") text += item["text"].get<std::string>();
  }
  return text;
}

bool is_error(const json& response) { return response["result"].value("isError", false); }

// One MCP client (an MCP session: a stdio connection or an HTTP Mcp-Session-Id).
class Client {
 public:
  explicit Client(Service& service) : session_(std::make_unique<Session>(service, "http")) {
    (void)answer(request(0, "initialize", {{"protocolVersion", "2025-11-25"}}));
  }
  json answer(const json& message, milliseconds within = kWait) {
    EXPECT_EQ(session_->handle(message.dump(), sink_), 1u);
    auto response = sink_->response(message["id"], within);
    EXPECT_TRUE(response) << "no response to " << message.dump();
    return response.value_or(json::object());
  }
  json call(const std::string& name, json arguments) {
    return answer(tool_call(++next_id_, name, std::move(arguments)));
  }
  // session_open's id (the test fails when none came); an sh session unless asked otherwise.
  std::string open(json arguments = {{"language", "sh"}}) {
    const json r = call("session_open", std::move(arguments));
    EXPECT_FALSE(is_error(r)) << text_of(r);
    return r["result"].value("structuredContent", json::object()).value("session", std::string());
  }
  json run(const std::string& session, const std::string& code, json extra = json::object()) {
    extra["code"] = code;
    extra["session"] = session;
    return call("run_code", std::move(extra));
  }
  // The MCP session ends (DELETE, expiry, end of input).
  void end() { session_.reset(); }
  Session& session() { return *session_; }
  RecordingSink& sink() { return *sink_; }
  [[nodiscard]] std::shared_ptr<Sink> sink_ptr() const { return sink_; }

 private:
  std::unique_ptr<Session> session_;
  std::shared_ptr<RecordingSink> sink_ = std::make_shared<RecordingSink>();
  int next_id_ = 100;
};

class McpSandboxSessions : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    frontend::SessionRegistryOptions sessions;
    sessions.max_sessions = 4;
    sessions.max_waiting = 1;
    sessions.max_read_bytes = 64;
    sessions.max_write_bytes = 128;
    service_ = make_service(options_for("namespace", sessions));
  }
  static void TearDownTestSuite() { service_.reset(); }
  void SetUp() override { ASSERT_NE(service_, nullptr); }
  static std::unique_ptr<Service> service_;
};
std::unique_ptr<Service> McpSandboxSessions::service_;

TEST_F(McpSandboxSessions, TheToolsAreListedWithRunCodesSessionArgument) {
  Client client(*service_);
  const json list = client.answer(request(1, "tools/list"));
  std::vector<std::string> names;
  for (const json& tool : list["result"]["tools"]) names.push_back(tool["name"]);
  EXPECT_EQ(names,
            (std::vector<std::string>{"run_code", "session_open", "session_reset", "session_close",
                                      "session_files", "session_read_file", "session_write_file"}));
  const json& run_code = list["result"]["tools"][0];
  EXPECT_EQ(run_code["inputSchema"]["properties"]["session"]["type"], "string");
  EXPECT_NE(list["result"]["tools"][1]["description"].get<std::string>().find("4 sessions"),
            std::string::npos);
}

TEST_F(McpSandboxSessions, OpenWriteRunListReadResetClose) {
  Client client(*service_);
  const std::string id = client.open({{"language", "sh"}});
  ASSERT_EQ(id.size(), 32u) << "128 bits as hex";

  const json wrote = client.call(
      "session_write_file", {{"session", id}, {"path", "in/a.txt"}, {"text", "from the host"}});
  EXPECT_FALSE(is_error(wrote)) << text_of(wrote);
  // Call 1 reads the host's file and writes one of its own; call 2 (the session's language:
  // sh) sees it.
  const json one = client.run(id, "cat in/a.txt; echo made > out.txt; X=1");
  EXPECT_FALSE(is_error(one)) << text_of(one);
  EXPECT_NE(text_of(one).find("from the host"), std::string::npos);
  EXPECT_EQ(one["result"]["structuredContent"]["session"], (json{{"id", id}, {"call", 1}}));
  const json two = client.run(id, "cat out.txt; echo \"X=${X:-unset}\"");
  EXPECT_NE(text_of(two).find("made"), std::string::npos) << text_of(two);
  EXPECT_NE(text_of(two).find("X=unset"), std::string::npos) << "shell variables do not persist";
  EXPECT_EQ(two["result"]["structuredContent"]["session"]["call"], 2);
  EXPECT_FALSE(two["result"]["structuredContent"]["state_lost"].get<bool>());

  const json files = client.call("session_files", {{"session", id}});
  ASSERT_FALSE(is_error(files)) << text_of(files);
  bool saw_out = false;
  bool saw_dir = false;
  for (const json& f : files["result"]["structuredContent"]["files"]) {
    saw_out = saw_out || (f["path"] == "out.txt" && f["size"] == 5);
    saw_dir = saw_dir || (f["path"] == "in" && f["directory"] == true);
  }
  EXPECT_TRUE(saw_out && saw_dir) << files.dump();

  const json read = client.call("session_read_file", {{"session", id}, {"path", "out.txt"}});
  EXPECT_EQ(read["result"]["structuredContent"]["text"], "made\n") << read.dump();
  const json binary = client.call("session_write_file",
                                  {{"session", id}, {"path", "b.bin"}, {"content_base64", "AP+A"}});
  EXPECT_FALSE(is_error(binary)) << text_of(binary);
  const json back = client.call("session_read_file", {{"session", id}, {"path", "b.bin"}});
  EXPECT_EQ(back["result"]["structuredContent"]["content_base64"], "AP+A") << back.dump();

  EXPECT_FALSE(is_error(client.call("session_reset", {{"session", id}})));
  EXPECT_NE(text_of(client.run(id, "cat out.txt")).find("made"), std::string::npos)
      << "files are kept across a reset";
  const json closed = client.call("session_close", {{"session", id}});
  EXPECT_FALSE(is_error(closed)) << text_of(closed);
  const json after = client.run(id, "true");
  EXPECT_TRUE(is_error(after));
  EXPECT_NE(text_of(after).find("was closed"), std::string::npos) << text_of(after);
}

TEST_F(McpSandboxSessions, UnknownIdsAndBadPathsAreClearToolErrors) {
  Client client(*service_);
  const std::string unknown(32, 'f');
  for (const json& r :
       {client.run(unknown, "true"), client.call("session_files", {{"session", unknown}}),
        client.call("session_reset", {{"session", unknown}}),
        client.call("session_close", {{"session", unknown}})}) {
    EXPECT_TRUE(is_error(r));
    EXPECT_EQ(text_of(r), "no such session");
  }
  const std::string id = client.open();
  const json outside = client.call("session_read_file", {{"session", id}, {"path", "../etc/x"}});
  EXPECT_TRUE(is_error(outside));
  EXPECT_NE(text_of(outside).find("outside the workspace"), std::string::npos) << text_of(outside);
  const json absolute =
      client.call("session_write_file", {{"session", id}, {"path", "/etc/x"}, {"text", "x"}});
  EXPECT_TRUE(is_error(absolute));
  EXPECT_NE(text_of(absolute).find("relative to the workspace"), std::string::npos)
      << text_of(absolute);
  // Over the write size (128 bytes here), then over the read size (64).
  const json big = client.call("session_write_file",
                               {{"session", id}, {"path", "big"}, {"text", std::string(200, 'x')}});
  EXPECT_TRUE(is_error(big));
  EXPECT_NE(text_of(big).find("200 bytes"), std::string::npos) << text_of(big);
  EXPECT_FALSE(is_error(client.run(id, "head -c 100 /dev/zero > big")));
  const json too_large = client.call("session_read_file", {{"session", id}, {"path", "big"}});
  EXPECT_TRUE(is_error(too_large));
  EXPECT_NE(text_of(too_large).find("100"), std::string::npos) << text_of(too_large);
  // files and collect belong to one-shot calls.
  const json with_files = client.run(id, "true", {{"files", json::array()}});
  EXPECT_NE(text_of(with_files).find("session_write_file"), std::string::npos);
  // Nothing above lost the session.
  EXPECT_FALSE(is_error(client.run(id, "test -f big")));
  (void)client.call("session_close", {{"session", id}});
}

// The cap is never met by evicting someone's session: the refusal names it. A client's
// sessions end with its MCP session, which frees their places.
TEST_F(McpSandboxSessions, TheCapRefusesAndAnEndedMcpSessionClosesItsSandboxes) {
  Client a(*service_);
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(a.open());
  Client b(*service_);
  const json refused = b.call("session_open", json::object());
  EXPECT_TRUE(is_error(refused));
  EXPECT_NE(text_of(refused).find("--max-sessions"), std::string::npos) << text_of(refused);
  EXPECT_NE(text_of(refused).find("4 sessions are open"), std::string::npos) << text_of(refused);
  EXPECT_FALSE(is_error(a.run(ids[0], "true"))) << "A's sessions are untouched";

  // B holds none of A's ids: each is "no such session", as an unknown id.
  EXPECT_EQ(text_of(b.run(ids[0], "echo stolen")), "no such session");
  EXPECT_EQ(text_of(b.call("session_read_file", {{"session", ids[0]}, {"path", "x"}})),
            "no such session");
  EXPECT_EQ(text_of(b.call("session_close", {{"session", ids[0]}})), "no such session");

  a.end();  // A's MCP session ends: its four sandboxes with it
  const std::string mine = b.open();
  EXPECT_EQ(mine.size(), 32u);
  EXPECT_EQ(text_of(b.run(ids[1], "true")), "no such session");
  (void)b.call("session_close", {{"session", mine}});
}

// One call at a time: a second waits (max_waiting 1 here), a third is refused as busy. A
// notifications/cancelled stops a session call like a one-shot one (nothing is sent), and
// the call that waited then runs.
TEST_F(McpSandboxSessions, TheQueueIsBoundedAndCancellingStopsASessionCall) {
  Client client(*service_);
  const std::string id = client.open({{"language", "sh"}});
  const std::string mark = "cordon-mcp-sandbox-" + std::to_string(::getpid());
  ASSERT_EQ(client.session().handle(tool_call(1, "run_code",
                                              {{"session", id},
                                               {"code", "exec -a " + mark + " sleep 30"},
                                               {"language", "bash"}})
                                        .dump(),
                                    client.sink_ptr()),
            1u);
  ASSERT_TRUE(testing::eventually([&] { return testing::processes_with(mark) > 0; }, kWait));
  ASSERT_EQ(client.session().handle(
                tool_call(2, "run_code", {{"session", id}, {"code", "echo second"}}).dump(),
                client.sink_ptr()),
            1u);
  std::this_thread::sleep_for(milliseconds(200));  // the second is queued in the session
  const json busy = client.answer(tool_call(3, "run_code", {{"session", id}, {"code", "true"}}));
  EXPECT_TRUE(is_error(busy));
  EXPECT_NE(text_of(busy).find("is busy"), std::string::npos) << text_of(busy);

  (void)client.session().handle(json{{"jsonrpc", "2.0"},
                                     {"method", "notifications/cancelled"},
                                     {"params", {{"requestId", 1}, {"reason", "test"}}}}
                                    .dump(),
                                client.sink_ptr());
  EXPECT_TRUE(client.sink().told_no_response(1, kWait));
  EXPECT_TRUE(testing::eventually([&] { return testing::processes_with(mark) == 0; }, kWait));
  const auto second = client.sink().response(2, kWait);
  ASSERT_TRUE(second);
  EXPECT_NE(text_of(*second).find("second"), std::string::npos) << second->dump();
  EXPECT_FALSE(client.sink().response(1, milliseconds(100)));
  (void)client.call("session_close", {{"session", id}});
}

TEST(McpSandboxSessionExpiry, AnExpiredIdSaysWhyItEnded) {
  frontend::SessionRegistryOptions sessions;
  sessions.idle_timeout = milliseconds(300);
  const auto service = make_service(options_for("namespace", sessions));
  ASSERT_NE(service, nullptr);
  Client client(*service);
  const std::string id = client.open();
  EXPECT_NE(text_of(client.call("session_open", json::object())).find("300 ms without a call"),
            std::string::npos);
  std::this_thread::sleep_for(milliseconds(1200));
  const json late = client.run(id, "true");
  EXPECT_TRUE(is_error(late));
  EXPECT_NE(text_of(late).find("ended after 300 ms idle"), std::string::npos) << text_of(late);
  EXPECT_NE(text_of(late).find(id.substr(0, 8)), std::string::npos) << text_of(late);
}

// A kept interpreter's answers (the fixture plugin's FixtureSession: its value is the code's
// repr, "lose" loses the state, and its stdout counts the session's calls).
TEST(McpSandboxSessionFixture, ResultsCarryValueStateLostAndTheSession) {
  const auto service = make_service(options_for("fixture"));
  ASSERT_NE(service, nullptr);
  Client client(*service);
  const std::string id = client.open({{"language", "python"}});
  const json one = client.run(id, "1 + 1");
  ASSERT_FALSE(is_error(one)) << text_of(one);
  const json& s1 = one["result"]["structuredContent"];
  EXPECT_EQ(s1["value"], "'1 + 1'");
  EXPECT_FALSE(s1["state_lost"].get<bool>());
  EXPECT_EQ(s1["session"], (json{{"id", id}, {"call", 1}}));
  EXPECT_NE(text_of(one).find("--- value ---\n'1 + 1'"), std::string::npos) << text_of(one);
  EXPECT_EQ(s1["stdout"], "1 python 1 + 1") << "the session's language when the call names none";

  const json lost = client.run(id, "lose");
  EXPECT_TRUE(lost["result"]["structuredContent"]["state_lost"].get<bool>());
  EXPECT_NE(text_of(lost).find("variables are gone, files are kept"), std::string::npos);
  EXPECT_EQ(lost["result"]["structuredContent"]["stdout"], "2 python lose");
}

// Where no sessions are held, no session tool is listed, and a call of one (or run_code
// with a session) is refused with the reason, not "unknown tool".
TEST(McpSandboxSessionRefusal, NoSessionsNoToolsAndAClearRefusal) {
  frontend::SessionRegistryOptions none;
  none.max_sessions = 0;
  const auto service = make_service(options_for("fixture", none));
  ASSERT_NE(service, nullptr);
  EXPECT_EQ(service->tools().size(), 1u);
  EXPECT_FALSE(service->tool()["inputSchema"]["properties"].contains("session"));
  Client client(*service);
  const json open = client.call("session_open", json::object());
  EXPECT_TRUE(is_error(open));
  EXPECT_NE(text_of(open).find("--max-sessions 0"), std::string::npos) << text_of(open);
  const json run = client.run(std::string(32, 'a'), "x");
  EXPECT_NE(text_of(run).find("--max-sessions 0"), std::string::npos) << text_of(run);

  // The subprocess backend cannot keep one session from another: it holds none.
  const auto subprocess = make_service(options_for("subprocess"));
  ASSERT_NE(subprocess, nullptr);
  EXPECT_EQ(subprocess->tools().size(), 1u);
  EXPECT_NE(subprocess->sessions_refusal().find("does not hold sessions"), std::string::npos)
      << subprocess->sessions_refusal();
  Client plain(*subprocess);
  EXPECT_NE(text_of(plain.call("session_open", json::object())).find("does not hold sessions"),
            std::string::npos);
}

// Sessions only as far as the audit backs them (issue #41): with a stored report in which a
// cross-session attempt escaped, the server offers no session tool and says which attempt;
// with every one of them blocked, it offers them.
TEST(McpSandboxSessionAudit, SessionsAreOfferedOnlyWhereTheAuditBacksThem) {
  auto dir = TempDir::create("mcp-session-audit-");
  ASSERT_TRUE(dir) << dir.error().describe();
  ::setenv("CORDON_AUDIT_DIR", dir->path().c_str(), 1);
  const ServiceOptions options = options_for("fixture");
  PluginRegistry registry;
  registry.discover({CORDON_TEST_FIXTURE_PLUGIN_DIR});
  Result<BackendPtr> backend = registry.create("fixture");
  ASSERT_TRUE(backend) << backend.error().describe();
  const Result<audit::Catalogue> catalogue = audit::builtin_catalogue();
  ASSERT_TRUE(catalogue) << catalogue.error().describe();
  audit::AuditReport report = audit::start_report(**backend, *catalogue, /*complete=*/true);
  for (const audit::Attempt& a : catalogue->attempts) {
    audit::AttemptVerdict v;
    v.id = a.id;
    v.threat_class = a.threat_class;
    v.aspect = a.aspect;
    v.status = audit::AttemptStatus::kBlocked;
    v.evidence = "blocked";
    report.verdicts.push_back(v);
  }
  ASSERT_TRUE(audit::store_report(report));
  const auto backed = make_service(options);
  ASSERT_NE(backed, nullptr);
  EXPECT_EQ(backed->tools().size(), 7u) << backed->sessions_refusal();

  for (audit::AttemptVerdict& v : report.verdicts) {
    if (v.id == "sess-signal") {
      v.status = audit::AttemptStatus::kEscaped;
      v.evidence = "killed 7";
    }
  }
  ASSERT_TRUE(audit::store_report(report));
  const auto unbacked = make_service(options);
  ASSERT_NE(unbacked, nullptr);
  EXPECT_EQ(unbacked->tools().size(), 1u);
  EXPECT_NE(unbacked->sessions_refusal().find("sess-signal is ESCAPED (killed 7)"),
            std::string::npos)
      << unbacked->sessions_refusal();
  ::unsetenv("CORDON_AUDIT_DIR");
}

}  // namespace
}  // namespace cordon::cli::mcp
