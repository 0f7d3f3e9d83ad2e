// cordon mcp --http (cli/mcp/http_*.cpp) against a fake Session (mcp_fake_session.cpp):
// the security checks, the session rules and the SSE/JSON answers of the MCP Streamable
// HTTP transport, with httplib's client on loopback; and the pure parsers, as tables.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <streambuf>
#include <string>
#include <thread>

#include "cordon/cancel.h"
#include "mcp/http_auth.h"
#include "mcp/http_message.h"
#include "mcp/http_token.h"
#include "mcp/transports.h"
#include "mcp_fake_session.h"

namespace cordon::cli::mcp {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;
namespace fake = cordon::test::fake_mcp;

constexpr const char* kToken = "test-token-0123456789";

// std::cerr, captured while a server runs (serve_http prints its address there).
class CaptureBuf : public std::streambuf {
 public:
  std::string text() const {
    const std::lock_guard lock(mutex_);
    return text_;
  }

 protected:
  int overflow(int c) override {
    const std::lock_guard lock(mutex_);
    if (c != traits_type::eof()) text_.push_back(static_cast<char>(c));
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const std::lock_guard lock(mutex_);
    text_.append(s, static_cast<std::size_t>(n));
    return n;
  }

 private:
  mutable std::mutex mutex_;
  std::string text_;
};

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit = 5s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return condition();
}

// serve_http on a thread, on 127.0.0.1 and a free port, until destroyed.
class Server {
 public:
  explicit Server(HttpOptions options) : options_(std::move(options)) {
    old_ = std::cerr.rdbuf(&capture_);
    thread_ = std::thread([this] { status_ = serve_http(service_, options_, stop_.token()); });
    std::smatch match;
    const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+)/mcp)");
    eventually([&] {
      log_ = capture_.text();
      return std::regex_search(log_, match, listening);
    });
    port_ = match.empty() ? 0 : std::stoi(match[1]);
  }
  ~Server() {
    stop();
    std::cerr.rdbuf(old_);
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Cancels the token and waits for serve_http; its exit status.
  int stop() {
    stop_.cancel();
    if (thread_.joinable()) thread_.join();
    return status_;
  }
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] std::string log() const { return capture_.text(); }
  [[nodiscard]] httplib::Client client() const {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(10, 0);
    return client;
  }

 private:
  HttpOptions options_;
  Service service_;
  CancelSource stop_;
  CaptureBuf capture_;
  std::streambuf* old_ = nullptr;
  std::string log_;
  std::thread thread_;
  int status_ = -1;
  int port_ = 0;
};

HttpOptions test_options() {
  HttpOptions options;
  options.token = kToken;
  options.keepalive_interval = 50ms;
  return options;
}

httplib::Headers headers(std::initializer_list<std::pair<std::string, std::string>> extra = {},
                         bool with_token = true) {
  httplib::Headers out = {{"Accept", "application/json, text/event-stream"}};
  if (with_token) out.emplace("Authorization", std::string("Bearer ") + kToken);
  for (const auto& [key, value] : extra) {
    out.erase(key);
    out.emplace(key, value);
  }
  return out;
}

httplib::Headers headers_without_token() {
  httplib::Headers out = headers();
  out.erase("Authorization");
  return out;
}

std::string request(int id, const std::string& method, const json& params = json::object()) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump();
}

std::string initialize() {
  return request(1, "initialize",
                 {{"protocolVersion", "2025-06-18"},
                  {"capabilities", json::object()},
                  {"clientInfo", {{"name", "t"}, {"version", "0"}}}});
}

// Initializes a session; its id.
std::string open_session(httplib::Client& client) {
  const auto res = client.Post("/mcp", headers(), initialize(), "application/json");
  if (!res || res->status != 200) return "";
  return res->get_header_value("Mcp-Session-Id");
}

// The `data:` payloads of an SSE body, in order.
std::vector<json> sse_messages(const std::string& body) {
  std::vector<json> out;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("data: ")) out.push_back(json::parse(line.substr(6)));
  }
  return out;
}

TEST(McpHttpTest, ListensOnLoopbackAndPrintsTheUrl) {
  Server server(test_options());
  ASSERT_GT(server.port(), 0) << server.log();
  EXPECT_EQ(server.stop(), 0);
}

