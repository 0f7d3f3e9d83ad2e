/* A cordon backend plugin in C: "echo" writes the code it is given back as its output and
 * runs nothing, so it isolates nothing and says so in its capabilities. What it shows is
 * the whole C boundary of cordon/plugin_abi.h: the descriptor, create with options and a
 * refusal, probe, capabilities, run with its events (state, output), the output cap, and
 * answers as JSON text freed by the plugin's own free_text.
 *
 * A real plugin would use a JSON library; this one reads the two members it needs by hand
 * (cordon writes compact JSON, and a quote inside a string is always escaped, so the text
 * `"code":` can only be the member). */
#include <cordon/plugin_abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ECHO_ABI_MAJOR
#define ECHO_ABI_MAJOR CORDON_PLUGIN_ABI_MAJOR
#endif

struct cordon_backend {
  int runs;
};

/* --- a growing string --- */
typedef struct {
  char* data;
  size_t size, capacity;
} text;

static void put(text* t, const char* bytes, size_t n) {
  if (t->size + n + 1 > t->capacity) {
    size_t capacity = (t->size + n + 1) * 2;
    char* grown = realloc(t->data, capacity);
    if (grown == NULL) abort();
    t->data = grown;
    t->capacity = capacity;
  }
  memcpy(t->data + t->size, bytes, n);
  t->size += n;
  t->data[t->size] = '\0';
}
static void puts_(text* t, const char* s) { put(t, s, strlen(s)); }

/* `bytes` as a JSON string: quotes, backslashes and control characters escaped. */
static void put_json_string(text* t, const char* bytes, size_t n) {
  size_t i;
  puts_(t, "\"");
  for (i = 0; i < n; ++i) {
    unsigned char c = (unsigned char)bytes[i];
    if (c == '"' || c == '\\') {
      char escaped[2] = {'\\', (char)c};
      put(t, escaped, 2);
    } else if (c < 0x20) {
      char escaped[8];
      snprintf(escaped, sizeof escaped, "\\u%04x", c);
      puts_(t, escaped);
    } else {
      put(t, (const char*)&c, 1);
    }
  }
  puts_(t, "\"");
}

/* --- reading the request --- */

/* The JSON string member `key` of `json` decoded into `out`; 0 when it is not a plain
 * string (absent, or {"base64": ...} for bytes that are not UTF-8). */
static int get_string(const char* json, const char* key, text* out) {
  char pattern[64];
  const char* p;
  snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
  p = strstr(json, pattern);
  if (p == NULL) return 0;
  for (p += strlen(pattern); *p != '\0' && *p != '"'; ++p) {
    char c = *p;
    if (c == '\\') {
      ++p;
      switch (*p) {
        case 'n':
          c = '\n';
          break;
        case 't':
          c = '\t';
          break;
        case 'r':
          c = '\r';
          break;
        case 'b':
          c = '\b';
          break;
        case 'f':
          c = '\f';
          break;
        case 'u': {
          /* cordon escapes only control characters this way: one byte */
          char hex[5] = {0};
          if (strlen(p + 1) < 4) return 0;
          memcpy(hex, p + 1, 4);
          c = (char)strtol(hex, NULL, 16);
          p += 4;
          break;
        }
        case '\0':
          return 0;
        default:
          c = *p; /* " \ / */
      }
    }
    put(out, &c, 1);
  }
  return *p == '"';
}

static unsigned long long get_number(const char* json, const char* key, unsigned long long dflt) {
  char pattern[64];
  const char* p;
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  p = strstr(json, pattern);
  return p == NULL ? dflt : strtoull(p + strlen(pattern), NULL, 10);
}

/* --- the descriptor's functions --- */

static cordon_backend* echo_create(const cordon_backend_options* options, char* error,
                                   size_t error_size) {
  cordon_backend* backend;
  /* A field is read only when the caller's struct is long enough to hold it. */
  if (options != NULL &&
      options->struct_size >= offsetof(cordon_backend_options, engine) + sizeof(char*) &&
      options->engine != NULL) {
    snprintf(error, error_size, "echo has no engine (got '%s')", options->engine);
    return NULL;
  }
  backend = calloc(1, sizeof *backend);
  if (backend == NULL) snprintf(error, error_size, "out of memory");
  return backend;
}

static void echo_destroy(cordon_backend* backend) { free(backend); }

static char* echo_probe(const cordon_backend* backend) {
  text t = {0};
  (void)backend;
  puts_(&t, "{\"available\":true,\"reason\":\"echoes the code back; runs nothing\"}");
  return t.data;
}

