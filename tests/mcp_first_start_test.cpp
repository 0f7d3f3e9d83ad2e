// A first start of `cordon mcp` with no stored audit report (issue #40): initialize is
// answered at once, tools/list and tools/call wait for the audit (with its progress as log
// messages for a client that asked for them), a failed audit answers them with its reason,
// and the real binary does all of it over stdio with a real audit behind it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cordon/backend.h"
#include "cordon/temp_dir.h"
#include "mcp/service.h"
#include "mcp/session.h"
#include "mcp/tool_gate.h"
#include "mcp/transports.h"
#include "mcp_stdio_server.h"
#include "mcp_test_support.h"

namespace cordon::cli::mcp {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using testing::RecordingSink;

// Answers every run at once with the code as its stdout: these tests are about when the
// server answers, not about sandboxes.
class EchoBackend final : public Backend {
 public:
  std::string_view name() const override { return "fake"; }
  std::string_view version() const override { return "0"; }
  Probe probe() const override { return {.available = true, .reason = {}}; }
  Capabilities capabilities(const Limits& /*limits*/) const override { return {}; }
  RunResult run(const RunRequest& request, const CancelToken& /*cancel*/,
                RunObserver* /*observer*/) override {
    ++runs;
    RunResult result;
    result.outcome = Outcome::kOk;
    result.exit_code = 0;
    result.stdout_data = request.code;
    return result;
  }
  std::atomic<int> runs{0};
};

json tool() {
  return json::parse(R"({"name":"run_code","description":"test",
    "inputSchema":{"type":"object","additionalProperties":false,
      "required":["code","language","timeout"],
      "properties":{"code":{"type":"string"},
                    "language":{"type":"string","enum":["sh"]},
                    "timeout":{"type":["number","null"]}}}})");
}

json request(int id, const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

json call(int id, const std::string& code) {
  return request(id, "tools/call",
                 {{"name", "run_code"},
                  {"arguments", {{"code", code}, {"language", "sh"}, {"timeout", nullptr}}}});
}

// The messages `sink` got that are log notifications.
std::vector<json> log_messages(RecordingSink& sink) {
  std::vector<json> out;
  for (const json& m : sink.messages()) {
    if (m.value("method", "") == "notifications/message") out.push_back(m);
  }
  return out;
}

bool answered(RecordingSink& sink, int id) {
  return sink.response(id, milliseconds(0)).has_value();
}

class McpFirstStart : public ::testing::Test {
 protected:
  McpFirstStart() {
    auto gate = std::make_unique<ToolGate>(std::string("fake"));
    gate_ = gate.get();
    service_ = Service::for_backend(backend_, "fake", std::move(gate), ToolCallDefaults{},
                                    /*workers=*/2, /*queue=*/4);
    session_ = std::make_unique<Session>(*service_, "stdio");
  }

  void initialize() {
    EXPECT_EQ(session_->handle(request(0, "initialize", {{"protocolVersion", "2025-11-25"}}).dump(),
                               sink_),
              1u);
    // Answered inside handle(), while the audit has not even begun.
    const auto init = sink_->response(0, milliseconds(0));
    ASSERT_TRUE(init);
    EXPECT_TRUE((*init)["result"]["capabilities"].contains("logging"));
  }

  EchoBackend backend_;
  ToolGate* gate_ = nullptr;
  std::unique_ptr<Service> service_;
  std::shared_ptr<RecordingSink> sink_ = std::make_shared<RecordingSink>();
  std::unique_ptr<Session> session_;
};

TEST_F(McpFirstStart, InitializeAtOnceToolsWaitForTheAuditAndItsProgressIsLogged) {
  initialize();
  EXPECT_EQ(session_->handle(request(1, "logging/setLevel", {{"level", "info"}}).dump(), sink_),
            1u);
  EXPECT_TRUE(answered(*sink_, 1));
  EXPECT_EQ(session_->handle(request(2, "tools/list").dump(), sink_), 1u);
  EXPECT_EQ(session_->handle(call(3, "echo hi").dump(), sink_), 1u);
  EXPECT_EQ(session_->handle(request(4, "ping").dump(), sink_), 1u);
  EXPECT_TRUE(answered(*sink_, 4));  // the server is alive meanwhile
  EXPECT_FALSE(answered(*sink_, 2));
  EXPECT_FALSE(answered(*sink_, 3));
  EXPECT_EQ(backend_.runs, 0);

  gate_->progress(1, 27, "network_udp_route BLOCKED");
  const std::vector<json> logs = log_messages(*sink_);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0]["params"]["level"], "info");
  const std::string text = logs[0]["params"]["data"];
  EXPECT_NE(text.find("auditing this host for the fake backend"), std::string::npos) << text;
  EXPECT_NE(text.find("(1 of 27 attempts)"), std::string::npos) << text;
  EXPECT_NE(text.find("network_udp_route BLOCKED"), std::string::npos) << text;
  const std::optional<NotReady> waiting = not_ready(*service_);
  ASSERT_TRUE(waiting);
  EXPECT_NE(waiting->message.find("(1 of 27 attempts)"), std::string::npos) << waiting->message;
  EXPECT_EQ(waiting->retry_after_seconds, 5);

  gate_->settle(tool());
  const auto listed = sink_->response(2, milliseconds(5000));
  ASSERT_TRUE(listed);
  EXPECT_EQ((*listed)["result"]["tools"][0]["name"], "run_code");
  const auto ran = sink_->response(3, milliseconds(5000));
  ASSERT_TRUE(ran);
  EXPECT_EQ((*ran)["result"]["structuredContent"]["stdout"], "echo hi") << ran->dump();
  EXPECT_EQ(backend_.runs, 1);
  EXPECT_FALSE(not_ready(*service_));
}

