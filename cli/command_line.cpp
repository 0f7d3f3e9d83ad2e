#include "command_line.h"

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "cli_error.h"
#include "cordon/request.h"

namespace cordon::cli {
namespace {

constexpr const char* kRunFooter = R"(
The code gets none of cordon's environment: only what the backend sets and --env adds.
Without --json the code's stdout/stderr are passed through and a status line goes to stderr.

Exit status: the code's own; 124 timed out; 128+N killed by signal N; 137 a limit
(memory, processes, cpu, output, disk) stopped it; 130/143 cordon was interrupted
(SIGINT/SIGTERM) and cancelled the run; 125 cordon itself failed (bad arguments, unknown
or unavailable backend, no isolating backend for auto, sandbox error, artifacts not written).
Every run is recorded in the history ($CORDON_HISTORY_PATH, else
$XDG_DATA_HOME/cordon/history.sqlite3) with the names, never the values, of --env; a
history that cannot be written is one warning line and changes no exit status.
Inputs: the code (-c, FILE or - for stdin) up to 1 MiB, on every backend; each --file and
--stdin-file up to --max-input-size (16M); FILE, --file and --stdin-file regular files.
DUR: 500ms, 0.5s, 2s, 1m, or seconds; at least 1ms. SIZE: 1024, 64K, 256M, 1G.)";

static_assert(kMaxCodeBytes == 1u << 20 && kDefaultMaxInputBytes == 16u << 20,
              "kRunFooter states these limits");

constexpr const char* kPlanFooter = R"(
Prints the plan 'cordon run' with the same options would apply — namespaces, mounts,
seccomp policy and hash, limits and how each is enforced — and runs nothing. The backend
is chosen exactly as for 'cordon run' (auto fails closed). The code is optional.
Exit status: 0, or 125 when cordon fails (bad arguments, no backend, invalid request).)";

// CLI11 reads "-t=5s" as the value "=5s": '=' separates a value only after a long option,
// a short option's value is glued on. People type it anyway, so for short options whose
// values never start with '=' (durations, names, languages) a glued '=' is dropped.
// Not for -c: code may start with '='.
std::string drop_glued_equals(std::string value) {
  if (!value.empty() && value.front() == '=') value.erase(0, 1);
  return value;
}

// container: gVisor's platform for runsc (also taken by `cordon backends`, which lists the
// runsc variant on it).
void add_runsc_platform_flag(CLI::App* cmd, std::optional<std::string>& platform) {
  cmd->add_option("--runsc-platform", platform,
                  "container (runsc): the gVisor platform, one `runsc help platforms` lists "
                  "(default ptrace, or $CORDON_RUNSC_PLATFORM)")
      ->type_name("NAME");
}

// A backend's own settings (cordon/backend_options.h), for every command that creates
// backends: run, plan, prompt, audit, mcp. Each wins over the plugin's environment
// variable (CORDON_NAMESPACE_POOL_SIZE, CORDON_CONTAINER_POOL_SIZE, CORDON_CONTAINER_ENGINE,
// CORDON_CONTAINER_IMAGE), which stays the fallback. A backend without the setting ignores
// it; one that cannot honour the value refuses it, and the command fails with the reason.
void add_backend_option_flags(CLI::App* cmd, BackendOptions& options,
                              EnvironmentFlags& environment) {
  auto* named = cmd->add_option("--environment", environment.name,
                                "Run in this stored environment (cordon environment list; "
                                "namespace, container; default host)")
                    ->type_name("NAME");
  cmd->add_option("--rootfs", environment.rootfs,
                  "Run in this directory's /usr, /bin, /lib* (unregistered: hashed first)")
      ->type_name("DIR")
      ->excludes(named);
  cmd->add_option("--pool-size", options.pool_size,
                  "Sandboxes the backend builds ahead of time N (namespace, container; "
                  "default 0 for run, plan, prompt and audit, 2 for mcp)")
      ->type_name("N")
      ->check([](const std::string& value) -> std::string {
        const bool digits =
            !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
        return digits ? "" : "a whole number, 0 or more (got '" + value + "')";
      });
  cmd->add_option("--engine", options.engine,
                  "container: run through this engine (podman or docker) with --image")
      ->type_name("NAME");
  cmd->add_option("--image", options.image, "container: the engine's image (with --engine)")
      ->type_name("REF");
  cmd->add_option("--runtime", options.runtime, "container: the OCI runtime (default runc)")
      ->type_name("NAME");
  add_runsc_platform_flag(cmd, options.runsc_platform);
  cmd->add_option("--prestart", options.prestart,
                  "namespace: pooled sandboxes hold these interpreters started ahead "
                  "(python, sh, python,sh or none)")
      ->type_name("LANG");
}

