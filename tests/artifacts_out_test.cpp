// Artifact names chosen by untrusted code never lead a write outside the target directory.
#include "artifacts_out.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cordon/temp_dir.h"

namespace cordon::cli {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Artifact artifact(std::string path, std::string content) {
  Artifact a;
  a.path = std::move(path);
  a.size = content.size();
  a.content = std::move(content);
  return a;
}

struct SanitizeCase {
  std::string path;
  std::vector<std::string> expected;
};

class SanitizeTest : public ::testing::TestWithParam<SanitizeCase> {};

TEST_P(SanitizeTest, Components) {
  EXPECT_EQ(sanitize_artifact_path(GetParam().path), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(Paths, SanitizeTest,
                         ::testing::Values(SanitizeCase{"a.txt", {"a.txt"}},
                                           SanitizeCase{"sub/a.txt", {"sub", "a.txt"}},
                                           SanitizeCase{"../evil", {"__", "evil"}},
                                           SanitizeCase{"/etc/passwd", {"etc", "passwd"}},
                                           SanitizeCase{"a/../../b", {"a", "__", "__", "b"}},
                                           SanitizeCase{"./x//y/.", {"x", "y"}},
                                           SanitizeCase{"line\nbreak", {"line_break"}},
                                           SanitizeCase{"..", {"__"}}, SanitizeCase{"", {}},
                                           SanitizeCase{"/./", {}}));

class WriteArtifactsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::create("cordon-artifacts-test-");
    ASSERT_TRUE(dir);
    temp_ = std::move(*dir);
    out_ = temp_.path() / "out";
  }
  TempDir temp_;
  fs::path out_;
};

TEST_F(WriteArtifactsTest, HostileNamesLandInsideDir) {
  const auto written = write_artifacts(
      out_, {artifact("../escape", "1"), artifact("/abs/x", "2"), artifact("a/../../b", "3")});
  ASSERT_TRUE(written) << written.error().describe();
  EXPECT_EQ(*written, (std::vector<std::string>{"__/escape", "abs/x", "a/__/__/b"}));
  EXPECT_EQ(read_text(out_ / "__" / "escape"), "1");
  EXPECT_EQ(read_text(out_ / "abs" / "x"), "2");
  EXPECT_EQ(read_text(out_ / "a" / "__" / "__" / "b"), "3");
  EXPECT_FALSE(fs::exists(temp_.path() / "escape"));
  EXPECT_FALSE(fs::exists("/abs/x"));
}

TEST_F(WriteArtifactsTest, PlantedDirectorySymlinkIsNotFollowed) {
  fs::create_directories(out_);
  fs::create_directories(temp_.path() / "elsewhere");
  fs::create_directory_symlink(temp_.path() / "elsewhere", out_ / "sub");
  const auto written = write_artifacts(out_, {artifact("sub/file", "x")});
  EXPECT_FALSE(written);
  EXPECT_TRUE(fs::is_empty(temp_.path() / "elsewhere"));
}

TEST_F(WriteArtifactsTest, PlantedFileSymlinkIsReplacedNotWrittenThrough) {
  fs::create_directories(out_);
  {
    std::ofstream(temp_.path() / "victim") << "keep";
  }
  fs::create_symlink(temp_.path() / "victim", out_ / "f");
  const auto written = write_artifacts(out_, {artifact("f", "new")});
  ASSERT_TRUE(written) << written.error().describe();
  EXPECT_EQ(read_text(temp_.path() / "victim"), "keep");
  EXPECT_FALSE(fs::is_symlink(out_ / "f"));
  EXPECT_EQ(read_text(out_ / "f"), "new");
}

TEST_F(WriteArtifactsTest, RewritingIntoTheSameDirReplaces) {
  ASSERT_TRUE(write_artifacts(out_, {artifact("f", "one")}));
  ASSERT_TRUE(write_artifacts(out_, {artifact("f", "two")}));
  EXPECT_EQ(read_text(out_ / "f"), "two");
  for (const auto& entry : fs::directory_iterator(out_)) {
    EXPECT_EQ(entry.path().filename(), "f") << "no temporary file left behind";
  }
}

TEST_F(WriteArtifactsTest, UnusableNameIsAnError) {
  EXPECT_FALSE(write_artifacts(out_, {artifact("/", "x")}));
}

}  // namespace
}  // namespace cordon::cli
