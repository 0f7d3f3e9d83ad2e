// How cordon reports its own failures (exit 125): one line on stderr, or with --json a
// single object {"error": "..."} on stdout so a caller parsing stdout always gets JSON.
#pragma once

#include <string_view>

namespace cordon::cli {

// Prints the message as `json` asks and returns kExitCordonFailed.
int report_failure(std::string_view message, bool json);

}  // namespace cordon::cli