TEST(McpHttpTest, NoTokenOrAWrongOneIs401) {
  Server server(test_options());
  auto client = server.client();
  auto none = client.Post("/mcp", headers_without_token(), initialize(), "application/json");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Bearer");
  auto wrong = client.Post("/mcp", headers({{"Authorization", "Bearer wrong"}}), initialize(),
                           "application/json");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto get = client.Get("/mcp", headers_without_token());
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 401);
}

TEST(McpHttpTest, AForeignOriginIs403AndTheServersOwnIsAccepted) {
  HttpOptions options = test_options();
  options.allowed_origins = {"https://app.example"};
  Server server(options);
  auto client = server.client();
  auto foreign = client.Post("/mcp", headers({{"Origin", "http://evil.example"}}), initialize(),
                             "application/json");
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->status, 403);
  const std::string own = "http://localhost:" + std::to_string(server.port());
  auto ok = client.Post("/mcp", headers({{"Origin", own}}), initialize(), "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  auto allowed = client.Post("/mcp", headers({{"Origin", "https://app.example"}}), initialize(),
                             "application/json");
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200);
  // A rebound DNS name reaching the loopback listener.
  auto rebound =
      client.Post("/mcp", headers({{"Host", "evil.example:80"}}), initialize(), "application/json");
  ASSERT_TRUE(rebound);
  EXPECT_EQ(rebound->status, 403);
}

TEST(McpHttpTest, AnOversizedBodyIs413) {
  HttpOptions options = test_options();
  options.max_body_bytes = 1024;
  Server server(options);
  auto client = server.client();
  json big = json::parse(initialize());
  big["pad"] = std::string(2000, 'x');
  auto res = client.Post("/mcp", headers(), big.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  // Chunked, without a Content-Length: httplib's own limit would not see it.
  const std::string text = big.dump();
  auto chunked = server.client().Post(
      "/mcp", headers(),
      [&text](std::size_t offset, httplib::DataSink& sink) {
        if (offset < text.size()) {
          sink.write(text.data() + offset, std::min<std::size_t>(100, text.size() - offset));
        } else {
          sink.done();
        }
        return true;
      },
      "application/json");
  ASSERT_TRUE(chunked);
  EXPECT_EQ(chunked->status, 413);
  // The connection of a refused body is not reused for the next request.
  auto after = client.Post("/mcp", headers(), initialize(), "application/json");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
}

TEST(McpHttpTest, InitializeGivesASessionIdThatLaterRequestsNeed) {
  Server server(test_options());
  auto client = server.client();
  const std::string id = open_session(client);
  EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{32}"))) << id;
  EXPECT_NE(open_session(client), id);

  auto missing = client.Post("/mcp", headers(), request(2, "ping"), "application/json");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 400);

  auto unknown = client.Post("/mcp", headers({{"Mcp-Session-Id", std::string(32, 'f')}}),
                             request(2, "ping"), "application/json");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);

  auto ping = client.Post("/mcp", headers({{"Mcp-Session-Id", id}}), request(2, "ping"),
                          "application/json");
  ASSERT_TRUE(ping);
  EXPECT_EQ(ping->status, 200);
  EXPECT_EQ(ping->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(json::parse(ping->body), json::parse(R"({"jsonrpc":"2.0","id":2,"result":{}})"));

  auto del = client.Delete("/mcp", headers({{"Mcp-Session-Id", id}}));
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 204);
  auto after = client.Post("/mcp", headers({{"Mcp-Session-Id", id}}), request(3, "ping"),
                           "application/json");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 404);
  auto again = client.Delete("/mcp", headers({{"Mcp-Session-Id", id}}));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 404);
}

