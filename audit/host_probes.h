// Host-side instruments of the audit: listeners on this machine's loopback and unix
// sockets that record whether anything reached them, a scan of the host's process table,
// and marked processes the audit starts (victims, canary holders). Nothing here sends a
// packet off the machine. The namespace tests use the same instruments for their controls.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/unique_fd.h"

namespace cordon::audit {

// A non-blocking listening socket; connected() accepts what arrived since (UDP: reads).
class Listener {
 public:
  [[nodiscard]] static Result<Listener> tcp_loopback();
  [[nodiscard]] static Result<Listener> udp_loopback();
  // Abstract unix socket "\0<name>" (in the network namespace of the caller).
  [[nodiscard]] static Result<Listener> abstract_unix(const std::string& name);
  // Unix socket at `path`, mode 0777 so that any uid could connect if it saw the path.
  [[nodiscard]] static Result<Listener> path_unix(const std::filesystem::path& path);

  [[nodiscard]] int port() const { return port_; }  // TCP/UDP only
  // Whether a connection (or datagram) arrived; drains what is pending.
  [[nodiscard]] bool reached();

 private:
  Listener(UniqueFd fd, bool datagram, int port)
      : fd_(std::move(fd)), datagram_(datagram), port_(port) {}
  UniqueFd fd_;
  bool datagram_ = false;
  int port_ = 0;
};

// Live (not zombie) host processes whose command line contains `needle`, except the caller.
[[nodiscard]] std::vector<pid_t> host_processes_with(const std::string& needle);
// SIGKILLs every host process whose command line contains `needle`; returns how many.
int kill_host_processes_with(const std::string& needle);

// A child of the audit, killed and reaped when this goes away.
class MarkedProcess {
 public:
  // Starts /bin/sleep 600 with argv[0] = `argv0` and exactly `env` as its environment.
  [[nodiscard]] static Result<MarkedProcess> start(const std::string& argv0,
                                                   const std::vector<std::string>& env);
  MarkedProcess() = default;
  MarkedProcess(MarkedProcess&& other) noexcept;
  MarkedProcess& operator=(MarkedProcess&& other) noexcept;
  MarkedProcess(const MarkedProcess&) = delete;
  MarkedProcess& operator=(const MarkedProcess&) = delete;
  ~MarkedProcess();

  [[nodiscard]] pid_t pid() const { return pid_; }
  // False once it has died (reaped here), e.g. because something killed it.
  [[nodiscard]] bool alive();

 private:
  explicit MarkedProcess(pid_t pid) : pid_(pid) {}
  void stop();
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// The bytes of a small file ("" when it cannot be read), safe on /proc files of processes
// that exit meanwhile.
[[nodiscard]] std::string read_small_file(const std::filesystem::path& path);

// Random lower-case hex of `bytes` random bytes (getrandom).
[[nodiscard]] std::string random_hex(std::size_t bytes);

}  // namespace cordon::audit
