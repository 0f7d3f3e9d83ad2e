#include "cordon/temp_dir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace cordon {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(TempDir, CreatesPrivateDirAndRemovesIt) {
  fs::path path;
  {
    auto dir = TempDir::create("cordon-test-");
    ASSERT_TRUE(dir) << dir.error().describe();
    path = dir->path();
    struct stat st{};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    EXPECT_TRUE(path.filename().string().starts_with("cordon-test-"));
    write_file(path / "file", "x");
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(TempDir, DefaultParentIsTmpdirOrTmp) {
  auto outer = TempDir::create("cordon-test-parent-");
  ASSERT_TRUE(outer);
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", outer->path().c_str(), 1);
  auto inner = TempDir::create("inner-");
  if (old) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  ASSERT_TRUE(inner);
  EXPECT_EQ(inner->path().parent_path(), outer->path());
}

TEST(TempDir, ExplicitParentAndBadPrefix) {
  auto outer = TempDir::create("cordon-test-");
  ASSERT_TRUE(outer);
  auto inner = TempDir::create("x-", outer->path());
  ASSERT_TRUE(inner);
  EXPECT_EQ(inner->path().parent_path(), outer->path());
  EXPECT_FALSE(TempDir::create("a/b", outer->path()));
  auto missing = TempDir::create("x-", outer->path() / "nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().sys_errno, ENOENT);
}

TEST(TempDir, MoveTransfersOwnership) {
  auto made = TempDir::create("cordon-test-");
  ASSERT_TRUE(made);
  const fs::path path = made->path();
  TempDir moved = std::move(*made);
  EXPECT_TRUE(made->path().empty());
  EXPECT_EQ(moved.path(), path);
  EXPECT_TRUE(fs::exists(path));
  ASSERT_TRUE(moved.remove());
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(moved.remove());  // idempotent
}

TEST(RemoveTree, NeverFollowsSymlinks) {
  auto outside = TempDir::create("cordon-test-outside-");
  ASSERT_TRUE(outside);
  write_file(outside->path() / "precious", "keep me");
  fs::create_directory(outside->path() / "precious-dir");
  write_file(outside->path() / "precious-dir" / "inner", "keep me too");

  auto dir = TempDir::create("cordon-test-");
  ASSERT_TRUE(dir);
  const fs::path root = dir->path();
  fs::create_directories(root / "a" / "b");
  fs::create_symlink(outside->path() / "precious", root / "link-to-file");
  fs::create_directory_symlink(outside->path() / "precious-dir", root / "a" / "link-to-dir");
  fs::create_symlink("/nonexistent", root / "a" / "b" / "dangling");
  ASSERT_TRUE(dir->remove());

  EXPECT_FALSE(fs::exists(root));
  EXPECT_EQ(read_file(outside->path() / "precious"), "keep me");
  EXPECT_EQ(read_file(outside->path() / "precious-dir" / "inner"), "keep me too");
}

TEST(RemoveTree, SymlinkAsTheTargetRemovesOnlyTheLink) {
  auto outside = TempDir::create("cordon-test-outside-");
  ASSERT_TRUE(outside);
  write_file(outside->path() / "keep", "x");
  auto dir = TempDir::create("cordon-test-");
  ASSERT_TRUE(dir);
  fs::create_directory_symlink(outside->path(), dir->path() / "link");
  ASSERT_TRUE(remove_tree(dir->path() / "link"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir->path() / "link")));
  EXPECT_TRUE(fs::exists(outside->path() / "keep"));
}

void make_hostile_tree(const fs::path& root) {
  fs::create_directories(root / "locked" / "deeper");
  write_file(root / "locked" / "deeper" / "f", "x");
  write_file(root / "locked" / "g", "y");
  fs::create_directories(root / "noexec");
  write_file(root / "noexec" / "h", "z");
  fs::create_directories(root / "readonly");
  write_file(root / "readonly" / "i", "w");
  ::mkfifo((root / "fifo").c_str(), 0600);
  // Innermost first: once a parent is 000 its children cannot be chmodded.
  ::chmod((root / "locked" / "deeper").c_str(), 0);
  ::chmod((root / "locked").c_str(), 0);
  ::chmod((root / "noexec").c_str(), 0600);
  ::chmod((root / "readonly").c_str(), 0500);
}

TEST(RemoveTree, CopesWithUnreadableDirectories) {
  auto dir = TempDir::create("cordon-test-");
  ASSERT_TRUE(dir);
  const fs::path root = dir->path();
  make_hostile_tree(root);
  ASSERT_TRUE(dir->remove()) << "as uid " << ::geteuid();
  EXPECT_FALSE(fs::exists(root));
}

// As root, permissions never stop the removal, so the test above proves little there.
// Repeat it as an unprivileged user in a child process: the chmod path has to work.
TEST(RemoveTree, CopesWithUnreadableDirectoriesUnprivileged) {
  if (::geteuid() != 0) GTEST_SKIP() << "covered by CopesWithUnreadableDirectories when not root";
  constexpr uid_t kNobody = 65534;
  auto holder = TempDir::create("cordon-test-");
  ASSERT_TRUE(holder);
  const fs::path root = holder->path() / "tree";
  fs::create_directory(root);
  ASSERT_EQ(::chmod(holder->path().c_str(), 0755), 0);
  ASSERT_EQ(::chown(holder->path().c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::chown(root.c_str(), kNobody, kNobody), 0);

  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child builds and removes the tree as nobody: only _exit from here.
    if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(10);
    make_hostile_tree(root);
    if (::access((root / "locked").c_str(), R_OK) == 0) ::_exit(11);  // really locked out
    ::_exit(remove_tree(root) ? 0 : 12);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(fs::exists(root));
}

TEST(RemoveTree, DeepTreeDoesNotExhaustFds) {
  auto dir = TempDir::create("cordon-test-");
  ASSERT_TRUE(dir);
  // Deeper than any path buffer, built with *at calls the way hostile code could.
  int fd = ::open(dir->path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 2000; ++i) {
    ASSERT_EQ(::mkdirat(fd, "d", 0700), 0);
    const int next = ::openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ::close(fd);
    ASSERT_GE(next, 0);
    fd = next;
  }
  ::close(::openat(fd, "leaf", O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
  ::close(fd);
  const fs::path path = dir->path();
  ASSERT_TRUE(dir->remove());
  EXPECT_FALSE(fs::exists(path));
}

TEST(RemoveTree, MissingPathIsFineAndRootIsRefused) {
  EXPECT_TRUE(remove_tree("/nonexistent/cordon-test-missing"));
  EXPECT_FALSE(remove_tree("/"));
  auto dir = TempDir::create("cordon-test-");
  ASSERT_TRUE(dir);
  write_file(dir->path() / "plain", "x");
  ASSERT_TRUE(remove_tree(dir->path() / "plain"));
  EXPECT_FALSE(fs::exists(dir->path() / "plain"));
  // A trailing slash names the same directory.
  fs::create_directories(dir->path() / "sub" / "x");
  ASSERT_TRUE(remove_tree(dir->path().string() + "/sub/"));
  EXPECT_FALSE(fs::exists(dir->path() / "sub"));
}

}  // namespace
}  // namespace cordon
