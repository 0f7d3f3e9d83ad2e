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
#include <string>
#include <vector>

#include "cordon/backend_options.h"
#include "cordon/plugin_registry.h"
#include "cordon/units.h"
#include "frontend/prompt_render.h"
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
  PluginRegistry registry_;
  BackendPtr backend_;
  BackendPtr control_;
};

TEST_P(ToolClaims, EverySentenceOfTheDefaultDescriptionIsBackedByTheAudit) {
  Backend* control = control_ ? control_.get() : backend_.get();
  const auto report = frontend::matching_report(*backend_, control, /*may_audit=*/true);
  ASSERT_TRUE(report.has_value()) << report.error().describe();
  ASSERT_TRUE(report->has_value());
  const AuditReport& audit = **report;
  const auto status_of = [&](const std::string& id) {
    const AttemptVerdict* v = audit.find(id);
    return v != nullptr ? v->status : AttemptStatus::kError;
  };

  const auto tool = find_template("run_code", std::nullopt);
  ASSERT_TRUE(tool.has_value()) << tool.error().describe();
  const frontend::PromptRender input{.tool = &*tool,
                                     .backend = backend_.get(),
                                     .backend_name = GetParam(),
                                     .limits = {},
                                     .timeout = kDefaultTimeout,
                                     .report = &audit,
                                     .unverified = false};
  const RenderContext context = frontend::render_context(input);
  const auto rendered = render_tool(*tool, context);
  ASSERT_TRUE(rendered.has_value()) << rendered.error().describe();

  std::string rest = rendered->description;
  for (const Statement& s : rendered->statements) {
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
        } else {
          EXPECT_EQ(s.placeholder, "stdin");
          EXPECT_EQ(s.text, "Its standard input is empty.");
        }
        break;
    }
    erase_once(rest, s.text);
  }
  for (const std::string& frame : frame_sentences(languages_text(context.languages))) {
    erase_once(rest, frame);
  }
  EXPECT_EQ(rest.find_first_not_of(' '), std::string::npos)
      << "sentences outside every statement and frame: \"" << rest << "\"";
  // The interpreters were measured in this backend's sandbox, one per language here.
  EXPECT_EQ(audit.interpreters.size(), context.languages.size()) << GetParam();
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
