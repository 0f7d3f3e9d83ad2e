// Accept and Content-Type values, and a first look at a POST body (see http_message.h).
#include "mcp/http_message.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "cordon/text.h"

namespace cordon::cli::mcp {
namespace {

std::string lower_trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return ascii_lower(text);
}

// Whether the parameters of one media range say q=0 ("not acceptable").
bool zero_quality(std::string_view params) {
  while (!params.empty()) {
    const std::size_t semi = params.find(';');
    const std::string param = lower_trimmed(params.substr(0, semi));
    if (param.starts_with("q=")) {
      const std::string value = param.substr(2);
      return !value.empty() && value.find_first_not_of("0.") == std::string::npos;
    }
    if (semi == std::string_view::npos) break;
    params.remove_prefix(semi + 1);
  }
  return false;
}

}  // namespace

AcceptedFormats accepted_formats(std::string_view accept) {
  AcceptedFormats formats;
  if (lower_trimmed(accept).empty()) {
    formats.json = true;
    return formats;
  }
  while (true) {
    const std::size_t comma = accept.find(',');
    const std::string_view range = accept.substr(0, comma);
    const std::size_t semi = range.find(';');
    const std::string type = lower_trimmed(range.substr(0, semi));
    if (!zero_quality(semi == std::string_view::npos ? std::string_view()
                                                     : range.substr(semi + 1))) {
      if (type == "text/event-stream") formats.event_stream = true;
      if (type == "application/json" || type == "application/*" || type == "*/*") {
        formats.json = true;
      }
    }
    if (comma == std::string_view::npos) break;
    accept.remove_prefix(comma + 1);
  }
  return formats;
}

bool is_json_content_type(std::string_view content_type) {
  const std::string value = lower_trimmed(content_type.substr(0, content_type.find(';')));
  return value == "application/json";
}

PostBody inspect_post_body(std::string_view body) {
  PostBody out;
  const nlohmann::json message =
      nlohmann::json::parse(body, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) return out;
  out.json = true;
  out.batch = message.is_array();
  const auto note = [&out](const nlohmann::json& item) {
    if (item.is_object() && item.contains("method") && item.contains("id")) {
      out.request_ids.push_back(item["id"]);
    }
  };
  if (out.batch) {
    for (const auto& item : message) note(item);
  } else {
    note(message);
    const auto method = message.is_object() ? message.find("method") : message.end();
    out.initialize = message.is_object() && method != message.end() && method->is_string() &&
                     *method == "initialize" && message.contains("id");
  }
  return out;
}

}  // namespace cordon::cli::mcp
