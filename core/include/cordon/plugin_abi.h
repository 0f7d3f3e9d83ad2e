/* The versioned C boundary between cordon and a backend plugin.
 *
 * Each backend is a shared library (a CMake MODULE, hidden visibility) that exports exactly
 * one symbol, `cordon_plugin_entry`, returning a pointer to a static descriptor. The loader
 * checks abi_major (equal), abi_minor (not newer than the loader's) and struct_size (large
 * enough) before it calls anything else in the plugin, and refuses another major with a
 * message naming both versions.
 *
 * Only C crosses: this header is C (C99 and C++ alike), the backend is an opaque handle,
 * and requests, capabilities, plans and results are UTF-8 JSON text. No C++ type, vtable,
 * exception or allocator crosses, so a plugin built out of tree, by another compiler or
 * against another C++ standard library, or written in C, loads into any cordon of the
 * same ABI major (tests/out_of_tree_plugin/ is such a plugin, in C). Each side keeps its
 * C++: cordon/plugin_export.h turns a cordon::Backend into this descriptor (the in-tree
 * plugins), and the loader wraps the descriptor back into a cordon::Backend
 * (core/src/plugin_backend.cpp). One shortcut: a session call of a plugin whose session_run
 * is the loaded library's own plugin_export::session_run (an in-tree plugin, which shares
 * that library's C++ already) is a C++ call, without JSON (docs/ARCHITECTURE.md).
 *
 * The JSON shapes (docs/ARCHITECTURE.md, "Plugin boundary"; core/src/plugin_wire.cpp):
 *   request   the RunRequest: {"code", "language", "timeout_ms", "limits": {...}, "stdin",
 *             "env": [[name, value]...], "input_files": [[path, bytes]...], "artifact_globs",
 *             "artifact_max_bytes", "setup_bound_ms", "tool_description"}. A byte string
 *             that is not valid UTF-8 is {"base64": "..."} instead of a JSON string.
 *   limits    {"memory_bytes", "max_processes", "cpu_time_ms", "scratch_bytes" (null:
 *             none asked for), "output_bytes"}.
 *   result    the public result JSON (README, "JSON result"), plus "stdout_base64" /
 *             "stderr_base64" (and an artifact's "path_base64") holding the raw bytes
 *             when the text form is lossy. Only "outcome" is required.
 *   capabilities  the array `cordon backends --json` shows per backend.
 *   probe     {"available": bool, "reason": string}, optionally "variant": string (this
 *             backend's configuration, e.g. "runsc") and "variants": [{"label", "runtime"}]
 *             (others this host offers, each made by create with that runtime).
 *   plan      {"plan": {...}} or {"error": {"code": "invalid_argument", "message": ...}}.
 *
 * Every char* a plugin returns is NUL-terminated, owned by the plugin, and handed back to
 * its free_text once read: each side frees with its own allocator. */
#ifndef CORDON_PLUGIN_ABI_H
#define CORDON_PLUGIN_ABI_H

/* C, also when a C++ file includes it: C headers, typedef, (void). */
/* NOLINTBEGIN(modernize-deprecated-headers,modernize-use-using,modernize-redundant-void-arg) */
#include <stddef.h>
#include <stdint.h>

/* Major 3: the descriptor is all C (major 2 passed a cordon::Backend*, a C++ vtable, so only
 * plugins built in tree with the loader's compiler worked). Majors 1 and 2 are refused.
 * Minor 1 appended `prepare` to the descriptor; minor 2 system_root and system_root_digest
 * to the options, minor 3 runsc_platform; minor 4 the session functions to the descriptor. */
#define CORDON_PLUGIN_ABI_MAJOR 3
#define CORDON_PLUGIN_ABI_MINOR 4
#define CORDON_PLUGIN_ENTRY_SYMBOL "cordon_plugin_entry"