// A first start's audit (issue #40): the port is open at once, and every POST is told what
// it waits for and when to come back, until the service is ready.
TEST(McpHttpTest, WhileTheServiceAuditsEveryPostIs503WithRetryAfter) {
  Server server(test_options());
  auto client = server.client();
  test::fake_mcp::stats().auditing = true;
  const auto waiting = client.Post("/mcp", headers(), initialize(), "application/json");
  test::fake_mcp::stats().auditing = false;
  ASSERT_TRUE(waiting);
  EXPECT_EQ(waiting->status, 503);
  EXPECT_EQ(waiting->get_header_value("Retry-After"), "5");
  const json body = json::parse(waiting->body);
  EXPECT_EQ(body["error"]["message"], "auditing this host for the fake backend (3 of 27 attempts)");
  // Still checked first: no token, no news of the audit.
  test::fake_mcp::stats().auditing = true;
  const auto stranger =
      client.Post("/mcp", headers_without_token(), initialize(), "application/json");
  test::fake_mcp::stats().auditing = false;
  ASSERT_TRUE(stranger);
  EXPECT_EQ(stranger->status, 401);
  EXPECT_FALSE(open_session(client).empty());
}

TEST(McpHttpTest, ProtocolVersionHeaderMustBeTheSessionsOwn) {
  Server server(test_options());
  auto client = server.client();
  const std::string id = open_session(client);
  auto ok =
      client.Post("/mcp", headers({{"Mcp-Session-Id", id}, {"MCP-Protocol-Version", "2025-06-18"}}),
                  request(2, "ping"), "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  auto bad =
      client.Post("/mcp", headers({{"Mcp-Session-Id", id}, {"MCP-Protocol-Version", "1999-01-01"}}),
                  request(3, "ping"), "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
}

TEST(McpHttpTest, NotificationsAre202AndGetIs405) {
  Server server(test_options());
  auto client = server.client();
  const std::string id = open_session(client);
  auto note =
      client.Post("/mcp", headers({{"Mcp-Session-Id", id}}),
                  R"({"jsonrpc":"2.0","method":"notifications/initialized"})", "application/json");
  ASSERT_TRUE(note);
  EXPECT_EQ(note->status, 202);
  EXPECT_TRUE(note->body.empty());
  auto get = client.Get("/mcp", headers({{"Mcp-Session-Id", id}}));
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  auto other = client.Post("/other", headers(), initialize(), "application/json");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
  auto form =
      client.Post("/mcp", headers({{"Mcp-Session-Id", id}}), request(2, "ping"), "text/plain");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 415);
}

TEST(McpHttpTest, ASlowCallStreamsItsProgressBeforeTheResponse) {
  Server server(test_options());
  auto client = server.client();
  const std::string id = open_session(client);
  const auto started = std::chrono::steady_clock::now();
  auto res = client.Post("/mcp", headers({{"Mcp-Session-Id", id}}),
                         request(7, "slow", {{"ms", 300}}), "application/json");
  ASSERT_TRUE(res);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 300ms);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  const auto messages = sse_messages(res->body);
  ASSERT_EQ(messages.size(), 2u) << res->body;
  EXPECT_EQ(messages[0]["method"], "notifications/progress");
  EXPECT_EQ(messages[1]["id"], 7);
  EXPECT_EQ(messages[1]["result"]["slept"], 300);
}

TEST(McpHttpTest, ACallCancelledByTheClientEndsItsStreamWithoutAResponse) {
  Server server(test_options());
  auto client = server.client();
  const std::string id = open_session(client);
  const auto started = std::chrono::steady_clock::now();
  std::optional<httplib::Result> call;
  std::thread poster([&] {
    auto own = server.client();
    call.emplace(own.Post("/mcp", headers({{"Mcp-Session-Id", id}}),
                          request(9, "slow", {{"ms", 20000}}), "application/json"));
  });
  // The client withdraws the request in a POST of its own (the SDK's AbortSignal).
  std::this_thread::sleep_for(200ms);
  const json cancel = {{"jsonrpc", "2.0"},
                       {"method", "notifications/cancelled"},
                       {"params", {{"requestId", 9}, {"reason", "aborted"}}}};
  auto res =
      client.Post("/mcp", headers({{"Mcp-Session-Id", id}}), cancel.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 202);
  poster.join();
  ASSERT_TRUE(call && *call);
  // The stream ended when the call was cancelled, not after the 20 s the call would take.
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  const auto messages = sse_messages((*call)->body);
  ASSERT_EQ(messages.size(), 1u) << (*call)->body;
  EXPECT_EQ(messages[0]["method"], "notifications/progress");
}