// The network allow-list of a run (run, plan), of the runs a description states (prompt, mcp,
// run --tool-call) and of the runs an audit attacks (audit): the same four flags everywhere.
// Repeatable options take one value per occurrence (allow_extra_args(false)).
void add_network_flags(CLI::App* cmd, NetworkFlags& flags) {
  cmd->add_option("--allow-net", flags.allow,
                  "Let the code reach DOMAIN, *.DOMAIN (subdomains), HOST:PORT, an address or a "
                  "CIDR through cordon's proxy; names without a port: 80 and 443 (repeatable; "
                  "default: no network)")
      ->type_name("ENTRY")
      ->allow_extra_args(false);
  cmd->add_option("--deny-net", flags.deny,
                  "Never let the code reach ENTRY, even when --allow-net covers it (repeatable)")
      ->type_name("ENTRY")
      ->allow_extra_args(false);
  cmd->add_option("--net-max-bytes", flags.max_bytes,
                  "Most bytes in and out through the proxy over a run SIZE")
      ->type_name("SIZE");
  cmd->add_option("--net-max-connections", flags.max_connections,
                  "Most connections through the proxy over a run N")
      ->type_name("N");
}

// The options `cordon run` and `cordon plan` share: a plan is of the run they describe.
// Repeatable options take one value per occurrence (allow_extra_args(false)): CLI11's
// default for vectors would swallow the FILE positional that follows `--file x`.
void add_run_options(CLI::App* run, RunOptions& options) {
  run->add_option("-b,--backend", options.backend,
                  "Backend name, or auto: the most isolating available (default auto)")
      ->type_name("NAME|auto")
      ->transform(drop_glued_equals);
  run->add_option("-t,--timeout", options.timeout,
                  "Wall-clock limit DUR, at least 1ms (default 5s; 0 or negative: the default)")
      ->type_name("DUR")
      ->transform(drop_glued_equals);
  run->add_option(
         "-l,--language", options.language,
         "sh, bash, python, javascript (node) or perl (default: from FILE's extension, else sh)")
      ->type_name("LANG")
      ->transform(drop_glued_equals);
  run->add_option("--memory", options.memory, "Memory limit SIZE")->type_name("SIZE");
  run->add_option("--processes", options.processes, "Most processes at once N")->type_name("N");
  run->add_option("--cpu", options.cpu, "CPU time limit DUR")->type_name("DUR");
  run->add_option("--output-cap", options.output_cap, "Bytes kept per stream SIZE (default 1M)")
      ->type_name("SIZE");
  run->add_option("-c,--code", options.code, "The code to run")->type_name("CODE");
  run->add_option("source", options.source, "FILE holding the code, or - to read it from stdin")
      ->type_name("FILE|-");
  run->add_option("--file", options.files,
                  "Input file LOCAL[:NAME] placed in the working directory (repeatable)")
      ->type_name("LOCAL[:NAME]")
      ->allow_extra_args(false);
  run->add_option("--collect", options.collect,
                  "Collect files matching GLOB after the run (repeatable)")
      ->type_name("GLOB")
      ->allow_extra_args(false);
  run->add_option("--artifacts-dir", options.artifacts_dir, "Write collected artifacts to DIR")
      ->type_name("DIR");
  run->add_option("--stdin-file", options.stdin_file, "Feed FILE to the code's stdin")
      ->type_name("FILE");
  run->add_option("--max-input-size", options.max_input_size,
                  "Largest --file or --stdin-file SIZE (default 16M)")
      ->type_name("SIZE");
  run->add_option("--env", options.env, "Set NAME=VALUE for the code (repeatable)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  add_network_flags(run, options.network);
  run->add_option("--tool-description", options.tool_description,
                  "Record the tool description the code came from (see cordon prompt)")
      ->type_name("ID@VERSION");
  run->add_flag("--json", options.json, "Print one JSON object on stdout (the result or the plan)");
  run->add_flag("--allow-unisolated", options.allow_unisolated,
                "Let auto pick a backend that does not isolate");
  add_backend_option_flags(run, options.backend_options, options.environment);
}

CLI::App* add_run_command(CLI::App& app, RunOptions& options) {
  CLI::App* run = app.add_subcommand("run", "Run code in a sandbox behind a timeout");
  run->footer(kRunFooter);
  add_run_options(run, options);
  run->add_flag("--dry-run", options.dry_run,
                "Print the plan the run would apply (as 'cordon plan') and run nothing");
  run->add_flag("--no-history", options.no_history,
                "Do not record the run in the history (also CORDON_NO_HISTORY=1)");
  run->add_flag("--tool-call", options.tool_call,
                "FILE or - (the default) holds a run_code call's JSON arguments as a model "
                "wrote them: validate, run, print the MCP tool result (as 'cordon mcp')");
  run->add_flag("--unverified", options.unverified,
                "With --tool-call: render unproven claims marked (as 'cordon prompt')");
  run->add_flag("--no-audit", options.no_audit,
                "With --tool-call: never run an audit (as 'cordon prompt')");
  return run;
}

CLI::App* add_plan_command(CLI::App& app, RunOptions& options) {
  CLI::App* plan = app.add_subcommand(
      "plan", "Print the sandbox plan a run would apply (namespaces, mounts, seccomp, limits)");
  plan->footer(kPlanFooter);
  add_run_options(plan, options);
  return plan;
}

CLI::App* add_backends_command(CLI::App& app, BackendsOptions& options) {
  CLI::App* backends =
      app.add_subcommand("backends", "List backend plugins, availability and capabilities");
  backends->add_flag("--json", options.json, "Print one JSON object on stdout");
  backends
      ->add_flag("--markdown", options.markdown,
                 "Print the claims of each available backend as Markdown tables (the "
                 "generated section of docs/THREAT_MODEL.md)")
      ->excludes("--json");
  add_runsc_platform_flag(backends, options.backend_options.runsc_platform);
  return backends;
}

constexpr const char* kEnvironmentFooter = R"(
An environment is a directory tree (a debootstrap tree, an image's root filesystem) whose /usr,
/bin, /lib*, /etc/ld.so.cache and /etc/alternatives the namespace and container backends
show read-only, nosuid, nodev instead of the host's. 'add' copies it into cordon's store
($CORDON_ENVIRONMENTS_DIR, else /var/lib/cordon/environments for root, else
$XDG_DATA_HOME/cordon/environments), pins it by a content digest (sha256 over the sorted
manifest of paths, modes and contents) and measures what is inside (interpreter versions in
a sandbox on it, Python packages from its own metadata, common tools): the tool description
states that inventory. Runs name one with --environment NAME; --rootfs DIR runs in an
unregistered directory, hashed when used. scripts/build-environment.sh builds one from
Debian packages. 'add NAME IMAGE' reads an image podman already holds (podman image mount,
as root; nothing is pulled). The default, 'host', is the host's own /usr.)";

CLI::App* add_environment_command(CLI::App& app, EnvironmentOptions& options) {
  CLI::App* cmd = app.add_subcommand("environment", "Add, list and remove environments");
  cmd->footer(kEnvironmentFooter);
  cmd->require_subcommand(1);
  CLI::App* add = cmd->add_subcommand(
      "add", "Copy DIR (or IMAGE's root filesystem) into the store as NAME, pinned and measured");
  add->add_option("name", options.name, "Environment name")->required()->type_name("NAME");
  add->add_option("source", options.source,
                  "Directory tree to copy, or an image podman holds (nothing is pulled)")
      ->required()
      ->type_name("DIR|IMAGE");
  add->callback([&options] { options.action = EnvironmentOptions::Action::kAdd; });
  CLI::App* list = cmd->add_subcommand("list", "List the environments and their inventories");
  list->add_flag("--json", options.json, "Print one JSON array on stdout");
  list->callback([&options] { options.action = EnvironmentOptions::Action::kList; });
  CLI::App* rm = cmd->add_subcommand("rm", "Forget NAME and remove its copy");
  rm->add_option("name", options.name, "Environment name")->required()->type_name("NAME");
  rm->callback([&options] { options.action = EnvironmentOptions::Action::kRemove; });
  return cmd;
}

constexpr const char* kAuditFooter = R"(
Runs the escape catalogue against a backend, judged from the host (listeners, canaries,
process table, disk). Attempts that would act on this host run only where the backend
claims to stop them ("skipped: would act on this host" otherwise). A complete audit is
stored for 'cordon prompt' under $CORDON_AUDIT_DIR, else $XDG_STATE_HOME/cordon/audit.
Exit status: 0 every claim held; 1 an attempt ESCAPED a backend claiming to stop it;
2 an attempt on a claimed aspect could not be judged; 125 cordon failed.)";

constexpr const char* kPromptFooter = R"(
Prints the tool definition for a backend, stating only what the stored audit report for
this backend, host and policy proves (auditing first when there is none). A claim an
attempt contradicts is refused; --unverified renders unproven claims marked as such.
Formats: text, openai, openai-responses, anthropic, mcp. An agent that runs the code the
model wrote passes --tool-description ID@VERSION to 'cordon run' (or sets it in the request)
so each result records the description it ran under.)";