TEST_F(McpFirstStart, NoLogMessagesUnlessTheClientAskedForInfo) {
  initialize();
  gate_->progress(1, 27, "a BLOCKED");  // nobody asked
  EXPECT_EQ(session_->handle(request(1, "logging/setLevel", {{"level", "warning"}}).dump(), sink_),
            1u);
  gate_->progress(2, 27, "b BLOCKED");  // asked for warnings and worse only
  EXPECT_TRUE(log_messages(*sink_).empty());
  EXPECT_EQ(session_->handle(request(2, "logging/setLevel", {{"level", "loud"}}).dump(), sink_),
            1u);
  const auto refused = sink_->response(2, milliseconds(0));
  ASSERT_TRUE(refused);
  EXPECT_EQ((*refused)["error"]["code"], -32602);
}

TEST_F(McpFirstStart, AFailedAuditAnswersWaitingAndLaterRequestsWithItsReason) {
  initialize();
  EXPECT_EQ(session_->handle(request(2, "tools/list").dump(), sink_), 1u);
  EXPECT_EQ(session_->handle(call(3, "echo hi").dump(), sink_), 1u);
  bool told_after = false;
  gate_->after_settled([&](ToolGate::State state) {
    // The waiting requests were answered before the owner hears of it.
    told_after = state == ToolGate::State::kFailed && answered(*sink_, 2) && answered(*sink_, 3);
  });
  gate_->settle(fail(ErrorCode::kSystem, "the host fixture could not be planted"));
  EXPECT_TRUE(told_after);
  for (int id : {2, 3}) {
    const auto reply = sink_->response(id, milliseconds(0));
    ASSERT_TRUE(reply) << id;
    EXPECT_EQ((*reply)["error"]["code"], -32603) << id;
    EXPECT_NE((*reply)["error"]["message"].get<std::string>().find("could not be planted"),
              std::string::npos);
  }
  EXPECT_EQ(session_->handle(request(5, "tools/list").dump(), sink_), 1u);
  ASSERT_TRUE(sink_->response(5, milliseconds(0)));
  EXPECT_EQ(backend_.runs, 0);
  const std::optional<NotReady> refused = not_ready(*service_);
  ASSERT_TRUE(refused);
  EXPECT_FALSE(refused->retry_after_seconds);  // it will not change by waiting
}

