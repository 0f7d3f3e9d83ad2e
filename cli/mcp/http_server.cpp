// serve_http: MCP Streamable HTTP on cpp-httplib. One endpoint, /mcp. Every request first
// passes the Origin/Host and bearer-token checks (pre-routing, before a body is read);
// POST bodies go to the session of their Mcp-Session-Id, and the answer streams back as
// SSE (or one JSON body) from a PostSink; DELETE ends a session; GET is 405 (no
// server-initiated stream).
#include <httplib.h>
#include <poll.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "cordon/sha256.h"
#include "cordon/unique_fd.h"
#include "mcp/http_auth.h"
#include "mcp/http_message.h"
#include "mcp/http_post_sink.h"
#include "mcp/http_sessions.h"
#include "mcp/http_token.h"
#include "mcp/transports.h"

namespace cordon::cli::mcp {
namespace {

constexpr const char* kEndpoint = "/mcp";
constexpr const char* kSessionHeader = "Mcp-Session-Id";
constexpr const char* kVersionHeader = "MCP-Protocol-Version";

// A JSON-RPC error body for answers the HTTP layer gives itself (no session involved).
// It closes the connection: a refused request's body may still be unread on it, and httplib
// would take those bytes for the next request.
void refuse(httplib::Response& res, int status, std::string_view message, int code = -32000) {
  res.status = status;
  res.set_header("Connection", "close");
  const nlohmann::json body = {
      {"jsonrpc", "2.0"}, {"error", {{"code", code}, {"message", message}}}, {"id", nullptr}};
  res.set_content(body.dump(), "application/json");
}

std::string url_host(std::string_view host) {
  return host.find(':') != std::string_view::npos ? "[" + std::string(host) + "]"
                                                  : std::string(host);
}

// httplib writes with send(flags=0): a client that vanished would SIGPIPE the process.
// A no-op handler (not SIG_IGN, which exec would pass on to the sandboxed code) turns
// that into EPIPE. Left alone when the caller already set a disposition.
void catch_sigpipe_if_default() {
  struct sigaction old{};
  if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
    struct sigaction action{};
    action.sa_handler = [](int) {};
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGPIPE, &action, nullptr);
  }
}

// SSE: each message one `message` event.
std::string sse_events(const std::vector<std::string>& messages) {
  std::string out;
  for (const auto& message : messages) {
    out += "event: message\ndata: ";
    out += message;
    out += "\n\n";
  }
  return out;
}

// One POST's response being written: the sink the session sends to, and what is needed
// when the client goes away before the last response.
struct Stream {
  std::shared_ptr<HttpSession> session;
  std::shared_ptr<PostSink> sink;
  std::vector<nlohmann::json> request_ids;
  bool batch = false;
  bool event_stream = true;
  std::vector<std::string> json_responses;  // JSON mode: collected until complete

  Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    sink->close();
    if (!sink->complete()) {
      session->cancel_requests(sink->unanswered(request_ids), "the client closed the connection");
    }
    session->end_request();
  }

  // JSON: the responses only (a notification has no place in a JSON answer), one object
  // or, for a batch, an array.
  void collect(const std::vector<std::string>& messages) {
    for (const auto& text : messages) {
      const auto message = nlohmann::json::parse(text, nullptr, false);
      if (is_response(message)) json_responses.push_back(text);
    }
  }
  [[nodiscard]] std::string json_body() const {
    if (!batch && json_responses.size() == 1) return json_responses.front();
    std::string out = "[";
    for (std::size_t i = 0; i < json_responses.size(); ++i) {
      if (i > 0) out += ",";
      out += json_responses[i];
    }
    return out + "]";
  }
};

class HttpServer {
 public:
  HttpServer(Service& service, const HttpOptions& options, std::string token)
      : service_(service),
        options_(options),
        token_(std::move(token)),
        owner_scope_("token:" + sha256_hex(token_).substr(0, 32) + "/"),
        sessions_(std::chrono::duration_cast<std::chrono::milliseconds>(options.session_idle)) {}

