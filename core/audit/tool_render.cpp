#include "audit/tool_render.h"

#include <map>
#include <optional>

#include "audit/placeholders.h"
#include "cordon/units.h"

namespace cordon::audit {
namespace {

using nlohmann::json;

// One sentence and whether it claims that something is stopped.
struct Sentence {
  std::string text;
  bool claim = false;
};

std::string value_of(const Capability& c) { return c.value.value_or("?"); }

Sentence sentence_for(Aspect aspect, const Capability& c, const RenderContext& ctx) {
  const Enforcement e = c.enforcement;
  const bool none = e == Enforcement::kNone;
  switch (aspect) {
    case Aspect::kNetwork:
      if (none) return {"The code has the network access of the host it runs on.", false};
      if (e == Enforcement::kPartial)
        return {"Network access is restricted: " + c.detail + ".", true};
      return {
          "There is no network access: no interface but loopback and no route out, so "
          "installing packages, downloading files or calling web APIs will fail.",
          true};
    case Aspect::kFilesystem:
      if (none) return {"It can read and write every file the host user can.", false};
      return {
          "It cannot read or change the host's files: it sees a minimal read-only system "
          "and can write only to its working directory and /tmp.",
          true};
    case Aspect::kEnvironment:
      if (none) {
        return {
            "It can read the host user's credential files (such as ~/.aws/credentials) and "
            "other processes' environments.",
            false};
      }
      return {"It gets no environment variables, credentials or secrets of the caller.", true};
    case Aspect::kProcessTree:
      if (none) return {"It can see and signal the host user's processes.", false};
      return {"It sees only its own processes and runs without privileges.", true};
    case Aspect::kSyscallFilter:
      if (none) return {"", false};
      return {"Kernel interfaces such as ptrace, mount, bpf and io_uring are blocked.", true};
    case Aspect::kTimeout:
      return {"Each run is stopped after " + format_duration(ctx.timeout) +
                  " of wall-clock time, together with every process it started.",
              true};
    case Aspect::kMemory:
      if (none) return {"Memory is not limited.", false};
      return {"Memory is limited to " + value_of(c) +
                  (e == Enforcement::kEnforced ? " for the whole run." : " per process."),
              true};
    case Aspect::kProcesses:
      if (none) return {"", false};
      return {"At most " + value_of(c) + " processes or threads can run at once.", true};
    case Aspect::kDisk:
      if (none) return {"", false};
      return {"Writable space is " + value_of(c) + "; writes past it fail.", true};
    case Aspect::kOutput:
      if (none) return {"", false};
      return {"Output past " + value_of(c) + " per stream is cut off, and the result says so.",
              true};
    case Aspect::kCpu:
      return {"", false};
  }
  return {"", false};
}

std::string languages_text(const std::vector<Language>& languages) {
  std::string out;
  for (std::size_t i = 0; i < languages.size(); ++i) {
    if (i > 0) out += i + 1 == languages.size() ? " or " : ", ";
    out += to_string(languages[i]);
  }
  return out;
}

// Fills {{name}} in `text`; "{{name}}" with no value is an error.
Result<std::string> fill(const std::string& text,
                         const std::map<std::string, std::string>& values) {
  Result<std::string> out = fill_placeholders(text, values);
  if (!out) return fail(ErrorCode::kInvalidArgument, "tool description: " + out.error().message);
  // Sentences left empty leave double spaces behind.
  std::string tidy;
  for (const char ch : *out) {
    if (ch == ' ' && !tidy.empty() && tidy.back() == ' ') continue;
    tidy += ch;
  }
  return tidy;
}

Result<json> fill_schema(const json& node, const std::map<std::string, std::string>& values,
                         const json& language_enum) {
  if (node.is_string()) {
    if (node.get<std::string>() == "{{language_enum}}") return language_enum;
    Result<std::string> s = fill(node.get<std::string>(), values);
    if (!s) return std::unexpected(s.error());
    return json(*s);
  }
  if (!node.is_structured()) return node;
  json out = node;
  for (auto it = out.begin(); it != out.end(); ++it) {
    Result<json> v = fill_schema(it.value(), values, language_enum);
    if (!v) return std::unexpected(v.error());
    it.value() = std::move(*v);
  }
  return out;
}

// The sentence for one placeholder, or why it cannot be stated.
Result<std::string> proven_sentence(Aspect aspect, const RenderContext& ctx) {
  const Capability* c = ctx.capabilities.find(aspect);
  const Capability none_cap = capability(aspect, Enforcement::kNone, "", std::nullopt, "");
  const Sentence s = sentence_for(aspect, c != nullptr ? *c : none_cap, ctx);
  if (!s.claim || s.text.empty()) return s.text;
  bool contradicted = false;
  const std::string why = unproven_reason(ctx.report, aspect, &contradicted);
  if (why.empty()) return s.text;
  const std::string claim = "cannot state \"" + s.text + "\" for backend " + ctx.backend_name;
  if (contradicted) return fail(ErrorCode::kUnavailable, claim + ": " + why);
  if (ctx.unverified) return std::string(kUnverifiedMark) + s.text;
  return fail(ErrorCode::kUnavailable,
              claim + ": " + why + " (run 'cordon audit --backend " + ctx.backend_name +
                  "', or pass --unverified to render it marked as unproven)");
}

Result<std::string> isolation_sentence(const RenderContext& ctx) {
  if (!ctx.capabilities.isolates()) {
    return std::string(
        "There is NO isolation: the code runs as an ordinary process of the host user, "
        "not in a sandbox.");
  }
  std::string text = "The code runs in an isolated sandbox.";
  for (const Aspect aspect : kIsolationAspects) {
    bool contradicted = false;
    const std::string why = unproven_reason(ctx.report, aspect, &contradicted);
    if (why.empty()) continue;
    if (contradicted) {
      return fail(ErrorCode::kUnavailable,
                  "cannot state \"" + text + "\" for backend " + ctx.backend_name + ": " + why);
    }
    if (ctx.unverified) return std::string(kUnverifiedMark) + text;
    return fail(ErrorCode::kUnavailable, "cannot state \"" + text + "\" for backend " +
                                             ctx.backend_name + ": " + why +
                                             " (or pass --unverified)");
  }
  return text;
}

}  // namespace

std::string unproven_reason(const AuditReport* report, Aspect aspect, bool* contradicted) {
  *contradicted = false;
  if (report == nullptr) return "no audit report for this backend on this host";
  const AttemptVerdict* first_unproven = nullptr;
  int attempts = 0;
  for (const AttemptVerdict& v : report->verdicts) {
    if (v.aspect != aspect) continue;
    ++attempts;
    if (v.status == AttemptStatus::kEscaped) {
      *contradicted = true;
      return "audit attempt " + v.id + " ESCAPED (" + v.evidence + ")";
    }
    if (v.status != AttemptStatus::kBlocked && first_unproven == nullptr) first_unproven = &v;
  }
  if (first_unproven != nullptr) {
    return "audit attempt " + first_unproven->id + " is " +
           std::string(to_string(first_unproven->status)) + " (" + first_unproven->evidence + ")";
  }
  if (attempts == 0) return "no audit attempt on " + std::string(to_string(aspect));
  return "";
}

Result<RenderedTool> render_tool(const ToolTemplate& tool, const RenderContext& context) {
  const RenderContext& ctx = context;
  std::map<std::string, std::string> values;
  values["languages"] = languages_text(ctx.languages);
  values["timeout_seconds"] = std::to_string((ctx.timeout.count() + 999) / 1000);
  Result<std::string> isolation = isolation_sentence(ctx);
  if (!isolation) return std::unexpected(isolation.error());
  values["isolation"] = *isolation;
  for (const Aspect aspect : kAllAspects) {
    Result<std::string> s = proven_sentence(aspect, ctx);
    if (!s) return std::unexpected(s.error());
    values[std::string(to_string(aspect))] = *s;
  }
  Result<std::string> description = fill(tool.description, values);
  if (!description) return std::unexpected(description.error());
  json language_enum = json::array();
  for (const Language l : ctx.languages) language_enum.push_back(to_string(l));
  Result<json> schema = fill_schema(tool.input_schema, values, language_enum);
  if (!schema) return std::unexpected(schema.error());
  return RenderedTool{.id = tool.id,
                      .version = tool.version,
                      .name = tool.name,
                      .description = std::move(*description),
                      .input_schema = std::move(*schema)};
}

}  // namespace cordon::audit
