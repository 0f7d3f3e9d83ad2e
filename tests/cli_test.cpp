// The real `cordon` binary, run as a user would: exit statuses, JSON shape, inputs and
// artifacts, and the errors of cordon itself (exit 125).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_run_support.h"
#include "cordon/proc/run_tool.h"
#include "cordon/temp_dir.h"
#include "kernel_features.h"
#include "loopback_server.h"

extern char** environ;

namespace {

using cordon::testing::Ran;
using cordon::testing::run_cordon;
using cordon::testing::RunSpec;
namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

Ran cordon(std::vector<std::string> args) {
  return run_cordon(RunSpec{std::move(args), {}, {}, {}});
}

// The whole of stdout must be exactly one JSON object (parse() rejects trailing text).
nlohmann::json parse_one_object(const std::string& text) {
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << "stdout is not one JSON document: " << e.what() << "\n" << text;
    return nlohmann::json::object();
  }
  EXPECT_TRUE(value.is_object()) << text;
  return value;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

cordon::TempDir make_temp() {
  auto dir = cordon::TempDir::create("cordon-cli-test-");
  EXPECT_TRUE(dir.has_value());
  return dir ? std::move(*dir) : cordon::TempDir();
}

// Whether some backend here isolates, in which case `auto` legitimately runs.
// --- exit statuses ---

TEST(CliTest, OkPassesOutputThroughAndExitsZero) {
  const Ran ran = cordon({"run", "-b", "subprocess", "-c", "echo hello; echo oops >&2"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(ran.out, "hello\n");
  EXPECT_NE(ran.err.find("oops\n"), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("cordon: ok (exit 0)"), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("[subprocess"), std::string::npos) << ran.err;
}

TEST(CliTest, ExitStatusOfTheCodeIsCordonsOwn) {
  const Ran ran = cordon({"run", "-b", "subprocess", "-c", "exit 7"});
  EXPECT_EQ(ran.status, 7) << ran.err;
  EXPECT_NE(ran.err.find("failed (exit 7)"), std::string::npos) << ran.err;
}

TEST(CliTest, TimeoutExits124Promptly) {
  const Ran ran = cordon({"run", "-b", "subprocess", "-t", "200ms", "-c", "sleep 5"});
  EXPECT_EQ(ran.status, 124) << ran.err;
  EXPECT_LT(ran.elapsed, milliseconds(2000));
  EXPECT_NE(ran.err.find("cordon: timed out after"), std::string::npos) << ran.err;
}

TEST(CliTest, SignalExits128PlusN) {
  const Ran ran = cordon({"run", "-b", "subprocess", "-c", "kill -SEGV $$"});
  EXPECT_EQ(ran.status, 128 + SIGSEGV) << ran.err;
  EXPECT_NE(ran.err.find("killed by signal 11 (SIGSEGV)"), std::string::npos) << ran.err;
}

TEST(CliTest, SigtermToCordonCancelsTheRun) {
  // The code prints its pid once running, then becomes `sleep`; cordon is signalled only
  // then, so its handlers are in place and the test checks cancellation, not a default kill.
  const RunSpec spec{
      {"run", "-b", "subprocess", "-t", "20s", "-c", "echo $$; exec sleep 10"}, {}, {}, "\n"};
  const Ran ran = run_cordon(spec);
  EXPECT_EQ(ran.status, 128 + SIGTERM) << ran.err;
  EXPECT_LT(ran.elapsed, milliseconds(5000));
  EXPECT_NE(ran.err.find("cordon: cancelled"), std::string::npos) << ran.err;
  ASSERT_FALSE(ran.out.empty());
  const pid_t code_pid = std::stoi(ran.out);
  EXPECT_EQ(::kill(code_pid, 0), -1) << "the code outlived cordon";
}

// --- failures of cordon itself: 125 ---

TEST(CliTest, UnknownOptionIs125) {
  const Ran ran = cordon({"run", "--no-such-option", "-c", "true"});
  EXPECT_EQ(ran.status, 125);
  EXPECT_NE(ran.err.find("--no-such-option"), std::string::npos) << ran.err;
  EXPECT_TRUE(ran.out.empty()) << ran.out;
}

TEST(CliTest, NoCommandIs125) { EXPECT_EQ(cordon({}).status, 125); }

TEST(CliTest, NoCodeIs125) {
  const Ran ran = cordon({"run", "-b", "subprocess"});
  EXPECT_EQ(ran.status, 125);
  EXPECT_NE(ran.err.find("no code given"), std::string::npos) << ran.err;
}

TEST(CliTest, UnknownBackendIs125NamingTheAvailableOnes) {
  const Ran ran = cordon({"run", "-b", "no-such-backend", "-c", "true"});
  EXPECT_EQ(ran.status, 125);
  EXPECT_NE(ran.err.find("unknown backend 'no-such-backend'"), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("available backends: "), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("subprocess"), std::string::npos) << ran.err;
  EXPECT_EQ(std::count(ran.err.begin(), ran.err.end(), '\n'), 1) << "one line: " << ran.err;
}

struct BadValue {
  std::vector<std::string> args;
  std::string named;  // the option the message must name
};

class CliBadValueTest : public ::testing::TestWithParam<BadValue> {};

TEST_P(CliBadValueTest, Is125NamingTheOption) {
  std::vector<std::string> args{"run", "-b", "subprocess"};
  args.insert(args.end(), GetParam().args.begin(), GetParam().args.end());
  args.insert(args.end(), {"-c", "true"});
  const Ran ran = cordon(args);
  EXPECT_EQ(ran.status, 125) << ran.err;
  EXPECT_NE(ran.err.find(GetParam().named), std::string::npos) << ran.err;
}

INSTANTIATE_TEST_SUITE_P(
    Values, CliBadValueTest,
    ::testing::Values(
        BadValue{{"-t", "5x"}, "--timeout"}, BadValue{{"-t", ""}, "--timeout"},
        BadValue{{"--cpu", "soon"}, "--cpu"}, BadValue{{"--memory", "lots"}, "--memory"},
        BadValue{{"--memory=-5M"}, "--memory"}, BadValue{{"--output-cap", "1.5"}, "--output-cap"},
        BadValue{{"--processes", "0"}, "--processes"}, BadValue{{"-l", "cobol"}, "--language"},
        BadValue{{"--env", "NOEQUALS"}, "--env"}, BadValue{{"--file", "/no/such/file"}, "--file"},
        BadValue{{"--pool-size", "-1"}, "--pool-size"},
        BadValue{{"--pool-size", "two"}, "--pool-size"},
        BadValue{{"--allow-net", "*"}, "--allow-net"},
        BadValue{{"--allow-net", "a..b"}, "--allow-net"},
        BadValue{{"--deny-net", "0.0.0.0/0"}, "--allow-net"},
        BadValue{{"--net-max-bytes", "1M"}, "--net-max-bytes"},
        BadValue{{"--allow-net", "pypi.org", "--net-max-connections", "0"},
                 "--net-max-connections"}));

// --- backend options (--pool-size, --engine, --image, --runtime) ---

TEST(CliTest, BackendOptionsAreTakenAndIgnoredWhereABackendHasNone) {
  // The subprocess backend has no pool, engine or runtime: it runs as without them.
  const Ran sub = cordon({"run", "-b", "subprocess", "--pool-size", "2", "--engine", "podman",
                          "--runtime", "anything", "-c", "echo hi"});
  EXPECT_EQ(sub.status, 0) << sub.err;
  EXPECT_EQ(sub.out, "hi\n");
  // The namespace backend takes a pool: the run is served (from it or cold) as usual.
  const Ran ns = cordon({"run", "-b", "namespace", "--pool-size", "1", "-c", "echo pooled"});
  EXPECT_EQ(ns.status, 0) << ns.err;
  EXPECT_EQ(ns.out, "pooled\n");
}

// --- the network allow-list (issue #16) ---

// A backend that cannot carry the list is refused with the reason before anything runs: the
// code never runs with the host's network, nor with none while the caller thinks the list
// holds. `auto` passes such backends over.
TEST(CliTest, AnAllowListOnABackendWithoutAProxyIsRefused) {
  for (const char* backend : {"subprocess"}) {
    const Ran ran = cordon({"run", "-b", backend, "--allow-net", "pypi.org", "-c", "echo ran"});
    EXPECT_EQ(ran.status, 125) << ran.err;
    EXPECT_EQ(ran.out, "");
    EXPECT_NE(ran.err.find(std::string("backend '") + backend +
                           "' is not available here: it cannot carry a network allow-list"),
              std::string::npos)
        << ran.err;
  }
  const Ran plan = cordon({"plan", "--allow-net", "pypi.org", "-c", "true"});
  EXPECT_EQ(plan.status, 0) << plan.err;
  EXPECT_NE(plan.out.find("plan of backend namespace"), std::string::npos) << plan.out;
}

TEST(CliTest, PlanShowsTheProxyAndTheList) {
  const Ran ran = cordon({"plan", "-b", "namespace", "--allow-net", "pypi.org", "--deny-net",
                          "evil.pypi.org", "-c", "true"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_NE(ran.out.find("network: loopback only (lo up, no route out); egress only through "
                         "cordon's proxy, relayed from 127.0.0.1:3128 (HTTP_PROXY): allow "
                         "pypi.org; deny evil.pypi.org"),
            std::string::npos)
      << ran.out;
  // The container backend carries a list too (its proxy's socket in the bundle it sees).
  const Ran container =
      cordon({"plan", "-b", "container", "--allow-net", "pypi.org", "-c", "true"});
  EXPECT_EQ(container.status, 0) << container.err;
  EXPECT_NE(container.out.find("egress only through cordon's proxy, relayed from 127.0.0.1:3128 "
                               "(HTTP_PROXY): allow pypi.org"),
            std::string::npos)
      << container.out;
}

// The host's 127.0.0.2 (the sandbox's loopback is its own, and 127.0.0.1 is in NO_PROXY),
// allowed explicitly as an address: the one connection goes through the proxy and is
// reported; another port is denied; nothing leaves the machine.
TEST(CliTest, AllowNetReachesAnAllowedAddressAndReportsEveryConnection) {
  const cordon::testing::FromHostServer server;
  const std::string port = std::to_string(server.port());
  const std::string code =
      "import urllib.request, urllib.error\n"
      "print(urllib.request.urlopen('http://127.0.0.2:" +
      port +
      "/', timeout=10).read().decode())\n"
      "try:\n"
      "    urllib.request.urlopen('http://127.0.0.3:" +
      port +
      "/', timeout=10)\n"
      "except urllib.error.HTTPError as e:\n"
      "    print('denied', e.code)\n";
  const Ran ran = cordon(
      {"run", "-b", "namespace", "--allow-net", "127.0.0.2:" + port, "-l", "python", "-c", code});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(ran.out, "from host\ndenied 403\n") << ran.err;
  EXPECT_NE(ran.err.find("cordon: network: allowed GET 127.0.0.2:" + port + ": "),
            std::string::npos)
      << ran.err;
  EXPECT_NE(ran.err.find("cordon: network: denied GET 127.0.0.3:" + port + ": "), std::string::npos)
      << ran.err;
}

// `run --tool-call --allow-net`: the call runs under the operator's list (the model's
// arguments have no say in it), its connections in the text the model reads.
TEST(CliTest, AToolCallRunsUnderTheOperatorsAllowList) {
  const cordon::testing::FromHostServer server;
  const std::string target = server.target();
  RunSpec spec;
  spec.args = {"run",        "--tool-call",  "-b",          "namespace", "--no-history",
               "--no-audit", "--unverified", "--allow-net", target};
  spec.stdin_data = nlohmann::json{
      {"code",
       "import urllib.request\nprint(urllib.request.urlopen("
       "'http://" +
           target + "/', timeout=10).read().decode())"},
      {"language", "python"},
      {"timeout", nullptr},
      {"files", nullptr},
      {"collect",
       nullptr}}.dump();
  const Ran ran = run_cordon(spec);
  EXPECT_EQ(ran.status, 0) << ran.err << ran.out;
  const nlohmann::json result = parse_one_object(ran.out);
  const std::string text = result["content"][0]["text"].get<std::string>();
  EXPECT_NE(text.find("--- stdout ---\nfrom host\n"), std::string::npos) << text;
  EXPECT_NE(text.find("--- network ---\nallowed GET " + target), std::string::npos) << text;
}

TEST(CliTest, NamespacePrestartTakesPythonShOrNone) {
  // With a pool and python started ahead, a python run is served as usual.
  const Ran pre = cordon({"run", "-b", "namespace", "--pool-size", "1", "--prestart", "python",
                          "-l", "python", "-c", "print(__name__)"});
  EXPECT_EQ(pre.status, 0) << pre.err;
  EXPECT_EQ(pre.out, "__main__\n");
  // Both, in either order: a sh run is served as usual.
  for (const char* both : {"python,sh", "sh,python", "sh"}) {
    const Ran shell = cordon({"run", "-b", "namespace", "--pool-size", "1", "--prestart", both,
                              "-c", "echo \"${0##*/} $1\""});
    EXPECT_EQ(shell.status, 0) << both << ": " << shell.err;
    EXPECT_EQ(shell.out, "sh \n") << both;
  }
  const Ran none = cordon({"run", "-b", "namespace", "--prestart", "none", "-c", "echo cold"});
  EXPECT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(none.out, "cold\n");
  const Ran bad = cordon({"run", "-b", "namespace", "--prestart", "ruby", "-c", "true"});
  EXPECT_EQ(bad.status, 125) << bad.err;
  EXPECT_NE(bad.err.find("--prestart takes python, sh, both (python,sh) or none (got 'ruby')"),
            std::string::npos)
      << bad.err;
  for (const char* wrong : {"python,", ",sh", "python,,sh", "sh,ruby"}) {
    const Ran refused = cordon({"run", "-b", "namespace", "--prestart", wrong, "-c", "true"});
    EXPECT_EQ(refused.status, 125) << wrong << ": " << refused.err;
  }
}

TEST(CliTest, ContainerRefusesAnUnknownRuntimeWithTheReason) {
  for (const char* command : {"run", "plan", "prompt"}) {
    SCOPED_TRACE(command);
    std::vector<std::string> args{command, "-b", "container", "--runtime", "nonsense"};
    if (std::string_view(command) == "run") args.insert(args.end(), {"-c", "true"});
    const Ran ran = cordon(args);
    EXPECT_EQ(ran.status, 125) << ran.err;
    EXPECT_NE(ran.err.find("--runtime nonsense: unknown OCI runtime 'nonsense' (runc, crun or "
                           "runsc)"),
              std::string::npos)
        << ran.err;
  }
  // Through auto too: a runtime asked for and refused is not silently replaced by another
  // backend.
  const Ran autochosen = cordon({"run", "--json", "--runtime", "nonsense", "-c", "true"});
  EXPECT_EQ(autochosen.status, 125);
  EXPECT_NE(parse_one_object(autochosen.out).value("error", "").find("--runtime nonsense"),
            std::string::npos)
      << autochosen.out;
}

// --runsc-platform (issue #40, item 8): a backend option beside $CORDON_RUNSC_PLATFORM,
// which it beats; shown by `plan` (the runtime's flags) and by `backends` (the runsc
// variant's reason); a name the installed runsc does not list is refused with those it does.
TEST(CliTest, RunscPlatformOptionIsPlannedListedAndChecked) {
  if (cordon::proc::find_tool("runsc").empty() || ::geteuid() != 0) {
    CORDON_SKIP_OR_FAIL("runsc is not installed, or not root (cordon drives runsc as root)");
  }
  const std::vector<std::string> plan = {"plan",  "-b",     "container", "--runtime",
                                         "runsc", "--json", "-c",        "true"};
  // The environment's bogus name alone is refused; the option wins over it.
  const Ran by_env = run_cordon(RunSpec{plan, {}, {"CORDON_RUNSC_PLATFORM=bogus"}, {}});
  EXPECT_NE(by_env.status, 0) << by_env.out;
  std::vector<std::string> with_option = plan;
  with_option.insert(with_option.begin() + 5, {"--runsc-platform", "ptrace"});
  const Ran planned = run_cordon(RunSpec{with_option, {}, {"CORDON_RUNSC_PLATFORM=bogus"}, {}});
  ASSERT_EQ(planned.status, 0) << planned.err;
  EXPECT_NE(planned.out.find("\"platform\": \"ptrace\""), std::string::npos) << planned.out;
  EXPECT_NE(planned.out.find("\"--platform=ptrace\""), std::string::npos) << planned.out;

  for (const char* command : {"run", "plan", "backends"}) {
    SCOPED_TRACE(command);
    std::vector<std::string> args{command, "--runsc-platform", "nosuch"};
    if (std::string_view(command) != "backends") {
      args.insert(args.end(), {"-b", "container", "--runtime", "runsc", "-c", "true"});
    }
    const Ran refused = cordon(args);
    const std::string said = refused.out + refused.err;
    EXPECT_NE(said.find("--runsc-platform nosuch: runsc (gVisor) at"), std::string::npos) << said;
    EXPECT_NE(said.find("is not one this runsc has (kvm, ptrace)"), std::string::npos) << said;
    if (std::string_view(command) != "backends") {
      EXPECT_EQ(refused.status, 125) << said;
    }
  }
  const Ran listed = cordon({"backends", "--runsc-platform", "ptrace"});
  EXPECT_EQ(listed.status, 0) << listed.err;
  EXPECT_NE(listed.out.find("platform ptrace (asked by --runsc-platform)"), std::string::npos)
      << listed.out;
}

TEST(CliTest, ContainerEngineWithoutImageIsRefused) {
  const Ran ran = cordon({"run", "-b", "container", "--engine", "podman", "-c", "true"});
  EXPECT_EQ(ran.status, 125) << ran.err;
  EXPECT_TRUE(ran.err.find("--engine podman needs --image") != std::string::npos ||
              ran.err.find("podman is not installed") != std::string::npos)
      << ran.err;
  const Ran image_only = cordon({"run", "-b", "container", "--image", "x", "-c", "true"});
  EXPECT_EQ(image_only.status, 125) << image_only.err;
  EXPECT_NE(image_only.err.find("--image is for engine mode"), std::string::npos) << image_only.err;
}

TEST(CliTest, AutoRefusesABackendThatDoesNotIsolate) {
  // Only the subprocess plugin on the search path, whatever else this build has.
  char tmpl[] = "/tmp/cordon-cli-plugins-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string link = dir + "/cordon-backend-subprocess.so";
  ASSERT_EQ(::symlink(CORDON_TEST_PLUGIN_DIR "/cordon-backend-subprocess.so", link.c_str()), 0);
  const Ran ran = run_cordon({{"run", "-c", "echo should-not-run"},
                              {},
                              {"CORDON_PLUGIN_PATH=" + dir, "CORDON_PLUGIN_PATH_ONLY=1"},
                              {}});
  ::unlink(link.c_str());
  ::rmdir(dir.c_str());
  EXPECT_EQ(ran.status, 125);
  EXPECT_TRUE(ran.out.empty()) << "the code must not run: " << ran.out;
  EXPECT_NE(ran.err.find("no isolating backend"), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("network"), std::string::npos) << "names what is missing: " << ran.err;
  EXPECT_NE(ran.err.find("--allow-unisolated"), std::string::npos) << ran.err;
}

TEST(CliTest, AutoWithAllowUnisolatedRuns) {
  const Ran ran = cordon({"run", "--allow-unisolated", "-c", "echo ran"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(ran.out, "ran\n");
}

// --- JSON ---

TEST(CliTest, JsonIsExactlyOneObjectWithTheSchemaFields) {
  const Ran ran = cordon({"run", "-b", "subprocess", "--json", "-c", "echo hi; exit 3"});
  EXPECT_EQ(ran.status, 3) << ran.err;
  const nlohmann::json result = parse_one_object(ran.out);
  for (const char* field : {"schema_version",   "outcome",          "ok",
                            "stdout",           "stderr",           "exit_code",
                            "timed_out",        "signal",           "oom_killed",
                            "stdout_truncated", "stderr_truncated", "wall_ms",
                            "setup_ms",         "cpu_ms",           "max_rss_kb",
                            "memory_peak_kb",   "backend",          "policy",
                            "enforced",         "artifacts",        "error"}) {
    EXPECT_TRUE(result.contains(field)) << field << " missing in " << ran.out;
  }
  EXPECT_EQ(result.value("outcome", ""), "failed");
  EXPECT_EQ(result.value("exit_code", 0), 3);
  EXPECT_EQ(result.value("stdout", ""), "hi\n");
  EXPECT_EQ(result.value("ok", true), false);
  EXPECT_EQ(ran.err.find("cordon:"), std::string::npos) << "no status line with --json";
}

TEST(CliTest, JsonTimeout) {
  const Ran ran = cordon({"run", "-b", "subprocess", "--json", "-t", "0.2s", "-c", "sleep 5"});
  EXPECT_EQ(ran.status, 124);
  const nlohmann::json result = parse_one_object(ran.out);
  EXPECT_EQ(result.value("outcome", ""), "timed_out");
  EXPECT_EQ(result.value("timed_out", false), true);
}

TEST(CliTest, JsonUsageErrorIsAnObjectWithError) {
  const Ran ran = cordon({"run", "--json", "-t", "forever", "-c", "true"});
  EXPECT_EQ(ran.status, 125);
  const nlohmann::json error = parse_one_object(ran.out);
  ASSERT_TRUE(error.contains("error")) << ran.out;
  EXPECT_NE(error["error"].get<std::string>().find("--timeout"), std::string::npos);
}

TEST(CliTest, JsonParseErrorIsAnObjectWithError) {
  const Ran ran = cordon({"run", "--json", "--bogus"});
  EXPECT_EQ(ran.status, 125);
  EXPECT_TRUE(parse_one_object(ran.out).contains("error")) << ran.out;
}

TEST(CliTest, JsonUnknownBackendIsAnObjectWithError) {
  const Ran ran = cordon({"run", "--json", "-b", "nope", "-c", "true"});
  EXPECT_EQ(ran.status, 125);
  const nlohmann::json error = parse_one_object(ran.out);
  EXPECT_NE(error.value("error", "").find("subprocess"), std::string::npos) << ran.out;
}

TEST(CliTest, BackendsListsSubprocessWithCapabilities) {
  const Ran json_ran = cordon({"backends", "--json"});
  EXPECT_EQ(json_ran.status, 0) << json_ran.err;
  const nlohmann::json listing = parse_one_object(json_ran.out);
  bool found = false;
  for (const auto& plugin : listing.value("plugins", nlohmann::json::array())) {
    if (plugin.value("name", "") != "subprocess") continue;
    found = true;
    EXPECT_TRUE(plugin.value("available", false)) << plugin.dump();
    EXPECT_FALSE(plugin.value("isolates", true)) << plugin.dump();
    EXPECT_FALSE(plugin.value("version", "").empty());
    EXPECT_TRUE(plugin.contains("capabilities")) << plugin.dump();
  }
  EXPECT_TRUE(found) << json_ran.out;

  const Ran text = cordon({"backends"});
  EXPECT_EQ(text.status, 0);
  EXPECT_NE(text.out.find("subprocess"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("timeout"), std::string::npos) << text.out;
}

TEST(CliTest, BackendsListsAPluginThatFailedToLoad) {
  const cordon::TempDir dir = make_temp();
  write_text(dir.path() / "cordon-backend-broken.so", "not an ELF file");
  const std::string plugin_path = "CORDON_PLUGIN_PATH=" + dir.path().string();
  const Ran ran = run_cordon({{"backends", "--json"}, {}, {plugin_path}, {}});
  EXPECT_EQ(ran.status, 0) << ran.err;
  bool found = false;
  for (const auto& plugin : parse_one_object(ran.out).value("plugins", nlohmann::json::array())) {
    if (plugin.value("name", "") != "broken") continue;
    found = true;
    EXPECT_FALSE(plugin.value("loaded", true));
    EXPECT_FALSE(plugin.value("available", true));
    EXPECT_TRUE(plugin["load_error"].is_string()) << plugin.dump();
  }
  EXPECT_TRUE(found) << ran.out;

  const Ran run = run_cordon({{"run", "-b", "broken", "-c", "true"}, {}, {plugin_path}, {}});
  EXPECT_EQ(run.status, 125);
  EXPECT_NE(run.err.find("failed to load"), std::string::npos) << run.err;
}

// --- where the code comes from ---

TEST(CliTest, DashReadsCodeFromStdin) {
  const Ran ran = run_cordon({{"run", "-b", "subprocess", "-"}, "echo from-stdin\n", {}, {}});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(ran.out, "from-stdin\n");
}

TEST(CliTest, FileArgumentWithLanguageFromExtension) {
  const cordon::TempDir dir = make_temp();
  write_text(dir.path() / "answer.py", "import sys\nprint(6 * 7)\nsys.exit(4)\n");
  const Ran ran = cordon({"run", "-b", "subprocess", (dir.path() / "answer.py").string()});
  EXPECT_EQ(ran.status, 4) << ran.err;
  EXPECT_EQ(ran.out, "42\n");
}

TEST(CliTest, CodeGivenTwiceIs125) {
  const Ran ran = cordon({"run", "-b", "subprocess", "-c", "true", "-"});
  EXPECT_EQ(ran.status, 125);
}

TEST(CliTest, StdinFileFeedsTheCode) {
  const cordon::TempDir dir = make_temp();
  write_text(dir.path() / "in", "fed\n");
  const Ran ran = cordon(
      {"run", "-b", "subprocess", "--stdin-file", (dir.path() / "in").string(), "-c", "cat"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(ran.out, "fed\n");
}

// --- inputs are bounded: a clear 125 instead of reading forever ---

// `/dev/zero` given as an input was read until cordon died of bad_alloc. Each is refused
// at once: a device is not a regular file, and stdin is read to at most the code limit.
TEST(CliTest, EndlessInputsAre125Promptly) {
  struct Case {
    std::vector<std::string> args;
    const char* stdin_path;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"run", "-b", "subprocess", "--file", "/dev/zero", "-c", "true"},
       nullptr,
       "--file: /dev/zero is not a regular file"},
      {{"run", "-b", "subprocess", "--stdin-file", "/dev/zero", "-c", "true"},
       nullptr,
       "--stdin-file: /dev/zero is not a regular file"},
      {{"run", "-b", "subprocess", "/dev/zero"}, nullptr, "/dev/zero is not a regular file"},
      {{"run", "-b", "subprocess", "-"}, "/dev/zero", "code from stdin is larger than 1 MiB"},
  };
  for (const Case& c : cases) {
    const Ran ran = run_cordon(RunSpec{c.args, {}, {}, {}}, c.stdin_path);
    EXPECT_EQ(ran.status, 125) << c.says << ": " << ran.err;
    EXPECT_NE(ran.err.find(c.says), std::string::npos) << ran.err;
    EXPECT_LT(ran.elapsed, milliseconds(5000)) << c.says;
    EXPECT_TRUE(ran.out.empty()) << ran.out;
  }
}

TEST(CliTest, CodeOverOneMiBIs125BeforeAnythingRuns) {
  const cordon::TempDir dir = make_temp();
  const fs::path code = dir.path() / "big.sh";
  write_text(code, "echo ran\n" + std::string(1u << 20, '#'));
  const Ran ran = cordon({"run", "-b", "subprocess", code.string()});
  EXPECT_EQ(ran.status, 125) << ran.err;
  EXPECT_NE(ran.err.find("larger than 1 MiB, the largest code cordon runs"), std::string::npos)
      << ran.err;
  EXPECT_TRUE(ran.out.empty()) << ran.out;
}

TEST(CliTest, InputOverMaxInputSizeIs125NamingTheFlag) {
  const cordon::TempDir dir = make_temp();
  const fs::path data = dir.path() / "data";
  write_text(data, std::string(3000, 'x'));
  const Ran over = cordon({"run", "-b", "subprocess", "--max-input-size", "2K", "--file",
                           data.string(), "-c", "echo ran"});
  EXPECT_EQ(over.status, 125) << over.err;
  EXPECT_NE(over.err.find("larger than 2 KiB"), std::string::npos) << over.err;
  EXPECT_NE(over.err.find("--max-input-size"), std::string::npos) << over.err;
  EXPECT_TRUE(over.out.empty()) << over.out;
  const Ran raised = cordon({"run", "-b", "subprocess", "--max-input-size", "4K", "--file",
                             data.string(), "-c", "wc -c < data"});
  EXPECT_EQ(raised.status, 0) << raised.err;
  EXPECT_EQ(raised.out, "3000\n");
}

// --- limits a backend cannot honour: 125 naming the flag and what is accepted ---

// The values of issue #11: each reached the kernel or runtime (or was dropped) and ended
// as an obscure sandbox error, a SIGSEGV, or a run without the limit.
TEST(CliTest, LimitsABackendCannotHonourAre125NamingTheFlagAndRange) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"-b", "namespace", "--memory", "1"},
       "--memory: 1 B is below what the namespace backend can honour: it accepts 16 MiB to"},
      {{"-b", "namespace", "--memory", "0"}, "--memory: 0 B is below what the namespace backend"},
      {{"-b", "namespace", "--processes", "99999999999"},
       "--processes: 99999999999 is above what the namespace backend can honour: it accepts 1 "
       "to 4194303"},
      {{"-b", "container", "--processes", "1"},
       "--processes: 1 is below what the container backend can honour: it accepts 8 to"},
      {{"-b", "subprocess", "--memory", "1"},
       "--memory: 1 B is below what the subprocess backend can honour: it accepts 32 MiB to"},
      {{"-b", "subprocess", "--output-cap", "2G"}, "--output-cap: 2 GiB is above what"},
  };
  std::vector<Case> all = cases;
  if (::geteuid() == 0) {  // RLIMIT_NPROC does not bind root: nothing enforces it
    all.push_back({{"-b", "subprocess", "--processes", "5"},
                   "--processes: the subprocess backend cannot enforce a process limit"});
  }
  for (const Case& c : all) {
    std::vector<std::string> args{"run"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    args.insert(args.end(), {"-c", "echo ran"});
    const Ran ran = cordon(args);
    if (ran.err.find("not available") != std::string::npos) continue;  // e.g. no runc
    EXPECT_EQ(ran.status, 125) << c.says << ": " << ran.err;
    EXPECT_NE(ran.err.find(c.says), std::string::npos) << ran.err;
    EXPECT_TRUE(ran.out.empty()) << "the code ran: " << ran.out;
  }
}

TEST(CliTest, PlanAndBackendsShowTheAcceptedRanges) {
  const Ran plan = cordon({"plan", "-b", "subprocess"});
  EXPECT_EQ(plan.status, 0) << plan.err;
  EXPECT_NE(plan.out.find("accepted limit values"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find(" 32 MiB to "), std::string::npos) << plan.out;
  if (::geteuid() == 0) {
    EXPECT_NE(plan.out.find("cannot be limited here (asking is refused): processes, disk"),
              std::string::npos)
        << plan.out;
  }
  const Ran json = cordon({"plan", "-b", "subprocess", "--json"});
  const nlohmann::json p = parse_one_object(json.out);
  bool memory_range = false;
  for (const auto& aspect : p["aspects"]) {
    if (aspect["aspect"] == "memory" && aspect.contains("range")) {
      memory_range = aspect["range"]["min"] == 32u << 20;
    }
  }
  EXPECT_TRUE(memory_range) << json.out;
  const Ran backends = cordon({"backends"});
  EXPECT_NE(backends.out.find("[accepts 1 B to 1 GiB]"), std::string::npos) << backends.out;
  const Ran refused = cordon({"plan", "-b", "subprocess", "--memory", "1"});
  EXPECT_EQ(refused.status, 125) << refused.err;
  EXPECT_NE(refused.err.find("--memory: 1 B is below"), std::string::npos) << refused.err;
}

// --- timeouts: 0 and negative mean the default, under 1 ms is an error ---

TEST(CliTest, TimeoutUnderOneMsIs125NotTheDefault) {
  const Ran ran = cordon({"run", "-b", "subprocess", "-t", "0.0001", "-c", "echo ran"});
  EXPECT_EQ(ran.status, 125) << ran.err;
  EXPECT_NE(ran.err.find("--timeout"), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("1 ms"), std::string::npos) << ran.err;
  EXPECT_TRUE(ran.out.empty()) << ran.out;
}

TEST(CliTest, ShortOptionTakesItsValueAfterAnEqualsSign) {
  // "-t=-1" was "not a number: '=-1'": it means the default timeout, as "-t -1" does.
  const Ran negative = cordon({"run", "-b", "subprocess", "-t=-1", "-c", "echo ran"});
  EXPECT_EQ(negative.status, 0) << negative.err;
  EXPECT_EQ(negative.out, "ran\n");
  const Ran glued = cordon({"run", "-b=subprocess", "-t=200ms", "-c", "sleep 5"});
  EXPECT_EQ(glued.status, 124) << glued.err;
  EXPECT_LT(glued.elapsed, milliseconds(4000));
}

// --- environment and caps ---

TEST(CliTest, CallersEnvironmentIsNotPassedButEnvIs) {
  const Ran ran = run_cordon({{"run", "-b", "subprocess", "--env", "GIVEN=yes", "-c",
                               "echo ${CORDON_TEST_SECRET:-unset} $GIVEN"},
                              {},
                              {"CORDON_TEST_SECRET=leaked"},
                              {}});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(ran.out, "unset yes\n");
}

TEST(CliTest, OutputCapHoldsForThePassThrough) {
  const Ran ran = cordon({"run", "-b", "subprocess", "--output-cap", "1K", "-c",
                          "head -c 100000 /dev/zero | tr '\\0' x"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_LE(ran.out.size(), 1024u);
  EXPECT_GT(ran.out.size(), 0u);
  EXPECT_NE(ran.err.find("stdout truncated"), std::string::npos) << ran.err;
}

// --- input files and artifacts ---

TEST(CliTest, FileCollectAndArtifactsDirRoundTrip) {
  const cordon::TempDir dir = make_temp();
  write_text(dir.path() / "local.txt", "payload");
  const fs::path out = dir.path() / "out";
  const Ran ran =
      cordon({"run", "-b", "subprocess", "--file", (dir.path() / "local.txt").string() + ":in.txt",
              "--collect", "*.out", "--collect", "sub/*", "--artifacts-dir", out.string(), "-c",
              "cat in.txt > copy.out; mkdir sub; printf nested > sub/n.txt"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(read_text(out / "copy.out"), "payload");
  EXPECT_EQ(read_text(out / "sub" / "n.txt"), "nested");
  EXPECT_FALSE(fs::exists(out / "in.txt")) << "only what --collect matched";
  EXPECT_NE(ran.err.find("wrote 2 artifact(s)"), std::string::npos) << ran.err;
}

TEST(CliTest, ArtifactsInJsonCarryContent) {
  const Ran ran = cordon(
      {"run", "-b", "subprocess", "--json", "--collect", "a.txt", "-c", "printf abc > a.txt"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  const nlohmann::json result = parse_one_object(ran.out);
  ASSERT_EQ(result["artifacts"].size(), 1u) << ran.out;
  EXPECT_EQ(result["artifacts"][0].value("path", ""), "a.txt");
  EXPECT_EQ(result["artifacts"][0].value("size", 0), 3);
}

TEST(CliTest, ArtifactNamedLikeAPlantedSymlinkStaysInsideDir) {
  const cordon::TempDir dir = make_temp();
  const fs::path out = dir.path() / "out";
  fs::create_directories(out);
  write_text(dir.path() / "victim", "untouched");
  // A symlink already standing in DIR under the artifact's name must be replaced, never
  // written through.
  fs::create_symlink(dir.path() / "victim", out / "evil.txt");
  const Ran ran = cordon({"run", "-b", "subprocess", "--collect", "evil.txt", "--artifacts-dir",
                          out.string(), "-c", "printf pwned > evil.txt"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(read_text(dir.path() / "victim"), "untouched");
  EXPECT_FALSE(fs::is_symlink(out / "evil.txt"));
  EXPECT_EQ(read_text(out / "evil.txt"), "pwned");
}

// --- plan and --dry-run ---

// Whether `cordon backends` says backend `name` is available here, and if not why.
std::string backend_unavailable_reason(const std::string& name) {
  const Ran ran = cordon({"backends", "--json"});
  for (const auto& plugin : parse_one_object(ran.out).value("plugins", nlohmann::json::array())) {
    if (plugin.value("name", "") != name) continue;
    if (plugin.value("available", false)) return "";
    return plugin.value("reason", std::string("not available"));
  }
  return "the " + name + " plugin is not in this build";
}

std::string namespace_unavailable_reason() { return backend_unavailable_reason("namespace"); }

const nlohmann::json* find_step(const nlohmann::json& plan, const std::string& op,
                                const std::string& target) {
  for (const auto& step : plan["filesystem"]["steps"]) {
    if (step.value("op", "") == op && step.value("target", "") == target) return &step;
  }
  return nullptr;
}

TEST(CliTest, PlanForSubprocessSaysNoIsolation) {
  const Ran text = cordon({"plan", "-b", "subprocess", "--memory", "64M"});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("plan of backend subprocess"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("isolation: no isolation"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("namespaces: none"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("seccomp: none"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("memory     64 MiB"), std::string::npos) << text.out;

  const Ran json = cordon({"plan", "-b", "subprocess", "--json", "-c", "echo hi"});
  EXPECT_EQ(json.status, 0) << json.err;
  const nlohmann::json plan = parse_one_object(json.out);
  EXPECT_EQ(plan["backend"].value("name", ""), "subprocess");
  EXPECT_FALSE(plan.value("isolates", true));
  EXPECT_TRUE(plan["namespaces"].empty()) << json.out;
  EXPECT_TRUE(plan["seccomp"].is_null()) << json.out;
  EXPECT_EQ(plan.value("timeout_ms", 0), 5000);
  EXPECT_TRUE(plan["aspects"].is_array()) << json.out;
}

TEST(CliTest, PlanChoosesLikeRunAndFailsClosed) {
  char tmpl[] = "/tmp/cordon-cli-plugins-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string link = dir + "/cordon-backend-subprocess.so";
  ASSERT_EQ(::symlink(CORDON_TEST_PLUGIN_DIR "/cordon-backend-subprocess.so", link.c_str()), 0);
  const std::vector<std::string> env{"CORDON_PLUGIN_PATH=" + dir, "CORDON_PLUGIN_PATH_ONLY=1"};
  const Ran refused = run_cordon({{"plan", "--json"}, {}, env, {}});
  const Ran allowed = run_cordon({{"plan", "--allow-unisolated"}, {}, env, {}});
  ::unlink(link.c_str());
  ::rmdir(dir.c_str());
  EXPECT_EQ(refused.status, 125);
  EXPECT_NE(parse_one_object(refused.out).value("error", "").find("no isolating backend"),
            std::string::npos)
      << refused.out;
  EXPECT_EQ(allowed.status, 0) << allowed.err;
  EXPECT_NE(allowed.out.find("plan of backend subprocess"), std::string::npos) << allowed.out;

  const Ran bad = cordon({"plan", "--json", "-b", "subprocess", "--memory", "lots"});
  EXPECT_EQ(bad.status, 125);
  EXPECT_NE(parse_one_object(bad.out).value("error", "").find("--memory"), std::string::npos);
}

TEST(CliTest, DryRunRunsNothing) {
  const cordon::TempDir dir = make_temp();
  const fs::path marker = dir.path() / "ran";
  const std::string code = "touch '" + marker.string() + "'; echo ran";
  const Ran text = cordon({"run", "-b", "subprocess", "--dry-run", "-c", code});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("plan of backend subprocess"), std::string::npos) << text.out;
  // Through auto too, and with --json: stdout is the plan, one object, not a result.
  const Ran json = cordon({"run", "--allow-unisolated", "--dry-run", "--json", "-c", code});
  EXPECT_EQ(json.status, 0) << json.err;
  const nlohmann::json plan = parse_one_object(json.out);
  EXPECT_TRUE(plan.contains("backend")) << json.out;
  EXPECT_FALSE(plan.contains("outcome")) << json.out;
  EXPECT_FALSE(fs::exists(marker)) << "--dry-run ran the code";
  // Control: the same code without --dry-run does create the file.
  const Ran ran = cordon({"run", "-b", "subprocess", "-c", code});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_TRUE(fs::exists(marker));
}

TEST(CliTest, PlanForNamespaceShowsMountsAndThePolicyARunReports) {
  if (const std::string why = namespace_unavailable_reason(); !why.empty()) {
    if (::cordon_test::require_kernel_features()) FAIL() << "kernel feature missing: " << why;
    GTEST_SKIP() << why;
  }
  const Ran json = cordon({"plan", "-b", "namespace", "--json", "--memory", "128M", "-c", "true"});
  EXPECT_EQ(json.status, 0) << json.err;
  const nlohmann::json plan = parse_one_object(json.out);
  EXPECT_TRUE(plan.value("isolates", false)) << json.out;
  EXPECT_NE(std::ranges::find(plan["namespaces"], "network"), plan["namespaces"].end()) << json.out;
  const nlohmann::json* usr = find_step(plan, "bind", "/usr");
  ASSERT_NE(usr, nullptr) << json.out;
  EXPECT_EQ(usr->value("source", ""), "/usr");
  EXPECT_NE(std::ranges::find((*usr)["flags"], "ro"), (*usr)["flags"].end()) << usr->dump();
  const nlohmann::json* tmp = find_step(plan, "tmpfs", "/tmp");
  ASSERT_NE(tmp, nullptr) << json.out;
  EXPECT_NE(tmp->value("options", "").find("size=67108864"), std::string::npos) << tmp->dump();
  EXPECT_EQ(plan["seccomp"].value("policy", ""), "cordon-default");
  const std::string hash = plan["seccomp"].value("hash", "");
  EXPECT_TRUE(hash.starts_with("sha256:")) << json.out;
  EXPECT_GT(plan["seccomp"]["rules"].value("allowed", 0), 0) << json.out;
  bool memory_listed = false;
  for (const auto& entry : plan["limits"])
    memory_listed = memory_listed || entry.contains("memory");
  EXPECT_TRUE(memory_listed) << plan["limits"];

  // The hash the plan shows is the one a real run reports.
  const Ran run = cordon({"run", "-b", "namespace", "--json", "-c", "true"});
  EXPECT_EQ(run.status, 0) << run.err << run.out;
  const nlohmann::json result = parse_one_object(run.out);
  ASSERT_TRUE(result["policy"].is_object()) << run.out;
  EXPECT_EQ(result["policy"].value("hash", ""), hash);
  EXPECT_EQ(result["policy"].value("name", ""), "cordon-default");

  const Ran text = cordon({"plan", "-b", "namespace"});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("/usr                   from /usr [ro,nosuid,nodev]"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("/tmp                   size 64 MiB"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("seccomp: policy cordon-default v1, " + hash), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("syscalls allowed"), std::string::npos) << text.out;
}

// Every namespace and every mount target a plan's JSON holds, whatever keys the backend
// chose for them: the common ones and the container backend's own config.json.
struct PlanNames {
  std::vector<std::string> namespaces;
  std::vector<std::string> mounts;
};

PlanNames names_in(const nlohmann::json& plan) {
  PlanNames out;
  for (const auto& ns : plan.value("namespaces", nlohmann::json::array())) {
    out.namespaces.push_back(ns.get<std::string>());
  }
  const nlohmann::json fs = plan.value("filesystem", nlohmann::json());
  if (fs.is_object()) {
    for (const auto& step : fs.value("steps", nlohmann::json::array())) {
      const std::string op = step.value("op", "");
      if (op == "mkdir" || op == "mkfile" || op == "write_file" || op == "symlink") continue;
      out.mounts.push_back(step.value("target", ""));
    }
  }
  const nlohmann::json oci = plan.value("oci_config", nlohmann::json());
  if (oci.is_object()) {
    for (const auto& ns : oci["linux"].value("namespaces", nlohmann::json::array())) {
      out.namespaces.push_back(ns.value("type", ""));
    }
    for (const auto& m : oci.value("mounts", nlohmann::json::array())) {
      out.mounts.push_back(m.value("destination", ""));
    }
  }
  return out;
}

// Whether `word` is a whole, space-separated word of the line of `text` that starts with
// `line_start` (or of any line, when empty).
bool has_word(const std::string& text, const std::string& word, const std::string& line_start) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(line_start)) continue;
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      if (w == word) return true;
    }
  }
  return false;
}

// The text of `cordon plan` names every namespace and mount its --json has, for every
// backend (the container backend's text once said "namespaces: none" and "mounts: none").
TEST(CliTest, PlanTextNamesEveryNamespaceAndMountOfItsJson) {
  for (const std::string backend : {"subprocess", "namespace", "container"}) {
    SCOPED_TRACE(backend);
    if (const std::string why = backend_unavailable_reason(backend); !why.empty()) {
      if (::cordon_test::require_kernel_features()) ADD_FAILURE() << backend << ": " << why;
      continue;
    }
    const Ran json = cordon({"plan", "-b", backend, "--json"});
    const Ran text = cordon({"plan", "-b", backend});
    ASSERT_EQ(json.status, 0) << json.err;
    ASSERT_EQ(text.status, 0) << text.err;
    const PlanNames names = names_in(parse_one_object(json.out));
    if (backend != "subprocess") {
      EXPECT_FALSE(names.namespaces.empty()) << json.out;
      EXPECT_FALSE(names.mounts.empty()) << json.out;
    }
    for (const std::string& ns : names.namespaces) {
      EXPECT_TRUE(has_word(text.out, ns, "namespaces:")) << ns << " missing from\n" << text.out;
    }
    for (const std::string& target : names.mounts) {
      EXPECT_TRUE(has_word(text.out, target, "  ")) << target << " missing from\n" << text.out;
    }
    if (names.namespaces.empty()) {
      EXPECT_NE(text.out.find("namespaces: none"), std::string::npos) << text.out;
    }
  }
}

TEST(CliTest, HelpDocumentsExitStatuses) {
  const Ran ran = cordon({"run", "--help"});
  EXPECT_EQ(ran.status, 0);
  EXPECT_NE(ran.out.find("124"), std::string::npos);
  EXPECT_NE(ran.out.find("125"), std::string::npos);
  EXPECT_NE(ran.out.find("--allow-unisolated"), std::string::npos);
}

// --- cordon audit and cordon prompt (issue #5) ---

TEST(CliTest, AuditOfSubprocessShowsEscapesItDoesNotClaimAndSkipsHostActingAttempts) {
  const Ran ran = cordon({"audit", "-b", "subprocess", "--json", "--only",
                          "net-loopback-tcp,res-fork-bomb,res-output-flood"});
  EXPECT_EQ(ran.status, 0) << ran.err << ran.out;  // nothing escaped that it claims to stop
  const nlohmann::json out = parse_one_object(ran.out);
  const nlohmann::json& attempts = out["reports"][0]["attempts"];
  ASSERT_EQ(attempts.size(), 3u) << ran.out;
  EXPECT_EQ(attempts[0]["status"], "ESCAPED");
  EXPECT_EQ(attempts[0]["claimed"], "none");
  EXPECT_EQ(attempts[1]["status"], "SKIPPED");
  EXPECT_NE(attempts[1]["evidence"].get<std::string>().find("would act on this host"),
            std::string::npos);
  EXPECT_EQ(attempts[2]["status"], "BLOCKED");
  EXPECT_FALSE(out["reports"][0]["complete"].get<bool>());
}

TEST(CliTest, AuditOfNamespaceBlocksWithControlsThatEscape) {
  if (const std::string why = namespace_unavailable_reason(); !why.empty()) {
    if (::cordon_test::require_kernel_features()) FAIL() << "kernel feature missing: " << why;
    GTEST_SKIP() << why;
  }
  const Ran ran = cordon({"audit", "-b", "namespace", "--only", "net-loopback-tcp,sys-ptrace"});
  EXPECT_EQ(ran.status, 0) << ran.err << ran.out;
  EXPECT_NE(ran.out.find("namespace 0.1.0: 2 blocked, 0 escaped, 0 error"), std::string::npos)
      << ran.out;
  const Ran json = cordon({"audit", "-b", "namespace", "--json", "--only", "sys-ptrace"});
  const nlohmann::json a = parse_one_object(json.out)["reports"][0]["attempts"][0];
  EXPECT_EQ(a["status"], "BLOCKED") << json.out;
  EXPECT_TRUE(a["control"].get<std::string>().starts_with("subprocess: ESCAPED")) << json.out;
  EXPECT_EQ(cordon({"audit", "--only", "no-such-attempt"}).status, 125);
  EXPECT_EQ(cordon({"audit", "--all", "-b", "namespace"}).status, 125);  // one or the other
}

TEST(CliTest, PromptRendersOnlyWhatAStoredAuditProves) {
  const cordon::TempDir reports = make_temp();
  const std::string dir = "CORDON_AUDIT_DIR=" + reports.path().string();
  auto with_dir = [&](std::vector<std::string> args) {
    RunSpec spec;
    spec.args = std::move(args);
    spec.extra_env = {dir};
    return run_cordon(spec);
  };
  // No report and no audit allowed: a claim (the timeout) cannot be stated.
  Ran ran = with_dir({"prompt", "-b", "subprocess", "--no-audit"});
  EXPECT_EQ(ran.status, 125);
  EXPECT_NE(ran.err.find("no audit report"), std::string::npos) << ran.err;
  ran = with_dir({"prompt", "-b", "subprocess", "--no-audit", "--unverified"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_NE(ran.out.find("[unverified] Each run is stopped after 5 s"), std::string::npos)
      << ran.out;
  // A complete audit is stored, then used: the same claims are now proven.
  ran = with_dir({"audit", "-b", "subprocess"});
  EXPECT_EQ(ran.status, 0) << ran.err << ran.out;
  ran = with_dir({"prompt", "-b", "subprocess", "--no-audit", "-f", "openai", "-t", "7s"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  const nlohmann::json tool = parse_one_object(ran.out);
  const std::string text = tool["function"]["description"].get<std::string>();
  EXPECT_NE(text.find("There is NO isolation"), std::string::npos) << text;
  EXPECT_EQ(text.find("no network access"), std::string::npos) << text;
  EXPECT_EQ(text.find("[unverified]"), std::string::npos) << text;
  EXPECT_NE(text.find("stopped after 7 s"), std::string::npos) << text;
  EXPECT_EQ(
      cordon({"prompt", "-b", "subprocess", "--unverified", "--no-audit", "-f", "yaml"}).status,
      125);
  EXPECT_EQ(cordon({"prompt", "--version", "99", "--unverified", "--no-audit"}).status, 125);
}

// A description with an allow-list is backed only by an audit made with that list: the
// audit runs every attempt under it and binds its report to it; a report made without a
// list, or with another, backs nothing here. A backend that cannot carry a list is refused
// by prompt and audit alike.
TEST(CliTest, APromptWithAnAllowListNeedsAnAuditMadeWithIt) {
  if (const std::string why = namespace_unavailable_reason(); !why.empty()) {
    if (::cordon_test::require_kernel_features()) FAIL() << "kernel feature missing: " << why;
    GTEST_SKIP() << why;
  }
  const cordon::TempDir reports = make_temp();
  auto with_dir = [&](std::vector<std::string> args) {
    RunSpec spec;
    spec.args = std::move(args);
    spec.extra_env = {"CORDON_AUDIT_DIR=" + reports.path().string()};
    return run_cordon(spec);
  };
  const std::vector<std::string> list = {"--allow-net", "127.0.0.2:9", "--allow-net",
                                         "*.pythonhosted.org"};
  const auto with_list = [&](std::vector<std::string> args) {
    args.insert(args.end(), list.begin(), list.end());
    return with_dir(std::move(args));
  };
  Ran ran = with_list({"prompt", "-b", "namespace", "--no-audit"});
  EXPECT_EQ(ran.status, 125);
  EXPECT_NE(ran.err.find("no audit report for this backend on this host with this network "
                         "allow-list (run `cordon audit --backend namespace --allow-net "
                         "127.0.0.2:9 --allow-net '*.pythonhosted.org'`"),
            std::string::npos)
      << ran.err;

  ran = with_list({"audit", "-b", "namespace"});
  ASSERT_EQ(ran.status, 0) << ran.err << ran.out;
  ran = with_list({"prompt", "-b", "namespace", "--no-audit", "-f", "mcp"});
  ASSERT_EQ(ran.status, 0) << ran.err;
  const nlohmann::json tool = parse_one_object(ran.out);
  const std::string text = tool["description"].get<std::string>();
  EXPECT_NE(text.find("Network access is limited to 127.0.0.2:9 and any subdomain of "
                      "pythonhosted.org (ports 80 and 443)."),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("[unverified]"), std::string::npos) << text;
  EXPECT_EQ(tool["annotations"]["openWorldHint"], true);

  // The report made with the list backs neither the closed network nor another list.
  EXPECT_EQ(with_dir({"prompt", "-b", "namespace", "--no-audit"}).status, 125);
  EXPECT_EQ(
      with_dir({"prompt", "-b", "namespace", "--no-audit", "--allow-net", "127.0.0.2:9"}).status,
      125);

  for (const char* command : {"prompt", "audit"}) {
    ran = with_list({command, "-b", "subprocess"});
    EXPECT_EQ(ran.status, 125) << command;
    EXPECT_NE(ran.err.find("cannot carry a network allow-list"), std::string::npos) << ran.err;
  }
  ran = with_dir({"prompt", "-b", "namespace", "--deny-net", "pypi.org"});
  EXPECT_EQ(ran.status, 125);
  EXPECT_NE(ran.err.find("--deny-net: without --allow-net"), std::string::npos) << ran.err;
}

TEST(CliTest, RunRecordsTheToolDescriptionItRanUnder) {
  const Ran ran = cordon(
      {"run", "-b", "subprocess", "--json", "--tool-description", "run_code@1", "-c", "true"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(parse_one_object(ran.out)["tool_description"],
            (nlohmann::json{{"id", "run_code"}, {"version", 1}}));
  EXPECT_EQ(
      cordon({"run", "-b", "subprocess", "--tool-description", "run_code@9", "-c", "true"}).status,
      125);
  EXPECT_EQ(
      cordon({"run", "-b", "subprocess", "--tool-description", "run_code", "-c", "true"}).status,
      125);
}

// `cordon run --tool-call`: a model's run_code arguments on stdin, validated against the
// tool as `cordon prompt` renders it (same audit gate), run, answered with the MCP
// CallToolResult on stdout.
TEST(CliTest, ToolCallRunsAModelsArgumentsAndPrintsTheToolResult) {
  if (const std::string why = namespace_unavailable_reason(); !why.empty()) {
    if (::cordon_test::require_kernel_features()) FAIL() << "kernel feature missing: " << why;
    GTEST_SKIP() << why;
  }
  const cordon::TempDir reports = make_temp();  // no stored report: claims stay unproven
  const auto call = [&](const std::string& arguments, std::vector<std::string> extra = {}) {
    RunSpec spec;
    spec.args = {"run", "--tool-call", "-b",       "namespace", "--no-history",
                 "-t",  "5s",          "--memory", "128M"};
    spec.args.insert(spec.args.end(), extra.begin(), extra.end());
    spec.stdin_data = arguments;
    spec.extra_env = {"CORDON_AUDIT_DIR=" + reports.path().string()};
    return run_cordon(spec);
  };
  const std::vector<std::string> unproven = {"--no-audit", "--unverified"};
  Ran ran =
      call(R"({"code": "cat in/data.txt; echo oops >&2; echo out > result.txt", "language": "sh",)"
           R"( "timeout": null, "files": [{"name": "in/data.txt", "content_base64": "aGVsbG8K"}],)"
           R"( "collect": ["result.txt"]})",
           unproven);
  EXPECT_EQ(ran.status, 0) << ran.err << ran.out;
  nlohmann::json result = parse_one_object(ran.out);
  EXPECT_EQ(result["isError"], false) << ran.out;
  const std::string text = result["content"][0]["text"].get<std::string>();
  EXPECT_TRUE(text.starts_with("ok: the code ran and exited 0")) << text;
  EXPECT_NE(text.find("--- stdout ---\nhello\n"), std::string::npos) << text;
  EXPECT_NE(text.find("--- stderr ---\noops\n"), std::string::npos) << text;
  ASSERT_EQ(result["content"].size(), 2u) << ran.out;
  EXPECT_EQ(result["content"][1]["resource"]["uri"], "file:///result.txt");
  EXPECT_EQ(result["content"][1]["resource"]["text"], "out\n");
  EXPECT_EQ(result["structuredContent"]["outcome"], "ok");
  EXPECT_EQ(result["structuredContent"]["tool_description"]["id"], "run_code");

  // The shortest call a model writes (issue #40): the program alone, python by default.
  ran = call(R"json({"code": "print(6*7)"})json", unproven);
  EXPECT_EQ(ran.status, 0) << ran.err << ran.out;
  result = parse_one_object(ran.out);
  EXPECT_EQ(result["isError"], false) << ran.out;
  EXPECT_NE(result["content"][0]["text"].get<std::string>().find("--- stdout ---\n42\n"),
            std::string::npos)
      << ran.out;

  // The arguments as OpenAI carries them: a JSON string holding the object.
  ran = call(R"("{\"code\": \"exit 3\", \"language\": \"sh\", \"timeout\": 1, )"
             R"(\"files\": null, \"collect\": null}")",
             unproven);
  EXPECT_EQ(ran.status, 3) << ran.err << ran.out;
  result = parse_one_object(ran.out);
  EXPECT_EQ(result["isError"], true);
  EXPECT_EQ(result["structuredContent"]["exit_code"], 3);

  // A bad call: the error result names the field, exit 125.
  ran = call(R"({"code": "true", "language": "cobol", "timeout": null, "files": null,)"
             R"( "collect": null})",
             unproven);
  EXPECT_EQ(ran.status, 125);
  result = parse_one_object(ran.out);
  EXPECT_EQ(result["isError"], true);
  // The languages this host has (node and perl where installed, as on CI).
  const std::string said = result["content"][0]["text"].get<std::string>();
  EXPECT_TRUE(said.starts_with("language: must be one of python, bash") &&
              said.ends_with(" or perl; got \"cobol\"") &&
              said.find("sh, javascript") != std::string::npos)
      << said;
  ran = call(R"({"code": "true", "language": "sh", "timeout": 60, "files": null,)"
             R"( "collect": null})",
             unproven);
  EXPECT_EQ(ran.status, 125);
  EXPECT_NE(ran.out.find("timeout: must be at most 5 seconds"), std::string::npos) << ran.out;
  ran = call("not json", unproven);
  EXPECT_EQ(ran.status, 125);
  EXPECT_NE(ran.out.find("not valid JSON"), std::string::npos) << ran.out;

  // The audit gate of `cordon prompt`: without a report, no claim, so no call.
  ran = call(R"({"code": "true", "language": "sh", "timeout": null, "files": null,)"
             R"( "collect": null})",
             {"--no-audit"});
  EXPECT_EQ(ran.status, 125);
  EXPECT_NE(ran.err.find("no audit report"), std::string::npos) << ran.err;
  EXPECT_EQ(ran.out, "");
  // The code comes from the call, not from flags.
  EXPECT_EQ(call("{}", {"--no-audit", "--unverified", "-c", "true"}).status, 125);
}

}  // namespace
