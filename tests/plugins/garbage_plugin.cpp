// A plugin written against the C header alone whose answers are not what the boundary
// agrees on: its probe and capabilities are not JSON, its plan is neither a plan nor an
// error, its run returns a result without an outcome, and with code "null" nothing at
// all. The loader must turn each into the plugin's failure (a probe that says so, no
// capabilities, a sandbox error), never crash or pass garbage on. It counts the strings
// given back to free_text, so a test sees each answer freed by its own plugin. It says it
// is a 3.0 plugin, whose descriptor ends at free_text: its prepare, past that end, must
// never be called (it aborts).
#include <cstdlib>
#include <cstring>

#include "cordon/plugin_abi.h"

extern "C" {
__attribute__((visibility("default"))) int cordon_garbage_freed = 0;
}

struct cordon_backend {
  int unused;
};

namespace {

char* copy(const char* text) {
  char* out = static_cast<char*>(std::malloc(std::strlen(text) + 1));
  std::strcpy(out, text);
  return out;
}

cordon_backend* create(const cordon_backend_options* /*options*/, char* /*error*/,
                       std::size_t /*size*/) {
  return new cordon_backend{0};
}
void destroy(cordon_backend* backend) { delete backend; }
char* probe(const cordon_backend* /*backend*/) { return copy("yes, surely"); }
char* capabilities(const cordon_backend* /*backend*/, const char* /*limits*/) {
  return copy(R"({"not": "an array"})");
}
char* describe_plan(const cordon_backend* /*backend*/, const char* /*request*/) {
  return copy("[]");
}
char* run(cordon_backend* /*backend*/, const char* request, const cordon_run_events* /*events*/) {
  if (std::strstr(request, R"("code":"null")") != nullptr) return nullptr;
  return copy(R"({"exit_code": 0})");
}
void free_text(char* text) {
  ++cordon_garbage_freed;
  std::free(text);
}

int prepare(cordon_backend* /*backend*/, char* /*error*/, std::size_t /*size*/) { std::abort(); }

const cordon_plugin_descriptor kDescriptor = {CORDON_PLUGIN_ABI_MAJOR,
                                              /*abi_minor=*/0,
                                              CORDON_PLUGIN_DESCRIPTOR_MIN_SIZE,
                                              "garbage",
                                              "0.0",
                                              &create,
                                              &destroy,
                                              &probe,
                                              &capabilities,
                                              &describe_plan,
                                              &run,
                                              &free_text,
                                              &prepare,
                                              /*session_open=*/nullptr,
                                              /*session_run=*/nullptr,
                                              /*session_call=*/nullptr,
                                              /*session_close=*/nullptr};

}  // namespace

CORDON_DEFINE_PLUGIN(kDescriptor)
