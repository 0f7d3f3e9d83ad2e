// `cordon run --tool-call [FILE|-]`: a run_code tool call for harnesses without MCP. Reads
// the call's arguments as the model produced them (a JSON object, or that object as a JSON
// string, as OpenAI's function calls carry it), renders the tool for the chosen backend and
// limits exactly as `cordon prompt` does (same audit gate), validates and runs with the
// code `cordon mcp` uses (tool_call.h), and prints the CallToolResult JSON on stdout.
#pragma once

#include "run_options.h"

namespace cordon::cli {

// The exit status follows exit_status.h for a run; a call refused for its arguments
// prints its error result and returns kExitCordonFailed, as does an operator error (bad
// flags, no backend, an unproven description), which prints one line on stderr.
[[nodiscard]] int tool_call_command(const RunOptions& options);

}  // namespace cordon::cli
