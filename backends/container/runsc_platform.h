// Which gVisor platform cordon runs runsc's sandboxes on (issue #18).
//
// The platform is how the sentry (gVisor's user-space kernel) intercepts the code's system
// calls: `ptrace` works on every host (the one tested on this machine kind), `kvm` needs a
// /dev/kvm that really runs guests (the PVM variant some clouds expose opens and answers
// KVM_GET_API_VERSION, yet runs nothing: so kvm is never chosen unasked), `systrap` comes
// in releases newer than Debian 12's. The choice is plain data from three facts (what the
// installed runsc offers, what was asked, whether /dev/kvm answers), so it is unit-tested
// without runsc; an unusable choice is refused with the reason, never replaced in silence.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::oci {

// The default platform: the one every host and every runsc release has.
inline constexpr const char* kDefaultRunscPlatform = "ptrace";
// The environment variable that names another platform, and the backend option
// (BackendOptions::runsc_platform) that wins over it.
inline constexpr const char* kRunscPlatformVariable = "CORDON_RUNSC_PLATFORM";
inline constexpr const char* kRunscPlatformOption = "--runsc-platform";

struct RunscPlatform {
  std::string platform;  // set when usable
  bool usable = false;
  std::string reason;  // why this one, or why none
};

// `wanted` empty: kDefaultRunscPlatform. A platform the installed runsc does not list is
// refused, naming those it lists; kvm also needs `kvm_works` (asked only when kvm is
// wanted). `asked_by` names where `wanted` came from, for the reason.
[[nodiscard]] RunscPlatform choose_runsc_platform(
    const std::vector<std::string>& offered, std::string_view wanted, bool kvm_works,
    std::string_view asked_by = "$CORDON_RUNSC_PLATFORM");

// The platforms `runsc help platforms` lists, asked once per binary and process (a ~70 ms
// question); empty when it cannot be asked.
[[nodiscard]] std::vector<std::string> runsc_platforms(const std::filesystem::path& runsc);

// Whether /dev/kvm opens read-write and answers KVM_GET_API_VERSION with the stable API
// (12). Necessary, not sufficient (see above).
[[nodiscard]] bool kvm_device_answers();

// The platform for `runsc` here: `option` (BackendOptions::runsc_platform) when set, else
// $CORDON_RUNSC_PLATFORM, else the default, checked against what it offers.
[[nodiscard]] RunscPlatform runsc_platform_for(const std::filesystem::path& runsc,
                                               std::string_view option = {});

}  // namespace cordon::oci