CLI::App* add_audit_command(CLI::App& app, AuditCommandOptions& options) {
  CLI::App* cmd = app.add_subcommand("audit", "Run escape and abuse attempts against a backend");
  cmd->footer(kAuditFooter);
  auto* backend = cmd->add_option("-b,--backend", options.backend,
                                  "Backend to audit (default: the most isolating available)")
                      ->type_name("NAME")
                      ->transform(drop_glued_equals);
  cmd->add_flag("--all", options.all, "Audit every available backend, side by side")
      ->excludes(backend);
  cmd->add_flag("--json", options.json, "Print the reports as one JSON object");
  cmd->add_option("--only", options.only, "Only these attempts (not stored)")->type_name("ID,...");
  cmd->add_flag("--no-store", options.no_store, "Do not store the report");
  add_network_flags(cmd, options.network);
  add_backend_option_flags(cmd, options.backend_options, options.environment);
  return cmd;
}

// The backend and limits a rendered tool states, for the commands that render one:
// `cordon prompt` prints it, `cordon mcp` serves it.
void add_tool_limit_flags(CLI::App* cmd, std::string& backend, std::optional<std::string>& timeout,
                          const std::string& timeout_help, std::optional<std::string>& memory,
                          std::optional<std::string>& processes) {
  cmd->add_option("-b,--backend", backend, "Backend name, or auto (default)")
      ->type_name("NAME|auto")
      ->transform(drop_glued_equals);
  cmd->add_option("-t,--timeout", timeout, timeout_help)
      ->type_name("DUR")
      ->transform(drop_glued_equals);
  cmd->add_option("--memory", memory, "Memory limit SIZE")->type_name("SIZE");
  cmd->add_option("--processes", processes, "Most processes at once N")->type_name("N");
}

