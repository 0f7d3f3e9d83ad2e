// `cordon session`'s holder: one small process per session, holding the session's sandbox
// across separate invocations of `cordon`, with no daemon to start by hand (issue #41).
// `cordon session start` forks it (session_command.cpp); it opens the session itself, since
// a sandbox dies with the process that built it (PR_SET_PDEATHSIG), and serves requests
// (session_protocol.h) on a socket in a private directory: $XDG_RUNTIME_DIR/cordon-sessions,
// else /tmp/cordon-sessions-UID, mode 0700 and refused when someone else owns it or may enter
// it; the socket 0600, and every peer's uid checked (SO_PEERCRED) before a byte is read.
// One call at a time: while one runs, `info` and `stop` are still answered at once (stop
// cancels the call), and other requests wait in a queue of 4, over it refused as busy. It
// ends on `stop`, after its idle time, at its maximum age, or when the session fails, writes
// why to <id>.ended beside the socket (so a later call hears "session 3f2a… ended after 10 min
// idle" instead of "no such session"), removes its socket, and exits. SIGKILLed, it takes its
// sandbox with it (the sandbox dies with its builder); the next `cordon session` call that
// finds its socket dead removes it.
#pragma once

#include <sys/un.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include "cordon/error.h"
#include "cordon/session.h"
#include "cordon/unique_fd.h"

namespace cordon::cli {

// What the holder says about its session (`cordon session ls`).
struct HolderIdentity {
  std::string id;           // 32 hex digits
  std::string backend;      // its label, "namespace", "container (runsc)"
  std::string language;     // the session's default language
  std::string environment;  // the environment's name, "" for none named
  std::chrono::milliseconds idle{std::chrono::minutes(10)};
  std::chrono::milliseconds max_age{std::chrono::hours(1)};
};

// The directory of this user's session sockets, made 0700 if missing; refused with the
// reason when it is not a directory of ours that only we may enter.
[[nodiscard]] Result<std::filesystem::path> session_dir();
// Whether `id` is a session id as `start` makes them (32 lower-case hex digits): anything
// else never becomes a path.
[[nodiscard]] bool valid_session_id(std::string_view id);
[[nodiscard]] std::filesystem::path session_socket(const std::filesystem::path& dir,
                                                   std::string_view id);
[[nodiscard]] std::filesystem::path session_end_note(const std::filesystem::path& dir,
                                                     std::string_view id);

// The unix socket address of `path`; refused when the path does not fit one.
[[nodiscard]] Result<sockaddr_un> socket_address(const std::filesystem::path& path);

// The listening socket at `path` (0600), before the session is announced.
[[nodiscard]] Result<UniqueFd> listen_at(const std::filesystem::path& path);

// Serves `session` on `listener` until it ends; then writes the end note, removes the
// socket and returns. The session is closed by the caller (its destructor).
void serve_session(BackendSession& session, const HolderIdentity& identity, UniqueFd listener,
                   const std::filesystem::path& dir);

}  // namespace cordon::cli
