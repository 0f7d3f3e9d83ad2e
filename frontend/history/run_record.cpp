// Turning a finished run into a record (dropping env values) and a record back into a
// request (re-run).
#include <utility>

#include "cordon/backend.h"
#include "cordon/result_json.h"
#include "frontend/history.h"

namespace cordon::history {

RunRecord make_record(const RunRequest& request, const RunResult& result,
                      std::chrono::system_clock::time_point started,
                      std::chrono::system_clock::time_point finished, std::string source) {
  RunRecord record;
  record.started = started;
  record.finished = finished;
  record.source = std::move(source);
  record.code = request.code;
  record.language = request.language;
  record.backend = backend_label(result.backend);  // "container (runsc)": its own entry
  record.timeout_ms = effective_timeout(request).count();
  record.limits = request.limits;
  // Names only: the values may be secrets (API keys handed to the code) and a history
  // file outlives the run, is readable by other tools, and gets copied around.
  record.env_names.reserve(request.env.size());
  for (const auto& [name, value_not_kept] : request.env) record.env_names.push_back(name);
  record.input_files = request.input_files;
  record.artifact_globs = request.artifact_globs;
  // The Result's, which is what the run reports (the plugin loader copies it there); the
  // request's when a Result was made without the loader (a front end's own sandbox error).
  record.environment = result.environment ? result.environment : request.environment;
  record.session = result.session;
  record.outcome = result.outcome;
  record.limit = result.limit;
  record.exit_code = result.exit_code;
  record.wall_ms = result.wall_ms;
  record.stdout_data = result.stdout_data;
  record.stderr_data = result.stderr_data;
  record.result = to_json(result);
  return record;
}

RunRequest request_of(const RunRecord& record) {
  RunRequest request;
  request.code = record.code;
  request.language = record.language;
  request.timeout = std::chrono::milliseconds(record.timeout_ms);
  request.limits = record.limits;
  request.input_files = record.input_files;
  request.artifact_globs = record.artifact_globs;
  // A re-run runs in the same root filesystem; the front end creates its backend there.
  request.environment = record.environment;
  return request;
}

}  // namespace cordon::history
