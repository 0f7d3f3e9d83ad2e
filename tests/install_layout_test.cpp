// Where the build tree's cordon finds its plugins and helpers (cordon/install_layout.h).
// An installed prefix's own lookup is tested from outside by install_test.sh (CTest
// install_staged), which stages one and runs it with the build tree hidden.
#include "cordon/install_layout.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "cordon/scope_exit.h"
#include "cordon/temp_dir.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;

TEST(InstallLayout, TheBuildTreesLibraryUsesTheBuildTree) {
  const InstallLayout& layout = install_layout();
  EXPECT_TRUE(layout.build_tree);
  EXPECT_TRUE(fs::equivalent(layout.library_dir, fs::path(CORDON_TEST_BUILD_DIR) / "lib"));
  ASSERT_FALSE(layout.plugins.empty());
  EXPECT_EQ(layout.plugins.front(), fs::path(CORDON_TEST_PLUGIN_DIR));
  ASSERT_FALSE(layout.libexec.empty());
  EXPECT_EQ(layout.libexec.front(), fs::path(CORDON_TEST_BUILD_DIR) / "libexec");
}

TEST(InstallLayout, HelpersComeFromTheBuildTreeOrCordonLibexecDir) {
  const char* old = std::getenv("CORDON_LIBEXEC_DIR");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  const ScopeExit restore([&] {
    if (saved) {
      ::setenv("CORDON_LIBEXEC_DIR", saved->c_str(), 1);
    } else {
      ::unsetenv("CORDON_LIBEXEC_DIR");
    }
  });
  ::unsetenv("CORDON_LIBEXEC_DIR");
  const auto reaper = find_libexec_helper("cordon-init");
  ASSERT_TRUE(reaper);
  EXPECT_EQ(*reaper, fs::path(CORDON_TEST_BUILD_DIR) / "libexec" / "cordon-init");
  EXPECT_FALSE(find_libexec_helper("cordon-no-such-helper"));

  // $CORDON_LIBEXEC_DIR first, but only for a file it holds that can be executed.
  auto dir = TempDir::create("cordon-test-libexec-");
  ASSERT_TRUE(dir);
  std::ofstream(dir->path() / "cordon-init") << "#!/bin/sh\n";
  ::setenv("CORDON_LIBEXEC_DIR", dir->path().c_str(), 1);
  EXPECT_EQ(find_libexec_helper("cordon-init"), reaper);  // not executable yet
  ASSERT_EQ(::chmod((dir->path() / "cordon-init").c_str(), 0755), 0);
  EXPECT_EQ(find_libexec_helper("cordon-init"), dir->path() / "cordon-init");
}

}  // namespace
}  // namespace cordon
