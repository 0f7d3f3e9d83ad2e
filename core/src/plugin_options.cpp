#include "cordon/plugin_options.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace cordon {
namespace {

// Whether a struct of `size` bytes holds the member that ends at `end`.
bool covers(std::size_t size, std::size_t end) { return size >= end; }

#define CORDON_FIELD_END(field) \
  (offsetof(cordon_backend_options, field) + sizeof(cordon_backend_options::field))

std::optional<std::string> text(const char* value) {
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

}  // namespace

CBackendOptions::CBackendOptions(const BackendOptions& options) {
  c_.struct_size = sizeof(cordon_backend_options);
  c_.pool_size = options.pool_size ? static_cast<std::int64_t>(*options.pool_size) : -1;
  c_.engine = options.engine ? options.engine->c_str() : nullptr;
  c_.image = options.image ? options.image->c_str() : nullptr;
  c_.runtime = options.runtime ? options.runtime->c_str() : nullptr;
  c_.prestart = options.prestart ? options.prestart->c_str() : nullptr;
  c_.system_root = options.system_root ? options.system_root->c_str() : nullptr;
  c_.system_root_digest =
      options.system_root_digest ? options.system_root_digest->c_str() : nullptr;
  c_.runsc_platform = options.runsc_platform ? options.runsc_platform->c_str() : nullptr;
}

BackendOptions backend_options_from_c(const cordon_backend_options* c) {
  BackendOptions out;
  if (c == nullptr) return out;
  const std::size_t size = c->struct_size;
  if (covers(size, CORDON_FIELD_END(pool_size)) && c->pool_size >= 0) {
    out.pool_size = static_cast<std::size_t>(c->pool_size);
  }
  if (covers(size, CORDON_FIELD_END(engine))) out.engine = text(c->engine);
  if (covers(size, CORDON_FIELD_END(image))) out.image = text(c->image);
  if (covers(size, CORDON_FIELD_END(runtime))) out.runtime = text(c->runtime);
  if (covers(size, CORDON_FIELD_END(prestart))) out.prestart = text(c->prestart);
  if (covers(size, CORDON_FIELD_END(system_root))) out.system_root = text(c->system_root);
  if (covers(size, CORDON_FIELD_END(system_root_digest))) {
    out.system_root_digest = text(c->system_root_digest);
  }
  if (covers(size, CORDON_FIELD_END(runsc_platform))) out.runsc_platform = text(c->runsc_platform);
  return out;
}

Backend* create_backend_from_c(const cordon_backend_options* c, char* error, std::size_t error_size,
                               MakeBackendFn make) {
  Result<Backend*> made = make(backend_options_from_c(c));
  if (made && *made != nullptr) return *made;
  copy_error(made ? std::string("out of memory") : made.error().describe(), error, error_size);
  return nullptr;
}

void copy_error(std::string_view why, char* error, std::size_t error_size) {
  if (error == nullptr || error_size == 0) return;
  const std::size_t n = std::min(why.size(), error_size - 1);
  std::memcpy(error, why.data(), n);
  error[n] = '\0';
}

}  // namespace cordon
