// The container plugin's settings: options given win over the environment, which stays
// the fallback, and values the backend cannot honour are refused with the reason.
#include "container_settings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "runtime_cli.h"

namespace cordon::oci {
namespace {

// Sets (or, with nullptr, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

struct CleanEnv {
  ScopedEnv pool{"CORDON_CONTAINER_POOL_SIZE", nullptr};
  ScopedEnv engine{"CORDON_CONTAINER_ENGINE", nullptr};
  ScopedEnv image{"CORDON_CONTAINER_IMAGE", nullptr};
};

TEST(ContainerSettings, NothingGivenIsTheDefaults) {
  const CleanEnv clean;
  auto options = container_settings({});
  ASSERT_TRUE(options) << options.error().describe();
  EXPECT_EQ(options->pool_size, 0u);
  EXPECT_EQ(options->runtime, "runc");
  EXPECT_TRUE(options->engine.empty());
}

TEST(ContainerSettings, AGivenPoolSizeWinsOverTheEnvironment) {
  const CleanEnv clean;
  const ScopedEnv pool("CORDON_CONTAINER_POOL_SIZE", "3");
  auto from_env = container_settings({});
  ASSERT_TRUE(from_env);
  EXPECT_EQ(from_env->pool_size, 3u);
  BackendOptions given;
  given.pool_size = 0;
  auto from_option = container_settings(given);
  ASSERT_TRUE(from_option);
  EXPECT_EQ(from_option->pool_size, 0u);
}

TEST(ContainerSettings, ImageWithoutEngineIsRefused) {
  const CleanEnv clean;
  BackendOptions given;
  given.image = "localhost/x";
  auto options = container_settings(given);
  ASSERT_FALSE(options);
  EXPECT_EQ(options.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(options.error().message.find("--image is for engine mode"), std::string::npos);
}

TEST(ContainerSettings, UnknownEngineIsRefused) {
  const CleanEnv clean;
  BackendOptions given;
  given.engine = "lxc";
  given.image = "x";
  auto options = container_settings(given);
  ASSERT_FALSE(options);
  EXPECT_EQ(options.error().message, "--engine lxc: unknown engine (podman or docker)");
}

TEST(ContainerSettings, EngineWithoutImageIsRefusedUnlessTheEnvironmentHasOne) {
  const CleanEnv clean;
  if (find_tool("podman").empty()) GTEST_SKIP() << "podman is not installed here";
  BackendOptions given;
  given.engine = "podman";
  auto refused = container_settings(given);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("--engine podman needs --image REF"), std::string::npos)
      << refused.error().message;
  const ScopedEnv image("CORDON_CONTAINER_IMAGE", "localhost/from-env");
  auto taken = container_settings(given);
  ASSERT_TRUE(taken) << taken.error().describe();
  EXPECT_EQ(taken->engine, "podman");
  EXPECT_EQ(taken->image, "localhost/from-env");
  // In engine mode podman runs runc: another runtime is refused.
  given.runtime = "crun";
  auto crun = container_settings(given);
  ASSERT_FALSE(crun);
  EXPECT_NE(crun.error().message.find("engine mode runs containers with runc only"),
            std::string::npos);
}

TEST(ContainerSettings, TheEnvironmentAloneKeepsItsOldMeaning) {
  // CORDON_CONTAINER_ENGINE without an image is not a failed creation: the backend is
  // created and its probe says why it cannot run.
  const CleanEnv clean;
  const ScopedEnv engine("CORDON_CONTAINER_ENGINE", "podman");
  auto options = container_settings({});
  ASSERT_TRUE(options) << options.error().describe();
  EXPECT_EQ(options->engine, "podman");
  EXPECT_EQ(options->image, "");
}

TEST(ContainerSettings, RuntimeIsCheckedAsTheBackendWouldProbeIt) {
  const CleanEnv clean;
  BackendOptions given;
  given.runtime = "nonsense";
  auto unknown = container_settings(given);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message,
            "--runtime nonsense: unknown OCI runtime 'nonsense' (runc, crun or runsc)");
  for (const char* name : {"runc", "crun", "runsc"}) {
    SCOPED_TRACE(name);
    given.runtime = name;
    const RuntimeProbe probe = probe_runtime(name);
    auto options = container_settings(given);
    EXPECT_EQ(options.has_value(), probe.usable);
    if (options) {
      EXPECT_EQ(options->runtime, name);
    } else {
      EXPECT_EQ(options.error().message, std::string("--runtime ") + name + ": " + probe.reason);
    }
  }
}

}  // namespace
}  // namespace cordon::oci
