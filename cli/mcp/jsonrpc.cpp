#include "mcp/jsonrpc.h"

#include <utility>

namespace cordon::cli::mcp::jsonrpc {
namespace {

using nlohmann::json;

// JSON-RPC ids are strings or numbers; MCP forbids null. Fractional numbers are allowed
// by JSON-RPC (discouraged) and are kept as sent.
bool valid_id(const json& id) { return id.is_string() || id.is_number(); }

// The id to answer an invalid message with: its own if readable, else null.
json reply_id(const json& value) {
  if (value.is_object()) {
    const auto it = value.find("id");
    if (it != value.end() && valid_id(*it)) return *it;
  }
  return nullptr;
}

Message invalid(const json& value, const std::string& why) {
  return Invalid{error_response(reply_id(value), kInvalidRequest, "Invalid Request: " + why)};
}

}  // namespace

Message classify(const json& value) {
  if (!value.is_object()) return invalid(value, "a message must be a JSON object");
  const auto version = value.find("jsonrpc");
  if (version == value.end() || *version != "2.0") {
    return invalid(value, R"("jsonrpc" must be "2.0")");
  }
  const auto method = value.find("method");
  const auto id = value.find("id");
  if (method == value.end()) {
    // A response: result or error, with the id of the request it answers.
    const bool has_result = value.contains("result");
    const bool has_error = value.contains("error");
    if (has_result == has_error || id == value.end()) {
      return invalid(value, R"(neither a request ("method") nor a response ("result"/"error"))");
    }
    return Response{*id};
  }
  if (!method->is_string()) return invalid(value, "\"method\" must be a string");
  json params = nullptr;
  if (const auto p = value.find("params"); p != value.end()) {
    if (!p->is_object() && !p->is_array()) {
      return invalid(value, "\"params\" must be an object or an array");
    }
    params = *p;
  }
  if (id == value.end()) return Notification{method->get<std::string>(), std::move(params)};
  if (!valid_id(*id)) return invalid(value, "\"id\" must be a string or a number");
  return Request{*id, method->get<std::string>(), std::move(params)};
}

std::vector<Message> parse(std::string_view text, bool batches_allowed) {
  // No exceptions for malformed input: a parse failure is a discarded value.
  json value = json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return {Invalid{error_response(nullptr, kParseError, "Parse error: not valid JSON")}};
  }
  if (!value.is_array()) return {classify(value)};
  if (!batches_allowed) {
    return {Invalid{
        error_response(nullptr, kInvalidRequest,
                       "Invalid Request: batches are not allowed in this protocol version")}};
  }
  if (value.empty()) {
    return {Invalid{error_response(nullptr, kInvalidRequest, "Invalid Request: empty batch")}};
  }
  std::vector<Message> out;
  out.reserve(value.size());
  for (const json& element : value) out.push_back(classify(element));
  return out;
}

json result_response(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json error_response(const json& id, int code, std::string message) {
  return json{{"jsonrpc", "2.0"},
              {"id", id},
              {"error", json{{"code", code}, {"message", std::move(message)}}}};
}

json notification(std::string method, json params) {
  return json{{"jsonrpc", "2.0"}, {"method", std::move(method)}, {"params", std::move(params)}};
}

std::string id_key(const json& id) { return id.dump(); }

}  // namespace cordon::cli::mcp::jsonrpc
