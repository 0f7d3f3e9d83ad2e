#include "mcp/service.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "audit/verdict.h"
#include "cordon/units.h"
#include "environment_command.h"
#include "frontend/session_probe.h"
#include "mcp/transports.h"
#include "prompt_command.h"
#include "prompts/tool_formats.h"
#include "request_builder.h"

namespace cordon::cli::mcp {
namespace {

std::size_t cpu_count() { return std::max(1u, std::thread::hardware_concurrency()); }

// The rendered tool as the MCP tools/list entry it must be.
Result<nlohmann::json> tool_object(const Result<std::string>& text) {
  if (!text) return std::unexpected(text.error());
  nlohmann::json tool = nlohmann::json::parse(*text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (!tool.is_object() || !tool.contains("inputSchema")) {
    return fail(ErrorCode::kInternal, "the mcp rendering of the tool is not a tool object");
  }
  return tool;
}

}  // namespace

Result<std::unique_ptr<Service>> Service::create(const ServiceOptions& options) {
  // The operator's settings, parsed as `cordon run` parses them; the code comes per call.
  RunOptions run = options.run;
  run.code = "";
  run.source.reset();
  run.language.reset();
  Result<RunRequest> fixed = build_request(run);
  if (!fixed) return std::unexpected(fixed.error());

  std::unique_ptr<Service> service(new Service());
  // A long-lived server keeps sandboxes built ahead (namespace, container) unless told
  // otherwise: a call then pays no sandbox construction.
  BackendOptions backend_options = run.backend_options;
  if (!backend_options.pool_size) backend_options.pool_size = kDefaultPoolSize;
  // ... and, with a pool, python and sh already started in some of them (namespace; others
  // ignore it), so such a call pays no interpreter start-up either. Each still serves one
  // call.
  if (!backend_options.prestart && *backend_options.pool_size > 0) {
    backend_options.prestart = "python,sh";
  }
  Result<environment::Selection> env = apply_environment(run.environment, backend_options);
  if (!env) return std::unexpected(env.error());
  service->catalog_ = std::make_unique<BackendCatalog>(fixed->limits, run.backend, backend_options);
  const Result<BackendChoice> choice =
      choose_from(*service->catalog_, fixed->limits, run.backend, run.allow_unisolated,
                  /*allow_list=*/fixed->network.any());
  if (!choice) return fail(choice.error().code, choice.error().message);
  service->backend_ = service->catalog_->backend(choice->name);
  if (service->backend_ == nullptr) {
    return fail(ErrorCode::kInternal, "backend vanished: " + choice->name);
  }
  service->backend_name_ = choice->name;
  // A server runs code from whoever connects: a backend that does not isolate serves only
  // when the operator says so, even when named with -b.
  if (!service->backend_->capabilities(fixed->limits).isolates() && !run.allow_unisolated) {
    return fail(ErrorCode::kUnavailable,
                "the " + choice->name + " backend does not enforce " +
                    missing_isolation(service->backend_->capabilities(fixed->limits)) +
                    " isolation; pass --allow-unisolated to serve it anyway");
  }
  if (Status s = check_limits_for(*service->backend_, *fixed); !s) {
    return std::unexpected(s.error());
  }
  // Sweeps now and starts the warm pool, so the first call pays no sandbox construction
  // either; a failure is remembered and each call's result says it (a sandbox error).
  (void)service->backend_->prepare();

  const std::chrono::milliseconds max_timeout =
      fixed->timeout.count() > 0 ? fixed->timeout : kDefaultTimeout;
  service->defaults_.max_timeout = max_timeout;
  service->defaults_.limits = fixed->limits;
  service->defaults_.env = fixed->env;
  service->defaults_.network = fixed->network;
  service->defaults_.environment = environment_ref(*env);
  PromptOptions prompt;
  // Sessions (issue #41), before the tool is rendered: run_code offers `session` only where
  // the backend holds them. Without, one-shot calls are served as before.
  if (Result<prompts::SessionFacts> facts = service->offer_sessions(options.sessions); facts) {
    prompt.sessions = *facts;
  } else if (options.sessions.max_sessions > 0) {
    std::fprintf(stderr, "cordon: mcp: no session tools: %s\n", service->sessions_refusal_.c_str());
  }
  prompt.format = "mcp";
  prompt.software = environment::describe(*env);
  prompt.unverified = options.unverified;
  prompt.no_audit = options.no_audit;
  Backend* control = control_backend(*service->catalog_, *env, service->controls_);
  const auto render = [service = service.get(), name = choice->name, control, fixed = *fixed,
                       max_timeout](const PromptOptions& with) {
    return tool_object(render_for_backend(*service->backend_, name, control, fixed.limits,
                                          max_timeout, with, fixed.network));
  };
  if (options.no_audit || stored_report(*service->backend_, fixed->network)) {
    Result<nlohmann::json> tool = render(prompt);
    if (!tool) return std::unexpected(tool.error());
    service->gate_ = std::make_unique<ToolGate>(std::move(*tool));
  } else {
    // A first start on this host and policy: the audit takes 15 s or more, and an MCP
    // client or a probe waits a bounded time for initialize (issue #40). Whatever can be
    // refused without the audit is refused now, by rendering once unaudited.
    PromptOptions unaudited = prompt;
    unaudited.no_audit = true;
    unaudited.unverified = true;  // without a report a claim is refused, not checked
    if (Result<nlohmann::json> tool = render(unaudited); !tool) {
      return std::unexpected(tool.error());
    }
    service->gate_ = std::make_unique<ToolGate>(choice->name);
    std::fprintf(stderr,
                 "cordon: mcp: serving now; tools/list and tools/call wait until the audit has "
                 "ended\n");
    prompt.audit_watch.cancel = service->audit_stop_.token();
    prompt.audit_watch.progress = [gate = service->gate_.get()](
                                      const audit::AttemptVerdict& verdict, std::size_t done,
                                      std::size_t total) {
      const std::string line = verdict.id + " " + std::string(audit::to_string(verdict.status));
      std::fprintf(stderr, "cordon: mcp: audit %zu of %zu: %s\n", done, total, line.c_str());
      gate->progress(done, total, line);
    };
    service->auditor_ = std::thread([service = service.get(), render, prompt]() mutable {
      Result<nlohmann::json> tool = render(prompt);
      // The audit just made may not back the sessions offered before it: then none are
      // offered, and run_code is rendered without `session` (no call has run yet: calls wait
      // for the gate).
      if (tool && prompt.sessions && service->withdraw_unbacked_sessions()) {
        prompt.sessions.reset();
        tool = render(prompt);
      }
      if (!tool) {
        std::fprintf(stderr, "cordon: mcp: the sandbox cannot be described: %s\n",
                     tool.error().describe().c_str());
      }
      service->gate_->settle(std::move(tool));
    });
  }

  if (run.max_input_size) {
    Result<std::uint64_t> most = parse_size(*run.max_input_size);
    if (!most || *most == 0) {
      return fail(
          ErrorCode::kInvalidArgument,
          "--max-input-size: " + (most ? std::string("must be above 0") : most.error().message));
    }
    service->defaults_.max_input_bytes = *most;
  }
  service->defaults_.tool_description = fixed->tool_description;
  if (!service->defaults_.tool_description) {
    // Every result records the description the model was shown: this tool's.
    if (Result<prompts::ToolTemplate> t = prompts::find_template(prompt.id, prompt.version); t) {
      service->defaults_.tool_description = ToolDescriptionRef{.id = t->id, .version = t->version};
    }
  }

  if (!run.no_history && !history::disabled_by_env()) {
    Result<std::filesystem::path> path = options.history_path
                                             ? Result<std::filesystem::path>(*options.history_path)
                                             : history::default_path();
    if (path) {
      service->history_ = std::make_unique<HistoryWriter>(*path);
    } else {
      std::fprintf(stderr, "cordon: warning: calls not recorded in history: %s\n",
                   path.error().describe().c_str());
    }
  }
  service->queue_ =
      std::make_unique<CallQueue>(options.max_concurrent.value_or(cpu_count()), options.max_queue);
  return service;
}

std::unique_ptr<Service> Service::for_backend(Backend& backend, std::string name,
                                              nlohmann::json tool, ToolCallDefaults defaults,
                                              std::size_t workers, std::size_t queue) {
  return for_backend(backend, std::move(name), std::make_unique<ToolGate>(std::move(tool)),
                     std::move(defaults), workers, queue);
}

std::unique_ptr<Service> Service::for_backend(Backend& backend, std::string name,
                                              std::unique_ptr<ToolGate> gate,
                                              ToolCallDefaults defaults, std::size_t workers,
                                              std::size_t queue) {
  std::unique_ptr<Service> service(new Service());
  service->backend_ = &backend;
  service->backend_name_ = std::move(name);
  service->gate_ = std::move(gate);
  service->defaults_ = std::move(defaults);
  service->queue_ = std::make_unique<CallQueue>(workers, queue);
  return service;
}

std::optional<NotReady> not_ready(const Service& service) {
  // A first start's audit takes 15 s or more: a client asked to wait is asked back this soon.
  constexpr int kAuditRetryAfterSeconds = 5;
  switch (service.gate().state()) {
    case ToolGate::State::kAuditing:
      return NotReady{.message = service.gate().waiting_text() + "; retry after " +
                                 std::to_string(kAuditRetryAfterSeconds) + " s",
                      .retry_after_seconds = kAuditRetryAfterSeconds};
    case ToolGate::State::kFailed:
      return NotReady{.message =
                          "the sandbox cannot be described, so this server offers no "
                          "tool: " +
                          service.gate().failure(),
                      .retry_after_seconds = std::nullopt};
    case ToolGate::State::kReady:
      break;
  }
  return std::nullopt;
}

Service::~Service() {
  audit_stop_.cancel();
  if (auditor_.joinable()) auditor_.join();  // before the backend it audits goes
  queue_.reset();                            // no call runs past here
  history_.reset();                          // stores what is queued
}

std::string Service::tool_name() const { return tool().value("name", std::string("run_code")); }

std::vector<nlohmann::json> Service::tools() const {
  std::vector<nlohmann::json> out{tool()};
  const std::vector<nlohmann::json>& sessions = session_tools();
  out.insert(out.end(), sessions.begin(), sessions.end());
  return out;
}

Result<prompts::SessionFacts> Service::offer_sessions(
    const frontend::SessionRegistryOptions& options) {
  if (options.max_sessions == 0) {
    sessions_refusal_ = "this server holds no sessions (--max-sessions 0)";
    return fail(ErrorCode::kUnavailable, sessions_refusal_);
  }
  SessionOptions trial;
  trial.base.limits = defaults_.limits;
  trial.base.env = defaults_.env;
  trial.base.network = defaults_.network;
  trial.base.environment = defaults_.environment;
  // Sessions only as far as the audit backs them: a stored report whose cross-session
  // attempts are not all BLOCKED offers none (a first start's audit is checked when it ends:
  // withdraw_unbacked_sessions()).
  if (const auto report = frontend::stored_report(*backend_, defaults_.network); report) {
    if (const std::string why = audit::sessions_unbacked(*report); !why.empty()) {
      sessions_refusal_ = "this server holds no sessions: the audit does not back them: " + why;
      return fail(ErrorCode::kUnavailable, sessions_refusal_);
    }
  }
  const frontend::SessionProbe probe = frontend::probe_sessions(*backend_, trial);
  if (!probe.holds) {
    sessions_refusal_ = "this server holds no sessions: " + probe.refusal;
    return fail(ErrorCode::kUnavailable, sessions_refusal_);
  }
  const prompts::SessionFacts facts{.max_sessions = options.max_sessions,
                                    .max_waiting = options.max_waiting,
                                    .idle_timeout = options.idle_timeout,
                                    .max_age = options.max_age,
                                    .workspace_bytes = trial.workspace_bytes,
                                    .max_read_bytes = options.max_read_bytes,
                                    .max_write_bytes = options.max_write_bytes,
                                    .keeps_python = probe.keeps_python};
  // Facts about the interface, no isolation claim: rendered without an audit report.
  std::vector<nlohmann::json> tools;
  for (const std::string_view id : prompts::kSessionTools) {
    Result<prompts::ToolTemplate> t = prompts::find_template(id, std::nullopt);
    if (!t) return std::unexpected(t.error());
    const frontend::PromptRender input{.tool = &*t,
                                       .backend = backend_,
                                       .backend_name = backend_name_,
                                       .limits = defaults_.limits,
                                       .timeout = defaults_.max_timeout,
                                       .sessions = facts};
    Result<prompts::RenderedTool> rendered =
        prompts::render_tool(*t, frontend::render_context(input));
    if (!rendered) return std::unexpected(rendered.error());
    tools.push_back(prompts::mcp_tool(*rendered));
  }
  session_tools_ = std::move(tools);
  sessions_ = std::make_unique<frontend::SessionRegistry>(options);
  return facts;
}

bool Service::withdraw_unbacked_sessions() {
  const auto report = frontend::stored_report(*backend_, defaults_.network);
  if (!report || !sessions_) return false;
  const std::string why = audit::sessions_unbacked(*report);
  if (why.empty()) return false;
  withdrawn_refusal_ = "this server holds no sessions: the audit does not back them: " + why;
  std::fprintf(stderr, "cordon: mcp: no session tools: %s\n", withdrawn_refusal_.c_str());
  withdrawn_ = true;  // after the refusal's text: a reader that sees the flag sees the text
  return true;
}

void Service::record(history::RunRecord record) {
  if (history_) history_->add(std::move(record));
}

void Service::flush_history() {
  if (history_) history_->flush();
}

}  // namespace cordon::cli::mcp
