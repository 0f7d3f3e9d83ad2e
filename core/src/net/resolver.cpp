#include "cordon/net/resolver.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

namespace cordon::net {

namespace {

// What a lookup thread and its caller share; the thread keeps it alive past a caller that
// stopped waiting.
struct Lookup {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  int status = 0;  // getaddrinfo's
  std::vector<IpAddress> addresses;
};

void run_lookup(const std::string& host, Lookup& lookup) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const int status = ::getaddrinfo(host.c_str(), nullptr, &hints, &list);
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
  const std::lock_guard lock(lookup.mutex);
  lookup.status = status;
  lookup.addresses = std::move(addresses);
  lookup.done = true;
  lookup.done_cv.notify_all();
}

}  // namespace

Result<std::vector<IpAddress>> SystemResolver::resolve(std::string_view host) {
  auto lookup = std::make_shared<Lookup>();
  std::thread([lookup, name = std::string(host)] { run_lookup(name, *lookup); }).detach();
  std::unique_lock lock(lookup->mutex);
  if (!lookup->done_cv.wait_for(lock, timeout_, [&] { return lookup->done; })) {
    return fail(ErrorCode::kTimeout, "resolving " + std::string(host) + " took longer than " +
                                         std::to_string(timeout_.count()) + " ms");
  }
  if (lookup->status != 0) {
    return fail(ErrorCode::kNotFound,
                "could not resolve " + std::string(host) + ": " + ::gai_strerror(lookup->status));
  }
  if (lookup->addresses.empty()) {
    return fail(ErrorCode::kNotFound, std::string(host) + " has no IPv4 or IPv6 address");
  }
  return lookup->addresses;
}

Result<std::vector<IpAddress>> StaticResolver::resolve(std::string_view host) {
  const auto it = table_.find(host);
  if (it == table_.end() || it->second.empty()) {
    return fail(ErrorCode::kNotFound,
                "could not resolve " + std::string(host) + ": not in the resolver's table");
  }
  return it->second;
}

}  // namespace cordon::net
