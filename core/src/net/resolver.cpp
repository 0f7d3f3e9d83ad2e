#include "cordon/net/resolver.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "cordon/unique_fd.h"

namespace cordon::net {

namespace {

// What a lookup thread and its caller share; the thread keeps it alive past a caller that
// stopped waiting, and then its result is dropped with it.
struct Pending {
  std::mutex mutex;
  std::optional<Result<std::vector<IpAddress>>> result;
  UniqueFd ready;  // eventfd, written once `result` is set
};

}  // namespace

Result<std::vector<IpAddress>> getaddrinfo_lookup(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const int status = ::getaddrinfo(host.c_str(), nullptr, &hints, &list);
  if (status != 0) {
    return fail(ErrorCode::kNotFound, "could not resolve " + host + ": " + ::gai_strerror(status));
  }
  std::vector<IpAddress> addresses;
  for (const addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    IpAddress address;
    if (ai->ai_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(ai->ai_addr);
      std::memcpy(address.bytes.data(), &in->sin_addr, 4);
    } else if (ai->ai_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(ai->ai_addr);
      address.v6 = true;
      std::memcpy(address.bytes.data(), &in6->sin6_addr, 16);
    } else {
      continue;
    }
    if (std::find(addresses.begin(), addresses.end(), address) == addresses.end()) {
      addresses.push_back(address);
    }
  }
  if (list != nullptr) ::freeaddrinfo(list);
  if (addresses.empty()) return fail(ErrorCode::kNotFound, host + " has no IPv4 or IPv6 address");
  return addresses;
}

Result<std::vector<IpAddress>> SystemResolver::resolve(std::string_view host, int cancel_fd) {
  auto pending = std::make_shared<Pending>();
  pending->ready.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!pending->ready) return fail_errno("eventfd");
  const int ready = pending->ready.get();  // owned by `pending`, which outlives our wait
  try {
    // The thread holds `pending` and its own copy of the lookup: nothing of ours (this
    // resolver may be gone when it ends).
    std::thread([pending, lookup = lookup_, name = std::string(host)] {
      auto result = lookup(name);
      const std::lock_guard lock(pending->mutex);
      pending->result = std::move(result);
      const std::uint64_t one = 1;
      (void)!::write(pending->ready.get(), &one, sizeof(one));
    }).detach();
  } catch (const std::system_error& e) {
    return fail(ErrorCode::kSystem, "no thread to resolve " + std::string(host) + ": " + e.what());
  }
  const auto until = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd fds[2] = {{ready, POLLIN, 0}, {cancel_fd, POLLIN, 0}};
    const int n = ::poll(fds, cancel_fd >= 0 ? 2 : 1, static_cast<int>(left.count()) + 1);
    if (n < 0 && errno != EINTR) return fail_errno("poll");
    if (n > 0 && (fds[0].revents & POLLIN) != 0) {
      const std::lock_guard lock(pending->mutex);
      return std::move(*pending->result);
    }
    if (n > 0 && fds[1].revents != 0) {
      return fail(ErrorCode::kTimeout, "stopped while resolving " + std::string(host));
    }
  }
  return fail(ErrorCode::kTimeout, "resolving " + std::string(host) + " took longer than " +
                                       std::to_string(timeout_.count()) + " ms");
}

Result<std::vector<IpAddress>> StaticResolver::resolve(std::string_view host, int /*cancel_fd*/) {
  const auto it = table_.find(host);
  if (it == table_.end() || it->second.empty()) {
    return fail(ErrorCode::kNotFound,
                "could not resolve " + std::string(host) + ": not in the resolver's table");
  }
  return it->second;
}

}  // namespace cordon::net
