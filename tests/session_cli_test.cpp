// `cordon session` across separate invocations of the real binary (issue #41), on the
// fixture backend of tests/plugins (a session of it counts its calls and keeps files in
// memory, so the holder's own behaviour is what is tested here: ids, the socket's fence,
// ends and their reasons, a holder killed); the namespace backend's sessions are tested
// with the backend.
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli_run_support.h"
#include "cordon/temp_dir.h"
#include "frontend/history.h"

namespace {

namespace fs = std::filesystem;
using cordon::testing::Ran;
using cordon::testing::run_cordon;
using cordon::testing::RunSpec;
using nlohmann::json;
using namespace std::chrono_literals;

class SessionCli : public ::testing::Test {
 protected:
  void SetUp() override {
    // The holders are orphans once `start` returns: adopted by this test and reaped here,
    // since PID 1 of this machine never reaps.
    ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    auto dir = cordon::TempDir::create("session-cli-test-");
    ASSERT_TRUE(dir) << dir.error().describe();
    runtime_ = std::move(*dir);
    ::chmod(runtime_.path().c_str(), 0700);
    env_ = {"XDG_RUNTIME_DIR=" + runtime_.path().string(),
            "CORDON_PLUGIN_PATH=" CORDON_TEST_FIXTURE_PLUGIN_DIR, "CORDON_NO_HISTORY=1"};
  }
  void TearDown() override {
    for (const std::string& id : started_) (void)cordon({"session", "stop", id});
    reap();
  }
  static void reap() {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }

  Ran cordon(std::vector<std::string> args, std::optional<std::string> stdin_data = {}) {
    return run_cordon(RunSpec{std::move(args), std::move(stdin_data), env_, {}});
  }
  // A session on the fixture; its id.
  std::string start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"session", "start", "-b", "fixture", "-l", "python"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Ran ran = cordon(args);
    EXPECT_EQ(ran.status, 0) << ran.err;
    std::string id = ran.out.substr(0, ran.out.find('\n'));
    started_.push_back(id);
    return id;
  }
  [[nodiscard]] fs::path dir() const { return runtime_.path() / "cordon-sessions"; }
  pid_t holder_pid(const std::string& id) {
    const Ran ls = cordon({"session", "ls", "--json"});
    const json listed = json::parse(ls.out, nullptr, false);
    if (listed.is_discarded()) return -1;
    for (const json& s : listed["sessions"]) {
      if (s["id"] == id) return s["pid"].get<pid_t>();
    }
    return -1;
  }

  cordon::TempDir runtime_;
  std::vector<std::string> env_;
  std::vector<std::string> started_;
};

TEST_F(SessionCli, CallsReachTheSameSessionAcrossInvocations) {
  const std::string id = start();
  ASSERT_EQ(id.size(), 32U);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir() / (id + ".sock")));
  struct stat st{};
  ASSERT_EQ(::stat(dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700U);

  Ran first = cordon({"session", "run", id, "-c", "x = 41"});
  EXPECT_EQ(first.status, 0) << first.err;
  EXPECT_EQ(first.out, "1 python x = 41'x = 41'\n");  // the fixture's stdout, then the value
  EXPECT_NE(first.err.find("[session " + id + ", call 1]"), std::string::npos) << first.err;
  Ran second = cordon({"session", "run", id, "--json", "-c", "x + 1"});
  EXPECT_EQ(second.status, 0) << second.err;
  const json result = json::parse(second.out);
  EXPECT_EQ(result["stdout"], "2 python x + 1");
  EXPECT_EQ(result["value"], "'x + 1'");
  EXPECT_EQ(result["session"], (json{{"id", id}, {"call", 2}}));

  const Ran lost = cordon({"session", "run", id, "-c", "lose"});
  EXPECT_NE(lost.err.find("the interpreter was restarted: variables are gone, files are kept"),
            std::string::npos)
      << lost.err;

  const Ran ls = cordon({"session", "ls"});
  EXPECT_EQ(ls.status, 0) << ls.err;
  EXPECT_NE(ls.out.find(id), std::string::npos);
  EXPECT_NE(ls.out.find("fixture"), std::string::npos);

  const Ran reset = cordon({"session", "reset", id});
  EXPECT_EQ(reset.status, 0) << reset.err;
  EXPECT_EQ(cordon({"session", "run", id, "-c", "y"}).out, "1 python y'y'\n");
}

