#include "plugin_backend.h"

#include <array>
#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cordon/plugin_export.h"
#include "cordon/plugin_wire.h"
#include "cordon/result_json.h"
#include "cordon/session_wire.h"
#include "cordon/text.h"

namespace cordon {
namespace {

using nlohmann::json;

// A plugin's answer, parsed, and handed back to the plugin's free_text either way.
Result<json> answer(const cordon_plugin_descriptor* d, char* text) {
  if (text == nullptr) return fail(ErrorCode::kPlugin, "the plugin returned nothing");
  const std::unique_ptr<char, void (*)(char*)> owned(text, d->free_text);
  json parsed = json::parse(owned.get(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return fail(ErrorCode::kPlugin, "the plugin returned no valid JSON");
  return parsed;
}

// answer() read by `parse` (g++ 12's std::expected has no and_then).
template <typename T>
Result<T> answer(const cordon_plugin_descriptor* d, char* text,
                 Result<T> (*parse)(const json& json)) {
  Result<json> parsed = answer(d, text);
  if (!parsed) return std::unexpected(parsed.error());
  return parse(*parsed);
}

// Its message prefixed with the plugin, for every failure of the boundary itself.
std::string from_plugin(const cordon_plugin_descriptor* d, const Error& error) {
  return "plugin '" + std::string(d->name) + "': " + error.message;
}

// The callbacks the plugin calls during run(), each passing the observer back as context.
void on_state(void* context, int state) {
  if (state >= CORDON_STATE_PREPARING && state <= CORDON_STATE_FINISHED) {
    static_cast<RunObserver*>(context)->on_state(static_cast<RunState>(state));
  }
}

void on_output(void* context, int stream, const char* data, std::size_t size, int kept) {
  if (stream != CORDON_STREAM_STDOUT && stream != CORDON_STREAM_STDERR) return;
  static_cast<RunObserver*>(context)->on_output(static_cast<Stream>(stream),
                                                std::string_view(data, data ? size : 0), kept != 0);
}

void on_sample(void* context, std::int64_t elapsed_ms, std::int64_t memory_bytes,
               std::int64_t cpu_usec) {
  const auto figure = [](std::int64_t v) {
    return v < 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(v));
  };
  static_cast<RunObserver*>(context)->on_sample(ResourceSample{
      std::chrono::milliseconds(elapsed_ms), figure(memory_bytes), figure(cpu_usec)});
}

// The C events of a run or session call: the observer's callbacks, the cancel fd.
cordon_run_events run_events(const CancelToken& cancel, RunObserver* observer) {
  cordon_run_events events{};
  events.struct_size = sizeof events;
  events.context = observer;
  events.cancel_fd = cancel.wait_fd();
  if (observer != nullptr) {
    events.on_state = &on_state;
    events.on_output = &on_output;
    events.on_sample = &on_sample;
  }
  return events;
}

// A run's or session call's answer as a result; a failure of the boundary is a sandbox
// error of `id` naming the plugin.
RunResult result_of(const cordon_plugin_descriptor* d, char* text, const BackendId& id) {
  Result<RunResult> result = answer(d, text, &result_from_json);
  return result ? std::move(*result) : sandbox_error(id, from_plugin(d, result.error()));
}

// A path of a session call: crosses as a JSON string, so it must be UTF-8 (a caller's path
// always is: MCP and the CLI give text).
Status utf8_path(std::string_view path) {
  bool lossy = false;
  (void)to_valid_utf8(path, &lossy);
  if (lossy) return fail(ErrorCode::kInvalidArgument, "a workspace path is UTF-8 text");
  return {};
}

// Whether `d`'s session functions are this library's own (plugin_export.h), so that its
// cordon_session is this library's struct, holding a BackendSession of the plugin's that
// already shares this library's C++ (plugin_export.cpp calls it with C++ types). A plugin
// written against plugin_abi.h alone, or linked to another copy of this library, has other
// addresses: its calls cross as JSON.
bool sessions_in_process(const cordon_plugin_descriptor* d) {
  return d->session_run == &plugin_export::session_run;
}

// A plugin's session, as a BackendSession. A call crosses as JSON, or, for a session of
// this library's own plugin_export (sessions_in_process), as the C++ objects: a warm
// session's call is a few tens of microseconds, and the four JSON conversions of a request
// and a result were most of the host's share of it (issue #41's bench-session).
class PluginSession final : public BackendSession {
 public:
  PluginSession(const cordon_plugin_descriptor* d, cordon_session* handle, BackendId backend,
                bool in_process)
      : d_(d), handle_(handle), backend_(std::move(backend)), in_process_(in_process) {}
  ~PluginSession() override { d_->session_close(handle_); }
  PluginSession(const PluginSession&) = delete;
  PluginSession& operator=(const PluginSession&) = delete;

  RunResult run(const RunRequest& request, const CancelToken& cancel,
                RunObserver* observer) override {
    if (in_process_) {
      RunResult out = plugin_export::session_run_in_process(handle_, request, cancel, observer);
      out.environment = request.environment;
      return out;
    }
    const std::string request_json = wire::to_json(request).dump();
    const cordon_run_events events = run_events(cancel, observer);
    RunResult out =
        result_of(d_, d_->session_run(handle_, request_json.c_str(), &events), backend_);
    out.environment = request.environment;
    return out;
  }
  Status reset() override {
    Result<json> done = call(wire::session_reset_call());
    if (!done) return std::unexpected(done.error());
    return {};
  }
  SessionStats stats() override {
    Result<json> done = call(wire::session_stats_call());
    if (!done) return {};
    return wire::session_stats_from_json(*done).value_or(SessionStats{});
  }
  Result<std::vector<WorkspaceEntry>> list_files(std::string_view dir) override {
    if (Status ok = utf8_path(dir); !ok) return std::unexpected(ok.error());
    Result<json> done = call(wire::session_list_call(dir));
    if (!done) return std::unexpected(done.error());
    return wire::workspace_entries_from_json(*done);
  }
  Result<std::string> read_file(std::string_view path, std::uint64_t max_bytes) override {
    if (Status ok = utf8_path(path); !ok) return std::unexpected(ok.error());
    Result<json> done = call(wire::session_read_call(path, max_bytes));
    if (!done) return std::unexpected(done.error());
    return wire::file_content_from_json(*done);
  }
  Status write_file(std::string_view path, std::string_view bytes) override {
    if (Status ok = utf8_path(path); !ok) return std::unexpected(ok.error());
    Result<json> done = call(wire::session_write_call(path, bytes));
    if (!done) return std::unexpected(done.error());
    return {};
  }

 private:
  Result<json> call(const json& request) {
    const std::string text = request.dump();
    Result<json> reply = answer(d_, d_->session_call(handle_, text.c_str()));
    if (!reply)
      return std::unexpected(Error{ErrorCode::kPlugin, 0, from_plugin(d_, reply.error())});
    return wire::session_answer(*reply);
  }

  const cordon_plugin_descriptor* d_;
  cordon_session* handle_;
  BackendId backend_;
  bool in_process_;
};

}  // namespace

PluginBackend::PluginBackend(const cordon_plugin_descriptor* descriptor, cordon_backend* handle,
                             SessionCalls session_calls)
    : descriptor_(descriptor), handle_(handle), session_calls_(session_calls) {}

PluginBackend::~PluginBackend() { descriptor_->destroy(handle_); }

std::string PluginBackend::variant() const {
  std::call_once(variant_once_, [this] { variant_ = probe().variant; });
  return variant_;
}

Probe PluginBackend::probe() const {
  Result<Probe> probe = answer(descriptor_, descriptor_->probe(handle_), &wire::probe_from_json);
  if (!probe) return Probe{false, from_plugin(descriptor_, probe.error())};
  return *probe;
}

Capabilities PluginBackend::capabilities(const Limits& limits) const {
  const std::string limits_json = wire::to_json(limits).dump();
  Result<Capabilities> caps =
      answer(descriptor_, descriptor_->capabilities(handle_, limits_json.c_str()),
             &capabilities_from_json);
  // Nothing claimed: every limit is then refused before a run starts (check_request).
  return caps ? *caps : Capabilities{};
}

Result<void> PluginBackend::prepare() {
  // Read only when the plugin's descriptor is long enough to hold it (3.1 and later).
  constexpr std::size_t kEnd =
      offsetof(cordon_plugin_descriptor, prepare) + sizeof(cordon_plugin_descriptor::prepare);
  if (descriptor_->struct_size < kEnd || descriptor_->prepare == nullptr) return {};
  std::array<char, 1024> error{};
  const int failed = descriptor_->prepare(handle_, error.data(), error.size());
  error.back() = '\0';  // a plugin that filled it all still ends here
  if (failed == 0) return {};
  const std::string why = error[0] != '\0' ? error.data() : "it gave no reason";
  return fail(ErrorCode::kUnavailable,
              "plugin '" + std::string(descriptor_->name) + "' cannot prepare: " + why);
}

RunResult PluginBackend::run(const RunRequest& request, const CancelToken& cancel,
                             RunObserver* observer) {
  const std::string request_json = wire::to_json(request).dump();
  const cordon_run_events events = run_events(cancel, observer);
  RunResult out = result_of(descriptor_, descriptor_->run(handle_, request_json.c_str(), &events),
                            BackendId{std::string(name()), std::string(version()), variant()});
  // The environment is the backend's (fixed when it was created); the front end named it.
  out.environment = request.environment;
  return out;
}

Result<Plan> PluginBackend::describe_plan(const RunRequest& request) const {
  if (descriptor_->describe_plan == nullptr) return Backend::describe_plan(request);
  const std::string request_json = wire::to_json(request).dump();
  return answer(descriptor_, descriptor_->describe_plan(handle_, request_json.c_str()),
                &wire::plan_from_json);
}

Result<std::unique_ptr<BackendSession>> PluginBackend::open_session(const SessionOptions& options) {
  // All four, read only when the plugin's descriptor is long enough to hold them (3.4).
  constexpr std::size_t kEnd = offsetof(cordon_plugin_descriptor, session_close) +
                               sizeof(cordon_plugin_descriptor::session_close);
  const cordon_plugin_descriptor* d = descriptor_;
  if (d->struct_size < kEnd || d->session_open == nullptr || d->session_run == nullptr ||
      d->session_call == nullptr || d->session_close == nullptr) {
    return Backend::open_session(options);
  }
  const std::string options_json = wire::to_json(options).dump();
  std::array<char, 1024> error{};
  cordon_session* handle =
      d->session_open(handle_, options_json.c_str(), error.data(), error.size());
  error.back() = '\0';  // a plugin that filled it all still ends here
  if (handle == nullptr) {
    const std::string why = error[0] != '\0' ? error.data() : "it gave no reason";
    return fail(ErrorCode::kUnavailable, why);
  }
  return std::make_unique<PluginSession>(
      d, handle, BackendId{std::string(name()), std::string(version()), variant()},
      session_calls_ == SessionCalls::kInProcessWhenShared && sessions_in_process(d));
}

}  // namespace cordon
