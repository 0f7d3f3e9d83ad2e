#include "frontend/prompt_render.h"

#include <charconv>
#include <cstdio>
#include <string>
#include <vector>

#include "audit/runner.h"
#include "cordon/claims.h"
#include "cordon/interpreter.h"
#include "cordon/text.h"
#include "cordon/units.h"
#include "prompts/tool_formats.h"

namespace cordon::frontend {

std::vector<Language> available_languages(const Backend& backend) {
  std::vector<Language> out;
  for (const InterpreterSpec& spec : kInterpreters) {
    RunRequest probe;
    probe.language = spec.language;
    const Result<Plan> plan = backend.describe_plan(probe);
    if (!plan) continue;
    if (!plan->argv.empty() || find_interpreter(spec.language)) out.push_back(spec.language);
  }
  return out;
}

Result<std::optional<audit::AuditReport>> matching_report(Backend& backend, Backend* control,
                                                          bool may_audit,
                                                          const NetworkAccess& network,
                                                          const AuditWatch& watch) {
  Result<audit::Catalogue> catalogue = audit::builtin_catalogue();
  if (!catalogue) return std::unexpected(catalogue.error());
  const audit::ReportBinding binding = audit::binding_for(backend, *catalogue, network);
  if (auto report = audit::load_report(binding)) return report;
  if (!may_audit) return std::optional<audit::AuditReport>();
  std::fprintf(stderr,
               "cordon: no audit report for %s on this host and policy%s; running the audit "
               "(cordon audit --backend %s%s)\n",
               binding.backend_name.c_str(), network.any() ? " with this allow-list" : "",
               shell_quote(binding.backend_name).c_str(),
               network.any() ? " with the same --allow-net" : "");
  audit::AuditOptions options;
  options.control_backend = control;
  options.network = network;
  options.cancel = watch.cancel;
  if (watch.progress) {
    const std::size_t total = audit::planned_attempts(backend, *catalogue, options).size();
    options.progress = [&watch, total,
                        done = std::size_t{0}](const audit::AttemptVerdict& verdict) mutable {
      watch.progress(verdict, ++done, total);
    };
  }
  audit::AuditReport report = audit::start_report(backend, *catalogue, /*complete=*/true, network);
  Result<std::vector<audit::AttemptVerdict>> verdicts =
      audit::run_attempts(backend, *catalogue, options);
  if (!verdicts) return std::unexpected(verdicts.error());
  report.verdicts = std::move(*verdicts);
  if (auto stored = audit::store_report(report); !stored) {
    std::fprintf(stderr, "cordon: report not stored: %s\n", stored.error().describe().c_str());
  }
  return std::optional<audit::AuditReport>(std::move(report));
}

std::optional<audit::AuditReport> stored_report(const Backend& backend,
                                                const NetworkAccess& network) {
  Result<audit::Catalogue> catalogue = audit::builtin_catalogue();
  if (!catalogue) return std::nullopt;
  return audit::load_report(audit::binding_for(backend, *catalogue, network));
}

prompts::RenderContext render_context(const PromptRender& input) {
  return prompts::RenderContext{.backend_name = input.backend_name,
                                .capabilities = input.backend->capabilities(input.limits),
                                .timeout = input.timeout,
                                .languages = available_languages(*input.backend),
                                .report = input.report,
                                .unverified = input.unverified,
                                .network = input.network,
                                .software = input.software,
                                .sessions = input.sessions};
}

namespace {

// A list the backend cannot carry is never described (nor audited for).
Status refuse_list_it_cannot_carry(const Backend& backend, const std::string& backend_name,
                                   const Limits& limits, const NetworkAccess& network) {
  if (!network.any() || carries_allow_list(backend.capabilities(limits))) return {};
  return fail(ErrorCode::kUnavailable,
              "the " + backend_name + " backend cannot carry a network allow-list (--allow-net)");
}

}  // namespace

Result<std::string> render_prompt(const PromptRender& input, std::string_view format) {
  if (Status s = refuse_list_it_cannot_carry(*input.backend, input.backend_name, input.limits,
                                             input.network);
      !s) {
    return std::unexpected(s.error());
  }
  Result<prompts::RenderedTool> rendered = prompts::render_tool(*input.tool, render_context(input));
  if (!rendered) return std::unexpected(rendered.error());
  return prompts::format_tool(*rendered, format);
}

Result<ToolDescriptionRef> parse_tool_description_ref(std::string_view text) {
  const std::size_t at = text.rfind('@');
  int version = 0;
  if (at == std::string_view::npos || at == 0) {
    return fail(ErrorCode::kInvalidArgument, "'" + std::string(text) + "' is not ID@VERSION");
  }
  const std::string_view digits = text.substr(at + 1);
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), version);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || version <= 0) {
    return fail(ErrorCode::kInvalidArgument, "'" + std::string(text) + "' is not ID@VERSION");
  }
  const std::string id(text.substr(0, at));
  Result<prompts::ToolTemplate> tool = prompts::find_template(id, version);
  if (!tool) return std::unexpected(tool.error());
  return ToolDescriptionRef{.id = id, .version = version};
}

Result<std::string> render_for_backend(Backend& backend, const std::string& backend_name,
                                       Backend* control, const Limits& limits,
                                       std::chrono::milliseconds timeout,
                                       const PromptOptions& options, const NetworkAccess& network) {
  Result<prompts::ToolTemplate> tool = prompts::find_template(options.id, options.version);
  if (!tool) return fail(tool.error().code, tool.error().describe());
  // Checked before any audit too.
  if (Status s = refuse_list_it_cannot_carry(backend, backend_name, limits, network); !s) {
    return std::unexpected(s.error());
  }
  Result<std::optional<audit::AuditReport>> report =
      matching_report(backend, control, !options.no_audit, network, options.audit_watch);
  if (!report) return fail(report.error().code, "audit: " + report.error().describe());
  const PromptRender input{.tool = &*tool,
                           .backend = &backend,
                           .backend_name = backend_name,
                           .limits = limits,
                           .timeout = timeout,
                           .report = *report ? &**report : nullptr,
                           .unverified = options.unverified,
                           .network = network,
                           .software = options.software,
                           .sessions = options.sessions};
  return render_prompt(input, options.format);
}

}  // namespace cordon::frontend
