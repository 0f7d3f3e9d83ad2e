// BackendOptions across the plugin boundary: the C struct of plugin_abi.h built from them
// (loader side) and read back into them (plugin side), so neither side spells out the
// struct_size rules.
#pragma once

#include <cstddef>
#include <string_view>

#include "cordon/backend_options.h"
#include "cordon/error.h"
#include "cordon/plugin_abi.h"

namespace cordon {

class Backend;

// Loader side: `options` as C data. Points into `options`, which must outlive it.
class CBackendOptions {
 public:
  explicit CBackendOptions(const BackendOptions& options);
  [[nodiscard]] const cordon_backend_options* get() const { return &c_; }

 private:
  cordon_backend_options c_{};
};

// Plugin side: the fields `c` carries (those its struct_size covers); null: none set.
[[nodiscard]] BackendOptions backend_options_from_c(const cordon_backend_options* c);

// Plugin side: the body of a descriptor's create (plugin_export.h). `make` builds the
// backend from the options or says why it cannot; its reason is copied (truncated,
// NUL-terminated) into the caller's `error` buffer and null is returned.
using MakeBackendFn = Result<Backend*> (*)(const BackendOptions& options);
[[nodiscard]] Backend* create_backend_from_c(const cordon_backend_options* c, char* error,
                                             std::size_t error_size, MakeBackendFn make);

// Plugin side: `why` into the caller's error buffer of `error_size` bytes, truncated and
// NUL-terminated (nothing when the buffer is null or empty).
void copy_error(std::string_view why, char* error, std::size_t error_size);

}  // namespace cordon
