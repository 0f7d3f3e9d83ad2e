// Unguessable names and tokens: bytes of the kernel's CSPRNG as text.
#pragma once

#include <cstddef>
#include <string>

#include "cordon/error.h"

namespace cordon {

// `bytes` bytes from the kernel's CSPRNG (getrandom), as lower-case hex.
[[nodiscard]] Result<std::string> random_hex(std::size_t bytes);

}  // namespace cordon
