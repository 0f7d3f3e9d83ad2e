// `cordon environment add NAME IMAGE`: an image an engine already holds, added as the tree of
// its root filesystem. podman shows that tree itself (`podman image mount`: the image's
// layers as one read-only overlay, nothing extracted by hand), the store copies and pins it
// like any directory, and podman unmounts it again. Nothing is pulled: no registry is assumed
// reachable, and an image that changed under its name would be a different environment
// anyway; the image's own id is recorded as the source.
#include <chrono>
#include <string>

#include "cordon/proc/run_tool.h"
#include "cordon/scope_exit.h"
#include "frontend/environment.h"

namespace cordon::environment {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

Result<Environment> Store::add_image(const std::string& name, const std::string& image,
                                     const MeasureInterpreters& measure) {
  if (Status s = check_name(name); !s) return std::unexpected(s.error());
  const std::filesystem::path podman = proc::find_tool("podman");
  if (podman.empty()) {
    return fail(ErrorCode::kUnavailable,
                "'" + image +
                    "' is not a directory, and podman (which reads an image) is not "
                    "installed");
  }
  // "--" ends podman's options: an image name starting with '-' is a name.
  auto id = proc::run_tool({podman, "image", "inspect", "--format", "{{.Id}}", "--", image},
                           Clock::now() + seconds(60));
  if (!id) {
    return fail(ErrorCode::kNotFound,
                "'" + image + "' is neither a directory nor an image podman has (nothing is " +
                    "pulled: `podman pull` or `podman load` it first): " + id.error().describe());
  }
  auto mounted =
      proc::run_tool({podman, "image", "mount", "--", image}, Clock::now() + seconds(120));
  if (!mounted) {
    // Rootless podman mounts images only inside its own user namespace.
    return fail(ErrorCode::kUnavailable,
                "cannot mount image '" + image +
                    "' (as root, or in `podman unshare`): " + mounted.error().describe());
  }
  const ScopeExit unmount([&] {
    (void)proc::run_tool({podman, "image", "unmount", "--", image}, Clock::now() + seconds(60));
  });
  return add(name, trimmed(*mounted), measure,
             "image " + image + " (podman, id sha256:" + trimmed(*id) + ")");
}

}  // namespace cordon::environment
