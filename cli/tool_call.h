// A `run_code` tool call as a model produced it: its arguments checked against the
// inputSchema the model was shown (the rendered tool description), turned into a
// RunRequest, and the finished run turned back into the tool result the model reads.
// One implementation for every caller: `cordon mcp` (tools/call) and `cordon run
// --tool-call` (harnesses without MCP) validate and answer with this code.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cordon/error.h"
#include "cordon/request.h"
#include "cordon/result.h"
#include "run_options.h"

namespace cordon::cli {

// What the operator fixed for every call (the flags of `cordon mcp` / `cordon run`): the
// model's arguments only fill in the code, its language, a timeout up to `max_timeout`,
// inline input files and artifact patterns, where the schema offers them.
struct ToolCallDefaults {
  std::chrono::milliseconds max_timeout{kDefaultTimeout};  // also the timeout for null
  Limits limits;
  std::vector<std::pair<std::string, std::string>> env;
  NetworkAccess network;  // the allow-list of every call (the description states it)
  std::optional<ToolDescriptionRef> tool_description;
  std::optional<EnvironmentRef> environment;  // recorded in every call's Result
  std::uint64_t max_artifact_bytes = kDefaultArtifactBytes;
  // Each inline input file, decoded, and all of them together: at most this (the default
  // of `cordon run --max-input-size`).
  std::uint64_t max_input_bytes = kDefaultMaxInputBytes;
};

// Checks `arguments` against `input_schema` (the subset of JSON Schema the templates use:
// type, enum, required, additionalProperties, properties, items, minimum/maximum,
// maxLength, maxItems) and builds the request. An optional property left out and one given
// as null mean the same (the MCP shape lets a model leave it out, OpenAI's strict shape has
// it send null), and so do a required one whose type takes null; a language left out is the
// schema's "default" for it. A bad call is kInvalidArgument whose message
// names the field and says what was expected ("language: must be one of sh, bash,
// python; got \"ruby\""), in words the model can act on.
[[nodiscard]] Result<RunRequest> request_from_tool_call(const nlohmann::json& arguments,
                                                        const nlohmann::json& input_schema,
                                                        const ToolCallDefaults& defaults);

// Seconds (a JSON number, null: `most`) -> a call's timeout, at most `most`; zero, less or
// more than `most` is kInvalidArgument naming "timeout". run_code's and session_open's.
[[nodiscard]] Result<std::chrono::milliseconds> timeout_from(const nlohmann::json* value,
                                                             std::chrono::milliseconds most);

// The tool result for a finished run, in MCP's CallToolResult shape: `content` (a text
// item with what a model reads: the outcome sentence, stdout, stderr, truncation; then
// each collected artifact as an embedded resource, named as --artifacts-dir names it),
// `structuredContent` (to_json(result), with the tool description's id and version) when
// `structured`, and `isError` unless the code ran and exited 0.
[[nodiscard]] nlohmann::json tool_result(const RunResult& result, bool structured);

// The tool result for a call that never ran (bad arguments, a refused limit, a full
// queue): isError with `message`.
[[nodiscard]] nlohmann::json tool_error_result(const std::string& message);

// One sentence saying how the run ended and what the model can do about it, e.g.
// "timed out after 5 s: every process was stopped; try less work or a larger timeout if
// allowed".
[[nodiscard]] std::string outcome_sentence(const RunResult& result);

}  // namespace cordon::cli
