#include "cordon/plugin_export.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cordon/backend.h"
#include "cordon/plugin_wire.h"
#include "cordon/result_json.h"
#include "cordon/session_wire.h"

// The handle the loader holds: opaque to it, a Backend here.
struct cordon_backend {
  std::unique_ptr<cordon::Backend> backend;
};

// A session's handle: the session, and its backend's identity for the results of failures.
struct cordon_session {
  std::unique_ptr<cordon::BackendSession> session;
  cordon::BackendId backend;
};

namespace cordon::plugin_export {
namespace {

using nlohmann::json;

static_assert(static_cast<int>(RunState::kPreparing) == CORDON_STATE_PREPARING &&
              static_cast<int>(RunState::kRunning) == CORDON_STATE_RUNNING &&
              static_cast<int>(RunState::kStopping) == CORDON_STATE_STOPPING &&
              static_cast<int>(RunState::kFinished) == CORDON_STATE_FINISHED);
static_assert(static_cast<int>(Stream::kStdout) == CORDON_STREAM_STDOUT &&
              static_cast<int>(Stream::kStderr) == CORDON_STREAM_STDERR);

// The answer as text the caller frees with free_text(); null only when out of memory.
char* text(const json& answer) {
  const std::string dumped = answer.dump();
  char* out = static_cast<char*>(std::malloc(dumped.size() + 1));
  if (out != nullptr) std::memcpy(out, dumped.c_str(), dumped.size() + 1);
  return out;
}

json parse(const char* text) {
  return text == nullptr ? json() : json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// Whether the caller's events struct is long enough to hold `end` bytes.
bool covers(const cordon_run_events* events, std::size_t end) {
  return events != nullptr && events->struct_size >= end;
}
#define CORDON_EVENT(events, field)                                               \
  (covers((events), offsetof(cordon_run_events, field) + sizeof((events)->field)) \
       ? (events)->field                                                          \
       : nullptr)

// RunObserver calls turned into the caller's C callbacks.
class EventsObserver final : public RunObserver {
 public:
  explicit EventsObserver(const cordon_run_events* events)
      : context_(events->context),
        on_state_(CORDON_EVENT(events, on_state)),
        on_output_(CORDON_EVENT(events, on_output)),
        on_sample_(CORDON_EVENT(events, on_sample)) {}
  [[nodiscard]] bool wanted() const {
    return on_state_ != nullptr || on_output_ != nullptr || on_sample_ != nullptr;
  }
  void on_state(RunState state) override {
    if (on_state_) on_state_(context_, static_cast<int>(state));
  }
  void on_output(Stream stream, std::string_view chunk, bool kept) override {
    if (on_output_)
      on_output_(context_, static_cast<int>(stream), chunk.data(), chunk.size(), kept);
  }
  void on_sample(const ResourceSample& sample) override {
    if (!on_sample_) return;
    const auto figure = [](const std::optional<std::uint64_t>& v) {
      return v ? static_cast<std::int64_t>(*v) : std::int64_t{-1};
    };
    on_sample_(context_, sample.elapsed.count(), figure(sample.memory_bytes),
               figure(sample.cpu_usec));
  }

 private:
  void* context_;
  decltype(cordon_run_events::on_state) on_state_;
  decltype(cordon_run_events::on_output) on_output_;
  decltype(cordon_run_events::on_sample) on_sample_;
};

char* result_text(const RunResult& result) {
  json out = to_json(result);
  with_raw_output(result, out);
  return text(out);
}

}  // namespace

cordon_backend* create(const cordon_backend_options* options, char* error, std::size_t error_size,
                       MakeBackendFn make) {
  try {
    std::unique_ptr<Backend> backend(create_backend_from_c(options, error, error_size, make));
    if (!backend) return nullptr;
    return new cordon_backend{std::move(backend)};
  } catch (const std::exception& e) {
    copy_error(e.what(), error, error_size);
    return nullptr;
  } catch (...) {
    return nullptr;
  }
}

void destroy(cordon_backend* backend) { delete backend; }

char* probe(const cordon_backend* backend) {
  try {
    return text(wire::to_json(backend->backend->probe()));
  } catch (const std::exception& e) {
    return text(wire::to_json(Probe{false, std::string("the plugin failed: ") + e.what()}));
  } catch (...) {
    return nullptr;
  }
}

char* capabilities(const cordon_backend* backend, const char* limits_json) {
  try {
    const Result<Limits> limits = wire::limits_from_json(parse(limits_json));
    return text(to_json(backend->backend->capabilities(limits.value_or(Limits{}))));
  } catch (...) {
    return nullptr;
  }
}

char* describe_plan(const cordon_backend* backend, const char* request_json) {
  try {
    const Result<RunRequest> request = wire::request_from_json(parse(request_json));
    if (!request) return text(wire::to_json(Result<Plan>(std::unexpected(request.error()))));
    return text(wire::to_json(backend->backend->describe_plan(*request)));
  } catch (const std::exception& e) {
    return text(wire::to_json(fail(ErrorCode::kPlugin, e.what())));
  } catch (...) {
    return nullptr;
  }
}

namespace {

// run's and session_run's body: the request read, the events wired, `run` called; every
// failure a sandbox error of `id`.
template <typename RunFn>
char* serve_run(const BackendId& id, const char* request_json, const cordon_run_events* events,
                RunFn&& run) {
  try {
    const Result<RunRequest> request = wire::request_from_json(parse(request_json));
    if (!request) {
      return result_text(
          sandbox_error(id, "invalid request from cordon: " + request.error().describe()));
    }
    const CancelToken cancel = CancelToken::following(
        covers(events, offsetof(cordon_run_events, cancel_fd) + sizeof(int)) ? events->cancel_fd
                                                                             : -1);
    std::optional<EventsObserver> observer;
    if (events != nullptr) observer.emplace(events);
    RunObserver* watching = observer && observer->wanted() ? &*observer : nullptr;
    return result_text(run(*request, cancel, watching));
  } catch (const std::exception& e) {
    return result_text(sandbox_error(id, std::string("the plugin failed: ") + e.what()));
  } catch (...) {
    return result_text(sandbox_error(id, "the plugin failed"));
  }
}

}  // namespace

char* run(cordon_backend* backend, const char* request_json, const cordon_run_events* events) {
  Backend& b = *backend->backend;
  return serve_run(BackendId{std::string(b.name()), std::string(b.version())}, request_json, events,
                   [&](const RunRequest& request, const CancelToken& cancel,
                       RunObserver* observer) { return b.run(request, cancel, observer); });
}

cordon_session* session_open(cordon_backend* backend, const char* options_json, char* error,
                             std::size_t error_size) {
  try {
    Backend& b = *backend->backend;
    const Result<SessionOptions> options = wire::session_options_from_json(parse(options_json));
    if (!options) {
      copy_error("invalid session options from cordon: " + options.error().describe(), error,
                 error_size);
      return nullptr;
    }
    Result<std::unique_ptr<BackendSession>> opened = b.open_session(*options);
    if (!opened) {
      copy_error(opened.error().describe(), error, error_size);
      return nullptr;
    }
    return new cordon_session{std::move(*opened),
                              BackendId{std::string(b.name()), std::string(b.version())}};
  } catch (const std::exception& e) {
    copy_error(std::string("the plugin failed: ") + e.what(), error, error_size);
  } catch (...) {
    copy_error("the plugin failed", error, error_size);
  }
  return nullptr;
}

char* session_run(cordon_session* session, const char* request_json,
                  const cordon_run_events* events) {
  return serve_run(
      session->backend, request_json, events,
      [&](const RunRequest& request, const CancelToken& cancel, RunObserver* observer) {
        return session->session->run(request, cancel, observer);
      });
}

RunResult session_run_in_process(cordon_session* session, const RunRequest& request,
                                 const CancelToken& cancel, RunObserver* observer) {
  try {
    return session->session->run(request, cancel, observer);
  } catch (const std::exception& e) {
    return sandbox_error(session->backend, std::string("the plugin failed: ") + e.what());
  } catch (...) {
    return sandbox_error(session->backend, "the plugin failed");
  }
}

char* session_call(cordon_session* session, const char* call_json) {
  try {
    return text(wire::serve_session_call(*session->session, parse(call_json)));
  } catch (const std::exception& e) {
    return text(json{{"error",
                      {{"code", to_string(ErrorCode::kPlugin)},
                       {"message", std::string("the plugin failed: ") + e.what()}}}});
  } catch (...) {
    return nullptr;
  }
}

void session_close(cordon_session* session) {
  try {
    delete session;
  } catch (...) {  // NOLINT(bugprone-empty-catch): nothing may cross into the caller
  }
}

void free_text(char* text) { std::free(text); }

int prepare(cordon_backend* backend, char* error, std::size_t error_size) {
  try {
    const Status prepared = backend->backend->prepare();
    if (prepared) return 0;
    copy_error(prepared.error().describe(), error, error_size);
  } catch (const std::exception& e) {
    copy_error(std::string("the plugin failed: ") + e.what(), error, error_size);
  } catch (...) {
    copy_error("the plugin failed", error, error_size);
  }
  return 1;
}

}  // namespace cordon::plugin_export
