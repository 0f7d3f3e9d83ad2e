// The default tool description, rendered for every real backend from that backend's own
// audit report, says nothing about isolation or limits that the report does not back.
//
// Each sentence is either one of the template's own frame sentences, which claim nothing
// (listed here by hand: a new sentence in a template has to be looked at), or a rendered
// statement: a claim whose attempts the audit all saw BLOCKED, a disclaimer whose
// attempts it did not (an escape, or a host-acting attempt skipped where nothing is
// claimed), or a fact from a declaration (the code size limit) or a measurement (the
// interpreters). run_code v1 fails this for subprocess: its fixed "Each call starts from
// scratch: nothing is kept between calls" sits outside every statement, while the
// subprocess audit records fs-cross-run ESCAPED.
//
// The reports come from the audits CTest runs before this test (audit_<backend>, stored
// under $CORDON_AUDIT_DIR); a backend without a stored report is audited here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cordon/backend_options.h"
#include "cordon/plugin_registry.h"
#include "cordon/units.h"
#include "frontend/prompt_render.h"
#include "frontend/session_probe.h"
#include "kernel_features.h"
#include "prompts/tool_description.h"
#include "prompts/tool_render.h"
#include "test_paths.h"

namespace cordon::prompts {
namespace {

using namespace cordon::audit;  // the reports a description is rendered from

// The template sentences outside placeholders: what the tool is and how to use it.
std::vector<std::string> frame_sentences(const std::string& languages) {
  return {"Run a " + languages +
              " program and get back its stdout, stderr, exit code and why it stopped (ok, "
              "failed, timed out, limit exceeded).",
          "Write self-contained code that prints what you need to see."};
}

void erase_once(std::string& text, const std::string& part) {
  const std::size_t at = text.find(part);
  ASSERT_NE(at, std::string::npos) << "\"" << part << "\" not in\n" << text;
  text.erase(at, part.size());
}

// Every sentence of `rendered` is a statement the audit backs (claims BLOCKED, disclaimers
// not), a fact (a declaration, a measurement, the server's session settings `facts`), or one
// of `frames`, which claim nothing.
void expect_only_backed_or_framed(const RenderedTool& rendered, const AuditReport& audit,
                                  const std::vector<std::string>& frames,
                                  const std::optional<SessionFacts>& facts = std::nullopt) {
  const auto status_of = [&](const std::string& id) {
    const AttemptVerdict* v = audit.find(id);
    return v != nullptr ? v->status : AttemptStatus::kError;
  };
  std::string rest = rendered.description;
  for (const Statement& s : rendered.statements) {
    SCOPED_TRACE(s.placeholder + ": " + s.text);
    if (s.text.empty()) continue;
    switch (s.kind) {
      case Statement::Kind::kClaim:
        ASSERT_FALSE(s.attempts.empty()) << "a claim no audit attempt tested";
        for (const std::string& id : s.attempts) {
          EXPECT_EQ(status_of(id), AttemptStatus::kBlocked) << id;
        }
        break;
      case Statement::Kind::kDisclaimer:
        ASSERT_FALSE(s.attempts.empty()) << "a disclaimer no audit attempt looked at";
        EXPECT_TRUE(std::ranges::any_of(s.attempts, [&](const std::string& id) {
          return status_of(id) != AttemptStatus::kBlocked;
        })) << "says something is not stopped, but every attempt was BLOCKED";
        break;
      case Statement::Kind::kFact:
        if (s.placeholder == "interpreters") {
          for (const InterpreterVersion& i : audit.interpreters) {
            EXPECT_NE(s.text.find(std::string(to_string(i.language)) + " is " + i.version),
                      std::string::npos);
          }
        } else if (s.placeholder == "code_size") {
          EXPECT_NE(s.text.find(format_size(kMaxCodeBytes)), std::string::npos);
        } else if (s.placeholder.starts_with("session")) {
          // The server's settings and what probe_sessions() saw the backend keep.
          const auto sentences = session_sentences(facts.value_or(SessionFacts{}));
          ASSERT_TRUE(facts.has_value()) << "a session sentence without sessions";
          ASSERT_TRUE(sentences.contains(s.placeholder));
          EXPECT_EQ(s.text, sentences.at(s.placeholder));
        } else {
          EXPECT_EQ(s.placeholder, "stdin");
          EXPECT_EQ(s.text, "Its standard input is empty.");
        }
        break;
    }
    erase_once(rest, s.text);
  }
  for (const std::string& frame : frames) erase_once(rest, frame);
  EXPECT_EQ(rest.find_first_not_of(' '), std::string::npos)
      << "sentences outside every statement and frame: \"" << rest << "\"";
}

class ToolClaims : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    // Run by hand, it keeps its reports in the build tree too, never in the home directory.
    ::setenv("CORDON_AUDIT_DIR", CORDON_TEST_AUDIT_DIR, /*overwrite=*/0);
    registry_.discover({cordon::testing::plugin_dir()});
    // "container (runsc)": the container plugin under gVisor (a variant, issue #18).
    const std::string label = GetParam();
    const std::size_t paren = label.find(" (");
    BackendOptions options;
    if (paren != std::string::npos)
      options.runtime = label.substr(paren + 2, label.size() - paren - 3);
    auto backend = registry_.create(label.substr(0, paren), options);
    if (!backend) CORDON_SKIP_OR_FAIL(backend.error().describe());
    backend_ = std::move(*backend);
    const Probe probe = backend_->probe();
    if (!probe.available) CORDON_SKIP_OR_FAIL(probe.reason);
    if (std::string_view(GetParam()) != "subprocess") {
      if (auto control = registry_.create("subprocess")) control_ = std::move(*control);
    }
  }
  void TearDown() override {
    backend_.reset();
    control_.reset();
  }
  // The stored report for this backend (audited here when there is none).
  [[nodiscard]] Result<std::optional<AuditReport>> report() {
    Backend* control = control_ ? control_.get() : backend_.get();
    return frontend::matching_report(*backend_, control, /*may_audit=*/true);
  }
  // What `tool` is rendered with for this backend, under `audit`.
  [[nodiscard]] RenderContext context_for(const ToolTemplate& tool, const AuditReport& audit) {
    const frontend::PromptRender input{.tool = &tool,
                                       .backend = backend_.get(),
                                       .backend_name = GetParam(),
                                       .limits = {},
                                       .timeout = kDefaultTimeout,
                                       .report = &audit,
                                       .unverified = false};
    return frontend::render_context(input);
  }
  PluginRegistry registry_;
  BackendPtr backend_;
  BackendPtr control_;
};

