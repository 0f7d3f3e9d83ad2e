#include "plan_command.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_error.h"
#include "environment_command.h"
#include "frontend/backend_catalog.h"
#include "frontend/plan_text.h"
#include "frontend/prompt_render.h"
#include "frontend_names.h"
#include "request_builder.h"

namespace cordon::cli {

int plan_command(const RunOptions& options) {
  RunOptions effective = options;
  // A plan does not depend on the code's text, only on its language: none given is an
  // empty script (the language from -l, else sh).
  if (!effective.code && !effective.source) effective.code = "";
  Result<RunRequest> request = build_request(effective);
  if (!request) return report_failure(request.error().describe(), options.json);

  // The same catalog and choice as `cordon run`: the plan shown is the one that would run,
  // and a named backend's plugin is the only one loaded (the container backend's
  // constructor alone prepares a root filesystem).
  BackendOptions backend_options = options.backend_options;
  Result<environment::Selection> env = apply_environment(options.environment, backend_options);
  if (!env) return report_failure(env.error().describe(), options.json);
  const BackendCatalog catalog(request->limits, options.backend, backend_options);
  const Result<BackendChoice> choice = choose_from(
      catalog, request->limits, options.backend, options.allow_unisolated, request->network.any());
  if (!choice) return report_failure(choice.error().message, options.json);
  const Backend* backend = catalog.backend(choice->name);
  if (backend == nullptr) return report_failure("backend vanished: " + choice->name, options.json);
  // Limits this backend cannot honour are usage errors naming the flag, before anything runs.
  if (Status s = check_limits_for(*backend, *request); !s) {
    return report_failure(s.error().describe(), options.json);
  }

  Result<Plan> plan = backend->describe_plan(*request);
  if (!plan) return report_failure("plan: " + plan.error().describe(), options.json);
  Plan full = complete_plan(std::move(*plan), *request, backend->capabilities(request->limits));
  full.choice_requested = options.backend;
  full.choice_reason = choice->reason;
  for (const Language l : available_languages(*backend)) full.languages.emplace_back(to_string(l));

  if (options.json) {
    const std::string text =
        to_json(full).dump(/*indent=*/2, /*indent_char=*/' ', /*ensure_ascii=*/false,
                           nlohmann::json::error_handler_t::replace);
    std::fprintf(stdout, "%s\n", text.c_str());
  } else {
    std::fputs(render_plan_text(full).c_str(), stdout);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace cordon::cli
