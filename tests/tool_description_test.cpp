// Tool descriptions: released versions never change (hashes against the append-only
// manifest), each format and version matches its golden file (never regenerated in CI:
// CORDON_UPDATE_GOLDEN=1 rewrites them locally, for review), and claims are rendered only
// when an audit report proves them.
#include "prompts/tool_description.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "cordon/result_json.h"
#include "cordon/sha256.h"
#include "cordon/units.h"
#include "prompts/tool_formats.h"
#include "prompts/tool_render.h"
#include "shell_words.h"

namespace cordon::prompts {
namespace {

using namespace cordon::audit;  // the reports a description is rendered from

namespace fs = std::filesystem;

const fs::path kSourceRoot = fs::path(CORDON_TEST_SOURCE_DIR).parent_path();

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ToolDescription, EveryReleasedFileMatchesItsManifestHashAndEveryFileIsReleased) {
  const auto manifest = parse_manifest(read(kSourceRoot / "prompts" / "manifest.txt"));
  ASSERT_TRUE(manifest.has_value()) << manifest.error().describe();
  ASSERT_FALSE(manifest->empty());
  std::set<std::string> listed;
  for (const ManifestEntry& e : *manifest) {
    const fs::path file =
        kSourceRoot / "prompts" / e.id / ("v" + std::to_string(e.version) + ".json");
    ASSERT_TRUE(fs::exists(file)) << file << " is in the manifest but missing";
    EXPECT_EQ("sha256:" + sha256_hex(read(file)), e.hash)
        << file << " changed after release: add a new version instead";
    EXPECT_TRUE(listed.insert(e.id + " " + std::to_string(e.version)).second)
        << "listed twice: " << e.id << " " << e.version;
  }
  for (const auto& dir : fs::directory_iterator(kSourceRoot / "prompts")) {
    if (!dir.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      const std::string stem = f.path().stem().string();  // "v1"
      EXPECT_TRUE(listed.contains(dir.path().filename().string() + " " + stem.substr(1)))
          << f.path() << " is not in prompts/manifest.txt";
    }
  }
  // And the built-in copy agrees (a stale build would refuse to load).
  const auto builtin = builtin_templates();
  ASSERT_TRUE(builtin.has_value()) << builtin.error().describe();
  EXPECT_EQ(builtin->size(), manifest->size());
}

TEST(ToolDescription, AChangedReleasedFileIsRefused) {
  const std::string text = read(kSourceRoot / "prompts" / "run_code" / "v1.json");
  const auto t = parse_template("prompts/run_code/v1.json", text + " ");
  ASSERT_TRUE(t.has_value());
  const auto m = parse_manifest(read(kSourceRoot / "prompts" / "manifest.txt"));
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(t->hash, m->front().hash);
  EXPECT_FALSE(parse_template("prompts/run_code/v2.json", text).has_value());  // says v1
  EXPECT_FALSE(find_template("run_code", 999).has_value());
  EXPECT_TRUE(find_template("run_code", std::nullopt).has_value());
}

Capability cap(Aspect a, Enforcement e, std::optional<std::string> value = std::nullopt) {
  return capability(a, e, "mechanism", std::move(value), "detail");
}

// A sandbox that claims everything, with fixed values: the golden files do not depend on
// this host.
Capabilities isolating() {
  return Capabilities{{cap(Aspect::kNetwork, Enforcement::kEnforced),
                       cap(Aspect::kFilesystem, Enforcement::kEnforced),
                       cap(Aspect::kEnvironment, Enforcement::kEnforced),
                       cap(Aspect::kProcessTree, Enforcement::kEnforced),
                       cap(Aspect::kSyscallFilter, Enforcement::kEnforced),
                       cap(Aspect::kMemory, Enforcement::kEnforced, "256 MiB"),
                       cap(Aspect::kProcesses, Enforcement::kEnforced, "64"),
                       cap(Aspect::kCpu, Enforcement::kNone),
                       cap(Aspect::kDisk, Enforcement::kEnforced, "64 MiB"),
                       cap(Aspect::kOutput, Enforcement::kEnforced, "1 MiB"),
                       cap(Aspect::kTimeout, Enforcement::kEnforced)}};
}

Capabilities unisolated() {
  Capabilities c;
  for (const Aspect a : kAllAspects) {
    const bool kept = a == Aspect::kOutput || a == Aspect::kTimeout;
    c.aspects.push_back(
        cap(a, kept ? Enforcement::kEnforced : Enforcement::kNone,
            a == Aspect::kOutput ? std::optional<std::string>("1 MiB") : std::nullopt));
  }
  return c;
}

// One verdict per aspect, all with `status`.
AuditReport report_all(AttemptStatus status) {
  AuditReport r;
  r.complete = true;
  for (const Aspect a : kAllAspects) {
    AttemptVerdict v;
    v.id = "probe-" + std::string(to_string(a));
    v.aspect = a;
    v.claimed = Enforcement::kEnforced;
    v.status = status;
    v.evidence = "evidence";
    r.verdicts.push_back(v);
  }
  r.interpreters = {{Language::kPython, "Python 3.11.2"},
                    {Language::kBash, "bash 5.2.15(1)-release"},
                    {Language::kSh, "dash"}};
  return r;
}

RenderContext context(const Capabilities& caps, const AuditReport* report) {
  return RenderContext{.backend_name = "test",
                       .capabilities = caps,
                       .timeout = std::chrono::seconds(10),
                       .languages = {Language::kPython, Language::kBash, Language::kSh},
                       .report = report,
                       .unverified = false};
}

// A server's sessions, as `cordon mcp`'s defaults make them, on a backend that keeps python.
RenderContext with_sessions(RenderContext ctx) {
  ctx.sessions = SessionFacts{.keeps_python = true};
  return ctx;
}

void expect_golden(const std::string& got, const fs::path& golden) {
  if (const char* u = std::getenv("CORDON_UPDATE_GOLDEN"); u != nullptr && std::string(u) == "1") {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden, std::ios::binary) << got;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " missing";
  EXPECT_EQ(got, read(golden)) << "differs from " << golden
                               << " (CORDON_UPDATE_GOLDEN=1 rewrites it; review the diff)";
}

// Seen while writing tool_template_fuzz: the version was read with get<int>(), undefined behaviour
// for a float out of range. It is refused, naming the file.
TEST(ToolDescription, AVersionThatIsNoIntIsRefused) {
  const std::string text =
      R"({"id":"x","version":VERSION,"changelog":"","name":"x","description":"d",)"
      R"("input_schema":{}})";
  const auto with = [&](const std::string& version) {
    std::string t = text;
    t.replace(t.find("VERSION"), 7, version);
    return parse_template("prompts/x/v1.json", t);
  };
  EXPECT_TRUE(with("1").has_value());
  for (const char* bad : {"1e300", "-1e300", "1.5", "4294967297", "\"1\""}) {
    const auto t = with(bad);
    ASSERT_FALSE(t.has_value()) << bad;
    EXPECT_NE(t.error().message.find("prompts/x/v1.json"), std::string::npos) << bad;
  }
}

TEST(ToolDescription, EveryFormatOfEveryVersionMatchesItsGoldenFile) {
  const auto all = builtin_templates();
  ASSERT_TRUE(all.has_value());
  const AuditReport proven = report_all(AttemptStatus::kBlocked);
  for (const ToolTemplate& t : *all) {
    const fs::path dir = fs::path(CORDON_TEST_SOURCE_DIR) / "golden" / "prompts" / t.id /
                         ("v" + std::to_string(t.version));
    // With a server's sessions (issue #41): run_code v5 offers `session`; the session
    // tools need them. Earlier versions use none of it.
    const auto sandboxed = render_tool(t, with_sessions(context(isolating(), &proven)));
    ASSERT_TRUE(sandboxed.has_value()) << sandboxed.error().describe();
    for (const std::string_view format : kToolFormats) {
      const auto text = format_tool(*sandboxed, format);
      ASSERT_TRUE(text.has_value());
      expect_golden(*text, dir / (std::string(format) + (format == "text" ? ".txt" : ".json")));
    }
    const auto plain = render_tool(t, with_sessions(context(unisolated(), &proven)));
    ASSERT_TRUE(plain.has_value()) << plain.error().describe();
    expect_golden(*format_tool(*plain, "text"), dir / "text-unisolated.txt");
  }
}

TEST(ToolDescription, ABackendWithoutNetworkIsolationCannotSayNoNetwork) {
  const auto t = find_template("run_code", 1);
  ASSERT_TRUE(t.has_value());
  const AuditReport proven = report_all(AttemptStatus::kBlocked);
  const auto r = render_tool(*t, context(unisolated(), &proven));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->description.find("no network"), std::string::npos) << r->description;
  EXPECT_NE(r->description.find("network access of the host"), std::string::npos);
  EXPECT_NE(r->description.find("There is NO isolation"), std::string::npos);
  const auto sandboxed = render_tool(*t, context(isolating(), &proven));
  ASSERT_TRUE(sandboxed.has_value());
  EXPECT_NE(sandboxed->description.find("no network access"), std::string::npos);
}

