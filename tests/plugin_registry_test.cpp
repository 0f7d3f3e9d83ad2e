#include "cordon/plugin_registry.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cordon/plugin_options.h"
#include "cordon/temp_dir.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(CORDON_TEST_BUILD_DIR) / "test-plugins";
const fs::path kShadow = kFixtures / "shadow";
const fs::path kGarbage = kFixtures / "garbage" / "cordon-backend-garbage.so";

fs::path fixture(const std::string& name) { return kFixtures / ("cordon-backend-" + name + ".so"); }

const PluginInfo* info_for(const PluginRegistry& registry, const fs::path& path) {
  const auto& plugins = registry.plugins();
  const auto it = std::ranges::find(plugins, path, &PluginInfo::path);
  return it == plugins.end() ? nullptr : &*it;
}

// Reads the good fixture's create() counter without loading it a second time.
int create_calls(const fs::path& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return -1;
  const int* calls = static_cast<const int*>(::dlsym(handle, "cordon_fixture_create_calls"));
  const int value = calls ? *calls : -1;
  ::dlclose(handle);
  return value;
}

// A variable the good fixture exports, read without loading it a second time.
template <typename T>
T fixture_variable(const fs::path& path, const char* name, T missing) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return missing;
  const auto* value = static_cast<const T*>(::dlsym(handle, name));
  const T out = value ? *value : missing;
  ::dlclose(handle);
  return out;
}

TEST(PluginRegistry, GoodPluginLoadsAndListingCreatesNothing) {
  PluginRegistry registry;
  registry.load_file(fixture("fixture"));
  ASSERT_EQ(registry.plugins().size(), 1u);
  const PluginInfo& info = registry.plugins().front();
  EXPECT_TRUE(info.loaded) << info.error;
  EXPECT_EQ(info.name, "fixture");
  EXPECT_EQ(info.version, "1.0-first");
  EXPECT_TRUE(info.error.empty());
  EXPECT_EQ(registry.loaded_names(), std::vector<std::string>{"fixture"});
  EXPECT_EQ(create_calls(fixture("fixture")), 0);

  {
    auto backend = registry.create("fixture");
    ASSERT_TRUE(backend) << backend.error().describe();
    EXPECT_EQ(create_calls(fixture("fixture")), 1);
    EXPECT_EQ((*backend)->name(), "fixture");
    EXPECT_TRUE((*backend)->probe().available);
    EXPECT_EQ((*backend)->probe().reason, "fixture probe");
    const RunResult result = (*backend)->run(RunRequest{}, CancelToken{}, nullptr);
    EXPECT_TRUE(result.ok());
  }  // the backend goes back to the plugin before the registry dlcloses it
}

// What the observer of a run through the C boundary saw.
struct RecordingObserver : RunObserver {
  std::vector<RunState> states;
  std::string output;
  std::vector<ResourceSample> samples;
  void on_state(RunState state) override { states.push_back(state); }
  void on_output(Stream stream, std::string_view chunk, bool kept) override {
    if (stream == Stream::kStdout && kept) output += chunk;
  }
  void on_sample(const ResourceSample& sample) override { samples.push_back(sample); }
};

