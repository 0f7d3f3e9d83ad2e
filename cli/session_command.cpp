#include "session_command.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "cli_error.h"
#include "cordon/plugin_wire.h"
#include "cordon/random_hex.h"
#include "cordon/result_json.h"
#include "cordon/session.h"
#include "cordon/session_wire.h"
#include "cordon/units.h"
#include "environment_command.h"
#include "frontend/backend_catalog.h"
#include "frontend/exit_status.h"
#include "frontend/history.h"
#include "frontend_names.h"
#include "request_builder.h"
#include "run_command.h"
#include "session_holder.h"
#include "session_protocol.h"

namespace cordon::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::seconds kAnswerBound{10};
// The largest file `cp` moves either way: its base64 fits a frame.
constexpr std::uint64_t kMaxCopyBytes = kMaxSessionFrameBytes / 2;

void print_json(const json& out) {
  std::fprintf(stdout, "%s\n",
               out.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace).c_str());
  std::fflush(stdout);
}

// A connection to session `id`'s holder, or why there is none: the reason it ended, when
// its holder left one; a holder that died is swept here (its socket removed).
Result<UniqueFd> connect_session(const std::string& id) {
  if (!valid_session_id(id)) {
    return fail(ErrorCode::kInvalidArgument,
                "'" + id +
                    "' is not a session id (32 hex digits, as 'cordon session start' "
                    "printed it)");
  }
  Result<fs::path> dir = session_dir();
  if (!dir) return std::unexpected(dir.error());
  const fs::path path = session_socket(*dir, id);
  Result<sockaddr_un> address = socket_address(path);
  if (!address) return std::unexpected(address.error());
  const sockaddr_un& addr = *address;
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return fail_errno("socket");
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) return fd;
  const int err = errno;
  if (err == ECONNREFUSED) {
    std::error_code ec;
    fs::remove(path, ec);
    std::ofstream(session_end_note(*dir, id)) << "ended: its holder process died\n";
    return fail(ErrorCode::kNotFound, "session " + id + " ended: its holder process died");
  }
  std::ifstream note(session_end_note(*dir, id));
  std::string why;
  if (note && std::getline(note, why) && !why.empty()) {
    return fail(ErrorCode::kNotFound, "session " + id + " " + why);
  }
  return fail(ErrorCode::kNotFound, "no such session " + id);
}

// One request to session `id` and its answer, within `bound` (a run: its timeout and more).
Result<json> ask(const std::string& id, const json& request, std::chrono::milliseconds bound) {
  Result<UniqueFd> fd = connect_session(id);
  if (!fd) return std::unexpected(fd.error());
  if (Status sent = write_frame(fd->get(), request, Clock::now() + kAnswerBound); !sent) {
    return std::unexpected(sent.error());
  }
  return read_frame(fd->get(), Clock::now() + bound);
}

// An answer's "ok" payload or its error, as the plugin boundary's session calls give them.
Result<json> ask_call(const std::string& id, const json& call) {
  Result<json> answer = ask(id, call, kAnswerBound);
  if (!answer) return std::unexpected(answer.error());
  return wire::session_answer(*answer);
}

