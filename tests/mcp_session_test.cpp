// A Session of `cordon mcp` over a real Service with the namespace backend: the protocol
// per version, tools/list, calls that end every way, cancellation of queued and running
// calls, the bounded queue, progress, concurrency and the history row.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cordon/temp_dir.h"
#include "frontend/history.h"
#include "mcp/history_writer.h"
#include "mcp/protocol.h"
#include "mcp/service.h"
#include "mcp/session.h"
#include "mcp_test_support.h"
#include "test_paths.h"

namespace cordon::cli::mcp {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using testing::eventually;
using testing::RecordingSink;

constexpr milliseconds kCallWait{20000};

// This process's history, in a directory of its own (SQLite adds -wal and -shm files
// beside the database), removed when the process ends.
std::filesystem::path history_dir() {
  return std::filesystem::temp_directory_path() /
         ("cordon-mcp-session-test-" + std::to_string(::getpid()));
}
std::filesystem::path history_file() { return history_dir() / "history.sqlite3"; }
struct RemoveHistoryDir {
  RemoveHistoryDir(const RemoveHistoryDir&) = delete;
  RemoveHistoryDir& operator=(const RemoveHistoryDir&) = delete;
  RemoveHistoryDir() = default;
  ~RemoveHistoryDir() {
    std::error_code ignored;
    std::filesystem::remove_all(history_dir(), ignored);
  }
};
const RemoveHistoryDir kRemoveHistoryDir;

ServiceOptions options_for(std::size_t workers, std::size_t queue) {
  ::setenv("CORDON_PLUGIN_PATH", testing::plugin_dir(), 1);
  ::setenv("CORDON_PLUGIN_PATH_ONLY", "1", 1);
  ServiceOptions options;
  options.run.backend = "namespace";
  options.run.timeout = "10s";
  options.run.memory = "128M";
  options.no_audit = true;
  options.unverified = true;  // no audit report here: claims are rendered marked unproven
  options.max_concurrent = workers;
  options.max_queue = queue;
  options.history_path = history_file();
  return options;
}

json request(int id, const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

// The served tool's inputSchema properties (set by each fixture from its service).
json g_properties = json::object();

json call(int id, const std::string& code, const std::string& language = "sh",
          json timeout = nullptr, std::optional<json> progress = std::nullopt) {
  json arguments = {{"code", code}, {"language", language}, {"timeout", timeout}};
  // Strict-mode schemas require every property: the optional ones are null, as a model
  // fills them.
  for (const char* optional : {"files", "collect"}) {
    if (g_properties.contains(optional)) arguments[optional] = nullptr;
  }
  json params = {{"name", "run_code"}, {"arguments", std::move(arguments)}};
  if (progress) params["_meta"] = {{"progressToken", *progress}};
  return request(id, "tools/call", std::move(params));
}

std::string text_of(const json& response) {
  std::string text;
  for (const json& item : response["result"]["content"]) {
    if (item["type"] == "text") text += item["text"].get<std::string>();
  }
  return text;
}

std::string marker(const std::string& name) {
  return "cordon-mcp-test-" + name + "-" + std::to_string(::getpid());
}

class McpSession : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Result<std::unique_ptr<Service>> created = Service::create(options_for(8, 64));
    ASSERT_TRUE(created) << created.error().describe();
    service_ = std::move(*created);
    g_properties = service_->tool()["inputSchema"].value("properties", json::object());
  }
  static void TearDownTestSuite() { service_.reset(); }

  // A session initialized at `version`.
  std::unique_ptr<Session> open(const std::string& version = "2025-11-25") {
    auto session = std::make_unique<Session>(*service_, "stdio");
    const json init = request(0, "initialize",
                              {{"protocolVersion", version},
                               {"capabilities", json::object()},
                               {"clientInfo", {{"name", "session-test"}, {"version", "1.0"}}}});
    EXPECT_EQ(session->handle(init.dump(), sink_), 1u);
    EXPECT_EQ(session->handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", sink_),
              0u);
    return session;
  }

  json answer(Session& session, const json& message, milliseconds within = kCallWait) {
    EXPECT_EQ(session.handle(message.dump(), sink_), 1u);
    auto response = sink_->response(message["id"], within);
    EXPECT_TRUE(response) << "no response to " << message.dump();
    return response.value_or(json::object());
  }

