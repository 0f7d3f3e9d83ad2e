// `cordon backends`: every plugin found, whether it runs here, and what it enforces.
#pragma once

namespace cordon::cli {

struct BackendsOptions {
  bool json = false;
};

[[nodiscard]] int backends_command(const BackendsOptions& options);

}  // namespace cordon::cli
