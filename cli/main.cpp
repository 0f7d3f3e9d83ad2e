// The `cordon` command: parse, dispatch, and map every failure of cordon itself to 125.
#include <cstdio>
#include <exception>
#include <string>

#include "audit_command.h"
#include "backends_command.h"
#include "command_line.h"
#include "cordon/proc/pid1_init.h"
#include "environment_command.h"
#include "frontend/exit_status.h"
#include "frontend_names.h"
#include "mcp_command.h"
#include "plan_command.h"
#include "prompt_command.h"
#include "run_command.h"
#include "session_command.h"
#include "signal_cancel.h"

int main(int argc, char** argv) {
  // As PID 1 (a container's entry point), a parent that reaps every orphan stays PID 1 and
  // cordon runs as its child (pid1_init.h): before anything starts a thread.
  cordon::proc::reap_orphans_if_pid1();
  try {
    const cordon::cli::CommandLine line = cordon::cli::parse_command_line(argc, argv);
    cordon::cli::catch_sigpipe();
    switch (line.command) {
      case cordon::cli::Command::kRun:
        return cordon::cli::run_command(line.run);
      case cordon::cli::Command::kPlan:
        return cordon::cli::plan_command(line.run);
      case cordon::cli::Command::kBackends:
        return cordon::cli::backends_command(line.backends);
      case cordon::cli::Command::kAudit:
        return cordon::cli::audit_command(line.audit);
      case cordon::cli::Command::kPrompt:
        return cordon::cli::prompt_command(line.prompt, line.prompt_network,
                                           line.prompt_environment);
      case cordon::cli::Command::kMcp:
        return cordon::cli::mcp_command(line.mcp);
      case cordon::cli::Command::kEnvironment:
        return cordon::cli::environment_command(line.environment);
      case cordon::cli::Command::kSession:
        return cordon::cli::session_command(line.session);
      case cordon::cli::Command::kExit:
        return line.exit_status;
    }
    return cordon::cli::kExitCordonFailed;
  } catch (const std::exception& e) {
    // A broken invariant in cordon is still cordon's failure, not the code's. The error
    // goes to stderr only: with --json, stdout may already hold part of an object.
    std::string message = std::string("cordon: internal error: ") + e.what() + "\n";
    std::fputs(message.c_str(), stderr);
    return cordon::cli::kExitCordonFailed;
  }
}