  static std::unique_ptr<Service> service_;
  std::shared_ptr<RecordingSink> sink_ = std::make_shared<RecordingSink>();
};

std::unique_ptr<Service> McpSession::service_;

TEST_F(McpSession, InitializeToolsListAndACallAtEveryVersion) {
  for (const std::string_view v : kProtocolVersions) {
    const std::string version(v);
    sink_ = std::make_shared<RecordingSink>();
    auto session = open(version);
    const auto init = sink_->response(0, milliseconds(100));
    ASSERT_TRUE(init);
    EXPECT_EQ((*init)["result"]["protocolVersion"], version);
    EXPECT_EQ((*init)["result"]["serverInfo"]["name"], "cordon");
    EXPECT_TRUE(session->initialized());
    EXPECT_EQ(session->protocol_version(), version);

    const json list = answer(*session, request(1, "tools/list"));
    // run_code, then the session tools (issue #41) where the backend holds sessions.
    ASSERT_EQ(list["result"]["tools"].size(), 1u + service_->session_tools().size());
    const json& tool = list["result"]["tools"][0];
    EXPECT_EQ(tool["name"], "run_code");
    EXPECT_EQ(tool["inputSchema"], service_->tool()["inputSchema"]);
    EXPECT_EQ(tool.contains("outputSchema"), has_structured_content(version)) << version;

    const json done = answer(*session, call(2, "echo hello"));
    EXPECT_FALSE(done["result"].value("isError", false)) << done.dump();
    EXPECT_NE(text_of(done).find("hello"), std::string::npos);
    EXPECT_EQ(done["result"].contains("structuredContent"), has_structured_content(version));
  }
}

TEST_F(McpSession, AnUnknownVersionGetsTheLatest) {
  auto session = std::make_unique<Session>(*service_, "stdio");
  const json r = answer(*session, request(1, "initialize", {{"protocolVersion", "1999-01-01"}}));
  EXPECT_EQ(r["result"]["protocolVersion"], kProtocolVersions.front());
}

TEST_F(McpSession, RequestsBeforeInitializeAreRefusedButPingIsAnswered) {
  Session session(*service_, "stdio");
  EXPECT_EQ(answer(session, request(1, "tools/list"))["error"]["code"], -32600);
  EXPECT_EQ(answer(session, request(2, "ping"))["result"], json::object());
  EXPECT_FALSE(session.initialized());
  EXPECT_EQ(answer(session, request(3, "initialize", json::object()))["error"]["code"], -32602);
}

TEST_F(McpSession, UnknownMethodAndToolAndMalformedInput) {
  auto session = open();
  EXPECT_EQ(answer(*session, request(1, "resources/list"))["error"]["code"], -32601);
  const json unknown_tool =
      answer(*session, request(2, "tools/call", {{"name", "nope"}, {"arguments", json::object()}}));
  EXPECT_EQ(unknown_tool["error"]["code"], -32602);
  EXPECT_EQ(answer(*session, request(3, "tools/call", json::object()))["error"]["code"], -32602);
  EXPECT_EQ(session->handle("{not json", sink_), 1u);
  EXPECT_EQ(sink_->response(nullptr, milliseconds(100)).value()["error"]["code"], -32700);
  // A response from the client is not answered.
  EXPECT_EQ(session->handle(R"({"jsonrpc":"2.0","id":9,"result":{}})", sink_), 0u);
}

