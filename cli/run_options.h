// `cordon run`'s (and `cordon plan`'s) options as typed, before any of them is interpreted. Parsing
// them into a RunRequest (request_builder.h) is separate so its errors are cordon's own, one style.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cordon/backend_options.h"
#include "frontend/backend_choice.h"
#include "frontend_names.h"

namespace cordon::cli {

// The largest --file or --stdin-file cordon reads, unless --max-input-size says otherwise.
// The code itself has its own fixed limit (kMaxCodeBytes, cordon/request.h).
inline constexpr std::uint64_t kDefaultMaxInputBytes = 16ULL << 20;

// The network allow-list flags of run, plan, prompt, audit and mcp, as typed
// (request_builder.h network_from() reads them).
struct NetworkFlags {
  std::vector<std::string> allow;              // --allow-net DOMAIN|*.DOMAIN|HOST:PORT|ADDR
  std::vector<std::string> deny;               // --deny-net (wins over --allow-net)
  std::optional<std::string> max_bytes;        // --net-max-bytes SIZE
  std::optional<std::string> max_connections;  // --net-max-connections N
};

// The environment flags of run, plan, prompt, audit and mcp, as typed
// (environment_command.h apply_environment() reads them).
struct EnvironmentFlags {
  std::optional<std::string> name;    // --environment NAME (a stored one, or host)
  std::optional<std::string> rootfs;  // --rootfs DIR (unregistered, hashed when used)
};

struct RunOptions {
  std::string backend{kAutoBackend};
  std::optional<std::string> timeout;
  std::optional<std::string> language;
  std::optional<std::string> memory;
  std::optional<std::string> processes;
  std::optional<std::string> cpu;
  std::optional<std::string> output_cap;
  std::optional<std::string> max_input_size;  // --max-input-size: per --file / --stdin-file
  std::optional<std::string> code;            // -c CODE
  std::optional<std::string> source;          // FILE, or "-" for stdin
  std::optional<std::string> stdin_file;      // --stdin-file
  std::optional<std::string> artifacts_dir;
  std::vector<std::string> files;               // --file LOCAL[:NAME]
  std::vector<std::string> collect;             // --collect GLOB
  std::vector<std::string> env;                 // --env NAME=VALUE
  std::optional<std::string> tool_description;  // --tool-description ID@VERSION
  NetworkFlags network;
  BackendOptions backend_options;  // --pool-size, --engine, --image, --runtime (unset: none)
  EnvironmentFlags environment;
  bool json = false;
  bool allow_unisolated = false;
  bool dry_run = false;     // --dry-run: print the plan (plan_command.h) instead of running
  bool no_history = false;  // --no-history: do not record the run (frontend/history.h)
  // --tool-call: FILE/- (source) holds a run_code call's arguments (tool_call_command.h);
  // rendered under the audit gate of `cordon prompt`, with its --unverified / --no-audit.
  bool tool_call = false;
  bool unverified = false;
  bool no_audit = false;
};

}  // namespace cordon::cli