  int run(const CancelToken& stop);

 private:
  httplib::Server::HandlerResponse check(const httplib::Request& req, httplib::Response& res);
  void post(const httplib::Request& req, httplib::Response& res,
            const httplib::ContentReader& content);
  void remove(const httplib::Request& req, httplib::Response& res);
  void respond(const std::shared_ptr<Stream>& stream, httplib::Response& res) const;
  [[nodiscard]] bool version_accepted(const HttpSession& session, std::string_view version) const;

  Service& service_;
  const HttpOptions& options_;
  const std::string token_;
  // Before each MCP session's name in the owner of its sandbox sessions (issue #41): the
  // token's hash, never the token.
  const std::string owner_scope_;
  std::unique_ptr<OriginPolicy> policy_;  // made once the port is known
  SessionTable sessions_;
  httplib::Server server_;
};

httplib::Server::HandlerResponse HttpServer::check(const httplib::Request& req,
                                                   httplib::Response& res) {
  using enum httplib::Server::HandlerResponse;
  if (req.path != kEndpoint) {
    refuse(res, 404, "not found: the MCP endpoint is /mcp");
    return Handled;
  }
  // DNS rebinding: a browser page whose name now resolves here sends its own Origin (and
  // Host). Refused before the token is even looked at.
  if (req.has_header("Origin") && !policy_->origin_allowed(req.get_header_value("Origin"))) {
    refuse(res, 403, "forbidden: this Origin is not allowed (see --allowed-origin)");
    return Handled;
  }
  if (req.has_header("Host") && !policy_->host_allowed(req.get_header_value("Host"))) {
    refuse(res, 403, "forbidden: this Host is not the server's");
    return Handled;
  }
  if (!bearer_token_matches(req.get_header_value("Authorization"), token_)) {
    refuse(res, 401, "unauthorized: send Authorization: Bearer <token of cordon mcp --http>");
    res.set_header("WWW-Authenticate", "Bearer");
    return Handled;
  }
  return Unhandled;
}

bool HttpServer::version_accepted(const HttpSession& session, std::string_view version) const {
  return version == session.protocol_version() ||
         std::ranges::find(options_.protocol_versions, version) != options_.protocol_versions.end();
}

