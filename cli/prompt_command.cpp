#include "prompt_command.h"

#include <cstdio>
#include <string>

#include "cli_error.h"
#include "cordon/units.h"
#include "environment_command.h"
#include "frontend/backend_catalog.h"
#include "frontend/session_probe.h"
#include "frontend_names.h"
#include "prompts/tool_render.h"
#include "request_builder.h"

namespace cordon::cli {
namespace {

Result<Limits> limits_from(const PromptOptions& options) {
  Limits limits;
  if (options.memory) {
    Result<std::uint64_t> m = parse_size(*options.memory);
    if (!m) return fail(ErrorCode::kInvalidArgument, "--memory: " + m.error().message);
    limits.memory_bytes = *m;
  }
  if (options.processes) {
    try {
      limits.max_processes = std::stoull(*options.processes);
    } catch (const std::exception&) {
      return fail(ErrorCode::kInvalidArgument, "--processes: not a number: " + *options.processes);
    }
  }
  return limits;
}

}  // namespace

int prompt_command(const PromptOptions& given, const NetworkFlags& network_flags,
                   const EnvironmentFlags& environment_flags) {
  PromptOptions options = given;
  constexpr bool kJson = false;  // errors as text: stdout is the tool definition
  if (Result<prompts::ToolTemplate> tool = prompts::find_template(options.id, options.version);
      !tool) {
    return report_failure(tool.error().describe(), kJson);
  }
  Result<Limits> limits = limits_from(options);
  if (!limits) return report_failure(limits.error().message, kJson);
  std::chrono::milliseconds timeout = kDefaultTimeout;
  if (options.timeout) {
    Result<std::chrono::milliseconds> t = parse_duration(*options.timeout);
    if (!t) return report_failure("--timeout: " + t.error().message, kJson);
    if (t->count() > 0) timeout = *t;
  }

  Result<NetworkAccess> network = network_from(network_flags);
  if (!network) return report_failure(network.error().message, kJson);

  // The choice `cordon run` makes (choose_from(): the backend options checked, and with a
  // list only a backend that carries one).
  Result<environment::Selection> env =
      apply_environment(environment_flags, options.backend_options);
  if (!env) return report_failure(env.error().describe(), kJson);
  options.software = environment::describe(*env);

  const BackendCatalog catalog(*limits, {}, options.backend_options,
                               BackendCatalog::Variants::kList);
  Result<BackendChoice> choice = choose_from(catalog, *limits, options.backend,
                                             /*allow_unisolated=*/false, network->any());
  if (!choice) return report_failure(choice.error().message, kJson);
  Backend* backend = catalog.backend(choice->name);
  if (backend == nullptr) return report_failure("backend vanished: " + choice->name, kJson);
  std::unique_ptr<BackendCatalog> controls;
  Backend* control = control_backend(catalog, *env, controls);

  if (options.with_sessions) {
    // What `cordon mcp` offers with its default session settings (issue #41).
    SessionOptions trial;
    trial.base.limits = *limits;
    trial.base.network = *network;
    const frontend::SessionProbe probe = frontend::probe_sessions(*backend, trial);
    if (!probe.holds) return report_failure("--sessions: " + probe.refusal, kJson);
    options.sessions = prompts::SessionFacts{.keeps_python = probe.keeps_python};
  }
  Result<std::string> text =
      render_for_backend(*backend, choice->name, control, *limits, timeout, options, *network);
  if (!text) return report_failure(text.error().message, kJson);
  std::fputs(text->c_str(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace cordon::cli
