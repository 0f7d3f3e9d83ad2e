#include "tool_call_command.h"

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli_error.h"
#include "cordon/units.h"
#include "environment_command.h"
#include "frontend/backend_catalog.h"
#include "frontend/exit_status.h"
#include "frontend/history.h"
#include "frontend_names.h"
#include "prompt_command.h"
#include "prompts/tool_description.h"
#include "prompts/tool_render.h"
#include "request_builder.h"
#include "run_command.h"
#include "tool_call.h"

namespace cordon::cli {
namespace {

using nlohmann::json;

constexpr bool kText = false;  // operator errors as text on stderr: stdout is the result

void print_result(const json& result) {
  const std::string text =
      result.dump(/*indent=*/-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
  std::fprintf(stdout, "%s\n", text.c_str());
  std::fflush(stdout);
}

// The options that give the code itself are the call's to give, not the operator's.
Status refuse_code_options(const RunOptions& options) {
  const auto given = [](bool set, const char* flag) -> Status {
    if (!set) return {};
    return fail(ErrorCode::kInvalidArgument,
                std::string(flag) + ": not with --tool-call (the call's arguments give it)");
  };
  if (Status s = given(options.code.has_value(), "-c"); !s) return s;
  if (Status s = given(options.language.has_value(), "--language"); !s) return s;
  if (Status s = given(!options.files.empty(), "--file"); !s) return s;
  if (Status s = given(!options.collect.empty(), "--collect"); !s) return s;
  if (Status s = given(options.stdin_file.has_value(), "--stdin-file"); !s) return s;
  if (Status s = given(options.json, "--json"); !s) return s;
  return given(options.dry_run, "--dry-run");
}

// What the operator fixed (limits, env, timeout ceiling, input size), parsed by the same
// code as a plain `cordon run`: a request for empty code built from these options.
Result<ToolCallDefaults> defaults_from(const RunOptions& options) {
  RunOptions operator_only = options;
  operator_only.code = "";
  operator_only.source.reset();
  operator_only.tool_description.reset();  // it picks the template here (below)
  Result<RunRequest> base = build_request(operator_only);
  if (!base) return std::unexpected(base.error());
  ToolCallDefaults d;
  d.max_timeout = effective_timeout(*base);
  d.limits = base->limits;
  d.env = base->env;
  d.network = base->network;
  if (options.max_input_size) {
    Result<std::uint64_t> most = parse_size(*options.max_input_size);
    if (!most)
      return fail(ErrorCode::kInvalidArgument, "--max-input-size: " + most.error().message);
    d.max_input_bytes = *most;
  }
  return d;
}

// The arguments: a JSON object, or a JSON string holding one (OpenAI's `arguments`).
// Bounded: the code, and the input files in base64, with room for the JSON around them.
Result<json> read_arguments(const RunOptions& options, const ToolCallDefaults& defaults) {
  const std::uint64_t most = kMaxCodeBytes + (defaults.max_input_bytes / 3 + 1) * 4 + (64u << 10);
  const std::string source = options.source.value_or("-");
  Result<std::string> text =
      read_source(source, /*stdin_fd=*/0, most,
                  "the tool call's arguments are larger than " + format_size(most));
  if (!text) return std::unexpected(text.error());
  json arguments = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (arguments.is_string()) {
    arguments = json::parse(arguments.get<std::string>(), nullptr, /*allow_exceptions=*/false);
  }
  if (arguments.is_discarded()) {
    return fail(ErrorCode::kInvalidArgument,
                "arguments: not valid JSON; give one JSON object with the tool's properties");
  }
  return arguments;
}

}  // namespace

int tool_call_command(const RunOptions& options) {
  if (Status s = refuse_code_options(options); !s) return report_failure(s.error().message, kText);
  Result<ToolCallDefaults> defaults = defaults_from(options);
  if (!defaults) return report_failure(defaults.error().describe(), kText);

  // The tool as `cordon prompt` renders it for this backend and these limits: the latest
  // template, or the one --tool-description names.
  std::optional<int> version;
  std::string id = "run_code";
  if (options.tool_description) {
    Result<ToolDescriptionRef> ref = parse_tool_description_ref(*options.tool_description);
    if (!ref) return report_failure("--tool-description: " + ref.error().message, kText);
    id = ref->id;
    version = ref->version;
  }
  Result<prompts::ToolTemplate> tool = prompts::find_template(id, version);
  if (!tool) return report_failure(tool.error().describe(), kText);

  // The operator's backend options (--pool-size, --runtime, ...), as `cordon run` takes them.
  BackendOptions backend_options = options.backend_options;
  Result<environment::Selection> env = apply_environment(options.environment, backend_options);
  if (!env) return report_failure(env.error().describe(), kText);
  defaults->environment = environment_ref(*env);

  const BackendCatalog catalog(defaults->limits, options.backend, backend_options);
  const Result<BackendChoice> choice =
      choose_from(catalog, defaults->limits, options.backend, options.allow_unisolated,
                  /*allow_list=*/defaults->network.any());
  if (!choice) return report_failure(choice.error().message, kText);
  Backend* backend = catalog.backend(choice->name);
  if (backend == nullptr) return report_failure("backend vanished: " + choice->name, kText);
  // Limits this backend cannot honour are the operator's flags' fault, before anything runs.
  RunRequest limits_only;
  limits_only.limits = defaults->limits;
  if (Status s = check_limits_for(*backend, limits_only); !s) {
    return report_failure(s.error().describe(), kText);
  }
  std::unique_ptr<BackendCatalog> controls;
  Result<std::optional<audit::AuditReport>> report = matching_report(
      *backend, control_backend(catalog, *env, controls), !options.no_audit, defaults->network);
  if (!report) return report_failure("audit: " + report.error().describe(), kText);
  const PromptRender input{.tool = &*tool,
                           .backend = backend,
                           .backend_name = choice->name,
                           .limits = defaults->limits,
                           .timeout = defaults->max_timeout,
                           .report = *report ? &**report : nullptr,
                           .unverified = options.unverified,
                           .network = defaults->network,
                           .software = environment::describe(*env)};
  Result<prompts::RenderedTool> rendered = prompts::render_tool(*tool, render_context(input));
  if (!rendered) return report_failure(rendered.error().message, kText);
  defaults->tool_description = ToolDescriptionRef{.id = rendered->id, .version = rendered->version};

  // From here on, what goes wrong is the call's: an error result the model can act on.
  Result<json> arguments = read_arguments(options, *defaults);
  Result<RunRequest> request =
      arguments ? request_from_tool_call(*arguments, rendered->input_schema, *defaults)
                : std::unexpected(arguments.error());
  if (!request) {
    print_result(tool_error_result(request.error().message));
    return kExitCordonFailed;
  }

  // As `cordon run`: prepared up front; a failure comes back as the call's sandbox error.
  (void)backend->prepare();
  int cancel_signal = 0;
  const auto started = std::chrono::system_clock::now();
  const RunResult result = execute(*backend, *request, /*json=*/true, &cancel_signal);
  if (!options.no_history && !history::disabled_by_env()) {
    record_in_history(*request, result, started);
  }
  print_result(tool_result(result, /*structured=*/true));
  return exit_status(result, cancel_signal);
}

}  // namespace cordon::cli
