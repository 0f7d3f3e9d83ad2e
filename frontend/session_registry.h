// The sessions a front end holds (issue #41): the MCP server (stdio and HTTP), the CLI's
// per-session holder and the inspector keep their BackendSessions here, whatever backend
// opened them.
//
// - Ids are 128 random bits (getrandom) as 32 hex characters.
// - Every session belongs to an owner, an opaque string the front end supplies (an MCP
//   session id, a hash of an HTTP token, a uid). Every operation takes the caller's owner,
//   and another owner's session is answered exactly as an unknown id ("no such session"),
//   so ids cannot be probed.
// - At most `max_sessions` are live; over it a new one is refused, nobody's is evicted.
// - One call at a time per session (BackendSession is not used by two threads at once):
//   later calls wait in a bounded queue; over it they are refused as busy. A waiting call
//   whose cancel token fires leaves the queue.
// - An idle timeout and a maximum age, enforced by one thread that sleeps until the next
//   expiry. A session is not expired while a call runs in it: it ends when the call returns.
// - A session that ended is remembered (bounded) so that its owner's later call with its id
//   says why ("session 3f2a… ended after 10 min idle"), not just "no such session".
// - The registry's destructor closes every session.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cordon/backend.h"
#include "cordon/cancel.h"
#include "cordon/error.h"
#include "cordon/observer.h"
#include "cordon/request.h"
#include "cordon/result.h"
#include "cordon/session.h"
#include "frontend/session_info.h"

namespace cordon::frontend {

struct SessionRegistryOptions {
  std::size_t max_sessions = 32;  // live sessions, server-wide (--max-sessions)
  std::size_t max_waiting = 4;    // calls queued behind the running one, per session
  std::chrono::milliseconds idle_timeout = std::chrono::minutes(10);
  std::chrono::milliseconds max_age = std::chrono::hours(1);
  std::size_t ended_remembered = 256;           // ended sessions whose end is reported
  std::uint64_t max_read_bytes = 16ULL << 20;   // a workspace file read, at most
  std::uint64_t max_write_bytes = 16ULL << 20;  // a workspace file written, at most
};

// Why a session ended.
enum class SessionEnd {
  kClosed,     // close()
  kIdle,       // idle_timeout without a call
  kMaxAge,     // max_age since it was opened
  kOwnerGone,  // close_owner(): the MCP session or connection ended
  kKilled,     // the registry shut down
  kOom,        // its sandbox died with the memory limit's OOM killer at work
  kLost,       // its sandbox died otherwise (BackendSession::loss())
};

class SessionRegistry {
 public:
  explicit SessionRegistry(SessionRegistryOptions options = {});
  SessionRegistry(const SessionRegistry&) = delete;
  SessionRegistry& operator=(const SessionRegistry&) = delete;
  // Closes every session (waiting for calls that run to return).
  ~SessionRegistry();

  // Opens a session on `backend` for `owner`: its id, or the backend's refusal, or the cap's.
  [[nodiscard]] Result<std::string> open(Backend& backend, const SessionOptions& options,
                                         std::string owner);

  // One call; sets RunResult::session {id, call index from 1}. An unknown, foreign, ended
  // or busy session, or a call cancelled while it waited, is an Error (nothing ran).
  [[nodiscard]] Result<RunResult> run(std::string_view id, std::string_view owner,
                                      const RunRequest& request, const CancelToken& cancel,
                                      RunObserver* observer);
  [[nodiscard]] Status reset(std::string_view id, std::string_view owner);
  [[nodiscard]] Status close(std::string_view id, std::string_view owner);
  // Closes every session of `owner` (its MCP session or connection ended).
  void close_owner(std::string_view owner);

  [[nodiscard]] std::vector<SessionInfo> list(std::string_view owner);
  // Whether `owner` has this live session; never touches the session (no turn taken).
  [[nodiscard]] bool holds(std::string_view id, std::string_view owner) const;
  [[nodiscard]] Result<SessionInfo> stats(std::string_view id, std::string_view owner);

  // The workspace's files; paths relative, no "..": the backend checks them again.
  [[nodiscard]] Result<std::vector<WorkspaceEntry>> list_files(std::string_view id,
                                                               std::string_view owner,
                                                               std::string_view dir);
  // max_bytes is capped at the registry's max_read_bytes.
  [[nodiscard]] Result<std::string> read_file(std::string_view id, std::string_view owner,
                                              std::string_view path, std::uint64_t max_bytes);
  [[nodiscard]] Status write_file(std::string_view id, std::string_view owner,
                                  std::string_view path, std::string_view bytes);

  [[nodiscard]] const SessionRegistryOptions& options() const { return options_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry;
  struct Ended {
    std::string id;
    std::string owner;
    std::string message;
  };
  class Turn;

  [[nodiscard]] Result<std::shared_ptr<Entry>> find_locked(std::string_view id,
                                                           std::string_view owner) const;
  // Waits for the session's turn (bounded queue, cancellable); the Turn gives it back.
  [[nodiscard]] Result<Turn> take_turn(std::string_view id, std::string_view owner,
                                       const CancelToken& cancel);
  // used: the call counts as use (the idle clock restarts); a stats() look does not.
  void give_back(const std::shared_ptr<Entry>& entry, bool used);
  // Removes a live entry and records why; returns the BackendSession to destroy outside
  // the lock (null while a call runs: that call's thread destroys it).
  // `detail`: SessionLoss::words(), for kOom and kLost.
  [[nodiscard]] std::unique_ptr<BackendSession> end_locked(const std::shared_ptr<Entry>& entry,
                                                           SessionEnd why,
                                                           std::string_view detail = {});
  [[nodiscard]] static SessionInfo info_locked(const Entry& entry, Clock::time_point now);
  void expiry_loop();

  SessionRegistryOptions options_;
  mutable std::mutex mu_;
  std::condition_variable changed_;  // a turn given back, a session ended, shutdown
  std::condition_variable expiry_;   // the next expiry may be earlier, or shutdown
  std::map<std::string, std::shared_ptr<Entry>, std::less<>> live_;
  std::deque<Ended> ended_;
  std::size_t busy_ = 0;    // entries whose turn is taken
  std::size_t queued_ = 0;  // calls waiting for a turn, all sessions
  bool stopping_ = false;
  std::thread expirer_;
};

// "10 min", "1 h", "250 ms": a duration as a message shows it.
[[nodiscard]] std::string duration_text(std::chrono::milliseconds d);

}  // namespace cordon::frontend
