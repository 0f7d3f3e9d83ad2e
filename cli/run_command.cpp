#include "run_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "artifacts_out.h"
#include "cli_error.h"
#include "cordon/result_json.h"
#include "environment_command.h"
#include "frontend/backend_catalog.h"
#include "frontend/exit_status.h"
#include "frontend/history.h"
#include "frontend/network_text.h"
#include "frontend_names.h"
#include "output_relay.h"
#include "plan_command.h"
#include "request_builder.h"
#include "signal_cancel.h"
#include "tool_call_command.h"

namespace cordon::cli {
namespace {

void print_json(const RunResult& result) {
  const std::string text =
      to_json(result).dump(/*indent=*/-1, /*indent_char=*/' ',
                           /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
  std::fprintf(stdout, "%s\n", text.c_str());
  std::fflush(stdout);
}

}  // namespace

// Runs with live pass-through (text mode) or silently (JSON mode), cancelling on signals.
RunResult execute(Backend& backend, const RunRequest& request, bool json, int* cancel_signal) {
  CancelSource cancel;
  const SignalCanceller canceller(cancel);
  std::optional<OutputRelay> relay;
  if (!json) relay.emplace(STDOUT_FILENO, STDERR_FILENO);
  RunResult result = backend.run(request, cancel.token(), relay ? &*relay : nullptr);
  if (relay) relay->finish(result);
  *cancel_signal = canceller.received();
  return result;
}

// Records the finished run in the history. Failing to is one warning line on stderr and
// never changes the exit status: the history is a convenience, the run is what matters.
void record_in_history(const RunRequest& request, const RunResult& result,
                       std::chrono::system_clock::time_point started) {
  const auto finished = std::chrono::system_clock::now();
  const Result<std::filesystem::path> path = history::default_path();
  const Result<std::int64_t> recorded =
      path ? history::record_run(*path,
                                 history::make_record(request, result, started, finished, "cli"))
           : std::unexpected(path.error());
  if (!recorded) {
    std::fprintf(stderr, "cordon: warning: run not recorded in history: %s\n",
                 recorded.error().describe().c_str());
  }
}

int run_command(const RunOptions& options) {
  if (options.dry_run) return plan_command(options);
  if (options.tool_call) return tool_call_command(options);
  Result<RunRequest> request = build_request(options);
  if (!request) return report_failure(request.error().describe(), options.json);

  BackendOptions backend_options = options.backend_options;
  Result<environment::Selection> env = apply_environment(options.environment, backend_options);
  if (!env) return report_failure(env.error().describe(), options.json);
  request->environment = environment_ref(*env);

  const BackendCatalog catalog(request->limits, options.backend, backend_options);
  const Result<BackendChoice> choice = choose_from(
      catalog, request->limits, options.backend, options.allow_unisolated, request->network.any());
  if (!choice) return report_failure(choice.error().message, options.json);
  Backend* backend = catalog.backend(choice->name);
  if (backend == nullptr) return report_failure("backend vanished: " + choice->name, options.json);
  // Limits this backend cannot honour are usage errors naming the flag, before anything runs.
  if (Status s = check_limits_for(*backend, *request); !s) {
    return report_failure(s.error().describe(), options.json);
  }
  // The sweeps and set-up of the chosen backend, before the run's own clock starts; a
  // failure is remembered and comes back as the run's sandbox error, with the reason.
  (void)backend->prepare();

  int cancel_signal = 0;
  const auto started = std::chrono::system_clock::now();
  const RunResult result = execute(*backend, *request, options.json, &cancel_signal);
  int status = exit_status(result, cancel_signal);
  if (result.outcome == Outcome::kSandboxError && !options.json) {
    // A sandbox error's status line also says where else the code could run.
    const BackendCatalog all(request->limits, {}, backend_options);
    std::fprintf(stderr, "cordon: %s; available backends: %s\n", status_line(result).c_str(),
                 available_backend_list(all.candidates()).c_str());
  } else if (!options.json) {
    std::fprintf(stderr, "cordon: %s\n", status_line(result).c_str());
  }
  if (result.network && !options.json) {
    for (const std::string& line : network_lines(*result.network)) {
      std::fprintf(stderr, "cordon: network: %s\n", line.c_str());
    }
  }

  if (options.artifacts_dir && !result.artifacts.empty()) {
    const auto written = write_artifacts(*options.artifacts_dir, result.artifacts);
    if (!written) {
      // stderr even with --json: stdout carries exactly the one result object.
      std::fprintf(stderr, "cordon: artifacts not written: %s\n",
                   written.error().describe().c_str());
      status = kExitCordonFailed;
    } else if (!options.json) {
      std::fprintf(stderr, "cordon: wrote %zu artifact(s) to %s\n", written->size(),
                   options.artifacts_dir->c_str());
    }
  } else if (!options.json && !result.artifacts.empty()) {
    std::fprintf(stderr, "cordon: collected %zu artifact(s); --artifacts-dir DIR writes them\n",
                 result.artifacts.size());
  }
  if (!options.no_history && !history::disabled_by_env()) {
    record_in_history(*request, result, started);
  }
  if (options.json) print_json(result);
  return status;
}

}  // namespace cordon::cli