CLI::App* add_prompt_command(CLI::App& app, PromptOptions& options, NetworkFlags& network,
                             EnvironmentFlags& environment) {
  CLI::App* cmd = app.add_subcommand("prompt", "Print the run_code tool description for a backend");
  cmd->footer(kPromptFooter);
  add_tool_limit_flags(cmd, options.backend, options.timeout, "Wall-clock limit DUR (default 5s)",
                       options.memory, options.processes);
  cmd->add_option("--version", options.version, "Template version (default: the latest)")
      ->type_name("N");
  cmd->add_option("--id", options.id, "Template id (default run_code)")->type_name("ID");
  cmd->add_option("-f,--format", options.format,
                  "text, openai, openai-responses, anthropic or mcp (default text)")
      ->type_name("FORMAT")
      ->transform(drop_glued_equals);
  cmd->add_flag("--unverified", options.unverified, "Render unproven claims, marked as such");
  cmd->add_flag("--no-audit", options.no_audit, "Never run an audit (claims stay unproven)");
  cmd->add_flag("--sessions", options.with_sessions,
                "As cordon mcp serves it with sessions (run_code's session, the session tools)");
  add_network_flags(cmd, network);
  add_backend_option_flags(cmd, options.backend_options, environment);
  return cmd;
}

constexpr const char* kMcpFooter = R"(
Serves the run_code tool to MCP clients (Model Context Protocol, JSON-RPC 2.0): over stdio
(one message per line; stdout carries protocol only, diagnostics go to stderr) or, with
--http ADDR:PORT, over Streamable HTTP at /mcp with a bearer token. tools/list gives exactly
what 'cordon prompt --format mcp' prints for the same backend, limits and audit choice;
-t is the default and the largest timeout a call may ask for. A backend that does not
isolate is served only with --allow-unisolated.
Defaults: --max-concurrent the number of CPUs; --max-queue 64 (past it a call gets a "busy"
error result at once); --pool-size 2 (warm sandboxes, namespace and container);
--prestart python,sh (namespace: a pool for each whose sandboxes hold python, or sh, already
started);
--max-body 4M (an HTTP body or a stdio line); --session-idle 30m.
Sandbox sessions (where the backend holds them; a trial session at start decides): tools
session_open, session_reset, session_close, session_files, session_read_file and
session_write_file, and run_code's `session`; each belongs to the MCP session that opened it
(and, over HTTP, to its token) and ends with it. --max-sessions 32 (0: none), --sandbox-idle
10m, --sandbox-max-age 1h.
Every call is recorded in the history with source "mcp" and the client's name, after its
response is sent (--no-history or CORDON_NO_HISTORY=1: none).
Ends at the end of stdin or on SIGINT/SIGTERM, cancelling every call still running.)";

