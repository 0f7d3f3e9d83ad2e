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

}  // namespace
}  // namespace cordon::frontend
