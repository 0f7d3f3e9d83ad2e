// The JSON-RPC 2.0 layer of `cordon mcp` (cli/mcp/jsonrpc.h), its protocol-version rules
// (cli/mcp/protocol.h) and the bounded line reader of the stdio transport.
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "mcp/jsonrpc.h"
#include "mcp/line_reader.h"
#include "mcp/protocol.h"

namespace cordon::cli::mcp {
namespace {

using nlohmann::json;

jsonrpc::Message one(std::string_view text, bool batches = false) {
  std::vector<jsonrpc::Message> messages = jsonrpc::parse(text, batches);
  EXPECT_EQ(messages.size(), 1u) << text;
  return messages.front();
}

int error_code(const jsonrpc::Message& message) {
  const auto* invalid = std::get_if<jsonrpc::Invalid>(&message);
  if (invalid == nullptr) return 0;
  return invalid->error["error"]["code"].get<int>();
}

TEST(McpJsonRpc, RequestWithNumberAndStringIds) {
  const auto number = one(R"({"jsonrpc":"2.0","id":7,"method":"ping"})");
  ASSERT_TRUE(std::holds_alternative<jsonrpc::Request>(number));
  EXPECT_EQ(std::get<jsonrpc::Request>(number).id, 7);
  EXPECT_EQ(std::get<jsonrpc::Request>(number).method, "ping");
  EXPECT_TRUE(std::get<jsonrpc::Request>(number).params.is_null());

  const auto text = one(R"({"jsonrpc":"2.0","id":"a-1","method":"tools/list","params":{}})");
  ASSERT_TRUE(std::holds_alternative<jsonrpc::Request>(text));
  EXPECT_EQ(std::get<jsonrpc::Request>(text).id, "a-1");
  EXPECT_TRUE(std::get<jsonrpc::Request>(text).params.is_object());
  // A string and a number of the same digits are different ids.
  EXPECT_NE(jsonrpc::id_key(json(1)), jsonrpc::id_key(json("1")));
}

TEST(McpJsonRpc, NotificationHasNoId) {
  const auto message = one(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  ASSERT_TRUE(std::holds_alternative<jsonrpc::Notification>(message));
  EXPECT_EQ(std::get<jsonrpc::Notification>(message).method, "notifications/initialized");
}

TEST(McpJsonRpc, ResponsesFromTheClientAreRecognised) {
  EXPECT_TRUE(
      std::holds_alternative<jsonrpc::Response>(one(R"({"jsonrpc":"2.0","id":3,"result":{}})")));
  EXPECT_TRUE(std::holds_alternative<jsonrpc::Response>(
      one(R"({"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}})")));
}

TEST(McpJsonRpc, MalformedJsonIsAParseErrorWithNullId) {
  for (const char* text : {"{", "not json", R"({"jsonrpc":"2.0","id":1,)", "\xff\xfe"}) {
    const auto message = one(text);
    EXPECT_EQ(error_code(message), jsonrpc::kParseError) << text;
    EXPECT_TRUE(std::get<jsonrpc::Invalid>(message).error["id"].is_null());
    EXPECT_EQ(std::get<jsonrpc::Invalid>(message).error["jsonrpc"], "2.0");
  }
}

TEST(McpJsonRpc, InvalidRequestsNameWhatIsWrong) {
  struct Case {
    const char* text;
    const char* why;
  };
  for (const Case& c : std::vector<Case>{
           {R"(42)", "JSON object"},
           {R"({"id":1,"method":"ping"})", "jsonrpc"},
           {R"({"jsonrpc":"1.0","id":1,"method":"ping"})", "jsonrpc"},
           {R"({"jsonrpc":"2.0","id":1,"method":5})", "method"},
           {R"({"jsonrpc":"2.0","id":null,"method":"ping"})", "id"},
           {R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})", "id"},
           {R"({"jsonrpc":"2.0","id":1,"method":"ping","params":3})", "params"},
           {R"({"jsonrpc":"2.0","id":1})", "neither"},
           {R"({"jsonrpc":"2.0","id":1,"result":{},"error":{}})", "neither"},
       }) {
    const auto message = one(c.text);
    EXPECT_EQ(error_code(message), jsonrpc::kInvalidRequest) << c.text;
    EXPECT_NE(std::get<jsonrpc::Invalid>(message).error["error"]["message"].get<std::string>().find(
                  c.why),
              std::string::npos)
        << c.text;
  }
}

TEST(McpJsonRpc, InvalidRequestKeepsAReadableId) {
  const auto message = one(R"({"jsonrpc":"2.0","id":"x","method":5})");
  EXPECT_EQ(std::get<jsonrpc::Invalid>(message).error["id"], "x");
}

TEST(McpJsonRpc, BatchesOnlyWhereAllowed) {
  const char* batch = R"([{"jsonrpc":"2.0","id":1,"method":"ping"},
                          {"jsonrpc":"2.0","method":"notifications/initialized"},
                          {"bad":true}])";
  const std::vector<jsonrpc::Message> messages = jsonrpc::parse(batch, /*batches_allowed=*/true);
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<jsonrpc::Request>(messages[0]));
  EXPECT_TRUE(std::holds_alternative<jsonrpc::Notification>(messages[1]));
  EXPECT_EQ(error_code(messages[2]), jsonrpc::kInvalidRequest);

  EXPECT_EQ(error_code(one(batch, /*batches=*/false)), jsonrpc::kInvalidRequest);
  EXPECT_EQ(error_code(one("[]", /*batches=*/true)), jsonrpc::kInvalidRequest);
}

