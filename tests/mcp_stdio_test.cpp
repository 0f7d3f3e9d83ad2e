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
#include "mcp_stdio_server.h"
#include "mcp_test_support.h"
#include "test_paths.h"

namespace cordon::cli::mcp {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

using testing::initialize;
using testing::request;
using testing::StdioServer;

TEST(McpStdio, MalformedJsonIsAParseErrorAndTheServerGoesOn) {
  StdioServer server({});
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
  StdioServer server({"--max-body", "64K"});
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
  StdioServer server({});
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
  StdioServer server({"--allow-net", target});
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