TEST(PluginRegistry, RequestsResultsAndEventsCrossTheCBoundaryUnchanged) {
  PluginRegistry registry;
  registry.load_file(fixture("fixture"));
  auto backend = registry.create("fixture");
  ASSERT_TRUE(backend) << backend.error().describe();

  RunRequest request;
  request.code = "print(1)\n\xff\xfe not UTF-8";
  request.timeout = std::chrono::milliseconds(1234);
  request.stdin_data = std::string("in\0put", 6);
  request.input_files["data/\xc3\x28.bin"] = std::string("\x00\x01\x80", 3);
  request.input_files["a.txt"] = "text";
  request.limits.memory_bytes = 64u << 20;
  RecordingObserver observer;
  const RunResult result = (*backend)->run(request, CancelToken{}, &observer);
  ASSERT_EQ(result.outcome, Outcome::kOk) << result.error.value_or("");
  EXPECT_EQ(result.stdout_data, request.code);  // the raw bytes, not their lossy text
  EXPECT_EQ(result.stderr_data, *request.stdin_data);
  EXPECT_EQ(result.exit_code, 1234);
  EXPECT_EQ(result.cpu_ms, std::optional<std::int64_t>(12));
  EXPECT_FALSE(result.max_rss_kb);  // unmeasured stays unmeasured
  EXPECT_EQ(result.backend.name, "fixture");
  ASSERT_EQ(result.enforced.size(), 1u);
  EXPECT_EQ(result.enforced[0].aspect, Aspect::kMemory);
  EXPECT_EQ(result.enforced[0].mechanism, "fixture");
  ASSERT_EQ(result.artifacts.size(), 2u);
  EXPECT_EQ(result.artifacts[1].path, "data/\xc3(.bin");
  EXPECT_EQ(result.artifacts[1].content, std::string("\x00\x01\x80", 3));
  EXPECT_EQ(result.artifacts[0].size, 4u);

  EXPECT_EQ(observer.states, std::vector<RunState>{RunState::kRunning});
  EXPECT_EQ(observer.output, request.code);
  ASSERT_EQ(observer.samples.size(), 1u);
  EXPECT_EQ(observer.samples[0].elapsed, std::chrono::milliseconds(7));
  EXPECT_EQ(observer.samples[0].memory_bytes, std::optional<std::uint64_t>(4096));
  EXPECT_FALSE(observer.samples[0].cpu_usec);

  // Capabilities answer for the limits given; the range crosses too.
  const Capabilities caps = (*backend)->capabilities(request.limits);
  ASSERT_EQ(caps.aspects.size(), std::size(kAllAspects));
  const Capability* memory = caps.find(Aspect::kMemory);
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(memory->enforcement, Enforcement::kEnforced);
  EXPECT_EQ(memory->value, std::to_string(64u << 20));
  EXPECT_EQ(memory->range, (LimitRange{4096, 1u << 30}));

  // The plan is the plugin's: here Backend's default, rendered on the plugin's side.
  auto plan = (*backend)->describe_plan(request);
  ASSERT_TRUE(plan) << plan.error().describe();
  EXPECT_EQ(plan->backend_name, "fixture");
  EXPECT_EQ(plan->timeout_ms, 1234);
  // A request the plugin refuses: the plugin's kInvalidArgument, its message kept.
  request.limits.memory_bytes = 1;
  auto refused = (*backend)->describe_plan(request);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("memory"), std::string::npos) << refused.error().message;
}

TEST(PluginRegistry, CancelReachesAPluginRunThroughTheCBoundary) {
  PluginRegistry registry;
  registry.load_file(fixture("fixture"));
  auto backend = registry.create("fixture");
  ASSERT_TRUE(backend) << backend.error().describe();
  RunRequest request;
  request.code = "wait-for-cancel";
  CancelSource source;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    source.cancel();
  });
  const auto start = std::chrono::steady_clock::now();
  const RunResult result = (*backend)->run(request, source.token(), nullptr);
  canceller.join();
  EXPECT_EQ(result.outcome, Outcome::kCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(PluginRegistry, AnswersOutsideTheAgreedJsonAreThePluginsFailure) {
  PluginRegistry registry;
  registry.load_file(kGarbage);
  auto backend = registry.create("garbage");
  ASSERT_TRUE(backend) << backend.error().describe();
  const Probe probe = (*backend)->probe();
  EXPECT_FALSE(probe.available);
  EXPECT_EQ(probe.reason, "plugin 'garbage': the plugin returned no valid JSON");
  EXPECT_TRUE((*backend)->capabilities(Limits{}).aspects.empty());
  RunRequest request;
  request.code = "anything";
  const RunResult result = (*backend)->run(request, CancelToken{}, nullptr);
  EXPECT_EQ(result.outcome, Outcome::kSandboxError);
  EXPECT_EQ(result.backend.name, "garbage");
  EXPECT_NE(result.error.value_or("").find("plugin 'garbage': 'outcome'"), std::string::npos)
      << result.error.value_or("");
  request.code = "null";
  const RunResult none = (*backend)->run(request, CancelToken{}, nullptr);
  EXPECT_EQ(none.outcome, Outcome::kSandboxError);
  EXPECT_EQ(none.error, "plugin 'garbage': the plugin returned nothing");
  auto plan = (*backend)->describe_plan(request);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ErrorCode::kPlugin);
  // probe, capabilities, run, plan and the probe that names the failed run's variant (asked
  // once): every answer went back to the plugin's free_text.
  EXPECT_EQ(fixture_variable<int>(kGarbage, "cordon_garbage_freed", -1), 5);
}

