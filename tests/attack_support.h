// Shared by the backends' attack suites (namespace, container): request builders and the
// host-side evidence an attack is judged by (processes seen on the host, a loopback
// listener that counts connections).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "cordon/request.h"
#include "proc_test_support.h"

namespace cordon::testing {

inline RunRequest sh(std::string code,
                     std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  RunRequest r;
  r.code = std::move(code);
  r.timeout = timeout;
  return r;
}

inline RunRequest py(std::string code,
                     std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  RunRequest r = sh(std::move(code), timeout);
  r.language = Language::kPython;
  return r;
}

// Host pids of live (non-zombie) processes whose command line contains `needle`.
inline std::vector<pid_t> host_processes_with(const std::string& needle) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (pid == ::getpid()) continue;
    auto cmd = read_file("/proc/" + name + "/cmdline");
    if (!cmd || cmd->find(needle) == std::string::npos) continue;
    if (process_dead(pid, [&] {
          auto st = read_file("/proc/" + name + "/stat").value_or("");
          auto o = st.find('('), c = st.rfind(')');
          return o == std::string::npos ? std::string() : st.substr(o + 1, c - o - 1);
        }())) {
      continue;
    }
    out.push_back(pid);
  }
  return out;
}

// A TCP listener on the host's 127.0.0.1 (a free port), non-blocking.
struct TcpListener {
  int fd = -1;
  int port = 0;
  TcpListener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    ::listen(fd, 8);
    socklen_t len = sizeof(a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~TcpListener() { ::close(fd); }
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;
  [[nodiscard]] bool got_connection() const {
    const int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c >= 0) ::close(c);
    return c >= 0;
  }
};

// Python that connects to 127.0.0.1:port and prints "connected" or "refused <errno>".
inline std::string tcp_probe(int port) {
  return "import socket\ns = socket.socket()\ns.settimeout(2)\ntry:\n    s.connect(('127.0.0.1', " +
         std::to_string(port) +
         "))\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)\n";
}

}  // namespace cordon::testing