void HttpServer::post(const httplib::Request& req, httplib::Response& res,
                      const httplib::ContentReader& content) {
  if (!is_json_content_type(req.get_header_value("Content-Type"))) {
    return refuse(res, 415, "unsupported media type: POST application/json");
  }
  const AcceptedFormats formats = accepted_formats(req.get_header_value("Accept"));
  if (!formats.json && !formats.event_stream) {
    return refuse(res, 406, "not acceptable: accept application/json or text/event-stream");
  }
  // Read here, not by httplib: its own limit covers only a Content-Length body, not a
  // chunked one nor what a Content-Encoding inflates to.
  // Past the limit the rest is read and dropped (up to a bound), as httplib does for a
  // Content-Length body: closing with unread bytes would send a reset that can reach the
  // client before the 413 does.
  std::string text;
  bool too_big = false;
  std::size_t dropped = 0;
  const std::size_t drop_limit = 16 * options_.max_body_bytes;
  const bool read = content([&](const char* data, std::size_t size) {
    too_big = too_big || text.size() + size > options_.max_body_bytes;
    if (!too_big) {
      text.append(data, size);
    } else {
      text.clear();
      dropped += size;
    }
    return dropped <= drop_limit;
  });
  if (too_big || res.status == 413) {
    return refuse(res, 413,
                  "payload too large: the body limit is " +
                      std::to_string(options_.max_body_bytes) + " bytes");
  }
  if (!read) return refuse(res, 400, "bad request: the body could not be read");
  // A first start's audit (issue #40): the port is open at once, and a client, a probe or a
  // balancer is told what it waits for and when to come back.
  if (const std::optional<NotReady> wait = not_ready(service_)) {
    refuse(res, 503, wait->message);
    if (wait->retry_after_seconds) {
      res.set_header("Retry-After", std::to_string(*wait->retry_after_seconds));
    }
    return;
  }
  PostBody body = inspect_post_body(text);

  std::shared_ptr<HttpSession> session;
  const bool creating = !req.has_header(kSessionHeader);
  if (creating) {
    if (!body.initialize) {
      return refuse(res, 400, "bad request: no Mcp-Session-Id header; start with initialize");
    }
    session = std::make_shared<HttpSession>(service_, owner_scope_);
  } else {
    session = sessions_.find(req.get_header_value(kSessionHeader));
    if (!session) return refuse(res, 404, "session not found (expired or terminated)", -32001);
    if (req.has_header(kVersionHeader) &&
        !version_accepted(*session, req.get_header_value(kVersionHeader))) {
      return refuse(res, 400, "bad request: unsupported MCP-Protocol-Version");
    }
  }

  auto stream = std::make_shared<Stream>();
  session->begin_request();
  stream->session = session;
  stream->sink = std::make_shared<PostSink>();
  stream->request_ids = std::move(body.request_ids);
  stream->batch = body.batch;
  const auto responses = session->handle(text, stream->sink);
  if (!responses) {
    stream->request_ids.clear();
    return refuse(res, 404, "session not found (terminated)", -32001);
  }
  if (creating) {
    if (!session->initialized()) {
      // initialize was refused (its error is the answer): no session is kept.
    } else if (auto id = sessions_.add(session)) {
      res.set_header(kSessionHeader, *id);
    } else {
      return refuse(res, 503, id.error().message);
    }
  }
  if (*responses == 0) {
    res.status = 202;  // only notifications or responses came in
    return;
  }
  stream->sink->expect(*responses);
  // An answer that is already complete goes out whole, as JSON when the client takes it;
  // one that waits for a call streams, so its progress can go first.
  stream->event_stream = formats.event_stream && !(formats.json && stream->sink->complete());
  respond(stream, res);
}

void HttpServer::respond(const std::shared_ptr<Stream>& stream, httplib::Response& res) const {
  res.status = 200;
  if (stream->sink->complete()) {
    auto batch = stream->sink->take(std::chrono::milliseconds(0));
    if (stream->event_stream) {
      res.set_content(sse_events(batch.messages), "text/event-stream");
    } else {
      stream->collect(batch.messages);
      res.set_content(stream->json_body(), "application/json");
    }
    return;
  }
  res.set_header("Cache-Control", "no-cache");
  const auto interval = options_.keepalive_interval;
  // Runs on this request's HTTP worker until the last response is written. A write that
  // fails means the client is gone: Stream's destructor then cancels its calls.
  res.set_chunked_content_provider(
      stream->event_stream ? "text/event-stream" : "application/json",
      [stream, interval](std::size_t /*offset*/, httplib::DataSink& out) {
        auto batch = stream->sink->take(interval);
        std::string text;
        if (stream->event_stream) {
          text = sse_events(batch.messages);
        } else {
          stream->collect(batch.messages);
        }
        if (batch.complete) {
          if (!stream->event_stream) text += stream->json_body();
        } else if (text.empty() && !batch.closed) {
          // Keep-alive: an SSE comment, or whitespace before the JSON value. Only a write
          // tells that the peer closed the connection.
          text = stream->event_stream ? ": keep-alive\n\n" : "\n";
        }
        if (!text.empty() && !out.write(text.data(), text.size())) return false;
        if (batch.complete || batch.closed) out.done();
        return true;
      });
}

void HttpServer::remove(const httplib::Request& req, httplib::Response& res) {
  if (!req.has_header(kSessionHeader)) {
    return refuse(res, 400, "bad request: no Mcp-Session-Id header");
  }
  if (!sessions_.terminate(req.get_header_value(kSessionHeader))) {
    return refuse(res, 404, "session not found (expired or terminated)", -32001);
  }
  res.status = 204;
}