// Each call is recorded in the history with its session and index, in the session's
// language when the call named none.
TEST_F(SessionCli, CallsAreRecordedInTheHistoryInOrder) {
  const fs::path history = runtime_.path() / "history.sqlite3";
  // In this process's own environment, which the binary's starts from (ctest sets a path).
  std::erase(env_, std::string("CORDON_NO_HISTORY=1"));
  ASSERT_EQ(::setenv("CORDON_HISTORY_PATH", history.c_str(), 1), 0);
  ASSERT_EQ(::unsetenv("CORDON_NO_HISTORY"), 0);
  const std::string id = start();
  EXPECT_EQ(cordon({"session", "run", id, "-c", "x = 1"}).status, 0);
  EXPECT_EQ(cordon({"session", "run", id, "-l", "sh", "-c", "ls"}).status, 0);
  auto store = cordon::history::HistoryStore::open(history);
  ASSERT_TRUE(store) << store.error().describe();
  cordon::history::Query query;
  query.session = id;
  const auto rows = store->list(query);
  ASSERT_TRUE(rows) << rows.error().describe();
  ASSERT_EQ(rows->size(), 2U);
  EXPECT_EQ((*rows)[0].session, (cordon::SessionCallRef{.id = id, .call = 1}));
  EXPECT_EQ((*rows)[0].language, cordon::Language::kPython);
  EXPECT_EQ((*rows)[1].session, (cordon::SessionCallRef{.id = id, .call = 2}));
  EXPECT_EQ((*rows)[1].language, cordon::Language::kSh);
  EXPECT_EQ((*rows)[1].source, "cli");
}

TEST_F(SessionCli, FilesCopyInAndOut) {
  const std::string id = start();
  const fs::path local = runtime_.path() / "in.bin";
  const std::string bytes("a\0b\xff", 4);
  std::ofstream(local, std::ios::binary) << bytes;
  Ran in = cordon({"session", "cp", local.string(), id + ":data/in.bin"});
  EXPECT_EQ(in.status, 0) << in.err;
  const fs::path back = runtime_.path() / "back.bin";
  Ran out = cordon({"session", "cp", id + ":data/in.bin", back.string()});
  EXPECT_EQ(out.status, 0) << out.err;
  std::ifstream read(back, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(read), {}), bytes);
  const Ran missing = cordon({"session", "cp", id + ":nope", back.string()});
  EXPECT_EQ(missing.status, 125);
  EXPECT_NE(missing.err.find("no file nope"), std::string::npos) << missing.err;
  const Ran both = cordon({"session", "cp", id + ":a", id + ":b"});
  EXPECT_EQ(both.status, 125);
}

TEST_F(SessionCli, AStoppedSessionSaysSoAndLeavesNoSocket) {
  const std::string id = start();
  const Ran stop = cordon({"session", "stop", id});
  EXPECT_EQ(stop.status, 0) << stop.err;
  EXPECT_FALSE(fs::exists(dir() / (id + ".sock")));
  const Ran after = cordon({"session", "run", id, "-c", "x"});
  EXPECT_EQ(after.status, 125);
  EXPECT_NE(after.err.find("session " + id + " was stopped"), std::string::npos) << after.err;
  const Ran unknown = cordon({"session", "run", std::string(32, 'a'), "-c", "x"});
  EXPECT_EQ(unknown.status, 125);
  EXPECT_NE(unknown.err.find("no such session " + std::string(32, 'a')), std::string::npos)
      << unknown.err;
  // Never a path: an id must be 32 hex digits.
  const Ran climbing = cordon({"session", "run", "../../etc/passwd", "-c", "x"});
  EXPECT_EQ(climbing.status, 125);
  EXPECT_NE(climbing.err.find("is not a session id"), std::string::npos) << climbing.err;
}