// Under gVisor (issue #18) the description says the code runs on a user-space kernel and
// what that changes for it; an unproven claim's hint names the variant so it can be pasted.
TEST(ToolDescription, AUserSpaceKernelIsSaidWithWhatItChanges) {
  const auto t = find_template("run_code", std::nullopt);
  ASSERT_TRUE(t.has_value());
  Capabilities caps = isolating();
  for (Capability& c : caps.aspects) {
    if (c.aspect == Aspect::kProcessTree) {
      c.by = Mechanism{"user_space_kernel", {{"kernel", "gVisor"}, {"platform", "ptrace"}}};
    }
  }
  const AuditReport proven = report_all(AttemptStatus::kBlocked);
  const auto r = render_tool(*t, context(caps, &proven));
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  EXPECT_NE(r->description.find("It runs on gVisor, a user-space kernel in front of the host's"),
            std::string::npos)
      << r->description;
  EXPECT_NE(r->description.find("system calls gVisor does not implement fail (ENOSYS or EPERM)"),
            std::string::npos);
  const auto plain = render_tool(*t, context(isolating(), &proven));
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->description.find("gVisor"), std::string::npos);

  RenderContext unproven = context(caps, nullptr);
  unproven.backend_name = "container (runsc)";
  const auto refused = render_tool(*t, unproven);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("cordon audit --backend 'container (runsc)'"),
            std::string::npos)
      << refused.error().message;
}

