#include "mcp/session.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "mcp/batch_sink.h"
#include "mcp/call_job.h"
#include "mcp/jsonrpc.h"
#include "mcp/protocol.h"
#include "mcp/service.h"
#include "mcp/session_tools.h"
#include "mcp/tool_gate.h"
#include "tool_call.h"

namespace cordon::cli::mcp {
namespace {

using nlohmann::json;

// Client names and versions come from the peer: bounded before they reach the history.
constexpr std::size_t kMaxClientText = 200;

std::string client_text(const json& params) {
  const json info = params.value("clientInfo", json::object());
  if (!info.is_object()) return {};
  std::string text = info.value("name", std::string());
  const std::string version = info.value("version", std::string());
  if (!version.empty()) text += " " + version;
  if (text.size() > kMaxClientText) text.resize(kMaxClientText);
  return text;
}

// MCP's log levels (RFC 5424's), least severe first; a client's logging/setLevel names the
// least severe it wants. The audit's progress is "info".
constexpr std::array<std::string_view, 8> kLogLevels = {"debug", "info",     "notice", "warning",
                                                        "error", "critical", "alert",  "emergency"};
constexpr std::size_t kInfoLevel = 1;

std::optional<std::size_t> log_level(const json& params) {
  if (!params.is_object()) return std::nullopt;
  const auto it = params.find("level");
  if (it == params.end() || !it->is_string()) return std::nullopt;
  const auto* const found = std::ranges::find(kLogLevels, it->get<std::string>());
  if (found == kLogLevels.end()) return std::nullopt;
  return static_cast<std::size_t>(found - kLogLevels.begin());
}

// A string member of `params`, or empty when absent or of another type.
std::string string_member(const json& params, const char* name) {
  if (!params.is_object()) return {};
  const auto it = params.find(name);
  return it != params.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Each Session's own name, for the owner of its sandbox sessions: unique in this process,
// never shown to a client (the sandbox sessions' ids are the secrets).
std::string next_session_name(const std::string& transport) {
  static std::atomic<std::uint64_t> count{0};
  return transport + "#" + std::to_string(++count);
}

}  // namespace

struct Session::Impl final : CallOwner, ToolGate::Listener {
  Impl(Service& s, std::string t, std::string scope)
      : service(s),
        transport(std::move(t)),
        owner(std::move(scope) + next_session_name(transport)) {}
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() override = default;

  Service& service;
  const std::string transport;
  const std::string owner;  // of the sandbox sessions it opens (issue #41)
  SessionBook book;         // their language and timeout
  mutable std::mutex mutex;
  std::condition_variable calls_done;
  bool initialized = false;
  std::string version;
  std::string client;
  std::map<std::string, std::shared_ptr<CallJob>> calls;  // queued or running, by id key
  // tools/list and tools/call that came while the audit of a first start ran, in order,
  // answered once the tool is settled (ToolGate); as many as the call queue holds.
  struct Held {
    jsonrpc::Request request;
    std::shared_ptr<Sink> sink;
  };
  std::vector<Held> held;
  // What logging/setLevel asked for (kLogLevels' index), and where to send log messages.
  std::optional<std::size_t> level;
  std::shared_ptr<Sink> log_sink;

  // Handles one message; returns how many responses it gets (0 or 1).
  std::size_t handle(const jsonrpc::Message& message, const std::shared_ptr<Sink>& sink);
  std::size_t handle_request(const jsonrpc::Request& request, const std::shared_ptr<Sink>& sink);
  void handle_notification(const jsonrpc::Notification& notification);
  json initialize(const json& params);
  // tools/call: queued (the response comes from the worker), or answered here.
  std::optional<json> call_tool(const jsonrpc::Request& request, const std::shared_ptr<Sink>& sink);
  void withdraw(const std::string& key);
  void withdraw_all();
  void wait_all();

  void call_finished(const std::string& key) override {
    const std::lock_guard lock(mutex);
    calls.erase(key);
    if (calls.empty()) calls_done.notify_all();
  }
  void peer_gone() override { withdraw_all(); }