TEST_F(McpSession, BatchesBeforeTheirRemovalOnly) {
  auto old_session = open("2025-03-26");
  const std::string batch = json::array({request(11, "ping"), request(12, "tools/list")}).dump();
  EXPECT_EQ(old_session->handle(batch, sink_), 2u);
  // One array holding both responses (JSON-RPC 2.0 batch), sent once both are in.
  ASSERT_TRUE(eventually([&] { return !sink_->messages().empty(); }, milliseconds(2000)));
  const json answer = sink_->messages().back();
  ASSERT_TRUE(answer.is_array()) << answer.dump();
  ASSERT_EQ(answer.size(), 2u) << answer.dump();
  EXPECT_EQ(answer[0]["id"], 11);
  EXPECT_EQ(answer[1]["id"], 12);
  EXPECT_TRUE(answer[1]["result"].contains("tools"));
  // A batch of one call comes back as an array too, after the run; an element that is no
  // request gets its error inside the array; an empty batch gets one error object.
  const std::size_t before = sink_->messages().size();
  const json with_call = json::array({call(14, "echo batched"), 7});
  EXPECT_EQ(old_session->handle(with_call.dump(), sink_), 2u);
  ASSERT_TRUE(eventually([&] { return sink_->messages().size() > before; }, milliseconds(20000)));
  const json called = sink_->messages().back();
  ASSERT_TRUE(called.is_array()) << called.dump();
  ASSERT_EQ(called.size(), 2u) << called.dump();
  EXPECT_EQ(called[0]["error"]["code"], -32600);
  EXPECT_EQ(called[1]["id"], 14);
  EXPECT_EQ(old_session->handle("[]", sink_), 1u);
  ASSERT_TRUE(
      eventually([&] { return sink_->messages().size() > before + 1; }, milliseconds(2000)));
  EXPECT_TRUE(sink_->messages().back().is_object());
  EXPECT_EQ(sink_->messages().back()["error"]["code"], -32600);

  auto new_session = open("2025-06-18");
  EXPECT_EQ(new_session->handle(json::array({request(13, "ping")}).dump(), sink_), 1u);
  EXPECT_FALSE(sink_->response(13, milliseconds(100)));
}

TEST_F(McpSession, OkFailedTimedOut) {
  auto session = open();
  const json ok = answer(*session, call(1, "print(6*7)", "python"));
  EXPECT_FALSE(ok["result"].value("isError", false));
  EXPECT_EQ(ok["result"]["structuredContent"]["exit_code"], 0);

  const json failed = answer(*session, call(2, "echo oops >&2; exit 3"));
  EXPECT_TRUE(failed["result"]["isError"].get<bool>());
  EXPECT_EQ(failed["result"]["structuredContent"]["outcome"], "failed");
  EXPECT_NE(text_of(failed).find("oops"), std::string::npos);

  const auto started = std::chrono::steady_clock::now();
  const json slow = answer(*session, call(3, "sleep 30", "sh", 0.3));
  EXPECT_TRUE(slow["result"]["isError"].get<bool>());
  EXPECT_EQ(slow["result"]["structuredContent"]["outcome"], "timed_out");
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds(5000));
}

TEST_F(McpSession, BadArgumentsAreAnErrorResultNamingTheField) {
  auto session = open();
  const json r = answer(*session, call(1, "true", "cobol"));
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  EXPECT_NE(text_of(r).find("language"), std::string::npos) << text_of(r);
}

TEST_F(McpSession, CancellingARunningCallStopsItsProcessesAndSendsNothing) {
  auto session = open();
  const std::string mark = marker("running");
  EXPECT_EQ(session->handle(call(1, "exec -a " + mark + " sleep 30", "bash", 9).dump(), sink_), 1u);
  ASSERT_TRUE(
      testing::eventually([&] { return testing::processes_with(mark) > 0; }, milliseconds(10000)));
  EXPECT_EQ(session->handle(json{{"jsonrpc", "2.0"},
                                 {"method", "notifications/cancelled"},
                                 {"params", {{"requestId", 1}, {"reason", "test"}}}}
                                .dump(),
                            sink_),
            0u);
  EXPECT_TRUE(
      testing::eventually([&] { return testing::processes_with(mark) == 0; }, milliseconds(5000)));
  EXPECT_FALSE(sink_->response(1, milliseconds(500)));
  EXPECT_TRUE(sink_->told_no_response(1, milliseconds(100)));
}

TEST_F(McpSession, ClosingASessionStopsItsCalls) {
  const std::string mark = marker("closed");
  {
    auto session = open();
    (void)session->handle(call(1, "exec -a " + mark + " sleep 30", "bash", 9).dump(), sink_);
    ASSERT_TRUE(testing::eventually([&] { return testing::processes_with(mark) > 0; },
                                    milliseconds(10000)));
  }  // ~Session cancels and waits
  EXPECT_EQ(testing::processes_with(mark), 0);
  EXPECT_FALSE(sink_->response(1, milliseconds(100)));
}

