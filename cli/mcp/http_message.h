// What the HTTP layer needs to know about a POST before the session sees it: which
// response formats the client takes (Accept), whether the body is JSON at all, and which
// requests it holds (initialize? which ids?). Pure functions: table-tested and fuzzed.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace cordon::cli::mcp {

struct AcceptedFormats {
  bool event_stream = false;  // text/event-stream
  bool json = false;          // application/json (or a wildcard covering it)
};
// From an Accept header value ("application/json, text/event-stream;q=0.9"). An absent
// or empty header takes JSON; a media range with q=0 is refused.
[[nodiscard]] AcceptedFormats accepted_formats(std::string_view accept);

// Whether a Content-Type value is application/json (parameters such as charset allowed).
[[nodiscard]] bool is_json_content_type(std::string_view content_type);

struct PostBody {
  bool json = false;                        // the body parses as JSON
  bool batch = false;                       // a JSON array (a JSON-RPC batch)
  bool initialize = false;                  // a single initialize request
  std::vector<nlohmann::json> request_ids;  // ids of the requests in it
};
[[nodiscard]] PostBody inspect_post_body(std::string_view body);

}  // namespace cordon::cli::mcp