int HttpServer::run(const CancelToken& stop) {
  catch_sigpipe_if_default();
  // Each open response stream holds a worker for the length of its call; a few more serve
  // the quick requests (initialize, list, DELETE) meanwhile.
  const std::size_t calls = options_.max_open_calls != 0
                                ? options_.max_open_calls
                                : std::max(1u, std::thread::hardware_concurrency()) + 64;
  const std::size_t threads = calls + 8;
  server_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_.set_payload_max_length(options_.max_body_bytes);
  // An idle keep-alive connection holds a worker too, and delays shutdown by as much.
  server_.set_keep_alive_timeout(2);
  server_.set_pre_routing_handler(
      [this](const httplib::Request& req, httplib::Response& res) { return check(req, res); });
  server_.Post(kEndpoint,
               [this](const httplib::Request& req, httplib::Response& res,
                      const httplib::ContentReader& content) { post(req, res, content); });
  server_.Delete(kEndpoint,
                 [this](const httplib::Request& req, httplib::Response& res) { remove(req, res); });
  server_.Get(kEndpoint, [](const httplib::Request& /*req*/, httplib::Response& res) {
    res.set_header("Allow", "POST, DELETE");
    refuse(res, 405, "method not allowed: this server opens no stream of its own");
  });

  const int port = options_.port == 0
                       ? server_.bind_to_any_port(options_.host)
                       : (server_.bind_to_port(options_.host, options_.port) ? options_.port : -1);
  if (port <= 0) {
    std::cerr << "cordon mcp: cannot listen on " << url_host(options_.host) << ":" << options_.port
              << "\n";
    return 1;
  }
  policy_ = std::make_unique<OriginPolicy>(options_.host, port, options_.allowed_origins);
  if (!is_loopback_host(options_.host)) {
    std::cerr << "cordon mcp: warning: " << options_.host
              << " is not a loopback address: the server is reachable from the network "
                 "(the bearer token is its only guard, and it travels in clear text)\n";
  }
  std::cerr << "cordon mcp: listening on http://" << url_host(options_.host) << ":" << port
            << kEndpoint << "\n"
            << std::flush;

  // Stops the server when `stop` is cancelled; `done` wakes it when the server ended
  // for another reason.
  const UniqueFd done(::eventfd(0, EFD_CLOEXEC));
  if (!done) {
    std::cerr << "cordon mcp: eventfd: " << std::strerror(errno) << "\n";
    return 1;
  }
  std::thread watcher([this, &stop, &done] {
    std::array<pollfd, 2> fds{pollfd{stop.wait_fd(), POLLIN, 0}, pollfd{done.get(), POLLIN, 0}};
    while (::poll(fds.data(), fds.size(), -1) < 0 && errno == EINTR) {
    }
    if (!stop.cancelled()) return;
    // Calls first, so the streams waiting for them end and free their workers; then
    // the listener, whose shutdown joins those workers.
    sessions_.close();
    // httplib's stop() does nothing before listen_after_bind() has started running:
    // wait for that (or for the listener to have ended), then stop it once.
    pollfd ended{done.get(), POLLIN, 0};
    while (!server_.is_running() && ::poll(&ended, 1, /*timeout_ms=*/1) == 0) {
    }
    if (server_.is_running()) server_.stop();
  });
  const bool listened = server_.listen_after_bind();
  const std::uint64_t one = 1;
  (void)::write(done.get(), &one, sizeof one);
  watcher.join();
  sessions_.close();
  return listened || stop.cancelled() ? 0 : 1;
}

}  // namespace

int serve_http(Service& service, const HttpOptions& options, const CancelToken& stop) {
  std::filesystem::path token_file;
  auto token = resolve_token(options, token_file);
  if (!token) {
    std::cerr << "cordon mcp: " << token.error().describe() << "\n";
    return 1;
  }
  if (!token_file.empty()) {
    std::cerr << "cordon mcp: bearer token written to " << token_file.string() << " (mode 0600)\n";
  }
  HttpServer server(service, options, std::move(*token));
  return server.run(stop);
}

}  // namespace cordon::cli::mcp