TEST_F(McpSession, ProgressAtLeastEvery500ms) {
  auto session = open();
  const json r = answer(*session, call(1, "echo a; sleep 1.6; echo b", "sh", nullptr, "tok"));
  EXPECT_FALSE(r["result"].value("isError", false)) << r.dump();
  std::vector<std::int64_t> progress;
  for (const json& m : sink_->messages()) {
    if (m.value("method", "") == "notifications/progress") {
      EXPECT_EQ(m["params"]["progressToken"], "tok");
      EXPECT_TRUE(m["params"]["message"].is_string());
      progress.push_back(m["params"]["progress"].get<std::int64_t>());
    }
  }
  ASSERT_GE(progress.size(), 3u);
  for (std::size_t i = 1; i < progress.size(); ++i) {
    EXPECT_GT(progress[i], progress[i - 1]);
    EXPECT_LE(progress[i] - progress[i - 1], 500);  // progress is elapsed ms
  }
}

TEST_F(McpSession, EightCallsAtOnce) {
  auto session = open();
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(
        session->handle(call(i + 1, "sleep 0.5; echo call " + std::to_string(i)).dump(), sink_),
        1u);
  }
  for (int i = 0; i < 8; ++i) {
    const auto r = sink_->response(i + 1, kCallWait);
    ASSERT_TRUE(r);
    EXPECT_NE(text_of(*r).find("call " + std::to_string(i)), std::string::npos);
  }
  // One after the other they would take 4 s.
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds(3500));
}

TEST_F(McpSession, EveryCallIsRecordedWithSourceAndClient) {
  auto session = open();
  const std::string mark = marker("history");
  (void)answer(*session, call(1, "echo " + mark));
  // The record is handed to the writer after the response is sent: it may still be on
  // its way when the response arrives.
  session.reset();  // waits for the call to end, hand-over included
  service_->flush_history();
  Result<history::HistoryStore> store = history::HistoryStore::open(history_file());
  ASSERT_TRUE(store) << store.error().describe();
  history::Query query;
  query.search = mark;
  Result<std::vector<history::RunSummary>> rows = store->list(query);
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 1u);
  Result<history::RunRecord> record = store->get(rows->front().id);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->source, "mcp");
  EXPECT_EQ(record->client, "session-test 1.0");
  EXPECT_EQ(record->backend, "namespace");
}

// The writer stores what queued while it was busy in one transaction; a record the database
// refuses costs only itself, not the others of its batch.
TEST(McpHistoryWriter, ARefusedRecordTakesNoOtherOfItsBatchWithIt) {
  auto dir = TempDir::create("cordon-history-writer-test-");
  ASSERT_TRUE(dir) << dir.error().describe();
  const std::filesystem::path path = dir->path() / "h.sqlite3";
  ASSERT_TRUE(history::HistoryStore::open(path));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const auto exec = [&](const char* sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &error), SQLITE_OK) << sql << ": " << error;
    sqlite3_free(error);
  };
  exec(
      "CREATE TRIGGER refuse BEFORE INSERT ON runs WHEN NEW.code = 'refused' "
      "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;");
  const auto record = [](std::string code) {
    RunRequest request;
    request.code = std::move(code);
    RunResult result;
    result.outcome = Outcome::kOk;
    result.backend = {"namespace", "1.0"};
    const auto now = std::chrono::system_clock::now();
    return history::make_record(request, result, now, now, "mcp");
  };
  {
    // The first record keeps the writer waiting on this connection's write lock while the
    // next three queue behind it: they go as one batch once the lock is let go.
    exec("BEGIN EXCLUSIVE");
    HistoryWriter writer(path);
    writer.add(record("first"));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    writer.add(record("second"));
    writer.add(record("refused"));
    writer.add(record("fourth"));
    exec("COMMIT");
    writer.flush();
  }
  sqlite3_close(db);
  auto store = history::HistoryStore::open(path);
  ASSERT_TRUE(store) << store.error().describe();
  history::Query all;
  auto rows = store->list(all);
  ASSERT_TRUE(rows) << rows.error().describe();
  std::vector<std::string> codes;
  for (const history::RunSummary& row : *rows) codes.push_back(store->get(row.id)->code);
  std::ranges::sort(codes);  // recorded within the same millisecond: no order to check
  EXPECT_EQ(codes, (std::vector<std::string>{"first", "fourth", "second"}));
}