#ifdef __cplusplus
extern "C" {
#endif

/* A backend made by a plugin. Opaque to cordon: only the plugin that made it looks inside. */
typedef struct cordon_backend cordon_backend;
/* A session a backend holds (since 3.4; cordon/session.h). Opaque to cordon as well. */
typedef struct cordon_session cordon_session;

/* A backend's own settings (cordon::BackendOptions) as C data. The caller sets struct_size
 * to sizeof as it saw it; a plugin reads a field only when struct_size covers it, so fields
 * are only ever appended. Strings are null when unset and live for the create call only. */
typedef struct cordon_backend_options {
  size_t struct_size;
  int64_t pool_size; /* -1: unset */
  const char* engine;
  const char* image;
  const char* runtime;
  const char* prestart;
  const char* system_root;        /* since 3.2 */
  const char* system_root_digest; /* since 3.2 */
  const char* runsc_platform;     /* since 3.3 */
} cordon_backend_options;

/* cordon::RunState and cordon::Stream, as on_state and on_output pass them. */
enum {
  CORDON_STATE_PREPARING = 0,
  CORDON_STATE_RUNNING = 1,
  CORDON_STATE_STOPPING = 2,
  CORDON_STATE_FINISHED = 3
};
enum { CORDON_STREAM_STDOUT = 0, CORDON_STREAM_STDERR = 1 };

/* What a run reports while it runs, and how it learns it is cancelled. Valid for the run
 * call only; called on the thread that called run. Any callback may be null (nobody
 * watches); `context` is passed back unchanged. A plugin reads a member only when
 * struct_size covers it. */
typedef struct cordon_run_events {
  size_t struct_size;
  void* context;
  /* Readable (POLLIN) once the run is cancelled, -1 when it cannot be. Poll it, never read
   * or close it: it is the caller's, and reading would hide the cancel from other waiters. */
  int cancel_fd;
  void (*on_state)(void* context, int state);
  /* Every chunk read, also past the output cap; `kept`: whether it made it into the
   * (capped) result. */
  void (*on_output)(void* context, int stream, const char* data, size_t size, int kept);
  /* The sandbox's resource use while the code runs; -1 for a figure not measured. */
  void (*on_sample)(void* context, int64_t elapsed_ms, int64_t memory_bytes, int64_t cpu_usec);
} cordon_run_events;

typedef struct cordon_plugin_descriptor {
  uint32_t abi_major;
  uint32_t abi_minor;
  uint32_t struct_size; /* sizeof(cordon_plugin_descriptor) as the plugin saw it */
  const char* name;     /* backend name, e.g. "subprocess" */
  const char* version;  /* backend version, e.g. "0.1.0" */

  /* Makes a backend with `options` (null: none set). Options a backend does not have are
   * ignored. On failure returns null with the reason, NUL-terminated, in `error` (at most
   * error_size bytes): an option it has but cannot honour. Not called for listing, and
   * does no I/O: probing, sweeping and preparing are later, explicit steps. */
  cordon_backend* (*create)(const cordon_backend_options* options, char* error, size_t error_size);
  void (*destroy)(cordon_backend* backend);

  /* Probe JSON: whether it can run on this host, and why not. Read-only (it may read /proc,
   * /sys, a tool's version, once) and creates, removes and kills nothing. */
  char* (*probe)(const cordon_backend* backend);
  /* Capabilities JSON: what a run with `limits_json` would have enforced, per aspect. */
  char* (*capabilities)(const cordon_backend* backend, const char* limits_json);
  /* Plan JSON: the plan a run of `request_json` would apply, creating nothing. May be null:
   * cordon then renders the plan from the capabilities. */
  char* (*describe_plan)(const cordon_backend* backend, const char* request_json);
  /* Runs the request to completion and returns the result JSON; a sandbox failure is a
   * result with outcome "sandbox_error", never null (null reads as one). Several runs may
   * proceed at once on different threads. `events` may be null. */
  char* (*run)(cordon_backend* backend, const char* request_json, const cordon_run_events* events);
  /* Frees any string above. */
  void (*free_text)(char* text);

  /* Since 3.1; read only when struct_size covers it, and may be null. */

  /* The step that may change the host before runs: sweeping what a killed cordon left,
   * acquiring a runtime directory, starting a warm pool. Idempotent and safe to call from
   * several threads; a failure is remembered and returned again. Returns 0 when prepared,
   * else nonzero with the reason, NUL-terminated, in `error` (at most error_size bytes).
   * `cordon backends` and `cordon plan` never call it; run prepares by itself when it was
   * not called (a 3.0 plugin, which has no prepare, does all of it in run). */
  int (*prepare)(cordon_backend* backend, char* error, size_t error_size);

  /* Since 3.4; read only when struct_size covers them, and null (all four) for a backend
   * that holds no sessions: cordon then refuses sessions on it with the reason. */

  /* Opens a session (cordon/session.h) with `options_json`, {"request": the request shape
   * above (its language, limits, env, network; code unused), "workspace_bytes"}. On failure
   * returns null with the reason, NUL-terminated, in `error` (at most error_size bytes). */
  cordon_session* (*session_open)(cordon_backend* backend, const char* options_json, char* error,
                                  size_t error_size);
  /* One call in the session, as run; never null (null reads as a sandbox error). Calls of
   * one session never overlap; calls of different sessions may. */
  char* (*session_run)(cordon_session* session, const char* request_json,
                       const cordon_run_events* events);
  /* Everything else a session answers, as {"op": ...} in and {"ok": ...} or {"error":
   * {"code", "message"}} out: "reset"; "stats" ({"calls", "memory_kb", "workspace_bytes",
   * "cpu_ms", "interpreter_alive"}; an older plugin's answer without "cpu_ms" reads as
   * unmeasured); "list" {"path"} ([{"path", "directory", "size"}]); "read" {"path",
   * "max_bytes"} ({"content_base64"}); "write" {"path", "content_base64"}. */
  char* (*session_call)(cordon_session* session, const char* call_json);
  /* Ends the session: every process killed, everything it made on the host removed. */
  void (*session_close)(cordon_session* session);
} cordon_plugin_descriptor;

/* The size of the 3.0 descriptor (up to free_text): the smallest the loader accepts. */
#define CORDON_PLUGIN_DESCRIPTOR_MIN_SIZE \
  (offsetof(cordon_plugin_descriptor, free_text) + sizeof(void (*)(char*)))

typedef const cordon_plugin_descriptor* (*cordon_plugin_entry_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#define CORDON_PLUGIN_EXTERN_C extern "C"
#define CORDON_PLUGIN_NO_PARAMETERS /* () has none in C++ */
#else
#define CORDON_PLUGIN_EXTERN_C
#define CORDON_PLUGIN_NO_PARAMETERS void
#endif

/* For plugin sources: defines the exported entry point returning `descriptor`. */
#define CORDON_DEFINE_PLUGIN(descriptor)                                                        \
  CORDON_PLUGIN_EXTERN_C __attribute__((visibility("default"))) const cordon_plugin_descriptor* \
  cordon_plugin_entry(CORDON_PLUGIN_NO_PARAMETERS) {                                            \
    return &(descriptor);                                                                       \
  }

/* NOLINTEND(modernize-deprecated-headers,modernize-use-using,modernize-redundant-void-arg) */
#endif /* CORDON_PLUGIN_ABI_H */
