#include "mcp_client.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

extern char** environ;

namespace cordon::bench {
namespace {

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "bench: mcp client: %s\n", what.c_str());
  std::exit(2);
}

}  // namespace

McpClient::McpClient(const std::string& cordon_bin, const std::vector<std::string>& args) {
  int in[2];
  int out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) die("pipe");
  std::vector<std::string> argv = {cordon_bin, "mcp"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  const int rc = posix_spawn(&pid_, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) die("spawn " + cordon_bin + ": " + std::to_string(rc));
  to_server_ = in[1];
  from_server_ = out[0];

  write_line({{"jsonrpc", "2.0"},
              {"id", 0},
              {"method", "initialize"},
              {"params",
               {{"protocolVersion", "2025-06-18"},
                {"capabilities", nlohmann::json::object()},
                {"clientInfo", {{"name", "bench-mcp"}, {"version", "1"}}}}}});
  const nlohmann::json init = read_message();
  if (!init.contains("result")) die("initialize failed: " + init.dump());
  write_line({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  write_line({{"jsonrpc", "2.0"}, {"id", -1}, {"method", "tools/list"}});
  const nlohmann::json list = read_message();
  if (!list.contains("result")) die("tools/list failed: " + list.dump());
  for (const auto& [name, _] : list["result"]["tools"][0]["inputSchema"]["properties"].items()) {
    properties_.push_back(name);
  }
}

McpClient::~McpClient() {
  ::close(to_server_);
  ::close(from_server_);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void McpClient::write_line(const nlohmann::json& message) {
  const std::string line = message.dump() + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(to_server_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("write to the server failed");
    done += static_cast<std::size_t>(n);
  }
}

nlohmann::json McpClient::read_message() {
  for (;;) {
    if (const std::size_t nl = buffer_.find('\n'); nl != std::string::npos) {
      nlohmann::json message = nlohmann::json::parse(buffer_.substr(0, nl), nullptr, false);
      buffer_.erase(0, nl + 1);
      if (message.is_discarded()) die("the server sent a line that is not JSON");
      return message;
    }
    char chunk[65536];
    const ssize_t n = ::read(from_server_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("the server closed its output");
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::int64_t McpClient::send_call(const std::string& code, const std::string& language) {
  nlohmann::json arguments = nlohmann::json::object();
  for (const std::string& p : properties_) arguments[p] = nullptr;
  arguments["code"] = code;
  arguments["language"] = language;
  const std::int64_t id = next_id_++;
  write_line({{"jsonrpc", "2.0"},
              {"id", id},
              {"method", "tools/call"},
              {"params", {{"name", "run_code"}, {"arguments", arguments}}}});
  return id;
}

std::int64_t McpClient::wait_any() {
  for (;;) {
    const nlohmann::json message = read_message();
    if (!message.contains("id")) continue;  // a notification
    const auto& result = message.value("result", nlohmann::json::object());
    if (!message.contains("result") || result.value("isError", false)) {
      die("a call did not end ok: " + message.dump());
    }
    return message["id"].get<std::int64_t>();
  }
}

void McpClient::call(const std::string& code, const std::string& language) {
  const std::int64_t id = send_call(code, language);
  if (wait_any() != id) die("a response to another call");
}

}  // namespace cordon::bench