TEST(PluginRegistry, OptionsReachThePluginAsGiven) {
  PluginRegistry registry;
  registry.load_file(fixture("fixture"));
  const fs::path file = fixture("fixture");
  {
    auto plain = registry.create("fixture");
    ASSERT_TRUE(plain) << plain.error().describe();
    // Created through the one create, unset fields unset.
    EXPECT_EQ(fixture_variable<int>(file, "cordon_fixture_create_calls", -1), 1);
    EXPECT_EQ(fixture_variable<long long>(file, "cordon_fixture_last_pool_size", -3), -1);
  }
  BackendOptions options;
  options.pool_size = 3;
  options.engine = "podman";
  options.runtime = "fixture-runtime";
  auto backend = registry.create("fixture", options);
  ASSERT_TRUE(backend) << backend.error().describe();
  EXPECT_EQ(fixture_variable<int>(file, "cordon_fixture_create_calls", -1), 2);
  EXPECT_EQ(fixture_variable<long long>(file, "cordon_fixture_last_pool_size", -3), 3);
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  EXPECT_STREQ(static_cast<const char*>(::dlsym(handle, "cordon_fixture_last_engine")), "podman");
  ::dlclose(handle);
}

// Sessions cross the C boundary (ABI 3.4, issue #41): the options reach the plugin, each call
// reaches the same session (its state), and reset, stats and the workspace's files answer
// as the plugin did, its refusals keeping their error code.
class PluginSessionCalls : public ::testing::TestWithParam<SessionCalls> {};

TEST_P(PluginSessionCalls, ASessionCrossesTheCBoundary) {
  PluginRegistry registry;
  registry.set_session_calls(GetParam());
  registry.load_file(fixture("fixture"));
  auto backend = registry.create("fixture");
  ASSERT_TRUE(backend) << backend.error().describe();
  SessionOptions options;
  options.base.language = Language::kPython;
  options.workspace_bytes = 4096;
  auto session = (*backend)->open_session(options);
  ASSERT_TRUE(session) << session.error().describe();
  BackendSession& s = **session;

  RunRequest call;
  call.code = "x = 1";
  RunResult first = s.run(call, CancelToken{}, nullptr);
  EXPECT_EQ(first.outcome, Outcome::kOk) << first.error.value_or("");
  EXPECT_EQ(first.stdout_data, "1 python x = 1");
  EXPECT_EQ(first.value, "'x = 1'");
  EXPECT_FALSE(first.state_lost);
  call.code = "lose";
  RunResult second = s.run(call, CancelToken{}, nullptr);
  EXPECT_EQ(second.stdout_data, "2 python lose");
  EXPECT_TRUE(second.state_lost);
  // The fixture is built on plugin_export.h against this library: by default its calls
  // take the caller's own request (no JSON); asked for JSON, a copy parsed from it.
  call.code = "where";
  const RunResult where = s.run(call, CancelToken{}, nullptr);
  const std::string caller = std::to_string(reinterpret_cast<std::uintptr_t>(&call));
  if (GetParam() == SessionCalls::kInProcessWhenShared) {
    EXPECT_EQ(where.value, caller);
  } else {
    EXPECT_NE(where.value, caller);
    EXPECT_TRUE(where.value.has_value());
  }
  call.code = "x = 1";

  SessionStats stats = s.stats();
  EXPECT_EQ(stats.calls, 3);
  EXPECT_EQ(stats.memory_kb, 1234);
  EXPECT_EQ(stats.workspace_bytes, 4096);
  EXPECT_EQ(stats.cpu_ms, 56);  // crossed the plugin boundary
  EXPECT_TRUE(stats.interpreter_alive);
  ASSERT_TRUE(s.reset());
  EXPECT_EQ(s.stats().calls, 0);

  const std::string bytes("a\0\xff b", 5);  // any bytes cross
  ASSERT_TRUE(s.write_file("data/in.bin", bytes));
  Result<std::string> back = s.read_file("data/in.bin", 100);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(*back, bytes);
  Result<std::string> small = s.read_file("data/in.bin", 2);
  ASSERT_FALSE(small);
  EXPECT_EQ(small.error().code, ErrorCode::kInvalidArgument);
  Result<std::string> missing = s.read_file("nope", 100);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().message, "no file nope");
  auto listed = s.list_files("");
  ASSERT_TRUE(listed) << listed.error().describe();
  EXPECT_EQ(*listed, (std::vector<WorkspaceEntry>{{"data/in.bin", false, 5}}));
  EXPECT_FALSE(s.list_files(".."));
  EXPECT_FALSE(s.read_file(std::string("\xff", 1), 10));  // not UTF-8: refused before it crosses

  // The plugin's refusal to open one, with its reason.
  options.workspace_bytes = 0;
  auto refused = (*backend)->open_session(options);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("a workspace of 0 bytes"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(BothWays, PluginSessionCalls,
                         ::testing::Values(SessionCalls::kInProcessWhenShared, SessionCalls::kJson),
                         [](const ::testing::TestParamInfo<SessionCalls>& param) {
                           return param.param == SessionCalls::kJson ? std::string("Json")
                                                                     : std::string("InProcess");
                         });

// A backend that holds no sessions (the default), and a plugin whose descriptor predates
// them (ABI 3.3 and older: no session functions), refuse with the reason.
TEST(PluginRegistry, ABackendWithoutSessionsRefusesThemWithTheReason) {
  PluginRegistry registry;
  registry.load_file(fixture("fixture"));
  BackendOptions alt;
  alt.runtime = "fixture-runtime";
  auto backend = registry.create("fixture", alt);
  ASSERT_TRUE(backend) << backend.error().describe();
  auto refused = (*backend)->open_session(SessionOptions{});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(refused.error().message, "the fixture (alt) backend does not hold sessions");

  PluginRegistry garbage;
  garbage.load_file(kGarbage);
  auto old = garbage.create("garbage");
  ASSERT_TRUE(old) << old.error().describe();
  auto none = (*old)->open_session(SessionOptions{});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "the garbage backend does not hold sessions");
}