TEST(McpJsonRpc, ResponsesHaveTheSpecShape) {
  EXPECT_EQ(jsonrpc::result_response(5, json::object()),
            json::parse(R"({"jsonrpc":"2.0","id":5,"result":{}})"));
  EXPECT_EQ(jsonrpc::error_response("a", jsonrpc::kMethodNotFound, "Method not found: x"),
            json::parse(R"({"jsonrpc":"2.0","id":"a",
                            "error":{"code":-32601,"message":"Method not found: x"}})"));
  EXPECT_EQ(jsonrpc::notification("notifications/progress", {{"progress", 1}}),
            json::parse(R"({"jsonrpc":"2.0","method":"notifications/progress",
                            "params":{"progress":1}})"));
}

TEST(McpProtocol, NegotiatesEverySupportedVersionAndFallsBackToTheLatest) {
  for (const std::string_view version : kProtocolVersions) {
    EXPECT_EQ(negotiate_version(version), version);
  }
  EXPECT_EQ(negotiate_version("1999-01-01"), "2025-11-25");
  EXPECT_EQ(negotiate_version(""), "2025-11-25");
}

TEST(McpProtocol, WhatEachVersionHas) {
  EXPECT_TRUE(has_structured_content("2025-11-25"));
  EXPECT_TRUE(has_structured_content("2025-06-18"));
  EXPECT_FALSE(has_structured_content("2025-03-26"));
  EXPECT_TRUE(allows_batches("2025-03-26"));
  EXPECT_TRUE(allows_batches("2024-11-05"));
  EXPECT_FALSE(allows_batches("2025-06-18"));
  const json tool = {{"name", "run_code"},
                     {"inputSchema", json::object()},
                     {"outputSchema", json::object()},
                     {"annotations", json::object()}};
  EXPECT_TRUE(tool_for_version(tool, "2025-06-18").contains("outputSchema"));
  EXPECT_FALSE(tool_for_version(tool, "2025-03-26").contains("outputSchema"));
  EXPECT_TRUE(tool_for_version(tool, "2025-03-26").contains("annotations"));
  EXPECT_FALSE(tool_for_version(tool, "2024-11-05").contains("annotations"));
  const json init = initialize_result("2025-06-18", "1.2.3");
  EXPECT_EQ(init["serverInfo"]["name"], "cordon");
  EXPECT_EQ(init["serverInfo"]["version"], "1.2.3");
  EXPECT_EQ(init["capabilities"]["tools"]["listChanged"], false);
  EXPECT_EQ(init["protocolVersion"], "2025-06-18");
}

TEST(McpLineReader, SplitsLinesAcrossReads) {
  LineReader reader(64);
  std::vector<std::string> lines;
  const auto take = [&](const LineReader::Line& line) {
    EXPECT_FALSE(line.too_long);
    lines.push_back(line.text);
  };
  reader.feed("ab", take);
  reader.feed("c\r\nde\n\nf", take);
  EXPECT_EQ(lines, (std::vector<std::string>{"abc", "de", ""}));
  EXPECT_EQ(reader.finish().text, "f");
}

TEST(McpLineReader, ATooLongLineIsSkippedNotBuffered) {
  LineReader reader(8);
  std::vector<LineReader::Line> lines;
  const auto take = [&](const LineReader::Line& line) { lines.push_back(line); };
  const std::string chunk(1000, 'x');
  for (int i = 0; i < 1000; ++i) reader.feed(chunk, take);  // 1 MB, never held
  reader.feed("tail\nok\n", take);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(lines[0].too_long);
  EXPECT_TRUE(lines[0].text.empty());
  EXPECT_FALSE(lines[1].too_long);
  EXPECT_EQ(lines[1].text, "ok");
  // Exactly the bound is not too long.
  lines.clear();
  reader.feed("12345678\n", take);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_FALSE(lines[0].too_long);
}

}  // namespace
}  // namespace cordon::cli::mcp