TEST(McpHttpTest, JsonOnlyClientsGetOneJsonResponse) {
  Server server(test_options());
  auto client = server.client();
  const std::string id = open_session(client);
  auto res = client.Post("/mcp", headers({{"Mcp-Session-Id", id}, {"Accept", "application/json"}}),
                         request(8, "slow", {{"ms", 200}}), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(json::parse(res->body),
            json::parse(R"({"jsonrpc":"2.0","id":8,"result":{"slept":200}})"));
  // A batch (protocol versions before 2025-06-18) gets an array.
  const std::string batch =
      "[" + request(9, "ping") + "," + request(10, "slow", {{"ms", 100}}) + "]";
  auto both = client.Post("/mcp", headers({{"Mcp-Session-Id", id}, {"Accept", "application/json"}}),
                          batch, "application/json");
  ASSERT_TRUE(both);
  const json answers = json::parse(both->body);
  ASSERT_TRUE(answers.is_array());
  EXPECT_EQ(answers.size(), 2u);
}

TEST(McpHttpTest, AnIdleSessionExpiresAndItsCallsAreCancelled) {
  HttpOptions options = test_options();
  options.session_idle = 1s;
  Server server(options);
  auto client = server.client();
  const std::string id = open_session(client);
  const int before = fake::stats().cancel_all_calls.load();
  auto ping = client.Post("/mcp", headers({{"Mcp-Session-Id", id}}), request(2, "ping"),
                          "application/json");
  ASSERT_TRUE(ping);
  EXPECT_EQ(ping->status, 200);
  EXPECT_TRUE(eventually([&] { return fake::stats().cancel_all_calls.load() > before; }, 3s));
  auto after = client.Post("/mcp", headers({{"Mcp-Session-Id", id}}), request(3, "ping"),
                           "application/json");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 404);
}

TEST(McpHttpTest, AClientThatDropsTheStreamHasItsCallCancelled) {
  Server server(test_options());
  auto client = server.client();
  const std::string id = open_session(client);
  const int cancelled = fake::stats().cancelled_calls.load();
  const int finished = fake::stats().finished_calls.load();
  std::string seen;
  // The receiver gives up after the progress event: the client closes the connection.
  httplib::Request req;
  req.method = "POST";
  req.path = "/mcp";
  req.headers = headers({{"Mcp-Session-Id", id}, {"Content-Type", "application/json"}});
  req.body = request(12, "slow", {{"ms", 5000}});
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    seen.append(data, n);
    return seen.find("notifications/progress") == std::string::npos;
  };
  const auto started = std::chrono::steady_clock::now();
  httplib::Response response;
  httplib::Error error = httplib::Error::Success;
  EXPECT_FALSE(client.send(req, response, error));
  EXPECT_NE(seen.find("notifications/progress"), std::string::npos) << seen;
  EXPECT_TRUE(eventually([&] { return fake::stats().cancelled_calls.load() > cancelled; }, 3s));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 4s);
  EXPECT_EQ(fake::stats().finished_calls.load(), finished);
}

