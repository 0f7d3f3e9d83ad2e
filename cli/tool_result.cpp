// The result half of a tool call: a finished run as MCP's CallToolResult, what the model
// reads first (the outcome sentence, its output) and what a program reads
// (structuredContent, the Result JSON).
#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

#include "artifacts_out.h"
#include "cordon/result_json.h"
#include "cordon/session.h"
#include "cordon/text.h"
#include "cordon/units.h"
#include "frontend/exit_status.h"
#include "frontend/network_text.h"
#include "frontend_names.h"
#include "tool_call.h"

namespace cordon::cli {
namespace {

using nlohmann::json;

// Past these, artifacts are listed in the text but not embedded: a reply stays a size a
// client and a model's context can take (each artifact is already capped by the request's
// artifact_max_bytes when collected).
constexpr std::size_t kMaxEmbeddedArtifacts = 32;
constexpr std::uint64_t kMaxEmbeddedBytes = 8ULL << 20;

std::string sentence_of(const RunResult& result);  // outcome_sentence() before UTF-8 repair

// The value the run enforced for `aspect` ("5 s", "128 MiB"), if it says.
std::optional<std::string> enforced_value(const RunResult& result, Aspect aspect) {
  for (const Enforced& e : result.enforced) {
    if (e.aspect == aspect && e.value) return e.value;
  }
  return std::nullopt;
}

std::string elapsed(const RunResult& result) {
  return format_duration(std::chrono::milliseconds(result.wall_ms));
}

std::string with_limit(const RunResult& result, Aspect aspect) {
  const std::optional<std::string> v = enforced_value(result, aspect);
  return v ? " (limit " + *v + ")" : "";
}

// "at most 3 connections" / "at most 1 MiB in and out", from the network report.
std::string network_limit_words(const RunResult& result) {
  if (!result.network) return "its network limit";
  const NetworkAccess& access = result.network->access;
  if (result.network->limit_reached == "connections" && access.max_connections) {
    return "at most " + std::to_string(*access.max_connections) +
           (*access.max_connections == 1 ? " connection" : " connections");
  }
  if (access.max_bytes) return "at most " + format_size(*access.max_bytes) + " in and out";
  return "its network limit";
}

std::string limit_sentence(const RunResult& result) {
  const std::string after = " after " + elapsed(result);
  switch (result.limit.value_or(LimitKind::kMemory)) {
    case LimitKind::kMemory:
      return "stopped: it ran out of memory" + with_limit(result, Aspect::kMemory) + after +
             (result.oom_killed ? " and was killed" : "") +
             "; use less memory (smaller data, process it in pieces)";
    case LimitKind::kProcesses:
      return "stopped: it started more processes or threads than allowed" +
             with_limit(result, Aspect::kProcesses) + after + "; start fewer at once";
    case LimitKind::kOutput:
      return "stopped: it wrote more output than allowed" + with_limit(result, Aspect::kOutput) +
             after + "; print less (a summary, or the first lines)";
    case LimitKind::kDisk:
      return "stopped: it filled its writable space" + with_limit(result, Aspect::kDisk) + after +
             "; write less data";
    case LimitKind::kCpu:
      return "stopped: it used up its CPU time" + with_limit(result, Aspect::kCpu) + after +
             "; do less work";
    case LimitKind::kNetwork: {
      // Nothing was stopped by cordon: the code failed on its own once the proxy refused it.
      const std::string how = result.exit_code >= 0
                                  ? "exited with status " + std::to_string(result.exit_code)
                                  : "was killed by signal " + std::to_string(result.signal);
      return "failed at the run's network limit (" + network_limit_words(result) +
             "): the proxy refused or cut what came past it, and the code " + how + after +
             "; fetch less, or fewer things";
    }
  }
  return "stopped by a resource limit" + after;
}

std::string truncation_note(const RunResult& result) {
  std::string streams;
  if (result.stdout_truncated) streams = "stdout";
  if (result.stderr_truncated) streams += streams.empty() ? "stderr" : " and stderr";
  if (streams.empty()) return "";
  const std::optional<std::string> cap = enforced_value(result, Aspect::kOutput);
  return "[" + streams + " cut off at " + cap.value_or("the output cap") +
         " per stream: only the beginning is shown; print less to see it all]";
}

// The text a model reads: outcome, output, truncation, the artifacts.
std::string text_of(const RunResult& result, const std::string& artifacts_note) {
  std::string text = sentence_of(result) + "\n";
  const auto section = [&](const char* name, const std::string& bytes) {
    if (bytes.empty()) return;
    text += std::string("--- ") + name + " ---\n" + to_valid_utf8(bytes);
    if (text.back() != '\n') text += '\n';
  };
  section("stdout", result.stdout_data);
  section("stderr", result.stderr_data);
  if (result.stdout_data.empty() && result.stderr_data.empty() &&
      result.outcome != Outcome::kSandboxError) {
    text += "(no output on stdout or stderr)\n";
  }
  if (const std::string note = truncation_note(result); !note.empty()) text += note + "\n";
  // A call in a session (issue #41): the cell's value, and whether its interpreter is gone.
  if (result.value) text += "--- value ---\n" + *result.value + "\n";
  if (result.state_lost) {
    text += "state_lost: " + std::string(kStateLostWords) + "\n";
  }
  if (result.session) {
    text +=
        "(session " + result.session->id + ", call " + std::to_string(result.session->call) + ")\n";
  }
  // With an allow-list, what the proxy let through and refused, and why: a model that was
  // refused a host learns it here (the same lines as `cordon run`'s "cordon: network:").
  if (result.network) {
    text += "--- network ---\n";
    for (const std::string& line : frontend::network_lines(*result.network)) text += line + "\n";
  }
  text += artifacts_note;
  // Limit values and file names come from the sandbox side: the text must be valid UTF-8.
  return to_valid_utf8(text);
}

// What a client shows an artifact as, from its extension; text/plain for other valid
// UTF-8 text, application/octet-stream for other bytes.
std::string mime_type(std::string_view name, bool is_text) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 16> kTypes = {{
      {".txt", "text/plain"},
      {".csv", "text/csv"},
      {".json", "application/json"},
      {".md", "text/markdown"},
      {".html", "text/html"},
      {".xml", "application/xml"},
      {".py", "text/x-python"},
      {".sh", "text/x-shellscript"},
      {".log", "text/plain"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},
      {".gif", "image/gif"},
      {".pdf", "application/pdf"},
      {".zip", "application/zip"},
  }};
  const std::size_t dot = name.rfind('.');
  if (dot != std::string_view::npos && name.find('/', dot) == std::string_view::npos) {
    const std::string ext = ascii_lower(name.substr(dot));
    for (const auto& [e, type] : kTypes) {
      if (e == ext) return std::string(type);
    }
  }
  return is_text ? "text/plain" : "application/octet-stream";
}

// Bytes a client can show as text: valid UTF-8 without NUL or other C0 controls but
// tab, newline and carriage return.
bool is_text(std::string_view bytes) {
  bool lossy = false;
  (void)to_valid_utf8(bytes, &lossy);
  if (lossy) return false;
  return std::ranges::none_of(bytes, [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b < 0x20 && c != '\n' && c != '\r' && c != '\t';
  });
}

// RFC 3986 path characters kept, everything else percent-encoded: the sanitised name may
// hold spaces, '#', '?', '%' or any byte but '/' and control characters.
std::string uri_path(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : path) {
    const auto b = static_cast<unsigned char>(c);
    const bool keep = std::isalnum(b) != 0 || c == '-' || c == '.' || c == '_' || c == '~' ||
                      c == '/' || c == '!' || c == '$' || c == '&' || c == '\'' || c == '(' ||
                      c == ')' || c == '*' || c == '+' || c == ',' || c == ';' || c == '=' ||
                      c == ':' || c == '@';
    if (keep) {
      out += c;
    } else {
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out;
}

// The artifact's name as --artifacts-dir writes it (sanitize_artifact_path); "" when
// nothing usable is left.
std::string safe_name(const Artifact& artifact) {
  std::string name;
  for (const std::string& component : sanitize_artifact_path(artifact.path)) {
    name += (name.empty() ? "" : "/") + component;
  }
  return name;
}

json resource_of(const Artifact& artifact, const std::string& name) {
  const bool text = is_text(artifact.content);
  json resource{{"uri", "file:///" + uri_path(name)}, {"mimeType", mime_type(name, text)}};
  if (text) {
    resource["text"] = artifact.content;
  } else {
    resource["blob"] = base64_encode(artifact.content);
  }
  return json{{"type", "resource"}, {"resource", std::move(resource)}};
}

// Appends the embedded artifacts to `content`; returns the lines the text item says
// about them.
std::string add_artifacts(const RunResult& result, json& content) {
  if (result.artifacts.empty()) return "";
  std::string listed;
  std::string left_out;
  std::uint64_t embedded_bytes = 0;
  std::size_t embedded = 0;
  for (const Artifact& artifact : result.artifacts) {
    const std::string name = safe_name(artifact);
    const std::string shown = name.empty() ? to_valid_utf8(artifact.path) : name;
    const std::string entry = shown + " (" + format_size(artifact.content.size()) + ")";
    if (name.empty() || embedded == kMaxEmbeddedArtifacts ||
        embedded_bytes + artifact.content.size() > kMaxEmbeddedBytes) {
      left_out += (left_out.empty() ? "" : ", ") + entry;
      continue;
    }
    content.push_back(resource_of(artifact, name));
    embedded_bytes += artifact.content.size();
    ++embedded;
    listed += (listed.empty() ? "" : ", ") + entry;
  }
  std::string note;
  if (!listed.empty()) note += "Collected files, attached below: " + listed + "\n";
  if (!left_out.empty()) {
    note +=
        "Collected but not attached (too many, too large or no usable name): " + left_out + "\n";
  }
  return note;
}

std::string sentence_of(const RunResult& result) {
  switch (result.outcome) {
    case Outcome::kOk:
      return "ok: the code ran and exited 0 after " + elapsed(result);
    case Outcome::kFailed:
      return "failed: the code exited with status " + std::to_string(result.exit_code) + " after " +
             elapsed(result) + "; see stderr for what went wrong";
    case Outcome::kSignaled:
      return "failed: the code was killed by signal " + std::to_string(result.signal) + " (" +
             signal_name(result.signal) + ") after " + elapsed(result) +
             "; it crashed or was killed, not stopped by a limit";
    case Outcome::kTimedOut:
      return "timed out after " +
             enforced_value(result, Aspect::kTimeout).value_or(elapsed(result)) +
             ": every process was stopped; try less work or a larger timeout if allowed";
    case Outcome::kLimitExceeded:
      if (result.limit == LimitKind::kNetwork) return limit_sentence(result);
      return limit_sentence(result) + "; every process was stopped";
    case Outcome::kCancelled:
      return "cancelled after " + elapsed(result) +
             " before it finished: every process was stopped; the output is what it wrote "
             "until then";
    case Outcome::kSandboxError:
      return "sandbox error: the sandbox failed, not the code (" +
             to_valid_utf8(result.error.value_or("no reason given")) +
             "); the code may not have run; retrying may help";
  }
  return "the run ended in an unknown way";
}

}  // namespace

std::string outcome_sentence(const RunResult& result) { return to_valid_utf8(sentence_of(result)); }

json tool_result(const RunResult& result, bool structured) {
  json content = json::array();
  content.push_back(json{{"type", "text"}, {"text", ""}});
  const std::string artifacts_note = add_artifacts(result, content);
  content[0]["text"] = text_of(result, artifacts_note);
  json out{{"content", std::move(content)}, {"isError", !result.ok()}};
  if (structured) out["structuredContent"] = to_json(result);
  return out;
}

json tool_error_result(const std::string& message) {
  return json{{"content", json::array({json{{"type", "text"}, {"text", to_valid_utf8(message)}}})},
              {"isError", true}};
}

}  // namespace cordon::cli
