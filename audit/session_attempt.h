// Cross-session attempts (issue #41): from one session of a backend, reach another session
// of the same backend. The victim session's call (the attempt's peer code) plants a secret
// in its workspace, /tmp and /dev/shm, a marked child process holding it in its
// environment, abstract and path unix listeners that hand it out, and a SysV segment
// holding it; it reports on its stdout, as it happens, anything done to them. While it runs,
// the attacker session's call runs the probe. The host then ends the victim's call and
// reads the victim's workspace file through the session, not through the sandbox.
//
// The positive control runs the same probe and peer in ONE session (a python wrapper starts
// the peer as its child, then runs the probe): there the probe must reach what the peer
// planted, or a BLOCKED across sessions proves nothing. It is harmless anywhere sessions
// are held: it acts only on its own sandbox.
#pragma once

#include <string>

#include "cordon/backend.h"
#include "cordon/error.h"
#include "cordon/request.h"
#include "cordon/result.h"

namespace cordon::audit {

// What a cross-session attempt leaves for its judge.
struct SessionRuns {
  RunResult attack;              // the probe's call
  std::string peer_output;       // the victim call's stdout (its "ok" and "touched:" lines)
  bool peer_ended = false;       // the victim's call ended before the host ended it
  bool peer_file_intact = true;  // the victim's workspace file still holds the secret
};

// What both runs are made of: the attempt's filled code and its victim's.
struct SessionAttack {
  RunRequest base;             // language, timeout, limits and allow-list of the probe's call
  NetworkAccess peer_network;  // the victim's allow-list (its session's, for the control too)
  std::string peer_code;       // the victim's call, placeholders filled
  std::string probe_code;      // the attacker's call, placeholders filled
  std::string mark;            // {{session_mark}}: the victim's file in its workspace
  std::string secret;          // {{secret}}: what that file holds
};

// Across two sessions. Fails (kUnavailable, the backend's reason) when `backend` holds no
// sessions with these options.
[[nodiscard]] Result<SessionRuns> run_across_sessions(Backend& backend, const SessionAttack& a);

// The positive control: peer and probe in one session.
[[nodiscard]] Result<SessionRuns> run_in_one_session(Backend& backend, const SessionAttack& a);

}  // namespace cordon::audit
