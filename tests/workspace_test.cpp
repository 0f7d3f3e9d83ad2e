#include "cordon/workspace.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "cordon/sha256.h"
#include "cordon/temp_dir.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

class Workspace : public testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::create("cordon-test-ws-");
    ASSERT_TRUE(dir);
    dir_ = std::move(*dir);
    auto outside = TempDir::create("cordon-test-outside-");
    ASSERT_TRUE(outside);
    outside_ = std::move(*outside);
  }
  const fs::path& dir() const { return dir_.path(); }

  std::vector<std::string> paths(const CollectedArtifacts& c) {
    std::vector<std::string> out;
    for (const auto& a : c.artifacts) out.push_back(a.path);
    return out;
  }

  TempDir dir_;
  TempDir outside_;
};

TEST_F(Workspace, PlacesFilesWithParents) {
  const std::string binary("\x00\xFF\x01", 3);
  ASSERT_TRUE(place_input_files(
      dir(), {{"a.txt", "hello"}, {"sub/dir/b.bin", binary}, {"./c.txt", "c"}, {"empty", ""}}));
  EXPECT_EQ(read_file(dir() / "a.txt"), "hello");
  EXPECT_EQ(read_file(dir() / "sub/dir/b.bin"), binary);
  EXPECT_EQ(read_file(dir() / "c.txt"), "c");
  EXPECT_TRUE(fs::exists(dir() / "empty"));
  struct stat st{};
  ASSERT_EQ(::stat((dir() / "sub").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(Workspace, RefusesToWriteThroughSymlinks) {
  const fs::path target = outside_.path() / "target";
  write_file(target, "original");
  fs::create_symlink(target, dir() / "link");
  fs::create_directory_symlink(outside_.path(), dir() / "linkdir");

  auto file = place_input_files(dir(), {{"link", "overwritten"}});
  EXPECT_FALSE(file);
  auto through_dir = place_input_files(dir(), {{"linkdir/new", "escaped"}});
  ASSERT_FALSE(through_dir);
  EXPECT_NE(through_dir.error().message.find("linkdir"), std::string::npos);

  EXPECT_EQ(read_file(target), "original");
  EXPECT_FALSE(fs::exists(outside_.path() / "new"));
}

TEST_F(Workspace, RefusesEscapingPathsEvenWithoutValidate) {
  for (const char* path : {"../escape", "/abs", "a/../../escape", ""}) {
    EXPECT_FALSE(place_input_files(dir(), {{path, "x"}})) << path;
  }
  EXPECT_FALSE(fs::exists(dir().parent_path() / "escape"));
}

TEST_F(Workspace, ExistingFileIsNotOverwritten) {
  write_file(dir() / "a", "first");
  EXPECT_FALSE(place_input_files(dir(), {{"a", "second"}}));
  EXPECT_EQ(read_file(dir() / "a"), "first");
}

TEST_F(Workspace, CollectsMatchingRegularFilesWithDigests) {
  write_file(dir() / "out.txt", "abc");
  write_file(dir() / "notes.md", "no");
  write_file(dir() / "plots/a.png", "png-a");
  write_file(dir() / "plots/deep/b.png", "png-b");
  write_file(dir() / ".hidden.txt", "dot");
  auto got = collect_artifacts(dir(), {"*.txt", "plots/*.png", "*.png"}, 1 << 20);
  ASSERT_TRUE(got) << got.error().describe();
  EXPECT_EQ(paths(*got), (std::vector<std::string>{".hidden.txt", "out.txt", "plots/a.png",
                                                   "plots/deep/b.png"}));
  const Artifact& out = got->artifacts[1];
  EXPECT_EQ(out.content, "abc");
  EXPECT_EQ(out.size, 3u);
  EXPECT_EQ(out.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_TRUE(got->skipped.empty());
}

TEST_F(Workspace, StarDoesNotCrossSlashInPathPatterns) {
  write_file(dir() / "plots/a.png", "a");
  write_file(dir() / "plots/deep/b.png", "b");
  auto got = collect_artifacts(dir(), {"plots/*.png"}, 1 << 20);
  ASSERT_TRUE(got);
  EXPECT_EQ(paths(*got), (std::vector<std::string>{"plots/a.png"}));
  got = collect_artifacts(dir(), {"plots/*/*.png"}, 1 << 20);
  ASSERT_TRUE(got);
  EXPECT_EQ(paths(*got), (std::vector<std::string>{"plots/deep/b.png"}));
}

TEST_F(Workspace, SymlinksAreNeverFollowed) {
  const fs::path secret = outside_.path() / "secret.txt";
  write_file(secret, "host secret");
  write_file(outside_.path() / "dir/inner.txt", "inner secret");
  fs::create_symlink("/etc/passwd", dir() / "link");
  fs::create_symlink(secret, dir() / "secret.txt");
  fs::create_directory_symlink(outside_.path() / "dir", dir() / "linked-dir");
  write_file(dir() / "real.txt", "mine");

  auto got = collect_artifacts(dir(), {"link", "*.txt", "linked-dir/*", "*"}, 1 << 20);
  ASSERT_TRUE(got);
  EXPECT_EQ(paths(*got), (std::vector<std::string>{"real.txt"}));
  for (const auto& a : got->artifacts) {
    EXPECT_EQ(a.content.find("secret"), std::string::npos);
    EXPECT_EQ(a.content.find("root:"), std::string::npos);
  }
  // The matched symlinks are reported, so the caller learns why they are missing.
  auto mentions = [&](const std::string& what) {
    return std::ranges::any_of(got->skipped, [&](const std::string& s) {
      return s.starts_with(what + ":") && s.find("symlink") != std::string::npos;
    });
  };
  EXPECT_TRUE(mentions("link"));
  EXPECT_TRUE(mentions("secret.txt"));
}

TEST_F(Workspace, NonRegularFilesAreSkipped) {
  ASSERT_EQ(::mkfifo((dir() / "pipe.txt").c_str(), 0600), 0);
  auto got = collect_artifacts(dir(), {"*.txt"}, 1 << 20);  // must not hang on the FIFO
  ASSERT_TRUE(got);
  EXPECT_TRUE(got->artifacts.empty());
  ASSERT_EQ(got->skipped.size(), 1u);
  EXPECT_NE(got->skipped[0].find("not a regular file"), std::string::npos);
}

TEST_F(Workspace, TotalCapSkipsWhatDoesNotFit) {
  write_file(dir() / "a.bin", std::string(600, 'a'));
  write_file(dir() / "b.bin", std::string(600, 'b'));
  write_file(dir() / "c.bin", std::string(300, 'c'));
  auto got = collect_artifacts(dir(), {"*.bin"}, 1000);
  ASSERT_TRUE(got);
  // Sorted walk: a fits, b would exceed the cap, c still fits after it.
  EXPECT_EQ(paths(*got), (std::vector<std::string>{"a.bin", "c.bin"}));
  ASSERT_EQ(got->skipped.size(), 1u);
  EXPECT_TRUE(got->skipped[0].starts_with("b.bin: "));
  std::uint64_t total = 0;
  for (const auto& a : got->artifacts) total += a.size;
  EXPECT_LE(total, 1000u);
}

TEST_F(Workspace, VeryDeepTreesAreCutOffWithANote) {
  fs::path deep = dir();
  for (int i = 0; i < 70; ++i) deep /= "d";
  write_file(deep / "lost.txt", "too deep");
  write_file(dir() / "d/shallow.txt", "found");
  auto got = collect_artifacts(dir(), {"*.txt"}, 1 << 20);
  ASSERT_TRUE(got);
  EXPECT_EQ(paths(*got), (std::vector<std::string>{"d/shallow.txt"}));
  ASSERT_EQ(got->skipped.size(), 1u);
  EXPECT_NE(got->skipped[0].find("not searched"), std::string::npos) << got->skipped[0];
}

TEST_F(Workspace, NoGlobsNoArtifactsAndMissingDirIsAnError) {
  write_file(dir() / "a.txt", "a");
  auto none = collect_artifacts(dir(), {}, 1 << 20);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->artifacts.empty());
  auto missing = collect_artifacts(dir() / "nope", {"*"}, 1 << 20);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().sys_errno, ENOENT);
}

TEST_F(Workspace, UnreadableFileIsSkippedNotFatal) {
  write_file(dir() / "locked.txt", "x");
  fs::permissions(dir() / "locked.txt", fs::perms::none);
  // Root reads any file, so as root the collection runs in a child that dropped to
  // nobody (the directory is opened up for it); as anyone else it runs right here.
  auto check = [this]() -> int {
    auto got = collect_artifacts(dir(), {"*.txt"}, 1 << 20);
    if (!got) return 2;
    if (!got->artifacts.empty()) return 3;
    return got->skipped.size() == 1 ? 0 : 4;
  };
  if (::geteuid() != 0) {
    EXPECT_EQ(check(), 0);
    return;
  }
  fs::permissions(dir(), fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec |
                             fs::perms::group_read | fs::perms::others_read);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    constexpr uid_t kNobody = 65534;
    if (::setresgid(kNobody, kNobody, kNobody) != 0 ||
        ::setresuid(kNobody, kNobody, kNobody) != 0) {
      ::_exit(5);
    }
    ::_exit(check());
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "2: error, 3: collected, 4: not listed as skipped, 5: setuid";
}

// The one writer of a backend's own run files (the code file, an OCI bundle's files).
TEST_F(Workspace, WriteNewFileSetsTheExactModeAndNeverWritesThroughWhatIsThere) {
  const mode_t old_umask = ::umask(077);  // would narrow 0444 to 0400 without the fchmod
  const Status written = write_new_file(dir() / "code", std::string("print(1)\0x", 10), 0444);
  ::umask(old_umask);
  ASSERT_TRUE(written) << written.error().describe();
  EXPECT_EQ(read_file(dir() / "code"), std::string("print(1)\0x", 10));
  struct stat st{};
  ASSERT_EQ(::stat((dir() / "code").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0444u);

  // An existing file is not truncated, a symlink is not followed.
  const auto again = write_new_file(dir() / "code", "other", 0644);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().sys_errno, EEXIST);
  EXPECT_EQ(read_file(dir() / "code"), std::string("print(1)\0x", 10));
  write_file(outside_.path() / "target", "host");
  fs::create_symlink(outside_.path() / "target", dir() / "link");
  EXPECT_FALSE(write_new_file(dir() / "link", "through", 0644));
  EXPECT_EQ(read_file(outside_.path() / "target"), "host");
}

}  // namespace
}  // namespace cordon