TEST(McpHttpTest, StoppingEndsOpenStreamsAndCancelsTheirCalls) {
  Server server(test_options());
  const int cancelled = fake::stats().cancelled_calls.load();
  auto client = server.client();
  const std::string id = open_session(client);
  std::thread caller([&] {
    auto other = server.client();
    (void)other.Post("/mcp", headers({{"Mcp-Session-Id", id}}), request(5, "slow", {{"ms", 30000}}),
                     "application/json");
  });
  std::this_thread::sleep_for(200ms);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(server.stop(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  caller.join();
  EXPECT_GT(fake::stats().cancelled_calls.load(), cancelled);
}

TEST(McpHttpTest, AGeneratedTokenWorksAndIsNeverPrinted) {
  const fs::path dir =
      fs::temp_directory_path() / ("cordon-mcp-http-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  HttpOptions options = test_options();
  options.token.reset();
  options.token_path = dir / "state" / "mcp-token";
  Server server(options);
  std::ifstream in(options.token_path);
  std::string token;
  in >> token;
  EXPECT_TRUE(std::regex_match(token, std::regex("[0-9a-f]{64}"))) << token;
  EXPECT_EQ(server.log().find(token), std::string::npos);
  EXPECT_NE(server.log().find(options.token_path.string()), std::string::npos);
  auto client = server.client();
  httplib::Headers h = headers({{"Authorization", "Bearer " + token}});
  auto res = client.Post("/mcp", h, initialize(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  server.stop();
  fs::remove_all(dir);
}

TEST(McpHttpTokenTest, WrittenPrivateReplacedAtStartOrReusedWithTokenFile) {
  const fs::path dir =
      fs::temp_directory_path() / ("cordon-mcp-token-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  HttpOptions options;
  options.token_path = dir / "cordon" / "mcp-token";
  fs::path wrote;
  auto first = resolve_token(options, wrote);
  ASSERT_TRUE(first) << first.error().describe();
  EXPECT_EQ(wrote, options.token_path);
  struct stat st{};
  ASSERT_EQ(::stat(options.token_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(options.token_path.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // Without --token-file: a new one replaces it at every start.
  auto second = resolve_token(options, wrote);
  ASSERT_TRUE(second);
  EXPECT_NE(*second, *first);
  std::ifstream in(options.token_path);
  std::string stored;
  in >> stored;
  EXPECT_EQ(stored, *second);
  // --token-file: the token in the file is kept.
  options.reuse_token_file = true;
  auto reused = resolve_token(options, wrote);
  ASSERT_TRUE(reused);
  EXPECT_EQ(*reused, *second);
  EXPECT_TRUE(wrote.empty());
  // Nothing left beside it (the temporary file was renamed).
  EXPECT_EQ(std::distance(fs::directory_iterator(options.token_path.parent_path()),
                          fs::directory_iterator()),
            1);
  // An explicit --token wins and writes nothing.
  options.token = "given";
  auto given = resolve_token(options, wrote);
  ASSERT_TRUE(given);
  EXPECT_EQ(*given, "given");
  fs::remove_all(dir);
}

TEST(McpHttpTokenTest, DefaultPathFollowsXdgStateHome) {
  const char* old_state = std::getenv("XDG_STATE_HOME");
  const char* old_home = std::getenv("HOME");
  ::setenv("XDG_STATE_HOME", "/xdg", 1);
  EXPECT_EQ(default_token_path().value(), fs::path("/xdg/cordon/mcp-token"));
  ::setenv("XDG_STATE_HOME", "relative", 1);
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(default_token_path().value(), fs::path("/home/u/.local/state/cordon/mcp-token"));
  if (old_state != nullptr)
    ::setenv("XDG_STATE_HOME", old_state, 1);
  else
    ::unsetenv("XDG_STATE_HOME");
  if (old_home != nullptr)
    ::setenv("HOME", old_home, 1);
  else
    ::unsetenv("HOME");
}

// --- the pure parsers, as tables ---

TEST(McpHttpParseTest, ListenAddress) {
  struct Case {
    const char* text;
    const char* host;  // nullptr: refused
    int port;
  };
  const Case cases[] = {
      {"127.0.0.1:8080", "127.0.0.1", 8080},
      {"127.0.0.1:0", "127.0.0.1", 0},
      {"[::1]:9000", "::1", 9000},
      {"localhost:1", "localhost", 1},
      {"0.0.0.0:65535", "0.0.0.0", 65535},
      {"8080", "127.0.0.1", 8080},
      {"[::]:80", "::", 80},
      {"127.0.0.1:65536", nullptr, 0},
      {"127.0.0.1:", nullptr, 0},
      {":8080", nullptr, 0},
      {"::1:8080", nullptr, 0},
      {"[::1]8080", nullptr, 0},
      {"[::1", nullptr, 0},
      {"[nothost]:1", nullptr, 0},
      {"example.com:80", nullptr, 0},
      {"127.0.0.1:-1", nullptr, 0},
      {"127.0.0.1:80x", nullptr, 0},
      {"", nullptr, 0},
      {"999.1.1.1:80", nullptr, 0},
      {"127.0.0.1:+80", nullptr, 0},
  };
  for (const auto& c : cases) {
    const auto parsed = parse_listen_address(c.text);
    if (c.host == nullptr) {
      EXPECT_FALSE(parsed) << c.text;
    } else {
      ASSERT_TRUE(parsed) << c.text << ": " << parsed.error().message;
      EXPECT_EQ(parsed->first, c.host) << c.text;
      EXPECT_EQ(parsed->second, c.port) << c.text;
    }
  }
}

TEST(McpHttpParseTest, LoopbackHosts) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "localhost"}) {
    EXPECT_TRUE(is_loopback_host(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "::", "10.0.0.1", "192.168.1.1", "example.com", ""}) {
    EXPECT_FALSE(is_loopback_host(host)) << host;
  }
}

TEST(McpHttpParseTest, BearerToken) {
  struct Case {
    const char* header;
    bool ok;
  };
  const Case cases[] = {
      {"Bearer secret", true},
      {"bearer secret", true},
      {"BEARER  secret ", true},
      {"Bearer secreT", false},
      {"Bearer secret2", false},
      {"Bearer secre", false},
      {"Bearer", false},
      {"Bearer ", false},
      {"Basic secret", false},
      {"secret", false},
      {"", false},
      {"Bearersecret", false},
  };
  for (const auto& c : cases) EXPECT_EQ(bearer_token_matches(c.header, "secret"), c.ok) << c.header;
  EXPECT_FALSE(bearer_token_matches("Bearer ", ""));
}

TEST(McpHttpParseTest, Origins) {
  const OriginPolicy policy("127.0.0.1", 8080, {"https://app.example/"});
  for (const char* origin : {"http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080",
                             "HTTP://LOCALHOST:8080", "https://app.example"}) {
    EXPECT_TRUE(policy.origin_allowed(origin)) << origin;
  }
  for (const char* origin : {"http://127.0.0.1:8081", "http://evil.example", "null", "",
                             "https://localhost:8080", "http://localhost"}) {
    EXPECT_FALSE(policy.origin_allowed(origin)) << origin;
  }
  EXPECT_TRUE(policy.host_allowed("127.0.0.1:8080"));
  EXPECT_TRUE(policy.host_allowed("localhost:8080"));
  EXPECT_FALSE(policy.host_allowed("evil.example:8080"));
  // Listening on all interfaces, the Host is whatever name the machine has.
  EXPECT_TRUE(OriginPolicy("0.0.0.0", 80, {}).host_allowed("build-box:80"));
}

TEST(McpHttpParseTest, AcceptHeader) {
  struct Case {
    const char* accept;
    bool sse;
    bool json;
  };
  const Case cases[] = {
      {"application/json, text/event-stream", true, true},
      {"text/event-stream", true, false},
      {"application/json", false, true},
      {"", false, true},
      {"*/*", false, true},
      {"text/html", false, false},
      {"application/json;q=0, text/event-stream", true, false},
      {"TEXT/EVENT-STREAM ; q=0.5", true, false},
      {"text/event-stream;q=0.0", false, false},
  };
  for (const auto& c : cases) {
    const auto formats = accepted_formats(c.accept);
    EXPECT_EQ(formats.event_stream, c.sse) << c.accept;
    EXPECT_EQ(formats.json, c.json) << c.accept;
  }
  EXPECT_TRUE(is_json_content_type("application/json"));
  EXPECT_TRUE(is_json_content_type("Application/JSON; charset=utf-8"));
  EXPECT_FALSE(is_json_content_type("text/plain"));
  EXPECT_FALSE(is_json_content_type(""));
}

TEST(McpHttpParseTest, PostBodies) {
  const auto init = inspect_post_body(initialize());
  EXPECT_TRUE(init.json && init.initialize && !init.batch);
  EXPECT_EQ(init.request_ids, std::vector<json>{1});
  const auto note = inspect_post_body(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  EXPECT_TRUE(note.json && !note.initialize && note.request_ids.empty());
  const auto batch = inspect_post_body("[" + request(1, "ping") + R"(,{"id":"a","method":"x"},3])");
  EXPECT_TRUE(batch.batch && !batch.initialize);
  EXPECT_EQ(batch.request_ids, (std::vector<json>{1, "a"}));
  EXPECT_FALSE(inspect_post_body("{").json);
  EXPECT_FALSE(inspect_post_body(R"({"method":"initialize"})").initialize);  // a notification
  EXPECT_FALSE(inspect_post_body(R"({"method":1,"id":1})").initialize);
  EXPECT_FALSE(inspect_post_body("[" + initialize() + "]").initialize);
}

}  // namespace
}  // namespace cordon::cli::mcp