TEST(ToolDescription, AClaimAnAttemptContradictsIsRefusedNamingTheAttempt) {
  const auto t = find_template("run_code", 1);
  ASSERT_TRUE(t.has_value());
  AuditReport report = report_all(AttemptStatus::kBlocked);
  report.verdicts[0].status = AttemptStatus::kEscaped;  // probe-network
  for (const bool unverified : {false, true}) {
    RenderContext ctx = context(isolating(), &report);
    ctx.unverified = unverified;  // not even --unverified states a disproven claim
    const auto r = render_tool(*t, ctx);
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message.find("probe-network ESCAPED"), std::string::npos)
        << r.error().message;
  }
}

TEST(ToolDescription, UnprovenClaimsAreRefusedOrMarkedWithUnverified) {
  const auto t = find_template("run_code", 1);
  ASSERT_TRUE(t.has_value());
  AuditReport report = report_all(AttemptStatus::kBlocked);
  report.verdicts[5].status = AttemptStatus::kSkipped;  // probe-memory
  const auto refused = render_tool(*t, context(isolating(), &report));
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("probe-memory is SKIPPED"), std::string::npos)
      << refused.error().message;
  RenderContext ctx = context(isolating(), &report);
  ctx.unverified = true;
  const auto marked = render_tool(*t, ctx);
  ASSERT_TRUE(marked.has_value()) << marked.error().describe();
  EXPECT_NE(marked->description.find("[unverified] Memory is limited to 256 MiB"),
            std::string::npos)
      << marked->description;
  EXPECT_NE(marked->description.find(" There is no network access"), std::string::npos);
  // No report at all: every claim is unproven.
  const auto none = render_tool(*t, context(isolating(), nullptr));
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message.find("no audit report"), std::string::npos);
}

