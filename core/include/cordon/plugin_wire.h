// The JSON that crosses the C plugin boundary (plugin_abi.h) besides results and
// capabilities (result_json.h): requests, limits, probes and plans. Both sides of the
// boundary use these, so a shape is written down once. A byte string (code, stdin, env,
// input files, globs) is a JSON string when it is valid UTF-8 and {"base64": "..."}
// otherwise, so any bytes cross unchanged.
#pragma once

#include <nlohmann/json.hpp>

#include "cordon/backend.h"
#include "cordon/error.h"
#include "cordon/plan.h"
#include "cordon/request.h"

namespace cordon::wire {

[[nodiscard]] nlohmann::json to_json(const Limits& limits);
[[nodiscard]] Result<Limits> limits_from_json(const nlohmann::json& in);

[[nodiscard]] nlohmann::json to_json(const RunRequest& request);
// Fails, naming the field, on a member of the wrong type or an unknown language.
[[nodiscard]] Result<RunRequest> request_from_json(const nlohmann::json& in);

[[nodiscard]] nlohmann::json to_json(const Probe& probe);
[[nodiscard]] Result<Probe> probe_from_json(const nlohmann::json& in);

// A describe_plan() answer: {"plan": plan} (plan.h's JSON form) or {"error": {"code",
// "message"}}. A plan that plan.h cannot read is a kPlugin error naming the member.
[[nodiscard]] nlohmann::json to_json(const Result<Plan>& plan);
[[nodiscard]] Result<Plan> plan_from_json(const nlohmann::json& in);

}  // namespace cordon::wire
