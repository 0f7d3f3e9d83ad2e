// The plugin side of the C boundary (plugin_abi.h) for a backend written in C++: the
// descriptor's functions over a cordon::Backend, so an in-tree plugin stays three lines
// and never sees JSON or C callbacks. Each entry catches every exception: none may cross
// into the (C) caller. The loader's counterpart is core/src/plugin_backend.cpp.
//
//   cordon::Result<cordon::Backend*> make_backend(const cordon::BackendOptions& options);
//   CORDON_EXPORT_BACKEND("name", "0.1.0", make_backend)
//
// A plugin that uses this links cordon::core and so shares its C++ ABI; one built with
// another toolchain implements plugin_abi.h itself (tests/out_of_tree_plugin/).
#pragma once

#include <cstddef>

#include "cordon/backend.h"
#include "cordon/plugin_abi.h"
#include "cordon/plugin_options.h"

namespace cordon::plugin_export {

// create's body: `make` with the C options, the backend wrapped as the opaque handle; null
// with the reason in `error` when `make` refuses.
[[nodiscard]] cordon_backend* create(const cordon_backend_options* options, char* error,
                                     std::size_t error_size, MakeBackendFn make);
void destroy(cordon_backend* backend);
[[nodiscard]] char* probe(const cordon_backend* backend);
[[nodiscard]] char* capabilities(const cordon_backend* backend, const char* limits_json);
[[nodiscard]] char* describe_plan(const cordon_backend* backend, const char* request_json);
[[nodiscard]] char* run(cordon_backend* backend, const char* request_json,
                        const cordon_run_events* events);
void free_text(char* text);
// 0 once the backend is prepared (Backend::prepare), else nonzero with the reason in `error`.
[[nodiscard]] int prepare(cordon_backend* backend, char* error, std::size_t error_size);

// The session functions (ABI 3.4) over Backend::open_session and BackendSession.
[[nodiscard]] cordon_session* session_open(cordon_backend* backend, const char* options_json,
                                           char* error, std::size_t error_size);
[[nodiscard]] char* session_run(cordon_session* session, const char* request_json,
                                const cordon_run_events* events);
[[nodiscard]] char* session_call(cordon_session* session, const char* call_json);
void session_close(cordon_session* session);

// A session call without the JSON: for the loader in this same library (plugin_backend.cpp)
// when `session`'s descriptor carries the session_run above, which proves that `session` is
// this library's cordon_session. Fails as session_run does (a sandbox error, never a throw).
[[nodiscard]] RunResult session_run_in_process(cordon_session* session, const RunRequest& request,
                                               const CancelToken& cancel, RunObserver* observer);

template <MakeBackendFn Make>
cordon_backend* create_with(const cordon_backend_options* options, char* error,
                            std::size_t error_size) {
  return create(options, error, error_size, Make);
}

// The descriptor of a backend made by `Make`, at this header's ABI version.
template <MakeBackendFn Make>
constexpr cordon_plugin_descriptor descriptor(const char* name, const char* version) {
  return cordon_plugin_descriptor{CORDON_PLUGIN_ABI_MAJOR,
                                  CORDON_PLUGIN_ABI_MINOR,
                                  sizeof(cordon_plugin_descriptor),
                                  name,
                                  version,
                                  &create_with<Make>,
                                  &destroy,
                                  &probe,
                                  &capabilities,
                                  &describe_plan,
                                  &run,
                                  &free_text,
                                  &prepare,
                                  &session_open,
                                  &session_run,
                                  &session_call,
                                  &session_close};
}

}  // namespace cordon::plugin_export

// Defines the plugin's descriptor and its exported entry point. `make`: a MakeBackendFn.
#define CORDON_EXPORT_BACKEND(name, version, make)                   \
  namespace {                                                        \
  constexpr cordon_plugin_descriptor kCordonPluginDescriptor =       \
      cordon::plugin_export::descriptor<&(make)>((name), (version)); \
  }                                                                  \
  CORDON_DEFINE_PLUGIN(kCordonPluginDescriptor)