TEST_F(SessionCli, AnIdleSessionEndsAndSaysAfterHowLong) {
  const std::string id = start({"--idle", "300ms"});
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (fs::exists(dir() / (id + ".sock")) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_FALSE(fs::exists(dir() / (id + ".sock")));
  const Ran after = cordon({"session", "run", id, "-c", "x"});
  EXPECT_EQ(after.status, 125);
  EXPECT_NE(after.err.find("ended after 300 ms idle"), std::string::npos) << after.err;
}

TEST_F(SessionCli, AKilledHolderIsSweptAndSaysItDied) {
  const std::string id = start();
  const pid_t holder = holder_pid(id);
  ASSERT_GT(holder, 1);
  ASSERT_EQ(::kill(holder, SIGKILL), 0);
  ASSERT_EQ(::waitpid(holder, nullptr, 0), holder);  // ours: this test is its subreaper
  const Ran after = cordon({"session", "run", id, "-c", "x"});
  EXPECT_EQ(after.status, 125);
  EXPECT_NE(after.err.find("its holder process died"), std::string::npos) << after.err;
  EXPECT_FALSE(fs::exists(dir() / (id + ".sock")));  // swept
}

// Another user cannot reach the socket: the directory is 0700 and the socket 0600.
// While a call runs, the holder still answers: `ls` at once (the session busy), a second
// call waits for its turn and then runs, `stop` at once, cancelling the running call and
// turning away what waited. Seen when it did not: `ls` and `stop` waited behind the call
// and gave up ("the session did not answer in time").
TEST_F(SessionCli, ASecondCallWaitsAndLsAndStopAnswerDuringACall) {
  const std::string id = start();
  Ran first;
  std::thread running([&] { first = cordon({"session", "run", id, "-c", "hold:1500"}); });
  std::this_thread::sleep_for(300ms);
  Ran second;
  std::thread waiting([&] { second = cordon({"session", "run", id, "-c", "after"}); });
  const auto asked = std::chrono::steady_clock::now();
  const Ran ls = cordon({"session", "ls"});
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 1200ms) << "ls waited for the call";
  EXPECT_EQ(ls.status, 0) << ls.err;
  EXPECT_NE(ls.out.find("running"), std::string::npos) << ls.out;
  running.join();
  waiting.join();
  EXPECT_EQ(first.status, 0) << first.err;
  EXPECT_EQ(second.status, 0) << second.err;
  EXPECT_EQ(second.out, "2 python after'after'\n");  // the session's second call, after the first

  Ran held;
  std::thread stopped_call([&] { held = cordon({"session", "run", id, "-c", "hold:20000"}); });
  std::this_thread::sleep_for(300ms);
  Ran queued;
  std::thread turned_away([&] { queued = cordon({"session", "run", id, "-c", "never"}); });
  std::this_thread::sleep_for(300ms);
  const auto stop_asked = std::chrono::steady_clock::now();
  const Ran stop = cordon({"session", "stop", id});
  EXPECT_EQ(stop.status, 0) << stop.err;
  stopped_call.join();
  turned_away.join();
  EXPECT_LT(std::chrono::steady_clock::now() - stop_asked, 5s) << "the call was not cancelled";
  EXPECT_NE(held.err.find("cancelled"), std::string::npos) << held.err;
  EXPECT_NE(queued.status, 0);
  EXPECT_NE(queued.err.find("was stopped"), std::string::npos) << queued.err;
}

TEST_F(SessionCli, AnotherUserCannotConnect) {
  const std::string id = start();
  const std::string path = (dir() / (id + ".sock")).string();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) _exit(2);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::copy(path.begin(), path.end(), addr.sun_path);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    _exit(rc == 0 ? 1 : (errno == EACCES ? 0 : 3));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: connected; 2: could not drop to 65534; 3: other error";
}

TEST_F(SessionCli, ABackendWithoutSessionsRefusesWithTheReasonAndLeavesNothing) {
  const Ran ran = cordon({"session", "start", "-b", "fixture", "--runtime", "fixture-runtime"});
  ASSERT_TRUE(fs::is_directory(dir()));  // made before the holder was asked
  EXPECT_EQ(ran.status, 125);
  EXPECT_NE(ran.err.find("does not hold sessions"), std::string::npos) << ran.err;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir(), ec)) {
    ADD_FAILURE() << "left behind: " << entry.path();
  }
}

}  // namespace