TEST_P(ToolClaims, EverySentenceOfTheDefaultDescriptionIsBackedByTheAudit) {
  const auto stored = report();
  ASSERT_TRUE(stored.has_value()) << stored.error().describe();
  ASSERT_TRUE(stored->has_value());
  const AuditReport& audit = **stored;

  const auto tool = find_template("run_code", std::nullopt);
  ASSERT_TRUE(tool.has_value()) << tool.error().describe();
  const RenderContext context = context_for(*tool, audit);
  const auto rendered = render_tool(*tool, context);
  ASSERT_TRUE(rendered.has_value()) << rendered.error().describe();

  expect_only_backed_or_framed(*rendered, audit,
                               frame_sentences(languages_text(context.languages)));
  // The interpreters were measured in this backend's sandbox, one per language here.
  EXPECT_EQ(audit.interpreters.size(), context.languages.size()) << GetParam();
}

// The frame sentences of the session tools (issue #41): what each does and how to use it.
const std::map<std::string, std::vector<std::string>>& session_frames() {
  static const std::map<std::string, std::vector<std::string>> frames{
      {"session_open",
       {"Open a session: a sandbox kept across calls for this client only.",
        "Pass the id it returns as session to run_code and to the other session tools.",
        "Close it with session_close when you are done."}},
      {"session_reset", {"Use it to start over without losing files."}},
      {"session_close",
       {"Close a session: every process in it is stopped, its workspace and the files in it "
        "are deleted, and its id stops working."}},
      {"session_files",
       {"List the files in a session's workspace (the working directory of its calls) with "
        "their sizes.",
        "dir lists one directory of it; a path leading outside the workspace is refused."}},
      {"session_read_file",
       {"Read a file from a session's workspace: its text, or its bytes in base64 when they are "
        "not UTF-8 text.",
        "A file over 16 MiB is refused with its size, and so is a path leading outside the "
        "workspace."}},
      {"session_write_file",
       {"Write a file into a session's workspace for its later calls (parent directories are "
        "made, an existing file is replaced).",
        "A file may be at most 16 MiB and the workspace holds at most 256 MiB in all; a path "
        "leading outside the workspace is refused."}},
  };
  return frames;
}

// Issue #41: where the backend holds sessions, run_code with its `session` argument and every
// session tool say nothing the audit does not back, and say that python variables persist
// only where a trial session kept them (probe_sessions). A backend that holds none (the
// subprocess backend) refuses with its reason, and then no session tool is rendered.
TEST_P(ToolClaims, TheSessionToolsSayOnlyWhatTheBackendShowed) {
  const auto stored = report();
  ASSERT_TRUE(stored.has_value()) << stored.error().describe();
  ASSERT_TRUE(stored->has_value());
  const AuditReport& audit = **stored;
  const frontend::SessionProbe probe = frontend::probe_sessions(*backend_, SessionOptions{});
  if (!probe.holds) {
    EXPECT_FALSE(probe.refusal.empty());
    EXPECT_NE(std::string_view(GetParam()), "namespace") << probe.refusal;
    return;  // nothing to render: `cordon mcp` offers no session tool here
  }
  const SessionFacts facts{.keeps_python = probe.keeps_python};

  const auto run_code = find_template("run_code", std::nullopt);
  ASSERT_TRUE(run_code.has_value());
  RenderContext context = context_for(*run_code, audit);
  context.sessions = facts;
  const auto rendered = render_tool(*run_code, context);
  ASSERT_TRUE(rendered.has_value()) << rendered.error().describe();
  ASSERT_TRUE(rendered->input_schema["properties"].contains("session"));
  expect_only_backed_or_framed(*rendered, audit, frame_sentences(languages_text(context.languages)),
                               facts);
  for (const auto& [id, frames] : session_frames()) {
    SCOPED_TRACE(id);
    const auto tool = find_template(id, std::nullopt);
    ASSERT_TRUE(tool.has_value()) << tool.error().describe();
    const auto session_tool = render_tool(*tool, context);
    ASSERT_TRUE(session_tool.has_value()) << session_tool.error().describe();
    expect_only_backed_or_framed(*session_tool, audit, frames, facts);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, ToolClaims,
                         ::testing::Values("subprocess", "namespace", "container",
                                           "container (runsc)"),
                         [](const ::testing::TestParamInfo<const char*>& param) {
                           std::string name = param.param;
                           std::erase_if(name, [](char c) { return c == ' ' || c == ')'; });
                           std::ranges::replace(name, '(', '_');
                           return name;
                         });

}  // namespace
}  // namespace cordon::prompts