// One worker and room for one waiting call.
class McpSmallQueue : public McpSession {
 protected:
  static void SetUpTestSuite() {}  // not the shared service: its own, per test
  static void TearDownTestSuite() {}
  void SetUp() override {
    Result<std::unique_ptr<Service>> created = Service::create(options_for(1, 1));
    ASSERT_TRUE(created) << created.error().describe();
    small_ = std::move(*created);
    g_properties = small_->tool()["inputSchema"].value("properties", json::object());
  }
  std::unique_ptr<Service> small_;
};

TEST_F(McpSmallQueue, CancellingAQueuedCallWithdrawsIt) {
  Session session(*small_, "stdio");
  (void)session.handle(request(0, "initialize", {{"protocolVersion", "2025-06-18"}}).dump(), sink_);
  (void)session.handle(call(1, "sleep 1; echo first").dump(), sink_);
  // The worker takes the first; the second waits in the queue (room for one).
  ASSERT_TRUE(
      testing::eventually([&] { return small_->queue().queued() == 0; }, milliseconds(5000)));
  (void)session.handle(call(2, "echo second").dump(), sink_);
  EXPECT_EQ(small_->queue().queued(), 1u);
  (void)session.handle(
      json{
          {"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 2}}}}
          .dump(),
      sink_);
  const auto first = sink_->response(1, kCallWait);
  ASSERT_TRUE(first);
  EXPECT_NE(text_of(*first).find("first"), std::string::npos);
  EXPECT_FALSE(sink_->response(2, milliseconds(500)));
  EXPECT_TRUE(sink_->told_no_response(2, milliseconds(100)));
  EXPECT_FALSE(sink_->told_no_response(1, milliseconds(0)));
}

TEST_F(McpSmallQueue, AFullQueueIsABusyErrorNotASilentDrop) {
  Session session(*small_, "stdio");
  (void)session.handle(request(0, "initialize", {{"protocolVersion", "2025-06-18"}}).dump(), sink_);
  (void)session.handle(call(1, "sleep 1").dump(), sink_);
  // Let the worker take the first: then the second waits and the third finds no room.
  ASSERT_TRUE(
      testing::eventually([&] { return small_->queue().queued() == 0; }, milliseconds(5000)));
  (void)session.handle(call(2, "echo queued").dump(), sink_);
  const auto busy = [&] {
    (void)session.handle(call(3, "echo refused").dump(), sink_);
    return sink_->response(3, milliseconds(200));
  }();
  ASSERT_TRUE(busy);
  EXPECT_TRUE((*busy)["result"]["isError"].get<bool>());
  EXPECT_NE(text_of(*busy).find("busy"), std::string::npos) << text_of(*busy);
  EXPECT_TRUE(sink_->response(1, kCallWait));
  const auto queued = sink_->response(2, kCallWait);
  ASSERT_TRUE(queued);
  EXPECT_NE(text_of(*queued).find("queued"), std::string::npos);
}

// A server runs whatever its clients send: a backend that does not isolate is served only
// when the operator says so, even when named, and its tool says what it does not stop.
TEST(McpService, AnUnisolatedBackendOnlyWithAllowUnisolated) {
  ServiceOptions options = options_for(1, 1);
  options.run.backend = "subprocess";
  options.run.memory.reset();
  Result<std::unique_ptr<Service>> refused = Service::create(options);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("--allow-unisolated"), std::string::npos)
      << refused.error().message;

  options.run.allow_unisolated = true;
  Result<std::unique_ptr<Service>> allowed = Service::create(options);
  ASSERT_TRUE(allowed) << allowed.error().describe();
  EXPECT_EQ((*allowed)->backend_name(), "subprocess");
  const json tool = (*allowed)->tool();
  EXPECT_EQ(tool["annotations"].value("openWorldHint", true), true) << tool.dump();
  // Harmless code only through the subprocess backend.
  auto sink = std::make_shared<RecordingSink>();
  g_properties = tool["inputSchema"].value("properties", json::object());
  Session session(**allowed, "stdio");
  (void)session.handle(request(0, "initialize", {{"protocolVersion", "2025-06-18"}}).dump(), sink);
  (void)session.handle(call(1, "echo unisolated").dump(), sink);
  const auto r = sink->response(1, kCallWait);
  ASSERT_TRUE(r);
  EXPECT_NE(text_of(*r).find("unisolated"), std::string::npos);
}

}  // namespace
}  // namespace cordon::cli::mcp