int start(const SessionCommandOptions& o) {
  const bool as_json = o.run.json;
  RunOptions base = o.run;
  base.code = "";
  base.source.reset();
  Result<RunRequest> request = build_request(base);
  if (!request) return report_failure(request.error().describe(), as_json);
  HolderIdentity identity;
  SessionOptions options;
  for (const auto& [flag, text, out] : {std::tuple{"--idle", o.idle, &identity.idle},
                                        std::tuple{"--max-age", o.max_age, &identity.max_age}}) {
    if (!text) continue;
    Result<std::chrono::milliseconds> d = parse_duration(*text);
    if (!d || d->count() <= 0) {
      return report_failure(
          std::string(flag) + ": expected a positive duration, got '" + *text + "'", as_json);
    }
    *out = *d;
  }
  if (o.workspace) {
    Result<std::uint64_t> size = parse_size(*o.workspace);
    if (!size || *size == 0) {
      return report_failure("--workspace: expected a size, got '" + *o.workspace + "'", as_json);
    }
    options.workspace_bytes = *size;
  }
  Result<fs::path> dir = session_dir();
  if (!dir) return report_failure(dir.error().describe(), as_json);
  Result<std::string> id = random_hex(16);
  if (!id) return report_failure(id.error().describe(), as_json);
  identity.id = *id;
  identity.language = std::string(to_string(request->language));

  // The holder is a grandchild in a session of its own (it outlives this call and no
  // terminal's signal reaches it); it opens the session itself, since a sandbox dies with
  // the thread that built it, and says over `ready` whether it could ("K"), or why not.
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0)
    return report_failure("pipe: " + std::string(std::strerror(errno)), as_json);
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) return report_failure("fork: " + std::string(std::strerror(errno)), as_json);
  if (child == 0) {
    ::close(ready[0]);
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
    UniqueFd said(ready[1]);
    const auto refuse = [&](const std::string& why) {
      const std::string msg = "E" + why;
      (void)!::write(said.get(), msg.data(), msg.size());
      return kExitCordonFailed;
    };
    BackendOptions backend_options = o.run.backend_options;
    Result<environment::Selection> env = apply_environment(o.run.environment, backend_options);
    if (!env) return refuse(env.error().describe());
    request->environment = environment_ref(*env);
    identity.environment = request->environment ? request->environment->name : "";
    const BackendCatalog catalog(request->limits, o.run.backend, backend_options);
    const Result<BackendChoice> choice = choose_from(
        catalog, request->limits, o.run.backend, o.run.allow_unisolated, request->network.any());
    if (!choice) return refuse(choice.error().message);
    Backend* backend = catalog.backend(choice->name);
    if (backend == nullptr) return refuse("backend vanished: " + choice->name);
    if (Status s = check_limits_for(*backend, *request); !s) return refuse(s.error().describe());
    if (Status s = backend->prepare(); !s) return refuse(s.error().describe());
    identity.backend = backend_label(std::string(backend->name()), backend->variant());
    options.base = *request;
    Result<std::unique_ptr<BackendSession>> session = backend->open_session(options);
    if (!session) return refuse(session.error().describe());
    Result<UniqueFd> listener = listen_at(session_socket(*dir, identity.id));
    if (!listener) return refuse(listener.error().describe());
    const std::string ok = "K" + identity.backend;
    (void)!::write(said.get(), ok.data(), ok.size());
    said.reset();
    serve_session(**session, identity, std::move(*listener), *dir);
    return 0;
  }
  ::close(ready[1]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  std::string said;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(ready[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    said.append(buf, static_cast<std::size_t>(n));
  }
  ::close(ready[0]);
  if (said.empty() || said[0] != 'K') {
    return report_failure("cannot start a session: " +
                              (said.size() > 1 ? said.substr(1) : std::string("its holder died")),
                          as_json);
  }
  if (as_json) {
    print_json(json{{"id", identity.id}, {"backend", said.substr(1)}});
  } else {
    std::fprintf(stdout, "%s\n", identity.id.c_str());
    std::fprintf(stderr, "cordon: session %s on %s; 'cordon session stop %s' ends it\n",
                 identity.id.c_str(), said.substr(1).c_str(), identity.id.c_str());
  }
  return 0;
}

int run(const SessionCommandOptions& o) {
  const bool as_json = o.run.json;
  Result<RunRequest> request = build_request(o.run);
  if (!request) return report_failure(request.error().describe(), as_json);
  // The run's own bound, its set-up and the answer's way back, with room to spare.
  const auto bound = effective_timeout(*request) + request->setup_bound + std::chrono::seconds(30);
  // Without -l (or a FILE whose extension names one), the call is in the session's language.
  const bool language_given =
      o.run.language.has_value() || (o.run.source && language_from_path(*o.run.source));
  const auto started = std::chrono::system_clock::now();
  Result<json> answer = ask(o.id,
                            json{{"op", "run"},
                                 {"request", wire::to_json(*request)},
                                 {"session_language", !language_given}},
                            std::chrono::duration_cast<std::chrono::milliseconds>(bound));
  if (!answer) return report_failure(answer.error().describe(), as_json);
  const auto member = answer->find("result");
  if (member == answer->end()) {
    Result<json> refused = wire::session_answer(*answer);
    return report_failure(
        refused ? "the session's holder answered no result" : refused.error().describe(), as_json);
  }
  Result<RunResult> result = result_from_json(*member);
  if (!result) return report_failure(result.error().describe(), as_json);
  if (!history::disabled_by_env()) {
    RunRequest asked = *request;
    asked.language =
        parse_language(answer->value("session_language", std::string())).value_or(asked.language);
    record_in_history(asked, *result, started);
  }
  if (as_json) {
    print_json(*member);
    return exit_status(*result);
  }
  std::fwrite(result->stdout_data.data(), 1, result->stdout_data.size(), stdout);
  if (result->value) std::fprintf(stdout, "%s\n", result->value->c_str());
  std::fflush(stdout);
  std::fwrite(result->stderr_data.data(), 1, result->stderr_data.size(), stderr);
  std::fprintf(stderr, "cordon: %s [session %s, call %lld]\n", status_line(*result).c_str(),
               o.id.c_str(), static_cast<long long>(result->session ? result->session->call : 0));
  if (result->state_lost) {
    std::fprintf(stderr, "cordon: %s\n", std::string(kStateLostWords).c_str());
  }
  return exit_status(*result);
}

std::string ago(std::int64_t epoch_ms) {
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  // Whole seconds: a listing's ages are not timings ("0 ms" for a fresh session misled).
  const std::int64_t ms = std::max<std::int64_t>(0, now - epoch_ms);
  if (ms < 1000) return "<1 s";
  return format_duration(std::chrono::milliseconds(ms / 1000 * 1000));
}

int list(const SessionCommandOptions& o) {
  Result<fs::path> dir = session_dir();
  if (!dir) return report_failure(dir.error().describe(), o.run.json);
  json sessions = json::array();
  std::error_code ec;
  const auto day_ago = fs::file_time_type::clock::now() - std::chrono::hours(24);
  for (const auto& entry : fs::directory_iterator(*dir, ec)) {
    const fs::path& path = entry.path();
    // The notes of sessions that ended a day ago are no longer asked for.
    if (path.extension() == ".ended" && entry.last_write_time(ec) < day_ago) {
      fs::remove(path, ec);
      continue;
    }
    if (path.extension() != ".sock" || !valid_session_id(path.stem().string())) continue;
    Result<json> info = ask(path.stem().string(), json{{"op", "info"}}, kAnswerBound);
    if (!info || !info->contains("info")) continue;  // ended meanwhile, or swept as dead
    sessions.push_back((*info)["info"]);
  }
  if (o.run.json) {
    print_json(json{{"sessions", sessions}});
    return 0;
  }
  if (sessions.empty()) {
    std::fprintf(stderr, "cordon: no sessions\n");
    return 0;
  }
  std::fprintf(stdout, "%-32s  %-18s  %-8s  %-8s  %-8s  %5s  %9s  %s\n", "ID", "BACKEND",
               "LANGUAGE", "AGE", "IDLE", "CALLS", "MEMORY", "ENVIRONMENT");
  for (const json& s : sessions) {
    const std::string memory = s["memory_kb"].is_number_integer()
                                   ? format_size(s["memory_kb"].get<std::uint64_t>() * 1024)
                                   : "-";
    const std::string env = s.value("environment", std::string());
    std::fprintf(
        stdout, "%-32s  %-18s  %-8s  %-8s  %-8s  %5lld  %9s  %s\n",
        s.value("id", std::string()).c_str(), s.value("backend", std::string()).c_str(),
        s.value("language", std::string()).c_str(),
        ago(s.value("started_ms", std::int64_t{0})).c_str(),
        // A call runs now: the figures are of before it.
        s.value("busy", false) ? "running" : ago(s.value("last_call_ms", std::int64_t{0})).c_str(),
        static_cast<long long>(s.value("calls", std::int64_t{0})), memory.c_str(),
        env.empty() ? "host" : env.c_str());
  }
  return 0;
}

// "ID:PATH" -> {ID, PATH}, when `spec` names a session's file.
std::optional<std::pair<std::string, std::string>> session_file(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos || !valid_session_id(spec.substr(0, colon))) return std::nullopt;
  return std::pair{spec.substr(0, colon), spec.substr(colon + 1)};
}

