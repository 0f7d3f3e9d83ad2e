// The catalog hands its BackendOptions to every backend it creates, and a refusal is a
// usage error that names the reason.
#include "frontend/backend_catalog.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace cordon::frontend {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(CORDON_TEST_BUILD_DIR) / "test-plugins";

// The catalog searches only the fixture plugins while this lives.
class FixturePluginPath {
 public:
  FixturePluginPath() {
    save("CORDON_PLUGIN_PATH", old_path_);
    save("CORDON_PLUGIN_PATH_ONLY", old_only_);
    ::setenv("CORDON_PLUGIN_PATH", kFixtures.c_str(), 1);
    ::setenv("CORDON_PLUGIN_PATH_ONLY", "1", 1);
  }
  ~FixturePluginPath() {
    restore("CORDON_PLUGIN_PATH", old_path_);
    restore("CORDON_PLUGIN_PATH_ONLY", old_only_);
  }
  FixturePluginPath(const FixturePluginPath&) = delete;
  FixturePluginPath& operator=(const FixturePluginPath&) = delete;

 private:
  static void save(const char* name, std::optional<std::string>& out) {
    if (const char* v = std::getenv(name)) out = v;
  }
  static void restore(const char* name, const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  std::optional<std::string> old_path_;
  std::optional<std::string> old_only_;
};

long long last_pool_size() {
  const fs::path file = kFixtures / "cordon-backend-fixture.so";
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return -3;
  const auto* value =
      static_cast<const long long*>(::dlsym(handle, "cordon_fixture_last_pool_size"));
  const long long out = value ? *value : -3;
  ::dlclose(handle);
  return out;
}

TEST(BackendCatalog, PassesItsOptionsToTheBackendsItCreates) {
  const FixturePluginPath path;
  BackendOptions options;
  options.pool_size = 4;
  const BackendCatalog catalog({}, "fixture", options);
  ASSERT_NE(catalog.backend("fixture"), nullptr);
  EXPECT_EQ(last_pool_size(), 4);
  EXPECT_TRUE(catalog.options_status());
  EXPECT_EQ(catalog.options().pool_size, std::optional<std::size_t>(4));
}

TEST(BackendCatalog, ARefusedOptionFailsTheChoiceWithTheReason) {
  const FixturePluginPath path;
  BackendOptions options;
  options.runtime = "nonsense";
  const BackendCatalog catalog({}, "fixture", options);
  EXPECT_EQ(catalog.backend("fixture"), nullptr);
  const Status status = catalog.options_status();
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(status.error().message.find("--runtime nonsense: only fixture-runtime is supported"),
            std::string::npos)
      << status.error().message;
  const Result<BackendChoice> choice =
      choose_from(catalog, {}, "fixture", /*allow_unisolated=*/true);
  ASSERT_FALSE(choice);
  EXPECT_EQ(choice.error().message, status.error().message);
}

// A variant a backend offers (the container backend under gVisor, issue #18) is an entry
// of its own where backends are listed, and nowhere else: `auto` and a plain catalog never
// create it, its label names it, and a runtime the user chose is not listed twice.
TEST(BackendCatalog, ListsTheVariantsABackendOffersAsEntriesOfTheirOwn) {
  const FixturePluginPath path;
  const BackendCatalog listed({}, "fixture", {}, BackendCatalog::Variants::kList);
  ASSERT_EQ(listed.entries().size(), 2u);
  EXPECT_EQ(listed.entries()[0].label, "fixture");
  EXPECT_EQ(listed.entries()[1].label, "fixture (alt)");
  EXPECT_EQ(listed.entries()[1].variant, "alt");
  ASSERT_NE(listed.backend("fixture (alt)"), nullptr);
  EXPECT_EQ(listed.backend("fixture (alt)")->variant(), "alt");
  EXPECT_EQ(listed.backend("fixture")->variant(), "");
  const std::vector<BackendCandidate> candidates = listed.candidates();
  EXPECT_FALSE(candidates[0].opt_in);
  EXPECT_TRUE(candidates[1].opt_in);
  EXPECT_EQ(candidates[1].plugin, "fixture");

  const BackendCatalog plain({}, "fixture", {});
  EXPECT_EQ(plain.entries().size(), 1u);
  // Named by its label: made, though the catalog was not asked to list variants.
  const BackendCatalog named({}, "fixture (alt)", {});
  ASSERT_NE(named.backend("fixture (alt)"), nullptr);
  const Result<BackendChoice> choice = choose_from(named, {}, "fixture (alt)", true);
  ASSERT_TRUE(choice) << choice.error().message;
  EXPECT_EQ(choice->name, "fixture (alt)");

  BackendOptions chosen;
  chosen.runtime = "fixture-runtime";
  const BackendCatalog with_runtime({}, "fixture", chosen, BackendCatalog::Variants::kList);
  ASSERT_EQ(with_runtime.entries().size(), 1u);
  EXPECT_EQ(with_runtime.entries()[0].label, "fixture (alt)");
  // `-b fixture --runtime fixture-runtime`: the plugin's name finds its one entry.
  EXPECT_NE(with_runtime.backend("fixture"), nullptr);
  const Result<BackendChoice> by_plugin = choose_from(with_runtime, {}, "fixture", true);
  ASSERT_TRUE(by_plugin) << by_plugin.error().message;
  EXPECT_EQ(by_plugin->name, "fixture (alt)");
}

}  // namespace
}  // namespace cordon::frontend
