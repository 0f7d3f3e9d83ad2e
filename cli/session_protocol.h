// What `cordon session` says to a session's holder process over its private socket
// (session_holder.h): one request and one answer per connection, each a frame of a 4-byte
// little-endian length and that many bytes of JSON. A frame is read with a bound on its
// size (kMaxSessionFrameBytes) and a deadline, so neither side trusts the other's length;
// the holder also checks its peer's uid (SO_PEERCRED) before it reads anything.
//
// Requests: {"op": "run", "request": <plugin_wire request>} answered by {"result": <result
// JSON>}; {"op": "info"} by {"info": {...}} (id, backend, language, environment, started,
// last call, and the session's stats); "reset", "stats", "list", "read", "write" as the
// plugin boundary's session calls (session_wire.h), answered {"ok": ...} or {"error": ...};
// "stop" ends the session and the holder. Fuzz target: session_holder.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/error.h"

namespace cordon::cli {

// The largest frame either side reads: a request carries the code (at most 1 MiB) or a
// file for the workspace, an answer a result (two 1 MiB streams by default, as base64 too)
// or a file read back.
inline constexpr std::uint32_t kMaxSessionFrameBytes = 64U << 20;

enum class HolderOp { kRun, kInfo, kReset, kStats, kList, kRead, kWrite, kStop };

[[nodiscard]] std::string encode_frame(const nlohmann::json& message);

// Reads frames from bytes as they come: feed() takes what was read and returns a whole
// message once its frame is complete (the bytes after it are left unread), an error for a
// length over the bound or bytes that are not JSON, else nullopt (more is needed). It never
// holds more than the bound.
class FrameReader {
 public:
  explicit FrameReader(std::uint32_t max_bytes = kMaxSessionFrameBytes) : max_(max_bytes) {}
  [[nodiscard]] Result<std::optional<nlohmann::json>> feed(std::string_view bytes,
                                                           std::size_t* used);

 private:
  std::uint32_t max_;
  std::string header_;
  std::optional<std::uint32_t> length_;
  std::string body_;
};

// One frame from `fd` (a blocking or non-blocking socket) by `until`: kTimeout past it, an
// error on EOF before a whole frame.
[[nodiscard]] Result<nlohmann::json> read_frame(int fd, std::chrono::steady_clock::time_point until,
                                                std::uint32_t max_bytes = kMaxSessionFrameBytes);
// Writes one frame (MSG_NOSIGNAL: a peer gone is an error, never SIGPIPE), by `until`.
[[nodiscard]] Status write_frame(int fd, const nlohmann::json& message,
                                 std::chrono::steady_clock::time_point until);

// Milliseconds from now until `until` for poll(): 0 once it passed, never negative.
[[nodiscard]] int poll_ms_until(std::chrono::steady_clock::time_point until);

// A request's op, checked: an object with a known "op" (the members each op reads are
// checked where they are read).
[[nodiscard]] Result<HolderOp> holder_op(const nlohmann::json& request);

}  // namespace cordon::cli