TEST(ToolDescription, TheDefaultIsV2AndV1StaysAsReleased) {
  const auto latest = find_template("run_code", std::nullopt);
  ASSERT_TRUE(latest.has_value());
  EXPECT_GE(latest->version, 2) << "v1 says 'Each call starts from scratch' without proof";
  const auto v1 = find_template("run_code", 1);
  ASSERT_TRUE(v1.has_value());
  EXPECT_NE(v1->description.find("Each call starts from scratch: nothing is kept between calls."),
            std::string::npos);
}

// v1 said "Each call starts from scratch" for every backend; in v2 it is a claim on the
// filesystem and timeout attempts, and a backend that keeps files between calls says so.
TEST(ToolDescription, StartingFromScratchIsAClaimTheAuditMustBack) {
  const auto t = find_template("run_code", 2);
  ASSERT_TRUE(t.has_value());
  AuditReport report = report_all(AttemptStatus::kBlocked);
  const auto proven = render_tool(*t, context(isolating(), &report));
  ASSERT_TRUE(proven.has_value()) << proven.error().describe();
  EXPECT_NE(proven->description.find("Each call starts from scratch"), std::string::npos);

  const auto plain = render_tool(*t, context(unisolated(), &report));
  ASSERT_TRUE(plain.has_value()) << plain.error().describe();
  EXPECT_EQ(plain->description.find("from scratch"), std::string::npos) << plain->description;
  EXPECT_NE(plain->description.find("Calls are not separated"), std::string::npos)
      << plain->description;

  // An isolating backend whose audit saw one run read another's files cannot claim it.
  for (AttemptVerdict& v : report.verdicts) {
    if (v.aspect == Aspect::kTimeout) v.status = AttemptStatus::kEscaped;
  }
  const auto refused = render_tool(*t, context(isolating(), &report));
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("Each call starts from scratch"), std::string::npos)
      << refused.error().message;
}

TEST(ToolDescription, V2StatesTheCodeSizeLimitStdinAndTheMeasuredInterpreters) {
  const auto t = find_template("run_code", 2);
  ASSERT_TRUE(t.has_value());
  AuditReport report = report_all(AttemptStatus::kBlocked);
  const auto r = render_tool(*t, context(isolating(), &report));
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  EXPECT_NE(r->description.find("The code may be at most " + format_size(kMaxCodeBytes) + "."),
            std::string::npos)
      << r->description;
  EXPECT_NE(r->input_schema["properties"]["code"]["description"].get<std::string>().find(
                format_size(kMaxCodeBytes)),
            std::string::npos);
  EXPECT_NE(r->description.find("Its standard input is empty."), std::string::npos);
  EXPECT_NE(r->description.find("Interpreters: python is Python 3.11.2, bash is bash "
                                "5.2.15(1)-release, sh is dash."),
            std::string::npos)
      << r->description;
  // Only what was measured, and only for the languages offered.
  report.interpreters.erase(report.interpreters.begin());  // python
  RenderContext no_bash = context(isolating(), &report);
  no_bash.languages = {Language::kPython, Language::kSh};
  const auto partial = render_tool(*t, no_bash);
  ASSERT_TRUE(partial.has_value());
  EXPECT_NE(partial->description.find("Interpreters: sh is dash."), std::string::npos)
      << partial->description;
  report.interpreters.clear();
  const auto none = render_tool(*t, context(isolating(), &report));
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->description.find("Interpreters"), std::string::npos) << none->description;
}

