// The gVisor platform choice: runsc's list (asked once), the request, the kvm device.
#include "runsc_platform.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "cordon/proc/run_tool.h"
#include "cordon/unique_fd.h"

namespace cordon::oci {

RunscPlatform choose_runsc_platform(const std::vector<std::string>& offered,
                                    std::string_view wanted, bool kvm_works,
                                    std::string_view asked_by) {
  RunscPlatform out;
  const std::string name(wanted.empty() ? std::string_view(kDefaultRunscPlatform) : wanted);
  const std::string how = wanted.empty() ? "the default" : "asked by " + std::string(asked_by);
  if (offered.empty()) {
    out.reason = "runsc did not say which platforms it has (`runsc help platforms`)";
    return out;
  }
  if (std::find(offered.begin(), offered.end(), name) == offered.end()) {
    // Sorted: runsc prints them in no fixed order.
    std::vector<std::string> sorted = offered;
    std::ranges::sort(sorted);
    std::string list;
    for (const auto& p : sorted) list += (list.empty() ? "" : ", ") + p;
    out.reason =
        "runsc platform '" + name + "' (" + how + ") is not one this runsc has (" + list + ")";
    return out;
  }
  if (name == "kvm" && !kvm_works) {
    out.reason =
        "runsc platform kvm (" + how + ") needs a working /dev/kvm, and it does not answer";
    return out;
  }
  out.platform = name;
  out.usable = true;
  out.reason = "platform " + name + " (" + how + ")";
  return out;
}

std::vector<std::string> runsc_platforms(const std::filesystem::path& runsc) {
  static std::mutex mutex;
  static std::map<std::filesystem::path, std::vector<std::string>> cache;
  const std::lock_guard lock(mutex);
  if (auto it = cache.find(runsc); it != cache.end()) return it->second;
  std::vector<std::string> out;
  // A question only: `help` makes no state directory and starts no sandbox.
  if (auto text = proc::run_tool({runsc.string(), "help", "platforms"},
                                 std::chrono::steady_clock::now() + std::chrono::seconds(5))) {
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() &&
          line.find_first_not_of("abcdefghijklmnopqrstuvwxyz0-9_-") == std::string::npos) {
        out.push_back(line);
      }
    }
  }
  cache.emplace(runsc, out);
  return out;
}

bool kvm_device_answers() {
  const UniqueFd fd(::open("/dev/kvm", O_RDWR | O_CLOEXEC));
  return fd && ::ioctl(fd.get(), KVM_GET_API_VERSION, 0) == KVM_API_VERSION;
}

RunscPlatform runsc_platform_for(const std::filesystem::path& runsc, std::string_view option) {
  const char* env = std::getenv(kRunscPlatformVariable);
  const bool by_option = !option.empty();
  const std::string_view wanted = by_option ? option : env != nullptr ? env : "";
  return choose_runsc_platform(runsc_platforms(runsc), wanted,
                               wanted == "kvm" && kvm_device_answers(),
                               by_option ? std::string_view(kRunscPlatformOption)
                                         : std::string_view("$CORDON_RUNSC_PLATFORM"));
}

}  // namespace cordon::oci
