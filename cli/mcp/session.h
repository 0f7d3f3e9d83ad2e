// One MCP client's conversation with `cordon mcp`: the protocol state (negotiated version,
// client name, initialized) and the dispatch of its messages. Transport-agnostic: stdio
// feeds it one line at a time, Streamable HTTP one POST body at a time (one Session per
// Mcp-Session-Id). What all sessions share (the backend, its warm pool, the tool, the call
// queue, the history writer) is the Service (service.h).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "mcp/sink.h"

namespace cordon::cli::mcp {

class Service;

class Session {
 public:
  // `transport` is "stdio" or "http" (recorded in the history with the client's name).
  // `owner_scope` is put before the session's own name in the owner of the sandbox sessions
  // it opens (issue #41): HTTP puts its bearer token's hash there, so a client with another
  // token could never use their ids even within one MCP session's name.
  Session(Service& service, std::string transport, std::string owner_scope = {});
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  // Cancels every call of this session still queued or running, and waits for them.
  ~Session();

  // Handles one raw message text: a request, a notification, a response, or (for protocol
  // versions that have them, before 2025-06-18) a batch. Malformed input is answered with
  // the JSON-RPC error the spec names (-32700 parse error, -32600 invalid request, -32601
  // method not found, -32602 invalid params), never a crash. Replies and notifications
  // about the requests in `text` go to `sink`, those of tools/call later, from the worker
  // that ran the call. Returns how many responses will be sent to `sink` for `text` (0:
  // only notifications or responses came in; HTTP then answers 202 Accepted).
  std::size_t handle(std::string_view text, const std::shared_ptr<Sink>& sink);

  // Whether an initialize request has been answered successfully.
  [[nodiscard]] bool initialized() const;
  // The protocol version agreed at initialize (empty before).
  [[nodiscard]] std::string protocol_version() const;

  // Cancels every call of this session still queued or running (their processes are
  // killed) and waits until each has ended, then closes the sandbox sessions it opened
  // (issue #41). The client is gone: nothing is sent.
  void cancel_all();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cordon::cli::mcp