TEST(ToolDescription, FormatsHaveEachEcosystemsShape) {
  const auto t = find_template("run_code", 1);
  const AuditReport proven = report_all(AttemptStatus::kBlocked);
  const auto r = render_tool(*t, context(isolating(), &proven));
  ASSERT_TRUE(r.has_value());
  using nlohmann::json;
  const json openai = json::parse(*format_tool(*r, "openai"));
  EXPECT_EQ(openai["type"], "function");
  EXPECT_EQ(openai["function"]["strict"], true);
  EXPECT_EQ(openai["function"]["parameters"]["required"].size(),
            openai["function"]["parameters"]["properties"].size());
  const json responses = json::parse(*format_tool(*r, "openai-responses"));
  EXPECT_EQ(responses["name"], "run_code");
  EXPECT_TRUE(responses.contains("parameters"));
  EXPECT_TRUE(json::parse(*format_tool(*r, "anthropic")).contains("input_schema"));
  EXPECT_TRUE(json::parse(*format_tool(*r, "mcp")).contains("inputSchema"));
  EXPECT_EQ(openai["function"]["parameters"]["properties"]["language"]["enum"],
            (json{"python", "bash", "sh"}));
  EXPECT_FALSE(format_tool(*r, "xml").has_value());
}

}  // namespace
// The MCP rendering carries the Result JSON's schema and hints that are true for the
// backend: openWorldHint false only where the network is closed, destructiveHint true
// where the host's files are not protected.
TEST(ToolDescription, TheMcpToolCarriesOutputSchemaAndTrueAnnotations) {
  const auto t = find_template("run_code", std::nullopt);
  ASSERT_TRUE(t.has_value());
  const AuditReport proven = report_all(AttemptStatus::kBlocked);
  const auto sandboxed = render_tool(*t, context(isolating(), &proven));
  ASSERT_TRUE(sandboxed.has_value()) << sandboxed.error().describe();
  const nlohmann::json closed = mcp_tool(*sandboxed);
  EXPECT_EQ(closed["outputSchema"], cordon::result_json_schema());
  EXPECT_EQ(closed["annotations"]["openWorldHint"], false);
  EXPECT_EQ(closed["annotations"]["destructiveHint"], false);
  EXPECT_EQ(closed["annotations"]["readOnlyHint"], false);
  EXPECT_EQ(closed["annotations"]["idempotentHint"], false);
  EXPECT_EQ(closed["annotations"]["title"], "Run code");
  EXPECT_EQ(nlohmann::json::parse(*format_tool(*sandboxed, "mcp")), closed);

  const auto plain = render_tool(*t, context(unisolated(), &proven));
  ASSERT_TRUE(plain.has_value()) << plain.error().describe();
  EXPECT_EQ(mcp_tool(*plain)["annotations"]["openWorldHint"], true);
  EXPECT_EQ(mcp_tool(*plain)["annotations"]["destructiveHint"], true);
  Capabilities partial = isolating();
  partial.aspects[0] = cap(Aspect::kNetwork, Enforcement::kPartial);
  RenderContext ctx = context(partial, &proven);
  const auto restricted = render_tool(*t, ctx);
  ASSERT_TRUE(restricted.has_value()) << restricted.error().describe();
  EXPECT_EQ(mcp_tool(*restricted)["annotations"]["openWorldHint"], true);
}

