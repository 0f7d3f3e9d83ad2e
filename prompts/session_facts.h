// What a server's sessions (issue #41) are, as the session tools' descriptions state it:
// the front end's settings (the cap, the queue, the lifetimes, the file sizes) and what the
// backend showed it keeps (a python interpreter, or only files). Facts about the interface,
// not isolation claims: none of them says that something is stopped.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace cordon::prompts {

// The session tools' template ids (each also the tool's name), in the order they are listed.
inline constexpr std::array<std::string_view, 6> kSessionTools = {
    "session_open",  "session_reset",     "session_close",
    "session_files", "session_read_file", "session_write_file"};

struct SessionFacts {
  std::size_t max_sessions = 32;  // live sessions, server-wide
  std::size_t max_waiting = 4;    // calls queued behind the running one
  std::chrono::milliseconds idle_timeout = std::chrono::minutes(10);
  std::chrono::milliseconds max_age = std::chrono::hours(1);
  std::uint64_t workspace_bytes = 256ULL << 20;
  std::uint64_t max_read_bytes = 16ULL << 20;
  std::uint64_t max_write_bytes = 16ULL << 20;
  // A python call's variables were there for the next call of a trial session (the
  // backend keeps an interpreter): only then is it said that they persist.
  bool keeps_python = false;
};

// The session sentences ({{session_keeps}}, {{session_not_kept}}, {{session_queue}},
// {{session_lifetime}}, {{session_state_lost}}, {{session_reset}}, {{sessions}}: run_code's
// pointer to session_open), each a whole sentence or more.
[[nodiscard]] std::map<std::string, std::string> session_sentences(const SessionFacts& facts);
// The bare values a schema's descriptions name ({{max_sessions}}, {{session_idle}},
// {{session_max_age}}, {{workspace_size}}, {{max_read_size}}, {{max_write_size}}).
[[nodiscard]] std::map<std::string, std::string> session_values(const SessionFacts& facts);

}  // namespace cordon::prompts