TEST_F(McpFirstStart, AWaitingCallThatIsCancelledNeverRuns) {
  initialize();
  EXPECT_EQ(session_->handle(call(3, "echo hi").dump(), sink_), 1u);
  EXPECT_EQ(session_->handle(json{{"jsonrpc", "2.0"},
                                  {"method", "notifications/cancelled"},
                                  {"params", {{"requestId", 3}}}}
                                 .dump(),
                             sink_),
            0u);
  gate_->settle(tool());
  EXPECT_FALSE(sink_->response(3, milliseconds(300)));
  EXPECT_EQ(backend_.runs, 0);
}

TEST_F(McpFirstStart, AsManyWaitAsTheQueueHoldsAndTheNextIsToldTheServerIsBusy) {
  initialize();
  const std::size_t capacity = service_->queue().capacity();
  for (std::size_t i = 0; i < capacity; ++i) {
    EXPECT_EQ(session_->handle(call(static_cast<int>(10 + i), "true").dump(), sink_), 1u);
  }
  EXPECT_EQ(session_->handle(call(99, "true").dump(), sink_), 1u);
  const auto busy = sink_->response(99, milliseconds(0));
  ASSERT_TRUE(busy);
  EXPECT_TRUE((*busy)["result"]["isError"].get<bool>());
  EXPECT_NE(busy->dump().find("wait for the audit"), std::string::npos) << busy->dump();
  gate_->settle(tool());
  for (std::size_t i = 0; i < capacity; ++i) {
    EXPECT_TRUE(sink_->response(static_cast<int>(10 + i), milliseconds(5000))) << i;
  }
}

TEST_F(McpFirstStart, ASessionThatEndsWhileWaitingIsNeverToldOfTheAudit) {
  initialize();
  EXPECT_EQ(session_->handle(call(3, "echo hi").dump(), sink_), 1u);
  session_.reset();  // the client went away
  gate_->settle(tool());
  EXPECT_FALSE(sink_->response(3, milliseconds(300)));
  EXPECT_EQ(backend_.runs, 0);
}

// The issue's reproduction: the real binary with no stored report. initialize used to wait
// for the whole audit (15 s or more); now it is answered before the first attempt's
// progress, and tools/list after the last.
TEST(McpFirstStartBinary, InitializeIsAnsweredBeforeTheAuditAndToolsListAfterIt) {
  Result<TempDir> reports = TempDir::create("cordon-first-start-");
  ASSERT_TRUE(reports) << reports.error().describe();
  testing::StdioServer server({}, testing::Audit::kAsOperatorsDo,
                              {"CORDON_AUDIT_DIR=" + reports->path().string()});
  server.send(request(0, "initialize",
                      {{"protocolVersion", "2025-06-18"},
                       {"capabilities", json::object()},
                       {"clientInfo", {{"name", "first-start-test"}, {"version", "1"}}}}));
  const auto init = server.next(milliseconds(20000));
  ASSERT_TRUE(init);
  ASSERT_EQ((*init)["id"], 0) << init->dump();
  server.send(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  server.send(request(1, "logging/setLevel", {{"level", "info"}}));
  server.send(request(2, "tools/list"));
  // Everything up to tools/list's answer, in order: the audit's progress comes between.
  std::vector<json> before;
  std::optional<json> listed;
  while (!listed) {
    std::optional<json> next = server.next(milliseconds(240000));
    ASSERT_TRUE(next) << "no tools/list answer within 4 minutes";
    if (next->value("id", json()) == 2) {
      listed = next;
    } else {
      before.push_back(*next);
    }
  }
  std::size_t progress = 0;
  std::string last;
  for (const json& m : before) {
    if (m.value("method", "") != "notifications/message") continue;
    ++progress;
    last = m["params"]["data"];
  }
  EXPECT_GE(progress, 10u) << "the audit's attempts were not reported as they ran";
  EXPECT_NE(last.find(" of " + std::to_string(progress) + " attempts)"), std::string::npos) << last;
  ASSERT_TRUE(listed->contains("result")) << listed->dump();
  EXPECT_EQ((*listed)["result"]["tools"][0]["name"], "run_code");
  // The report was stored: the next start has nothing to wait for.
  EXPECT_FALSE(std::filesystem::is_empty(reports->path()));
}

}  // namespace
}  // namespace cordon::cli::mcp