// With an allow-list the network sentence names exactly what the list lets through (each
// entry, the carve-outs, the limits) and how the code gets there; it stays a claim the
// audit must back, and the MCP tool is then open-world.
TEST(ToolDescription, AnAllowListIsStatedEntryByEntry) {
  const auto t = find_template("run_code", std::nullopt);
  ASSERT_TRUE(t.has_value());
  const AuditReport proven = report_all(AttemptStatus::kBlocked);
  RenderContext ctx = context(isolating(), &proven);
  ctx.network.allow = {"PyPI.org", "*.pythonhosted.org", "api.example.com:8443",
                       "10.1.2.3", "10.9.0.0/16",        "[2001:db8::1]:443"};
  ctx.network.deny = {"upload.pypi.org"};
  ctx.network.max_bytes = 50U << 20;
  ctx.network.max_connections = 1;
  const auto r = render_tool(*t, ctx);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  const std::string expected =
      "Network access is limited to pypi.org (ports 80 and 443), any subdomain of "
      "pythonhosted.org (ports 80 and 443), api.example.com port 8443, 10.1.2.3 (any port), "
      "10.9.0.0/16 (any address in it, any port) and [2001:db8::1]:443. Never reachable, even "
      "so: upload.pypi.org (ports 80 and 443). Connections go through cordon's HTTP proxy at "
      "127.0.0.1:3128 (HTTP_PROXY and HTTPS_PROXY are set) and there is no DNS resolver, so use "
      "a client that honours those variables, such as pip, curl, or Python's urllib or "
      "requests. Every other host is refused, and so is a loopback, private or cloud-metadata "
      "address a name resolves to. At most 50 MiB in and out and 1 connection per run; past "
      "that, connections are cut or refused.";
  EXPECT_NE(r->description.find(expected), std::string::npos) << r->description;
  EXPECT_EQ(r->description.find("no network access"), std::string::npos);
  EXPECT_FALSE(r->network_closed);
  EXPECT_EQ(mcp_tool(*r)["annotations"]["openWorldHint"], true);
  const auto network = std::ranges::find(r->statements, "network", &Statement::placeholder);
  ASSERT_NE(network, r->statements.end());
  EXPECT_EQ(network->kind, Statement::Kind::kClaim);

  // Unproven, it is refused as every claim is (a report bound to the list is the proof).
  AuditReport unjudged = proven;
  unjudged.verdicts[0].status = AttemptStatus::kError;  // probe-network
  ctx.report = &unjudged;
  const auto unproven = render_tool(*t, ctx);
  ASSERT_FALSE(unproven.has_value());
  EXPECT_NE(unproven.error().message.find("probe-network is ERROR"), std::string::npos)
      << unproven.error().message;
  ctx.unverified = true;
  const auto marked = render_tool(*t, ctx);
  ASSERT_TRUE(marked.has_value()) << marked.error().describe();
  EXPECT_NE(marked->description.find("[unverified] Network access is limited to pypi.org"),
            std::string::npos)
      << marked->description;
}

// The audit a refusal suggests can be pasted into a shell as it is: each word a shell would
// split or expand (a label with a space, *.DOMAIN, [v6]:PORT) is quoted (issue #40).
TEST(ToolDescription, TheSuggestedAuditIsOneShellWordPerArgument) {
  const auto t = find_template("run_code", std::nullopt);
  ASSERT_TRUE(t.has_value());
  RenderContext ctx = context(isolating(), nullptr);
  ctx.backend_name = "container (runsc)";
  ctx.network.allow = {"*.pythonhosted.org", "[2001:db8::1]:443", "127.0.0.2:9"};
  ctx.network.deny = {"*.internal.example.org"};
  const auto refused = render_tool(*t, ctx);
  ASSERT_FALSE(refused.has_value());
  const std::string& m = refused.error().message;
  const std::size_t start = m.find("(run `");
  const std::size_t end = m.find('`', start + 6);
  ASSERT_NE(end, std::string::npos) << m;
  const std::string command = m.substr(start + 6, end - start - 6);
  EXPECT_EQ(::cordon_test::shell_words(command),
            (std::vector<std::string>{"cordon", "audit", "--backend", "container (runsc)",
                                      "--allow-net", "*.pythonhosted.org", "--allow-net",
                                      "[2001:db8::1]:443", "--allow-net", "127.0.0.2:9",
                                      "--deny-net", "*.internal.example.org"}))
      << command;
}

// v3 offers inline input files and artifact patterns, nullable and required (strict mode).
TEST(ToolDescription, V3OffersFilesAndCollect) {
  const auto t = find_template("run_code", 3);
  ASSERT_TRUE(t.has_value());
  const nlohmann::json& schema = t->input_schema;
  EXPECT_EQ(schema["properties"]["files"]["type"], nlohmann::json::array({"array", "null"}));
  EXPECT_EQ(schema["properties"]["files"]["items"]["required"],
            nlohmann::json::array({"name", "content_base64"}));
  EXPECT_EQ(schema["properties"]["collect"]["type"], nlohmann::json::array({"array", "null"}));
  for (const auto& [name, property] : schema["properties"].items()) {
    EXPECT_NE(std::ranges::find(schema["required"], nlohmann::json(name)), schema["required"].end())
        << name << ": OpenAI's strict mode needs every property required";
  }
}

