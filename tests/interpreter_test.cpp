#include "cordon/interpreter.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/temp_dir.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;

TEST(Interpreter, Names) {
  EXPECT_EQ(interpreter_name(Language::kSh), "sh");
  EXPECT_EQ(interpreter_name(Language::kBash), "bash");
  EXPECT_EQ(interpreter_name(Language::kPython), "python3");
}

TEST(Interpreter, FindsShOnTheHost) {
  auto sh = find_interpreter(Language::kSh);
  ASSERT_TRUE(sh) << sh.error().describe();
  EXPECT_TRUE(sh->is_absolute());
  EXPECT_EQ(sh->filename(), "sh");
}

class FakeRoot : public testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::create("cordon-test-root-");
    ASSERT_TRUE(dir);
    root_ = std::move(*dir);
  }
  void make(const fs::path& inside, fs::perms perms) {
    const fs::path host = root_.path() / inside.relative_path();
    fs::create_directories(host.parent_path());
    std::ofstream(host) << "#!/bin/sh\n";
    fs::permissions(host, perms);
  }
  TempDir root_;
};

TEST_F(FakeRoot, FirstExecutableOnThePathWinsAndIsReportedInsideTheRoot) {
  make("/usr/bin/python3", fs::perms::owner_all);
  make("/bin/python3", fs::perms::owner_all);
  auto found = find_interpreter(Language::kPython, kSandboxPath, root_.path());
  ASSERT_TRUE(found) << found.error().describe();
  EXPECT_EQ(*found, fs::path("/usr/bin/python3"));
}

TEST_F(FakeRoot, SkipsNonExecutablesDirectoriesAndRelativeEntries) {
  make("/usr/local/bin/bash", fs::perms::owner_read | fs::perms::owner_write);  // not +x
  fs::create_directories(root_.path() / "usr/bin/bash");                        // a directory
  make("/bin/bash", fs::perms::owner_exec | fs::perms::owner_read);
  auto found =
      find_interpreter(Language::kBash, "::relative:/usr/local/bin:/usr/bin:/bin", root_.path());
  ASSERT_TRUE(found) << found.error().describe();
  EXPECT_EQ(*found, fs::path("/bin/bash"));
}

TEST_F(FakeRoot, NotFoundNamesWhatWasSearched) {
  auto found = find_interpreter(Language::kPython, "/opt/a:/opt/b", root_.path());
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().code, ErrorCode::kNotFound);
  EXPECT_NE(found.error().message.find("python3"), std::string::npos);
  EXPECT_NE(found.error().message.find("/opt/a:/opt/b"), std::string::npos);
  EXPECT_FALSE(find_interpreter(Language::kSh, "", root_.path()));
}

TEST(InterpreterArgv, SmallCodeGoesInline) {
  bool needs_file = true;
  const auto argv = interpreter_argv(Language::kSh, "/bin/sh", "echo hi", "/w/code", &needs_file);
  EXPECT_FALSE(needs_file);
  EXPECT_EQ(argv, (std::vector<std::string>{"/bin/sh", "-c", "echo hi"}));
}

TEST(InterpreterArgv, LargeCodeGoesThroughAFile) {
  bool needs_file = false;
  const std::string big(128 * 1024, '#');
  const auto argv =
      interpreter_argv(Language::kPython, "/usr/bin/python3", big, "/w/code.py", &needs_file);
  EXPECT_TRUE(needs_file);
  EXPECT_EQ(argv, (std::vector<std::string>{"/usr/bin/python3", "/w/code.py"}));
}

TEST(InterpreterArgv, ThresholdStaysBelowTheKernelLimit) {
  // Anything inline must fit MAX_ARG_STRLEN (128 KiB including the NUL).
  for (std::size_t size = 120 * 1024; size <= 128 * 1024; size += 512) {
    bool needs_file = false;
    (void)interpreter_argv(Language::kSh, "/bin/sh", std::string(size, 'x'), "/w/c", &needs_file);
    if (!needs_file) {
      EXPECT_LT(size + 1, 128u * 1024) << size;
    }
  }
  bool needs_file = true;
  (void)interpreter_argv(Language::kSh, "/bin/sh", std::string(64 * 1024, 'x'), "/w/c",
                         &needs_file);
  EXPECT_FALSE(needs_file);
}

// The table is the one place a language is defined: every Language has exactly one entry,
// names and aliases are unique, and names, aliases and extensions lead back to it.
TEST(InterpreterTable, EveryLanguageHasOneEntryAndItsNamesLeadBack) {
  std::set<std::string_view> names;
  std::set<std::string_view> extensions;
  for (const Language l : {Language::kSh, Language::kBash, Language::kPython, Language::kJavaScript,
                           Language::kPerl}) {
    EXPECT_EQ(std::ranges::count(kInterpreters, l, &InterpreterSpec::language), 1) << to_string(l);
    const InterpreterSpec& spec = interpreter_spec(l);
    EXPECT_EQ(spec.language, l);
    EXPECT_TRUE(names.insert(spec.name).second) << spec.name;
    EXPECT_EQ(parse_language(spec.name), l);
    for (const std::string_view alias : spec.aliases) {
      if (alias.empty()) continue;
      EXPECT_TRUE(names.insert(alias).second) << alias;
      EXPECT_EQ(parse_language(alias), l) << alias;
    }
    for (const std::string_view e : spec.extensions) {
      if (e.empty()) continue;
      EXPECT_TRUE(extensions.insert(e).second) << e;
      EXPECT_EQ(language_of_file("dir/code" + std::string(e)), l) << e;
    }
    EXPECT_FALSE(spec.executable.empty());
    EXPECT_FALSE(spec.version_probe.empty());
  }
  EXPECT_EQ(std::size(kInterpreters), 5U);
  EXPECT_EQ(parse_language("node"), Language::kJavaScript);
  EXPECT_EQ(parse_language("js"), Language::kJavaScript);
  EXPECT_EQ(interpreter_name(Language::kJavaScript), "node");
  EXPECT_EQ(language_of_file("x.mjs"), Language::kJavaScript);
  EXPECT_FALSE(language_of_file("Makefile").has_value());
  EXPECT_FALSE(language_of_file("notes.txt").has_value());
  const auto unknown = parse_language("ruby");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().message,
            "unknown language 'ruby' (expected python, bash, sh, javascript, perl)");
}

// node and perl take code in argv with -e, not -c.
TEST(InterpreterArgv, EachLanguageItsOwnInlineFlag) {
  bool needs_file = true;
  EXPECT_EQ(interpreter_argv(Language::kJavaScript, "/usr/bin/node", "console.log(1)", "/w/c",
                             &needs_file),
            (std::vector<std::string>{"/usr/bin/node", "-e", "console.log(1)"}));
  EXPECT_EQ(interpreter_argv(Language::kPerl, "/usr/bin/perl", "print 1", "/w/c", &needs_file),
            (std::vector<std::string>{"/usr/bin/perl", "-e", "print 1"}));
  EXPECT_FALSE(needs_file);
}

TEST(InterpreterArgv, NulInCodeGoesThroughAFile) {
  bool needs_file = false;
  (void)interpreter_argv(Language::kSh, "/bin/sh", std::string("echo a\0b", 8), "/w/c",
                         &needs_file);
  EXPECT_TRUE(needs_file);
}

}  // namespace
}  // namespace cordon
