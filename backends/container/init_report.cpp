#include "init_report.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

namespace cordon::oci {

Status send_to_init(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_errno("send the code to the container's init");
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

Result<std::optional<init::Report>> receive_init_report(
    int fd, std::chrono::steady_clock::time_point until) {
  init::Report report;
  auto* p = reinterpret_cast<char*>(&report);
  std::size_t got = 0;
  while (got < sizeof(report)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          until - std::chrono::steady_clock::now())
                          .count();
    pollfd pfd{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&pfd, 1, static_cast<int>(left)) <= 0) return std::nullopt;
    const ssize_t n = ::recv(fd, p + got, sizeof(report) - got, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return std::nullopt;
    got += static_cast<std::size_t>(n);
  }
  if (report.magic != init::kReportMagic) return std::nullopt;
  if (!init::is_complete(report)) {
    return fail(ErrorCode::kSystem,
                "the container's init reported the code's end without first ending its other "
                "processes (a cordon-oci-init from another build?)");
  }
  return report;
}

std::string_view last_line(std::string_view text) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  const auto nl = text.rfind('\n');
  return nl == std::string_view::npos ? text : text.substr(nl + 1);
}

Status describe_container_end(const std::optional<init::Report>& report,
                              const ContainerStats& stats, bool gvisor, Termination& t,
                              RunResult& result) {
  if (report && report->relay_errno != 0) {
    return fail(ErrorCode::kSystem,
                "the container's init could not listen for the network "
                "proxy's relay: " +
                    std::string(std::strerror(report->relay_errno)));
  }
  if (report && report->start_errno == 0 && report->main_reaped == 1) {
    take_init_report(report->status, report->main_maxrss_kb, report->tree_cpu_us, t, result);
  }
  t.oom_killed = stats.oom_killed;
  t.process_ceiling_hit = stats.pids_limit_hit;
  if (stats.cpu_usec) result.cpu_ms = *stats.cpu_usec / 1000;
  result.memory_peak_kb = stats.memory_peak_kb;
  if (t.deadline_passed || t.cancelled || t.oom_killed) return {};
  // gVisor's sentry cannot carry on without the host threads the pids group refused it:
  // the sandbox ends unreported, and the code's forks are what hit the ceiling.
  if (!report && t.process_ceiling_hit && gvisor) return {};
  if (report && report->start_errno != 0) {
    return fail(ErrorCode::kSystem, "the container could not start the interpreter: errno " +
                                        std::to_string(report->start_errno));
  }
  if (!report) {
    // The runtime writes its own failures to the container's stderr: say its last line.
    const std::string_view said = last_line(result.stderr_data);
    return fail(ErrorCode::kSystem,
                "the container's init ended without reporting the code's status" +
                    (said.empty() ? std::string() : " (" + std::string(said) + ")"));
  }
  return {};
}

}  // namespace cordon::oci