// v4 (issue #40): a model may send the code alone. The MCP and Anthropic shapes (and the
// text's) require only the code and state every default; OpenAI's strict shapes require
// every property, the optional ones taking null, with no "default" (strict mode refuses it).
TEST(ToolDescription, EachFormatRequiresWhatItsEcosystemNeeds) {
  using nlohmann::json;
  const auto t = find_template("run_code", std::nullopt);
  ASSERT_TRUE(t.has_value());
  EXPECT_GE(t->version, 4);
  const AuditReport proven = report_all(AttemptStatus::kBlocked);
  const auto r = render_tool(*t, context(isolating(), &proven));
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  const auto schema_in = [&](std::string_view format) {
    const auto text = format_tool(*r, format);
    EXPECT_TRUE(text.has_value()) << format;
    if (format == "text") {
      const std::string& s = *text;
      return json::parse(s.substr(s.find("schema:\n") + 8));
    }
    const json j = json::parse(*text);
    if (format == "openai") return j["function"]["parameters"];
    if (format == "openai-responses") return j["parameters"];
    if (format == "anthropic") return j["input_schema"];
    return j["inputSchema"];
  };
  const json all = json::array({"code", "collect", "files", "language", "timeout"});
  const std::map<std::string_view, json> required{{"text", json::array({"code"})},
                                                  {"openai", all},
                                                  {"openai-responses", all},
                                                  {"anthropic", json::array({"code"})},
                                                  {"mcp", json::array({"code"})}};
  for (const std::string_view format : kToolFormats) {
    SCOPED_TRACE(format);
    const json schema = schema_in(format);
    ASSERT_TRUE(required.contains(format));
    EXPECT_EQ(schema["required"], required.at(format));
    EXPECT_EQ(schema["properties"]["files"]["items"]["required"],
              json::array({"name", "content_base64"}));
    const json& p = schema["properties"];
    const bool strict = format.starts_with("openai");
    if (strict) {
      EXPECT_EQ(p["language"]["type"], json::array({"string", "null"}));
      EXPECT_EQ(p["language"]["enum"], json::array({"python", "bash", "sh", nullptr}));
      EXPECT_EQ(p["timeout"]["type"], json::array({"number", "null"}));
      EXPECT_EQ(p["files"]["type"], json::array({"array", "null"}));
      EXPECT_EQ(p["collect"]["type"], json::array({"array", "null"}));
      EXPECT_EQ(schema.dump().find("\"default\""), std::string::npos) << schema.dump();
    } else {
      EXPECT_EQ(p["language"]["type"], "string");
      EXPECT_EQ(p["language"]["enum"], json::array({"python", "bash", "sh"}));
      EXPECT_EQ(p["language"]["default"], "python");
      EXPECT_EQ(p["timeout"]["type"], "number");
    }
    // Each description states what leaving the property out means.
    EXPECT_NE(p["language"]["description"].get<std::string>().find("python if left out"),
              std::string::npos);
    EXPECT_NE(p["timeout"]["description"].get<std::string>().find("10 if left out"),
              std::string::npos);
    EXPECT_NE(p["files"]["description"].get<std::string>().find("none if left out"),
              std::string::npos);
    EXPECT_NE(p["collect"]["description"].get<std::string>().find("none if left out"),
              std::string::npos);
  }
  // The default language is the first the backend runs: python where it runs python.
  RenderContext no_python = context(isolating(), &proven);
  no_python.languages = {Language::kBash, Language::kSh};
  const auto shell = render_tool(*t, no_python);
  ASSERT_TRUE(shell.has_value()) << shell.error().describe();
  EXPECT_EQ(shell->input_schema["properties"]["language"]["default"], "bash");
  // The strict shape of a template that already requires everything (v3) is that template.
  const auto v3 = find_template("run_code", 3);
  ASSERT_TRUE(v3.has_value());
  const auto r3 = render_tool(*v3, context(isolating(), &proven));
  ASSERT_TRUE(r3.has_value());
  EXPECT_EQ(strict_schema(r3->input_schema), r3->input_schema);
}

}  // namespace cordon::prompts