  // Whether `request` must wait for the tool; if so it is held (or refused when as many
  // wait as the call queue holds) and answered later. Decided under `mutex`, which
  // tool_settled() takes after the gate's state changed, so none is left behind.
  bool hold_for_tool(const jsonrpc::Request& request, const std::shared_ptr<Sink>& sink);
  void audit_progress(const std::string& text) override;
  void tool_settled() override;
};

bool Session::Impl::hold_for_tool(const jsonrpc::Request& request,
                                  const std::shared_ptr<Sink>& sink) {
  std::unique_lock lock(mutex);
  if (service.gate().state() != ToolGate::State::kAuditing) return false;
  if (held.size() >= service.queue().capacity()) {
    lock.unlock();
    if (!sink->send(jsonrpc::result_response(
            request.id, tool_error_result("the server is busy: " + std::to_string(held.size()) +
                                          " requests wait for the audit of its first start, the "
                                          "most it holds; try again when it has ended")))) {
      withdraw_all();
    }
    return true;
  }
  held.push_back(Held{.request = request, .sink = sink});
  return true;
}

void Session::Impl::audit_progress(const std::string& text) {
  std::shared_ptr<Sink> to;
  {
    const std::lock_guard lock(mutex);
    if (!level || *level > kInfoLevel || !log_sink) return;
    to = log_sink;
  }
  (void)to->send(json{
      {"jsonrpc", "2.0"},
      {"method", "notifications/message"},
      {"params", {{"level", "info"}, {"logger", "cordon"}, {"data", text}}},
  });
}

void Session::Impl::tool_settled() {
  std::vector<Held> ready;
  {
    const std::lock_guard lock(mutex);
    ready.swap(held);
  }
  for (const Held& h : ready) (void)handle_request(h.request, h.sink);
}

std::size_t Session::Impl::handle(const jsonrpc::Message& message,
                                  const std::shared_ptr<Sink>& sink) {
  if (const auto* request = std::get_if<jsonrpc::Request>(&message)) {
    return handle_request(*request, sink);
  }
  if (const auto* notification = std::get_if<jsonrpc::Notification>(&message)) {
    handle_notification(*notification);
    return 0;
  }
  if (const auto* invalid = std::get_if<jsonrpc::Invalid>(&message)) {
    if (!sink->send(invalid->error)) withdraw_all();
    return 1;
  }
  return 0;  // a response from the client: this server asks nothing, so nothing waits
}

json Session::Impl::initialize(const json& params) {
  const std::string agreed = negotiate_version(string_member(params, "protocolVersion"));
  const std::lock_guard lock(mutex);
  version = agreed;
  client = client_text(params);
  initialized = true;
  return initialize_result(agreed, CORDON_VERSION);
}

std::size_t Session::Impl::handle_request(const jsonrpc::Request& request,
                                          const std::shared_ptr<Sink>& sink) {
  const json& params = request.params;
  std::optional<json> reply;
  bool ready = false;
  std::string agreed;
  {
    const std::lock_guard lock(mutex);
    ready = initialized;
    agreed = version;
  }
  if (request.method == "initialize") {
    if (!params.is_object() || !params.contains("protocolVersion") ||
        !params["protocolVersion"].is_string()) {
      reply = jsonrpc::error_response(request.id, jsonrpc::kInvalidParams,
                                      "Invalid params: initialize needs params.protocolVersion "
                                      "(a string)");
    } else {
      reply = jsonrpc::result_response(request.id, initialize(params));
    }
  } else if (request.method == "ping") {
    reply = jsonrpc::result_response(request.id, json::object());
  } else if (!ready) {
    reply = jsonrpc::error_response(
        request.id, jsonrpc::kInvalidRequest,
        "Invalid Request: the session is not initialized; send initialize first");
  } else if (request.method == "logging/setLevel") {
    // The only log messages are the progress of a first start's audit ("info").
    const std::optional<std::size_t> asked = log_level(params);
    if (!asked) {
      reply = jsonrpc::error_response(request.id, jsonrpc::kInvalidParams,
                                      "Invalid params: logging/setLevel needs params.level, one "
                                      "of debug, info, notice, warning, error, critical, alert, "
                                      "emergency");
    } else {
      {
        const std::lock_guard lock(mutex);
        level = asked;
        log_sink = sink;
      }
      reply = jsonrpc::result_response(request.id, json::object());
    }
  } else if ((request.method == "tools/list" || request.method == "tools/call") &&
             hold_for_tool(request, sink)) {
    return 1;  // answered once the audit has ended
  } else if ((request.method == "tools/list" || request.method == "tools/call") &&
             service.gate().state() == ToolGate::State::kFailed) {
    reply = jsonrpc::error_response(
        request.id, jsonrpc::kInternalError,
        "Internal error: the sandbox cannot be described, so this server offers no tool: " +
            service.gate().failure());
  } else if (request.method == "tools/list") {
    json tools = json::array();
    for (const json& tool : service.tools()) tools.push_back(tool_for_version(tool, agreed));
    reply = jsonrpc::result_response(request.id, json{{"tools", std::move(tools)}});
  } else if (request.method == "tools/call") {
    reply = call_tool(request, sink);
  } else {
    reply = jsonrpc::error_response(request.id, jsonrpc::kMethodNotFound,
                                    "Method not found: " + request.method);
  }
  if (reply && !sink->send(*reply)) withdraw_all();
  return 1;
}

std::optional<json> Session::Impl::call_tool(const jsonrpc::Request& request,
                                             const std::shared_ptr<Sink>& sink) {
  const json& params = request.params;
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    return jsonrpc::error_response(request.id, jsonrpc::kInvalidParams,
                                   "Invalid params: tools/call needs params.name (a string)");
  }
  const std::string name = params["name"].get<std::string>();
  const bool session_tool = is_session_tool(name);
  if (name != service.tool_name() && !session_tool) {
    std::string names;
    for (const json& tool : service.tools()) {
      names += (names.empty() ? "" : ", ") + tool.value("name", std::string());
    }
    return jsonrpc::error_response(request.id, jsonrpc::kInvalidParams,
                                   "Unknown tool: " + name + " (this server has " + names + ")");
  }
  const json arguments = params.value("arguments", json::object());
  std::string agreed;
  std::string who;
  {
    const std::lock_guard lock(mutex);
    agreed = version;
    who = client;
  }
  const bool structured = has_structured_content(agreed);
  CallSpec spec{.id = request.id,
                .key = jsonrpc::id_key(request.id),
                .sink = sink,
                .progress_token = std::nullopt,
                .request = {},
                .session = std::nullopt,
                .operation = {},
                .structured = structured,
                .client = std::move(who)};
  const auto refuse = [&](const std::string& message) {
    return jsonrpc::result_response(request.id, tool_error_result(message));
  };
  const bool names_session =
      arguments.is_object() && arguments.contains("session") && !arguments["session"].is_null();
  if (session_tool) {
    // A session tool where no sessions are held is refused with the reason, not as unknown.
    Result<SessionOperation> operation =
        session_tool_call(service, name, arguments, owner, structured, book);
    if (!operation) return refuse(operation.error().message);
    spec.operation = std::move(*operation);
  } else if (names_session && service.sessions() == nullptr) {
    return refuse(service.sessions_refusal());
  } else {
    Result<RunRequest> run =
        request_from_tool_call(arguments, service.tool().at("inputSchema"), service.defaults());
    if (!run) return refuse(run.error().message);
    Result<std::optional<SessionTarget>> target = session_of_run(arguments, owner, book, *run);
    if (!target) return refuse(target.error().message);
    spec.request = std::move(*run);
    spec.session = std::move(*target);
  }
  if (const auto meta = params.find("_meta"); meta != params.end() && meta->is_object()) {
    if (const auto token = meta->find("progressToken");
        token != meta->end() && (token->is_string() || token->is_number_integer())) {
      spec.progress_token = *token;
    }
  }
  const std::string key = spec.key;
  auto job = std::make_shared<CallJob>(service, *this, std::move(spec));
  {
    const std::lock_guard lock(mutex);
    if (!calls.emplace(key, job).second) {
      return jsonrpc::error_response(
          request.id, jsonrpc::kInvalidRequest,
          "Invalid Request: id " + request.id.dump() + " is already used by a call in flight");
    }
  }
  if (!service.queue().push(job)) {
    call_finished(key);
    return jsonrpc::result_response(
        request.id,
        tool_error_result("the server is busy: " + std::to_string(service.queue().queued()) +
                          " calls queued, the most it holds (" +
                          std::to_string(service.queue().capacity()) +
                          "); this call did not run; try again when earlier calls have ended"));
  }
  return std::nullopt;  // the worker answers
}

void Session::Impl::handle_notification(const jsonrpc::Notification& notification) {
  if (notification.method == "notifications/cancelled") {
    const json& params = notification.params;
    if (params.is_object()) {
      if (const auto id = params.find("requestId");
          id != params.end() && (id->is_string() || id->is_number())) {
        withdraw(jsonrpc::id_key(*id));
      }
    }
  }
  // notifications/initialized, progress, roots changes...: nothing to do.
}

void Session::Impl::withdraw(const std::string& key) {
  std::shared_ptr<CallJob> job;
  {
    const std::lock_guard lock(mutex);
    // Held for the audit: it never ran, and a cancelled request gets no response.
    if (std::erase_if(held, [&](const Held& h) { return jsonrpc::id_key(h.request.id) == key; }) >
        0) {
      return;
    }
    const auto it = calls.find(key);
    if (it == calls.end()) return;  // already answered, or never known: the spec says ignore
    job = it->second;
  }
  job->withdraw();
  // Still queued: it never starts, so it ends here.
  if (service.queue().withdraw(job.get())) job->end_unrun();
}

void Session::Impl::withdraw_all() {
  std::vector<std::string> keys;
  {
    const std::lock_guard lock(mutex);
    held.clear();
    for (const auto& [key, job] : calls) keys.push_back(key);
  }
  for (const std::string& key : keys) withdraw(key);
}

void Session::Impl::wait_all() {
  std::unique_lock lock(mutex);
  calls_done.wait(lock, [&] { return calls.empty(); });
}

Session::Session(Service& service, std::string transport, std::string owner_scope)
    : impl_(std::make_unique<Impl>(service, std::move(transport), std::move(owner_scope))) {
  service.gate().add(impl_.get());
}

Session::~Session() {
  impl_->service.gate().remove(impl_.get());  // waits for a call in progress
  cancel_all();
}

std::size_t Session::handle(std::string_view text, const std::shared_ptr<Sink>& sink) {
  std::size_t responses = 0;
  const bool batches = allows_batches(protocol_version());
  const std::vector<jsonrpc::Message> messages = jsonrpc::parse(text, batches);
  // stdio answers a batch with one array (JSON-RPC 2.0). HTTP's sink already gathers a
  // POST's responses into one JSON body, or streams them as SSE events, as the spec allows.
  // An empty batch is answered with one error object, not an array.
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  const std::size_t second =
      first == std::string_view::npos ? first : text.find_first_not_of(" \t\r\n", first + 1);
  const bool batch = batches && impl_->transport == "stdio" && first != std::string_view::npos &&
                     text[first] == '[' && second != std::string_view::npos && text[second] != ']';
  if (!batch) {
    for (const jsonrpc::Message& message : messages) responses += impl_->handle(message, sink);
    return responses;
  }
  auto gather = std::make_shared<BatchSink>(sink);
  for (const jsonrpc::Message& message : messages) responses += impl_->handle(message, gather);
  gather->expect(responses);
  return responses;
}

bool Session::initialized() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->initialized;
}

std::string Session::protocol_version() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->version;
}

void Session::cancel_all() {
  impl_->withdraw_all();
  impl_->wait_all();
  // The MCP session ended (DELETE, expiry, end of input, shutdown): so do its sandboxes.
  if (frontend::SessionRegistry* sessions = impl_->service.sessions()) {
    sessions->close_owner(impl_->owner);
  }
}

}  // namespace cordon::cli::mcp
