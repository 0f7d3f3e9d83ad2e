#include "prompts/tool_render.h"

#include <algorithm>
#include <map>
#include <optional>
#include <span>

#include "audit/placeholders.h"
#include "cordon/net/net_policy.h"
#include "cordon/net/run_network.h"
#include "cordon/text.h"
#include "cordon/units.h"

namespace cordon::prompts {

using audit::AttemptStatus;
using audit::AttemptVerdict;
using audit::AuditReport;
using audit::InterpreterVersion;

namespace {

using nlohmann::json;

// One sentence and whether it claims that something is stopped.
struct Sentence {
  std::string text;
  bool claim = false;
};

std::string value_of(const Capability& c) { return c.value.value_or("?"); }

std::string param_of(const Mechanism& m, std::string_view key) {
  for (const auto& [name, value] : m.params) {
    if (name == key) return value;
  }
  return "?";
}

Sentence sentence_for(Aspect aspect, const Capability& c, const RenderContext& ctx) {
  const Enforcement e = c.enforcement;
  const bool none = e == Enforcement::kNone;
  switch (aspect) {
    case Aspect::kNetwork:
      if (none) return {"The code has the network access of the host it runs on.", false};
      if (ctx.network.any()) return {allow_list_sentence(ctx.network), true};
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
      if (c.by.kind == "user_space_kernel") {
        // What differs for the code under gVisor, so a model is not puzzled by it.
        return {"It runs on " + param_of(c.by, "kernel") +
                    ", a user-space kernel in front of the host's: it sees only its own "
                    "processes and runs without privileges; /proc shows only its sandbox, and "
                    "system calls " +
                    param_of(c.by, "kernel") + " does not implement fail (ENOSYS or EPERM).",
                true};
      }
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

// Fills {{name}} in `text`; "{{name}}" with no value is an error.
Result<std::string> fill(const std::string& text,
                         const std::map<std::string, std::string>& values) {
  Result<std::string> out = audit::fill_placeholders(text, values);
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

// The audit attempts of `report` on any of `aspects`.
std::vector<const AttemptVerdict*> attempts_on(const AuditReport* report,
                                               std::span<const Aspect> aspects) {
  std::vector<const AttemptVerdict*> out;
  if (report == nullptr) return out;
  for (const AttemptVerdict& v : report->verdicts) {
    if (v.moot()) continue;
    if (std::ranges::find(aspects, v.aspect) != aspects.end()) out.push_back(&v);
  }
  return out;
}

// Whether the report proves claims on `aspects`: "" when proven, else why not.
std::string unproven_on(const AuditReport* report, std::span<const Aspect> aspects,
                        bool* contradicted) {
  *contradicted = false;
  if (report == nullptr) return "no audit report for this backend on this host";
  const std::vector<const AttemptVerdict*> attempts = attempts_on(report, aspects);
  for (const AttemptVerdict* v : attempts) {
    if (v->status == AttemptStatus::kEscaped) {
      *contradicted = true;
      return "audit attempt " + v->id + " ESCAPED (" + v->evidence + ")";
    }
  }
  for (const AttemptVerdict* v : attempts) {
    if (v->status != AttemptStatus::kBlocked) {
      return "audit attempt " + v->id + " is " + std::string(to_string(v->status)) + " (" +
             v->evidence + ")";
    }
  }
  if (attempts.empty()) {
    std::string names;
    for (const Aspect a : aspects)
      names += (names.empty() ? "" : " or ") + std::string(to_string(a));
    return "no audit attempt on " + names;
  }
  return "";
}

// `s` as a statement about `aspects`: a claim only when the report proves it.
Result<Statement> backed(std::string placeholder, const Sentence& s,
                         std::span<const Aspect> aspects, const RenderContext& ctx) {
  Statement out{.placeholder = std::move(placeholder),
                .kind = s.claim ? Statement::Kind::kClaim : Statement::Kind::kDisclaimer,
                .text = s.text,
                .attempts = {}};
  for (const AttemptVerdict* v : attempts_on(ctx.report, aspects)) out.attempts.push_back(v->id);
  if (!s.claim || s.text.empty()) return out;
  bool contradicted = false;
  std::string why = unproven_on(ctx.report, aspects, &contradicted);
  if (why.empty()) return out;
  // A report is bound to the list it was made under: say which audit would make one. Every
  // word a shell would split or expand ("container (runsc)", "*.pythonhosted.org") is
  // quoted, so the command can be pasted as it is.
  std::string audit = "cordon audit --backend " + shell_quote(ctx.backend_name);
  if (ctx.network.any()) {
    if (ctx.report == nullptr) why += " with this network allow-list";
    for (const std::string& e : ctx.network.allow) audit += " --allow-net " + shell_quote(e);
    for (const std::string& e : ctx.network.deny) audit += " --deny-net " + shell_quote(e);
    if (ctx.network.max_bytes)
      audit += " --net-max-bytes " + std::to_string(*ctx.network.max_bytes);
    if (ctx.network.max_connections) {
      audit += " --net-max-connections " + std::to_string(*ctx.network.max_connections);
    }
  }
  const std::string claim = "cannot state \"" + s.text + "\" for backend " + ctx.backend_name;
  if (contradicted) return fail(ErrorCode::kUnavailable, claim + ": " + why);
  if (!ctx.unverified) {
    return fail(ErrorCode::kUnavailable,
                claim + ": " + why + " (run `" + audit +
                    "`, or pass --unverified to render it marked as unproven)");
  }
  out.text = std::string(kUnverifiedMark) + s.text;
  return out;
}

Sentence isolation_sentence(const RenderContext& ctx) {
  if (!ctx.capabilities.isolates()) {
    return {
        "There is NO isolation: the code runs as an ordinary process of the host user, "
        "not in a sandbox.",
        false};
  }
  return {"The code runs in an isolated sandbox.", true};
}

// Whether one call can leave something for the next: files (the filesystem's attempts,
// among them one run reading another's /tmp) and processes (the timeout's: orphans and
// daemons outliving their run).
constexpr Aspect kFreshStartAspects[] = {Aspect::kFilesystem, Aspect::kTimeout};

// `sessions`: the tool offers sessions, whose calls do keep what they leave.
Sentence fresh_start_sentence(const RenderContext& ctx, bool sessions) {
  if (ctx.capabilities.level(Aspect::kFilesystem) == Enforcement::kNone) {
    return {
        "Calls are not separated: files one call writes (under /tmp, say) stay on the "
        "host, where later calls can read them.",
        false};
  }
  if (sessions) {
    return {"Each call without a session starts from scratch: nothing is kept between calls.",
            true};
  }
  return {"Each call starts from scratch: nothing is kept between calls.", true};
}

// The session property marker: such a property is offered only with sessions.
constexpr std::string_view kSessionsMark = "x-cordon-sessions";

// `schema` without the properties marked for sessions when there are none, and without the
// marker either way (it is no JSON Schema keyword).
json sessions_offered(json schema, bool sessions) {
  if (!schema.is_object()) return schema;
  if (const auto properties = schema.find("properties");
      properties != schema.end() && properties->is_object()) {
    for (auto it = properties->begin(); it != properties->end();) {
      if (!sessions && it->is_object() && it->value(kSessionsMark, false)) {
        it = properties->erase(it);
        continue;
      }
      *it = sessions_offered(std::move(*it), sessions);
      if (it->is_object()) it->erase(std::string(kSessionsMark));
      ++it;
    }
  }
  if (const auto items = schema.find("items"); items != schema.end()) {
    *items = sessions_offered(std::move(*items), sessions);
  }
  return schema;
}

// "Interpreters: python is Python 3.11.2, sh is dash." from what the audit measured in
// the sandbox, for the languages offered; "" when it measured none of them.
std::string interpreters_sentence(const RenderContext& ctx) {
  if (ctx.report == nullptr) return "";
  std::string list;
  for (const Language l : ctx.languages) {
    const auto it = std::ranges::find(ctx.report->interpreters, l, &InterpreterVersion::language);
    if (it == ctx.report->interpreters.end()) continue;
    list += (list.empty() ? "" : ", ") + std::string(to_string(l)) + " is " + it->version;
  }
  return list.empty() ? "" : "Interpreters: " + list + ".";
}

// Whether `tool` has {{name}} in its description or schema.
bool uses(const ToolTemplate& tool, const std::string& name) {
  const std::string mark = "{{" + name + "}}";
  return tool.description.find(mark) != std::string::npos ||
         tool.input_schema.dump().find(mark) != std::string::npos ||
         tool.output_schema.dump().find(mark) != std::string::npos;
}

// Every statement `tool` uses, in a fixed order; the first claim that cannot be stated
// is the error.
Result<std::vector<Statement>> statements_for(const ToolTemplate& tool, const RenderContext& ctx) {
  std::vector<Statement> out;
  const auto fact = [&](std::string placeholder, std::string text) {
    if (!uses(tool, placeholder)) return;
    out.push_back(Statement{.placeholder = std::move(placeholder),
                            .kind = Statement::Kind::kFact,
                            .text = std::move(text),
                            .attempts = {}});
  };
  const std::string interpreters = interpreters_sentence(ctx);
  fact("interpreters", ctx.software.empty()   ? interpreters
                       : interpreters.empty() ? ctx.software
                                              : interpreters + " " + ctx.software);
  fact("code_size", "The code may be at most " + format_size(kMaxCodeBytes) + ".");
  fact("stdin", "Its standard input is empty.");
  for (const auto& [name, text] : session_sentences(ctx.sessions.value_or(SessionFacts{}))) {
    if (!uses(tool, name)) continue;
    if (!ctx.sessions && name != "sessions") {
      return fail(ErrorCode::kUnavailable, "the " + tool.name +
                                               " tool needs a backend that holds "
                                               "sessions, and " +
                                               ctx.backend_name + " holds none here");
    }
    fact(name, ctx.sessions ? text : "");
  }

  std::vector<Result<Statement>> backed_ones;
  if (uses(tool, "isolation")) {
    backed_ones.push_back(backed("isolation", isolation_sentence(ctx), kIsolationAspects, ctx));
  }
  if (uses(tool, "fresh_start")) {
    backed_ones.push_back(backed("fresh_start",
                                 fresh_start_sentence(ctx, ctx.sessions && uses(tool, "sessions")),
                                 kFreshStartAspects, ctx));
  }
  for (const Aspect aspect : kAllAspects) {
    const std::string name(to_string(aspect));
    if (!uses(tool, name)) continue;
    const Capability* c = ctx.capabilities.find(aspect);
    const Capability none_cap = capability(aspect, Enforcement::kNone, "", std::nullopt, "");
    const Aspect one[] = {aspect};
    backed_ones.push_back(
        backed(name, sentence_for(aspect, c != nullptr ? *c : none_cap, ctx), one, ctx));
  }
  for (Result<Statement>& s : backed_ones) {
    if (!s) return std::unexpected(s.error());
    out.push_back(std::move(*s));
  }
  return out;
}

}  // namespace

std::string allow_list_sentence(const NetworkAccess& network) {
  auto policy = net::NetPolicy::make(network.allow, network.deny);
  if (!policy) return "";  // validate() refuses such a request; nothing true to say
  const auto entry = [](const net::NetPolicy::Rule& rule) {
    using Kind = net::NetPolicy::Rule::Kind;
    if (rule.kind == Kind::kAddress) {
      const bool one = rule.prefix == (rule.address.v6 ? 128 : 32);
      return rule.port ? rule.text
                       : rule.text + (one ? " (any port)" : " (any address in it, any port)");
    }
    std::string name = rule.kind == Kind::kWildcard ? "any subdomain of " + rule.name : rule.name;
    return name + (rule.port ? " port " + std::to_string(*rule.port) : " (ports 80 and 443)");
  };
  const auto list = [&](const std::vector<net::NetPolicy::Rule>& rules) {
    std::string out;
    for (std::size_t i = 0; i < rules.size(); ++i) {
      if (i > 0) out += i + 1 == rules.size() ? " and " : ", ";
      out += entry(rules[i]);
    }
    return out;
  };
  std::string out = "Network access is limited to " + list(policy->allow_rules()) + ".";
  if (!policy->deny_rules().empty()) {
    out += " Never reachable, even so: " + list(policy->deny_rules()) + ".";
  }
  out += " Connections go through cordon's HTTP proxy at 127.0.0.1:" +
         std::to_string(net::kProxyPort) +
         " (HTTP_PROXY and HTTPS_PROXY are set) and there is no DNS resolver, so use a client "
         "that honours those variables, such as pip, curl, or Python's urllib or requests. Every "
         "other host is refused, and so is a loopback, private or cloud-metadata address a name "
         "resolves to.";
  if (network.max_bytes || network.max_connections) {
    std::string most;
    if (network.max_bytes) most = format_size(*network.max_bytes) + " in and out";
    if (network.max_connections) {
      most += (most.empty() ? "" : " and ") + std::to_string(*network.max_connections) +
              (*network.max_connections == 1 ? " connection" : " connections");
    }
    out += " At most " + most + " per run; past that, connections are cut or refused.";
  }
  return out;
}

std::string languages_text(const std::vector<Language>& languages) {
  std::string out;
  for (std::size_t i = 0; i < languages.size(); ++i) {
    if (i > 0) out += i + 1 == languages.size() ? " or " : ", ";
    out += to_string(languages[i]);
  }
  return out;
}

std::string unproven_reason(const AuditReport* report, Aspect aspect, bool* contradicted) {
  const Aspect one[] = {aspect};
  return unproven_on(report, one, contradicted);
}

Result<RenderedTool> render_tool(const ToolTemplate& tool, const RenderContext& context) {
  const RenderContext& ctx = context;
  Result<std::vector<Statement>> statements = statements_for(tool, ctx);
  if (!statements) return std::unexpected(statements.error());
  std::map<std::string, std::string> values;
  values["languages"] = languages_text(ctx.languages);
  values["timeout_seconds"] = std::to_string((ctx.timeout.count() + 999) / 1000);
  values["max_code_size"] = format_size(kMaxCodeBytes);
  // What a call that leaves the language out runs: the interpreter table's first language
  // the backend runs here, python where it runs python (request_from_tool_call() reads it
  // back from the schema's "default").
  if (uses(tool, "default_language")) {
    if (ctx.languages.empty()) {
      return fail(ErrorCode::kUnavailable,
                  "backend " + ctx.backend_name + " runs none of cordon's languages here");
    }
    values["default_language"] = to_string(ctx.languages.front());
  }
  if (ctx.sessions) values.merge(session_values(*ctx.sessions));
  for (const Statement& s : *statements) values[s.placeholder] = s.text;
  Result<std::string> description = fill(tool.description, values);
  if (!description) return std::unexpected(description.error());
  json language_enum = json::array();
  for (const Language l : ctx.languages) language_enum.push_back(to_string(l));
  Result<json> schema = fill_schema(sessions_offered(tool.input_schema, ctx.sessions.has_value()),
                                    values, language_enum);
  if (!schema) return std::unexpected(schema.error());
  Result<json> output = fill_schema(tool.output_schema, values, language_enum);
  if (!output) return std::unexpected(output.error());
  return RenderedTool{
      .id = tool.id,
      .version = tool.version,
      .name = tool.name,
      .description = std::move(*description),
      .input_schema = std::move(*schema),
      .output_schema = std::move(*output),
      .annotations = tool.annotations,
      .statements = std::move(*statements),
      .network_closed =
          ctx.capabilities.level(Aspect::kNetwork) == Enforcement::kEnforced && !ctx.network.any(),
      .host_files_protected =
          ctx.capabilities.level(Aspect::kFilesystem) == Enforcement::kEnforced};
}

}  // namespace cordon::prompts