namespace cordon::prompts {
namespace {

// Issue #41: run_code v5 offers `session` only where the server holds sessions; without them
// it is v4 (the same schema, the same description).
TEST(ToolDescription, V5WithoutSessionsRendersAsV4) {
  const auto v4 = find_template("run_code", 4);
  const auto v5 = find_template("run_code", 5);
  ASSERT_TRUE(v4.has_value() && v5.has_value());
  const AuditReport proven = report_all(AttemptStatus::kBlocked);
  const auto r4 = render_tool(*v4, context(isolating(), &proven));
  const auto r5 = render_tool(*v5, context(isolating(), &proven));
  ASSERT_TRUE(r4.has_value() && r5.has_value()) << r5.error().describe();
  EXPECT_EQ(r5->input_schema, r4->input_schema);
  EXPECT_EQ(r5->description, r4->description);
  const auto offered = render_tool(*v5, with_sessions(context(isolating(), &proven)));
  ASSERT_TRUE(offered.has_value()) << offered.error().describe();
  const nlohmann::json& session = offered->input_schema["properties"]["session"];
  EXPECT_EQ(session["type"], "string");
  EXPECT_FALSE(session.contains("x-cordon-sessions")) << "the marker is no JSON Schema keyword";
  EXPECT_EQ(offered->input_schema["required"], nlohmann::json::array({"code"}));
  EXPECT_NE(offered->description.find("Each call without a session starts from scratch"),
            std::string::npos)
      << offered->description;
  EXPECT_NE(offered->description.find("open a session with session_open"), std::string::npos);
}

// The session tools say what persists only as far as the backend showed it keeps it, and the
// server's lifetimes, cap and queue with their configured values.
TEST(ToolDescription, SessionToolsStateWhatPersistsAndTheServersSettings) {
  const auto open = find_template("session_open", std::nullopt);
  ASSERT_TRUE(open.has_value()) << open.error().describe();
  const AuditReport proven = report_all(AttemptStatus::kBlocked);
  RenderContext ctx = context(isolating(), &proven);
  const auto refused = render_tool(*open, ctx);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("holds none"), std::string::npos)
      << refused.error().message;

  ctx.sessions = SessionFacts{.max_sessions = 3,
                              .max_waiting = 2,
                              .idle_timeout = std::chrono::minutes(5),
                              .max_age = std::chrono::minutes(90),
                              .keeps_python = false};
  const auto files_only = render_tool(*open, ctx);
  ASSERT_TRUE(files_only.has_value()) << files_only.error().describe();
  const std::string& d = files_only->description;
  EXPECT_NE(d.find("files one call writes are there for the next"), std::string::npos) << d;
  EXPECT_NE(d.find("Every call is a fresh process, python's too: variables do not persist"),
            std::string::npos)
      << d;
  EXPECT_EQ(d.find("Python calls share one interpreter"), std::string::npos) << d;
  EXPECT_EQ(d.find("state_lost"), std::string::npos) << d;
  EXPECT_NE(d.find("up to 2 more wait their turn"), std::string::npos) << d;
  EXPECT_NE(d.find("ends after 5 min without a call, 90 min after it was opened"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("at most 3 sessions at once"), std::string::npos) << d;

  ctx.sessions->keeps_python = true;
  const auto python = render_tool(*open, ctx);
  ASSERT_TRUE(python.has_value());
  EXPECT_NE(python->description.find("variables, imports and loaded data persist"),
            std::string::npos);
  EXPECT_NE(python->description.find("shell variables do not persist"), std::string::npos);
  EXPECT_NE(python->description.find("its result says state_lost"), std::string::npos);
  // The MCP entry carries the template's own output schema and annotations.
  const nlohmann::json entry = mcp_tool(*python);
  EXPECT_EQ(entry["outputSchema"]["required"], nlohmann::json::array({"session"}));
  EXPECT_EQ(entry["annotations"]["title"], "Open a session");
  EXPECT_NE(entry["outputSchema"]["properties"]["idle_timeout_seconds"]["description"]
                .get<std::string>()
                .find("5 min"),
            std::string::npos);
}

}  // namespace
}  // namespace cordon::prompts