TEST(PluginRegistry, AnOptionThePluginCannotHonourFailsCreationWithItsReason) {
  PluginRegistry registry;
  registry.load_file(fixture("fixture"));
  BackendOptions options;
  options.runtime = "nonsense";
  auto backend = registry.create("fixture", options);
  ASSERT_FALSE(backend);
  EXPECT_EQ(backend.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(backend.error().message,
            "backend 'fixture' cannot be created: --runtime nonsense: only fixture-runtime is "
            "supported");
}

// prepare() crosses the C boundary (ABI 3.1): never called by creating, probing or
// planning, once by the loader's prepare(), and the plugin's own guard makes it once in
// all; a failure comes back with the plugin's reason, and each run then fails with it.
TEST(PluginRegistry, PrepareCrossesTheCBoundaryOnlyWhenAskedFor) {
  PluginRegistry registry;
  registry.load_file(fixture("fixture"));
  const fs::path file = fixture("fixture");
  const auto calls = [&] {
    return fixture_variable<int>(file, "cordon_fixture_prepare_calls", -1);
  };
  {
    auto backend = registry.create("fixture");
    ASSERT_TRUE(backend) << backend.error().describe();
    const int at_start = calls();
    EXPECT_TRUE((*backend)->probe().available);
    EXPECT_FALSE((*backend)->capabilities(Limits{}).aspects.empty());
    EXPECT_TRUE((*backend)->describe_plan(RunRequest{}));
    EXPECT_EQ(calls(), at_start) << "probe, capabilities or plan prepared";
    EXPECT_TRUE((*backend)->prepare());
    EXPECT_EQ(calls(), at_start + 1);
    EXPECT_TRUE((*backend)->prepare());
    EXPECT_TRUE((*backend)->run(RunRequest{}, CancelToken{}, nullptr).ok());
    EXPECT_EQ(calls(), at_start + 1) << "prepared more than once";
  }
  BackendOptions options;
  options.image = "fail-prepare";
  auto failing = registry.create("fixture", options);
  ASSERT_TRUE(failing) << failing.error().describe();
  const Status prepared = (*failing)->prepare();
  ASSERT_FALSE(prepared);
  EXPECT_EQ(prepared.error().message, "plugin 'fixture' cannot prepare: fixture refuses");
  const RunResult run = (*failing)->run(RunRequest{}, CancelToken{}, nullptr);
  EXPECT_EQ(run.outcome, Outcome::kSandboxError);
  EXPECT_NE(run.error.value_or("").find("fixture refuses"), std::string::npos)
      << run.error.value_or("");
}

// A 3.0 plugin's descriptor ends before `prepare`: the loader never reads past its
// struct_size (the garbage fixture's prepare, there in memory, aborts) and has nothing to
// prepare for it.
TEST(PluginRegistry, APluginWithoutPrepareHasNothingToPrepare) {
  PluginRegistry registry;
  registry.load_file(kGarbage);
  auto backend = registry.create("garbage");
  ASSERT_TRUE(backend) << backend.error().describe();
  EXPECT_TRUE((*backend)->prepare());
}

TEST(PluginOptions, CStructRoundTripsAndShorterStructsReadAsUnset) {
  BackendOptions options;
  options.pool_size = 0;
  options.image = "localhost/img";
  options.runtime = "runc";
  options.prestart = "python";
  const CBackendOptions c(options);
  EXPECT_EQ(c.get()->struct_size, sizeof(cordon_backend_options));
  EXPECT_EQ(c.get()->pool_size, 0);
  EXPECT_EQ(c.get()->engine, nullptr);
  const BackendOptions back = backend_options_from_c(c.get());
  EXPECT_EQ(back.pool_size, std::optional<std::size_t>(0));
  EXPECT_FALSE(back.engine);
  EXPECT_EQ(back.image, "localhost/img");
  EXPECT_EQ(back.runtime, "runc");
  EXPECT_EQ(back.prestart, "python");

  // A caller that knew only the fields up to `engine`: the later ones are never read.
  cordon_backend_options shorter = *c.get();
  shorter.struct_size = offsetof(cordon_backend_options, image);
  const BackendOptions partial = backend_options_from_c(&shorter);
  EXPECT_EQ(partial.pool_size, std::optional<std::size_t>(0));
  EXPECT_FALSE(partial.image);
  EXPECT_FALSE(partial.runtime);
  EXPECT_FALSE(partial.prestart);
  EXPECT_FALSE(backend_options_from_c(nullptr).pool_size);

  // The reason of a refusal is cut to the caller's buffer and always terminated.
  char small[8];
  std::memset(small, 'x', sizeof(small));
  EXPECT_EQ(create_backend_from_c(c.get(), small, sizeof(small),
                                  [](const BackendOptions&) -> Result<Backend*> {
                                    return fail(ErrorCode::kInvalidArgument, "a long reason");
                                  }),
            nullptr);
  EXPECT_STREQ(small, "a long ");
}

struct BadCase {
  const char* file;
  const char* reason;  // a substring of the listed error
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.file; }

class BadPlugin : public testing::TestWithParam<BadCase> {};

TEST_P(BadPlugin, IsListedWithItsReasonAndNeverCreated) {
  const auto& c = GetParam();
  PluginRegistry registry;
  registry.load_file(fixture(c.file));  // the fixture's create() aborts if called
  ASSERT_EQ(registry.plugins().size(), 1u);
  const PluginInfo& info = registry.plugins().front();
  EXPECT_FALSE(info.loaded);
  EXPECT_EQ(info.name, c.file);  // derived from the file name
  EXPECT_TRUE(info.version.empty());
  EXPECT_NE(info.error.find(c.reason), std::string::npos) << info.error;
  EXPECT_TRUE(registry.loaded_names().empty());

  auto backend = registry.create(c.file);
  ASSERT_FALSE(backend);
  EXPECT_EQ(backend.error().code, ErrorCode::kPlugin);
  EXPECT_NE(backend.error().message.find(c.reason), std::string::npos) << backend.error().message;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, BadPlugin,
                         testing::Values(BadCase{"badmajor", "major version differs"},
                                         BadCase{"norun", "lacks probe, capabilities, run"},
                                         BadCase{"newminor", "is newer than"},
                                         BadCase{"smallstruct", "expected at least"},
                                         BadCase{"nosymbol",
                                                 "missing entry symbol cordon_plugin_entry"}),
                         [](const testing::TestParamInfo<BadCase>& param_info) {
                           return std::string(param_info.param.file);
                         });

TEST(PluginRegistry, APluginOfTheOldCppAbiIsRefusedNamingBothVersions) {
  PluginRegistry registry;
  registry.load_file(fixture("oldmajor"));  // ABI 2.1: a cordon::Backend* crossed
  ASSERT_EQ(registry.plugins().size(), 1u);
  EXPECT_EQ(registry.plugins().front().error,
            "plugin ABI 2.1 is incompatible with this cordon's ABI " +
                std::to_string(CORDON_PLUGIN_ABI_MAJOR) + "." +
                std::to_string(CORDON_PLUGIN_ABI_MINOR) +
                " (major version differs: rebuild the plugin against cordon/plugin_abi.h " +
                std::to_string(CORDON_PLUGIN_ABI_MAJOR) + ".x)");
  auto backend = registry.create("oldmajor");
  ASSERT_FALSE(backend);
  EXPECT_EQ(backend.error().message,
            "backend 'oldmajor' failed to load from " + fixture("oldmajor").string() + ": " +
                registry.plugins().front().error + " (no backend plugins were found)");
}

TEST(PluginRegistry, MissingFileIsListed) {
  PluginRegistry registry;
  registry.load_file("/nonexistent/cordon-backend-nope.so");
  ASSERT_EQ(registry.plugins().size(), 1u);
  const PluginInfo& info = registry.plugins().front();
  EXPECT_FALSE(info.loaded);
  EXPECT_EQ(info.name, "nope");
  EXPECT_NE(info.error.find("No such file"), std::string::npos) << info.error;
}

TEST(PluginRegistry, NonElfFileIsListedWithDlopenError) {
  auto dir = TempDir::create("cordon-test-plugins-");
  ASSERT_TRUE(dir);
  std::ofstream(dir->path() / "cordon-backend-x.so") << "#!/bin/sh\necho not a library\n";
  std::ofstream(dir->path() / "unrelated.so") << "ignored: wrong name pattern";
  std::ofstream(dir->path() / "cordon-backend-.so") << "ignored: no name";
  PluginRegistry registry;
  registry.discover({dir->path()});
  ASSERT_EQ(registry.plugins().size(), 1u);
  const PluginInfo& info = registry.plugins().front();
  EXPECT_FALSE(info.loaded);
  EXPECT_EQ(info.name, "x");
  EXPECT_NE(info.error.find("dlopen failed"), std::string::npos) << info.error;
}

TEST(PluginRegistry, DiscoverListsEveryFixtureSortedAndSkipsMissingDirs) {
  PluginRegistry registry;
  registry.discover({"/nonexistent/cordon-plugins", kFixtures});
  std::vector<std::string> files;
  for (const auto& info : registry.plugins()) files.push_back(info.path.filename().string());
  EXPECT_EQ(files,
            (std::vector<std::string>{"cordon-backend-badmajor.so", "cordon-backend-fixture.so",
                                      "cordon-backend-newminor.so", "cordon-backend-norun.so",
                                      "cordon-backend-nosymbol.so", "cordon-backend-oldmajor.so",
                                      "cordon-backend-smallstruct.so"}));
  EXPECT_EQ(registry.loaded_names(), std::vector<std::string>{"fixture"});
}

TEST(PluginRegistry, FirstDirectoryWinsAndTheOtherIsShadowed) {
  for (const bool shadow_first : {false, true}) {
    SCOPED_TRACE(shadow_first ? "shadow dir first" : "fixture dir first");
    const fs::path first = shadow_first ? kShadow : kFixtures;
    const fs::path second = shadow_first ? kFixtures : kShadow;
    PluginRegistry registry;
    registry.discover({first, second});
    const PluginInfo* winner = info_for(registry, first / "cordon-backend-fixture.so");
    const PluginInfo* loser = info_for(registry, second / "cordon-backend-fixture.so");
    ASSERT_TRUE(winner && loser);
    EXPECT_TRUE(winner->loaded);
    EXPECT_FALSE(loser->loaded);
    EXPECT_EQ(loser->error, "shadowed by " + (first / "cordon-backend-fixture.so").string());
    EXPECT_EQ(registry.loaded_names(), std::vector<std::string>{"fixture"});
    auto backend = registry.create("fixture");
    ASSERT_TRUE(backend);
    EXPECT_EQ((*backend)->version(), shadow_first ? "2.0-second" : "1.0-first");
  }
}

TEST(PluginRegistry, SameDirectoryTwiceIsSearchedOnce) {
  PluginRegistry registry;
  registry.discover({kShadow, kShadow, kShadow / "."});
  EXPECT_EQ(registry.plugins().size(), 1u);
  registry.load_file(kShadow / "cordon-backend-fixture.so");
  EXPECT_EQ(registry.plugins().size(), 1u);
}

TEST(PluginRegistry, UnknownNameNamesTheAvailableOnes) {
  PluginRegistry registry;
  auto none = registry.create("subprocess");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  EXPECT_NE(none.error().message.find("no backend plugins were found"), std::string::npos);

  registry.discover({kFixtures});
  auto missing = registry.create("nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("'nope'"), std::string::npos);
  EXPECT_NE(missing.error().message.find("available: fixture"), std::string::npos)
      << missing.error().message;
}

TEST(PluginRegistry, NamedDiscoveryLoadsOnlyThatPlugin) {
  PluginRegistry registry;
  registry.discover_named({kShadow, kFixtures}, "fixture");
  // Only the first folder's file of that name: nothing else was opened.
  ASSERT_EQ(registry.plugins().size(), 1u);
  EXPECT_EQ(registry.plugins().front().path, kShadow / "cordon-backend-fixture.so");
  EXPECT_EQ(registry.plugins().front().version, "2.0-second");
  EXPECT_TRUE(registry.create("fixture"));
}

TEST(PluginRegistry, NamedDiscoveryFallsBackToEverything) {
  // No file carries the name: every plugin is looked at, and the answer is the same as
  // discover()'s.
  PluginRegistry named;
  named.discover_named({kFixtures}, "nope");
  PluginRegistry all;
  all.discover({kFixtures});
  EXPECT_EQ(named.plugins().size(), all.plugins().size());
  EXPECT_GT(named.plugins().size(), 1u);
  // A file of that name that fails to load keeps its reason, once.
  PluginRegistry broken;
  broken.discover_named({kFixtures}, "badmajor");
  EXPECT_EQ(broken.plugins().size(), all.plugins().size());
  const PluginInfo* bad = info_for(broken, fixture("badmajor"));
  ASSERT_NE(bad, nullptr);
  EXPECT_FALSE(bad->loaded);
  EXPECT_NE(bad->error.find("incompatible"), std::string::npos) << bad->error;
}

TEST(PluginRegistry, DefaultSearchPath) {
  const char* old = std::getenv("CORDON_PLUGIN_PATH");
  const std::string saved = old ? old : "";
  ::setenv("CORDON_PLUGIN_PATH", "/first::/second", 1);
  const auto dirs = PluginRegistry::default_search_path();
  if (old) {
    ::setenv("CORDON_PLUGIN_PATH", saved.c_str(), 1);
  } else {
    ::unsetenv("CORDON_PLUGIN_PATH");
  }
  ASSERT_GE(dirs.size(), 3u);
  EXPECT_EQ(dirs[0], "/first");
  EXPECT_EQ(dirs[1], "/second");
  EXPECT_EQ(dirs.back().filename(), "plugins");  // the install prefix's plugin dir
  const bool has_build_dir =
      std::ranges::find(dirs, fs::path(CORDON_TEST_PLUGIN_DIR)) != dirs.end();
  EXPECT_EQ(has_build_dir, fs::is_directory(CORDON_TEST_PLUGIN_DIR));
  EXPECT_EQ(std::ranges::find(dirs, kFixtures), dirs.end());  // fixtures stay private
}

}  // namespace
}  // namespace cordon
