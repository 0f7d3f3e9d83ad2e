// JSON-RPC 2.0 as MCP uses it: one message (or, before protocol version 2025-06-18, a
// batch) per text. Classifies each message as a request, a notification or a response,
// and builds the spec's error objects. Knows nothing of MCP's methods (protocol.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cordon::cli::mcp::jsonrpc {

// The error codes the JSON-RPC 2.0 spec names.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

struct Request {
  nlohmann::json id;  // a string or an integer
  std::string method;
  nlohmann::json params;  // an object, an array or null (absent)
};

struct Notification {
  std::string method;
  nlohmann::json params;
};

// A response from the peer (to a request the server sent): MCP servers here send none,
// so these are ignored, but they are not errors.
struct Response {
  nlohmann::json id;
};

// A message that is none of the above: answered with `error` (its id null when the
// message's own id could not be read).
struct Invalid {
  nlohmann::json error;  // a complete error response
};

using Message = std::variant<Request, Notification, Response, Invalid>;

// The messages in `text`: one, or each element of a batch when `batches_allowed`.
// Malformed JSON is one Invalid (-32700); an empty batch, or a batch where batches are not
// allowed, is one Invalid (-32600).
[[nodiscard]] std::vector<Message> parse(std::string_view text, bool batches_allowed);

// One parsed JSON value as a message.
[[nodiscard]] Message classify(const nlohmann::json& value);

// {"jsonrpc":"2.0","id":id,"result":result}
[[nodiscard]] nlohmann::json result_response(const nlohmann::json& id, nlohmann::json result);
// {"jsonrpc":"2.0","id":id,"error":{"code":code,"message":message}}
[[nodiscard]] nlohmann::json error_response(const nlohmann::json& id, int code,
                                            std::string message);
// {"jsonrpc":"2.0","method":method,"params":params}
[[nodiscard]] nlohmann::json notification(std::string method, nlohmann::json params);

// A stable key for an id (a string and a number of the same digits differ).
[[nodiscard]] std::string id_key(const nlohmann::json& id);

}  // namespace cordon::cli::mcp::jsonrpc