CLI::App* add_mcp_command(CLI::App& app, McpOptions& options) {
  CLI::App* cmd = app.add_subcommand("mcp", "Serve the run_code tool over MCP (stdio or HTTP)");
  cmd->footer(kMcpFooter);
  RunOptions& run = options.service.run;
  add_tool_limit_flags(cmd, run.backend, run.timeout,
                       "Default and largest timeout of a call DUR (5s)", run.memory, run.processes);
  cmd->add_option("--cpu", run.cpu, "CPU time limit DUR")->type_name("DUR");
  cmd->add_option("--output-cap", run.output_cap, "Bytes kept per stream SIZE (default 1M)")
      ->type_name("SIZE");
  cmd->add_option("--env", run.env, "Set NAME=VALUE for every call's code (repeatable)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--tool-description", run.tool_description,
                  "Record this description in each result (default: the served tool's)")
      ->type_name("ID@VERSION");
  cmd->add_flag("--allow-unisolated", run.allow_unisolated,
                "Serve a backend that does not isolate");
  cmd->add_flag("--no-history", run.no_history, "Do not record calls in the history");
  cmd->add_flag("--unverified", options.service.unverified,
                "Render unproven claims, marked as such");
  cmd->add_flag("--no-audit", options.service.no_audit,
                "Never run an audit (claims stay unproven)");
  cmd->add_option("--max-input-size", run.max_input_size,
                  "Largest inline input file of a call SIZE (default 16M)")
      ->type_name("SIZE");
  add_network_flags(cmd, run.network);
  add_backend_option_flags(cmd, run.backend_options, run.environment);
  cmd->add_option("--max-concurrent", options.max_concurrent,
                  "Calls running at once N (default: the number of CPUs)")
      ->type_name("N");
  cmd->add_option("--max-queue", options.max_queue, "Calls waiting at most N (default 64)")
      ->type_name("N");
  cmd->add_option("--http", options.http, "Serve Streamable HTTP on ADDR:PORT (port 0: any)")
      ->type_name("ADDR:PORT");
  cmd->add_option("--token-file", options.token_file,
                  "Bearer token file: its token, or one generated and written there (0600)")
      ->type_name("PATH");
  cmd->add_option("--token", options.token, "Bearer token for HTTP")->type_name("TOKEN");
  cmd->add_option("--allowed-origin", options.allowed_origins,
                  "Accept this Origin too (repeatable)")
      ->type_name("ORIGIN")
      ->allow_extra_args(false);
  cmd->add_option("--session-idle", options.session_idle,
                  "HTTP sessions expire after DUR idle (default 30m)")
      ->type_name("DUR");
  cmd->add_option("--max-body", options.max_body,
                  "Largest HTTP body or stdio line SIZE (default 4M)")
      ->type_name("SIZE");
  cmd->add_option("--max-sessions", options.max_sessions,
                  "Sandbox sessions open at once N, server-wide (default 32; 0: none)")
      ->type_name("N");
  cmd->add_option("--sandbox-idle", options.sandbox_idle,
                  "A sandbox session ends after DUR without a call (default 10m)")
      ->type_name("DUR");
  cmd->add_option("--sandbox-max-age", options.sandbox_max_age,
                  "A sandbox session ends DUR after it was opened (default 1h)")
      ->type_name("DUR");
  return cmd;
}

