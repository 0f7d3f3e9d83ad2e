// `cordon mcp` over stdio, the real binary over pipes: malformed and huge lines get a
// parse error and the server goes on; stdout carries protocol only; the end of stdin
// mid-call cancels the call, leaves no process and exits 0.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "loopback_server.h"
#include "mcp_test_support.h"
#include "test_paths.h"

namespace cordon::cli::mcp {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// `cordon mcp ...` with its stdin and stdout on pipes (stderr inherited: diagnostics).
class Server {
 public:
  explicit Server(const std::vector<std::string>& extra) {
    ::setenv("CORDON_PLUGIN_PATH", testing::plugin_dir(), 1);
    int in[2];
    int out[2];
    EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    std::vector<std::string> args = {testing::cli_binary(), "mcp", "-b",  "namespace", "--no-audit",
                                     "--unverified",        "-t",  "10s", "--memory",  "128M",
                                     "--pool-size",         "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    EXPECT_EQ(::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server() {
    close_stdin();
    if (from_ >= 0) ::close(from_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  void send(const std::string& text) {
    std::string_view rest = text;
    while (!rest.empty()) {
      const ssize_t n = ::write(to_, rest.data(), rest.size());
      ASSERT_GT(n, 0);
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  void send(const json& message) { send(message.dump() + "\n"); }
  void close_stdin() {
    if (to_ >= 0) ::close(to_);
    to_ = -1;
  }

  // The next line of stdout, as JSON (fails the test when it is not JSON).
  std::optional<json> next(milliseconds within = milliseconds(20000)) {
    const auto end = std::chrono::steady_clock::now() + within;
    for (;;) {
      if (const std::size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        const std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        json value = json::parse(line, nullptr, /*allow_exceptions=*/false);
        EXPECT_FALSE(value.is_discarded()) << "stdout line is not JSON: " << line;
        return value;
      }
      const auto left =
          std::chrono::duration_cast<milliseconds>(end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd fd{.fd = from_, .events = POLLIN, .revents = 0};
      if (::poll(&fd, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      char chunk[65536];
      const ssize_t n = ::read(from_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  // The exit status once it exits within `within`, else -1.
  int wait_exit(milliseconds within) {
    const auto end = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < end) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
  std::string buffer_;
};

json request(int id, const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

void initialize(Server& server) {
  server.send(request(0, "initialize",
                      {{"protocolVersion", "2025-06-18"},
                       {"capabilities", json::object()},
                       {"clientInfo", {{"name", "stdio-test"}, {"version", "1"}}}}));
  const auto init = server.next();
  ASSERT_TRUE(init);
  EXPECT_EQ((*init)["result"]["serverInfo"]["name"], "cordon");
  server.send(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
}

TEST(McpStdio, MalformedJsonIsAParseErrorAndTheServerGoesOn) {
  Server server({});
  initialize(server);
  server.send(std::string("{\"jsonrpc\": \"2.0\", \"id\": 1,\n"));
  const auto error = server.next();
  ASSERT_TRUE(error);
  EXPECT_EQ((*error)["error"]["code"], -32700);
  EXPECT_TRUE((*error)["id"].is_null());
  server.send(request(2, "ping"));
  const auto pong = server.next();
  ASSERT_TRUE(pong);
  EXPECT_EQ((*pong)["id"], 2);
}

TEST(McpStdio, AHugeLineIsSkippedWithAParseError) {
  Server server({"--max-body", "64K"});
  initialize(server);
  // 8 MiB on one line, far past the bound: read and dropped as it comes.
  const std::string chunk(1 << 20, 'x');
  server.send(std::string(R"({"jsonrpc":"2.0","id":1,"method":"ping","pad":")"));
  for (int i = 0; i < 8; ++i) server.send(chunk);
  server.send(std::string("\"}\n"));
  const auto error = server.next();
  ASSERT_TRUE(error);
  EXPECT_EQ((*error)["error"]["code"], -32700);
  server.send(request(2, "ping"));
  const auto pong = server.next();
  ASSERT_TRUE(pong);
  EXPECT_EQ((*pong)["id"], 2);
  EXPECT_EQ((*pong)["result"], json::object());
}

TEST(McpStdio, EndOfInputMidCallCancelsItAndExits) {
  Server server({});
  initialize(server);
  const std::string mark = "cordon-mcp-stdio-eof-" + std::to_string(::getpid());
  server.send(request(1, "tools/call",
                      {{"name", "run_code"},
                       {"arguments",
                        {{"code", "exec -a " + mark + " sleep 30"},
                         {"language", "bash"},
                         {"timeout", 9},
                         {"files", nullptr},
                         {"collect", nullptr}}}}));
  ASSERT_TRUE(
      testing::eventually([&] { return testing::processes_with(mark) > 0; }, milliseconds(10000)));
  server.close_stdin();
  EXPECT_EQ(server.wait_exit(milliseconds(5000)), 0);
  EXPECT_EQ(testing::processes_with(mark), 0);
  EXPECT_FALSE(server.next(milliseconds(100)));  // no response for a call of a gone client
}

// `cordon mcp --allow-net`: the served tool states the list (and is open-world), and every
// call runs under it, its connections in the text the model reads and in structuredContent.
// The host's 127.0.0.2, allowed as an address: nothing leaves the machine.
TEST(McpStdio, AnAllowListIsServedAndCarriedByEveryCall) {
  const cordon::testing::FromHostServer host;
  const std::string target = host.target();
  Server server({"--allow-net", target});
  initialize(server);
  server.send(request(1, "tools/list"));
  const auto list = server.next();
  ASSERT_TRUE(list);
  const json tool = (*list)["result"]["tools"][0];
  EXPECT_EQ(tool["annotations"]["openWorldHint"], true) << tool.dump();
  EXPECT_NE(
      tool["description"].get<std::string>().find("Network access is limited to " + target + "."),
      std::string::npos)
      << tool["description"];

  server.send(request(2, "tools/call",
                      {{"name", "run_code"},
                       {"arguments",
                        {{"code", "import urllib.request\nprint(urllib.request.urlopen('http://" +
                                      target + "/', timeout=10).read().decode())\n"},
                         {"language", "python"},
                         {"timeout", nullptr},
                         {"files", nullptr},
                         {"collect", nullptr}}}}));
  const auto call = server.next();
  ASSERT_TRUE(call);
  const json result = (*call)["result"];
  const std::string text = result["content"][0]["text"].get<std::string>();
  EXPECT_EQ(result["isError"], false) << text;
  EXPECT_NE(text.find("--- stdout ---\nfrom host\n"), std::string::npos) << text;
  EXPECT_NE(text.find("--- network ---\nallowed GET " + target + ": "), std::string::npos) << text;
  EXPECT_EQ(result["structuredContent"]["network"]["connections"][0]["allowed"], true);
}

}  // namespace
}  // namespace cordon::cli::mcp