int copy(const SessionCommandOptions& o) {
  const bool as_json = o.run.json;
  const auto from = session_file(o.from);
  const auto to = session_file(o.to);
  if (from.has_value() == to.has_value()) {
    return report_failure("cp: exactly one of SRC and DST is ID:PATH in a session", as_json);
  }
  if (from) {
    Result<json> got = ask_call(from->first, wire::session_read_call(from->second, kMaxCopyBytes));
    if (!got) return report_failure(got.error().describe(), as_json);
    Result<std::string> bytes = wire::file_content_from_json(*got);
    if (!bytes) return report_failure(bytes.error().describe(), as_json);
    std::ofstream out(o.to, std::ios::binary | std::ios::trunc);
    out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
    if (!out) return report_failure("cp: cannot write " + o.to, as_json);
    return 0;
  }
  Result<std::string> bytes =
      read_source(o.from, /*stdin_fd=*/0, kMaxCopyBytes,
                  "cp: " + o.from + " is larger than " + format_size(kMaxCopyBytes));
  if (!bytes) return report_failure(bytes.error().describe(), as_json);
  Result<json> done = ask_call(to->first, wire::session_write_call(to->second, *bytes));
  if (!done) return report_failure(done.error().describe(), as_json);
  return 0;
}

int simple(const SessionCommandOptions& o, const json& call, const char* what) {
  Result<json> done =
      o.verb == SessionVerb::kStop ? ask(o.id, call, kAnswerBound) : ask_call(o.id, call);
  if (done && o.verb == SessionVerb::kStop) {
    done = wire::session_answer(*done);
  }
  if (!done) return report_failure(done.error().describe(), o.run.json);
  if (o.run.json) {
    print_json(json{{"id", o.id}, {"done", what}});
  } else {
    std::fprintf(stderr, "cordon: session %s %s\n", o.id.c_str(), what);
  }
  return 0;
}

}  // namespace

int session_command(const SessionCommandOptions& options) {
  switch (options.verb) {
    case SessionVerb::kStart:
      return start(options);
    case SessionVerb::kRun:
      return run(options);
    case SessionVerb::kList:
      return list(options);
    case SessionVerb::kCopy:
      return copy(options);
    case SessionVerb::kReset:
      return simple(options, wire::session_reset_call(), "reset: a fresh interpreter, files kept");
    case SessionVerb::kStop:
      return simple(options, json{{"op", "stop"}}, "stopped");
  }
  return kExitCordonFailed;
}

}  // namespace cordon::cli