// `cordon session`: its verbs, each with the options it reads (session_command.h).
CLI::App* add_session_command(CLI::App& app, SessionCommandOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "session", "Keep a sandbox across calls: files, and a python interpreter's variables");
  cmd->require_subcommand(1);
  cmd->footer(
      "A session is held by a small process of its own, reachable only by your user on a "
      "socket under $XDG_RUNTIME_DIR/cordon-sessions (else /tmp/cordon-sessions-UID). It ends "
      "on 'stop', after --idle (default 10m) or at --max-age (default 1h); a call that times "
      "out restarts the interpreter and keeps the files.");
  RunOptions& run = options.run;
  CLI::App* start = cmd->add_subcommand("start", "Open a session; prints its id");
  start->add_option("-b,--backend", run.backend, "Backend name, or auto (default auto)")
      ->type_name("NAME|auto");
  start->add_option("-l,--language", run.language, "The session's language (default sh)")
      ->type_name("LANG");
  start->add_option("-t,--timeout", run.timeout, "Each call's default wall-clock limit DUR")
      ->type_name("DUR");
  start->add_option("--memory", run.memory, "Memory limit SIZE of the whole session")
      ->type_name("SIZE");
  start->add_option("--processes", run.processes, "Most processes at once N, whole session")
      ->type_name("N");
  start->add_option("--output-cap", run.output_cap, "Bytes kept per stream of each call SIZE")
      ->type_name("SIZE");
  start->add_option("--env", run.env, "Set NAME=VALUE for the code (repeatable)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  add_network_flags(start, run.network);
  start->add_option("--idle", options.idle, "End after DUR without a call (default 10m)")
      ->type_name("DUR");
  start->add_option("--max-age", options.max_age, "End DUR after the start (default 1h)")
      ->type_name("DUR");
  start->add_option("--workspace", options.workspace, "The workspace's size SIZE (default 256M)")
      ->type_name("SIZE");
  start->add_flag("--allow-unisolated", run.allow_unisolated,
                  "Let auto pick a backend that does not isolate");
  start->add_flag("--json", run.json, "Print {id, backend} as JSON");
  add_backend_option_flags(start, run.backend_options, run.environment);
  start->callback([&options] { options.verb = SessionVerb::kStart; });

  CLI::App* call = cmd->add_subcommand("run", "Run code in session ID");
  call->add_option("id", options.id, "The session's id")->required()->type_name("ID");
  call->add_option("source", run.source, "FILE holding the code, or - to read it from stdin")
      ->type_name("FILE|-");
  call->add_option("-c,--code", run.code, "The code to run")->type_name("CODE");
  call->add_option("-l,--language", run.language, "This call's language (default: the session's)")
      ->type_name("LANG");
  call->add_option("-t,--timeout", run.timeout, "This call's wall-clock limit DUR")
      ->type_name("DUR");
  call->add_option("--stdin-file", run.stdin_file, "Feed FILE to the code's stdin")
      ->type_name("FILE");
  call->add_option("--output-cap", run.output_cap, "Bytes kept per stream SIZE")->type_name("SIZE");
  call->add_flag("--json", run.json, "Print the result as one JSON object");
  call->callback([&options] { options.verb = SessionVerb::kRun; });

  CLI::App* ls = cmd->add_subcommand("ls", "List your sessions: age, idle time, calls, memory");
  ls->add_flag("--json", run.json, "Print {sessions: [...]} as JSON");
  ls->callback([&options] { options.verb = SessionVerb::kList; });

  CLI::App* cp = cmd->add_subcommand(
      "cp", "Copy a file into or out of a session's workspace (one side is ID:PATH)");
  cp->add_option("src", options.from, "ID:PATH or a local FILE (- for stdin)")
      ->required()
      ->type_name("SRC");
  cp->add_option("dst", options.to, "ID:PATH or a local FILE")->required()->type_name("DST");
  cp->callback([&options] { options.verb = SessionVerb::kCopy; });

  CLI::App* reset = cmd->add_subcommand("reset", "A fresh interpreter in session ID, files kept");
  reset->add_option("id", options.id, "The session's id")->required()->type_name("ID");
  reset->callback([&options] { options.verb = SessionVerb::kReset; });

  CLI::App* stop = cmd->add_subcommand("stop", "End session ID: everything in it is gone");
  stop->add_option("id", options.id, "The session's id")->required()->type_name("ID");
  stop->callback([&options] { options.verb = SessionVerb::kStop; });
  return cmd;
}

