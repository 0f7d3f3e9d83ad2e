// Where an MCP session's outgoing messages go: the transport's side of the server.
// stdio has one Sink for the whole session (stdout, one message per line); Streamable
// HTTP has one per POST (its response: a JSON body or an SSE stream), which carries the
// responses to the requests of that POST and the notifications about them (progress).
#pragma once

#include <nlohmann/json.hpp>

namespace cordon::cli::mcp {

// Whether an outgoing JSON-RPC message is a response (result or error with an id, no
// method) rather than a notification: what a transport counts against handle()'s total.
[[nodiscard]] inline bool is_response(const nlohmann::json& message) {
  return message.is_object() && message.contains("id") && !message.contains("method") &&
         (message.contains("result") || message.contains("error"));
}

class Sink {
 public:
  virtual ~Sink() = default;
  // Sends one JSON-RPC message to the peer. Thread-safe: responses to calls are sent from
  // the worker that ran the call. Returns false once the peer is gone (closed pipe, dropped
  // connection): the session then cancels what it was doing for that peer.
  virtual bool send(const nlohmann::json& message) = 0;
  // The request with this id will get no response after all, although Session::handle()
  // counted one: the client cancelled it (the spec forbids answering) or the session is
  // closing. A transport that waits for the counted responses stops waiting for this one.
  // Called from any thread, at most once per request; the default does nothing.
  virtual void no_response(const nlohmann::json& /*id*/) {}
};

}  // namespace cordon::cli::mcp