static char* echo_capabilities(const cordon_backend* backend, const char* limits_json) {
  static const char* const none[] = {
      "network", "filesystem", "environment", "process_tree", "syscall_filter",
      "memory",  "processes",  "cpu",         "disk"};
  text t = {0};
  size_t i;
  char output[160];
  (void)backend;
  puts_(&t, "[");
  for (i = 0; i < sizeof none / sizeof none[0]; ++i) {
    puts_(&t, "{\"aspect\":\"");
    puts_(&t, none[i]);
    puts_(&t,
          "\",\"enforcement\":\"none\",\"mechanism\":\"\",\"value\":null,"
          "\"detail\":\"echo runs nothing, so there is nothing to contain\"},");
  }
  snprintf(output, sizeof output,
           "{\"aspect\":\"output\",\"enforcement\":\"enforced\",\"mechanism\":\"echo cuts it\","
           "\"value\":\"%llu bytes\",\"detail\":\"\",\"range\":{\"min\":1,\"max\":1073741824}},",
           get_number(limits_json, "output_bytes", 1048576));
  puts_(&t, output);
  puts_(&t,
        "{\"aspect\":\"timeout\",\"enforcement\":\"enforced\",\"mechanism\":\"returns at "
        "once\",\"value\":null,\"detail\":\"\"}]");
  return t.data;
}

static char* echo_run(cordon_backend* backend, const char* request_json,
                      const cordon_run_events* events) {
  text code = {0}, result = {0};
  size_t kept;
  unsigned long long cap = get_number(request_json, "output_bytes", 1048576);
  /* The events struct may be shorter than ours (an older cordon): check each member. */
  const size_t have = events != NULL ? events->struct_size : 0;
  void (*on_state)(void*, int) =
      have >= offsetof(cordon_run_events, on_state) + sizeof(void*) ? events->on_state : NULL;
  void (*on_output)(void*, int, const char*, size_t, int) =
      have >= offsetof(cordon_run_events, on_output) + sizeof(void*) ? events->on_output : NULL;

  ++backend->runs;
  puts_(&code, "");
  if (!get_string(request_json, "code", &code)) puts_(&code, "(code that is not UTF-8)\n");
  kept = code.size < cap ? code.size : (size_t)cap;
  while (kept > 0 && kept < code.size && ((unsigned char)code.data[kept] & 0xC0) == 0x80) {
    --kept; /* never cut a UTF-8 sequence: the result must stay valid JSON text */
  }
  if (on_state) on_state(events->context, CORDON_STATE_RUNNING);
  if (on_output) {
    on_output(events->context, CORDON_STREAM_STDOUT, code.data, kept, 1);
    if (kept < code.size) {
      on_output(events->context, CORDON_STREAM_STDOUT, code.data + kept, code.size - kept, 0);
    }
  }
  if (on_state) on_state(events->context, CORDON_STATE_FINISHED);

  puts_(&result,
        "{\"schema_version\":2,\"outcome\":\"ok\",\"exit_code\":0,\"signal\":0,"
        "\"stdout\":");
  put_json_string(&result, code.data, kept);
  puts_(&result, kept < code.size ? ",\"stdout_truncated\":true" : ",\"stdout_truncated\":false");
  puts_(&result, ",\"stderr\":\"\",\"wall_ms\":0,\"setup_ms\":0,\"backend\":{\"name\":\"" ECHO_NAME
                 "\",\"version\":\"1.0\"},\"enforced\":[{\"aspect\":\"output\",\"mechanism\":"
                 "\"echo cuts it\",\"value\":null}]}");
  free(code.data);
  return result.data;
}

static void echo_free_text(char* t) { free(t); }

static const cordon_plugin_descriptor descriptor = {
    ECHO_ABI_MAJOR,
    CORDON_PLUGIN_ABI_MINOR,
    sizeof(cordon_plugin_descriptor),
    ECHO_NAME,
    "1.0",
    echo_create,
    echo_destroy,
    echo_probe,
    echo_capabilities,
    NULL, /* describe_plan: cordon renders one from the capabilities */
    echo_run,
    echo_free_text,
    NULL, /* prepare: nothing on the host to sweep or make */
    NULL, /* session_open: it holds no sessions (cordon refuses them with the reason) */
    NULL,
    NULL,
    NULL};

CORDON_DEFINE_PLUGIN(descriptor)
