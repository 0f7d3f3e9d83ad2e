// A library user's program that keeps a backend in a static object and returns from main
// while the backend's warm pools are still building (issue #40, item 13): run many times by
// warm_pool_exit_test, it must exit 0 every time. argv[1]: microseconds to wait in main.
#include <unistd.h>

#include <cstdlib>

#include "namespace_backend.h"

namespace {

cordon::ns::NamespaceOptions pooled() {
  cordon::ns::NamespaceOptions o;
  o.default_memory_bytes = 64ULL << 20;
  o.pool_size = 2;
  o.prestart_python = true;
  o.prestart_sh = true;
  return o;
}

// Constructed before main, destroyed by the static destructors at exit.
cordon::ns::NamespaceBackend g_backend(pooled());

}  // namespace

int main(int argc, char** argv) {
  if (!g_backend.probe().available) return 77;  // the test skips with the reason
  if (!g_backend.prepare()) return 3;
  if (argc > 1) ::usleep(static_cast<useconds_t>(std::strtoul(argv[1], nullptr, 10)));
  return 0;
}