// Whether the user asked for JSON, looked up before parsing so that a parse error can
// still be reported as JSON.
bool wants_json(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") return false;
    if (arg == "--json") return true;
  }
  return false;
}

}  // namespace

CommandLine parse_command_line(int argc, char** argv) {
  CLI::App app{"cordon: run untrusted code in a sandbox behind a timeout, and say why it stopped"};
  app.set_version_flag("--version", CORDON_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit status of 'cordon run': see 'cordon run --help'; 125 means cordon itself failed.");

  CommandLine line;
  CLI::App* run = add_run_command(app, line.run);
  CLI::App* plan = add_plan_command(app, line.run);
  CLI::App* backends = add_backends_command(app, line.backends);
  CLI::App* audit = add_audit_command(app, line.audit);
  CLI::App* prompt =
      add_prompt_command(app, line.prompt, line.prompt_network, line.prompt_environment);
  CLI::App* mcp = add_mcp_command(app, line.mcp);
  CLI::App* environment = add_environment_command(app, line.environment);
  CLI::App* session = add_session_command(app, line.session);

  const bool json = wants_json(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version: printed by exit()
    line.exit_status = app.exit(e);
    return line;
  } catch (const CLI::ParseError& e) {
    line.exit_status =
        report_failure(std::string(e.what()) + (json ? "" : " (see cordon --help)"), json);
    return line;
  }
  if (run->parsed()) line.command = Command::kRun;
  if (plan->parsed()) line.command = Command::kPlan;
  if (backends->parsed()) line.command = Command::kBackends;
  if (audit->parsed()) line.command = Command::kAudit;
  if (prompt->parsed()) line.command = Command::kPrompt;
  if (mcp->parsed()) line.command = Command::kMcp;
  if (environment->parsed()) line.command = Command::kEnvironment;
  if (session->parsed()) line.command = Command::kSession;
  return line;
}

}  // namespace cordon::cli
