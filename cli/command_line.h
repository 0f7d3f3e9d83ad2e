// The command line, parsed with CLI11: the only place that knows CLI11, so the commands
// themselves take plain option structs (and compile without its heavy headers).
#pragma once

#include "audit_command.h"
#include "backends_command.h"
#include "environment_command.h"
#include "mcp_command.h"
#include "prompt_command.h"
#include "run_options.h"
#include "session_command.h"

namespace cordon::cli {

enum class Command {
  kExit,  // nothing to run: help, version or a usage error was printed; see exit_status
  kRun,
  kPlan,  // `cordon plan`: RunOptions, code optional
  kBackends,
  kAudit,        // `cordon audit`: AuditCommandOptions
  kPrompt,       // `cordon prompt`: PromptOptions
  kMcp,          // `cordon mcp`: McpOptions
  kEnvironment,  // `cordon environment add|list|rm`: EnvironmentOptions
  kSession,      // `cordon session start|run|ls|cp|reset|stop`: SessionCommandOptions
};

struct CommandLine {
  Command command = Command::kExit;
  int exit_status = 0;
  RunOptions run;
  BackendsOptions backends;
  AuditCommandOptions audit;
  PromptOptions prompt;
  NetworkFlags prompt_network;          // `cordon prompt --allow-net ...`
  EnvironmentFlags prompt_environment;  // `cordon prompt --environment ...`
  McpOptions mcp;
  EnvironmentOptions environment;
  SessionCommandOptions session;
};

// Parses argv. Prints --help/--version output and usage errors (as JSON with --json)
// itself, returning kExit with the status to exit with.
[[nodiscard]] CommandLine parse_command_line(int argc, char** argv);

}  // namespace cordon::cli
