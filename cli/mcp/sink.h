// Where an MCP session's outgoing messages go: the transport's side of the server.
// stdio has one Sink for the whole session (stdout, one message per line); Streamable
// HTTP has one per POST (its response: a JSON body or an SSE stream), which carries the
// responses to the requests of that POST and the notifications about them (progress).
#pragma once

#include <nlohmann/json.hpp>

namespace cordon::cli::mcp {

class Sink {
 public:
  virtual ~Sink() = default;
  // Sends one JSON-RPC message to the peer. Thread-safe: responses to calls are sent from
  // the worker that ran the call. Returns false once the peer is gone (closed pipe, dropped
  // connection): the session then cancels what it was doing for that peer.
  virtual bool send(const nlohmann::json& message) = 0;
};

}  // namespace cordon::cli::mcp
