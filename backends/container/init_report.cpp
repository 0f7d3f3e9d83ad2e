#include "init_report.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

namespace cordon::oci {

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

}  // namespace cordon::oci
