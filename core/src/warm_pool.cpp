#include "cordon/warm_pool.h"

#include <cstdlib>
#include <map>

namespace cordon::detail {
namespace {

struct PoolStops {
  std::mutex mutex;
  std::map<const void*, std::function<void()>> stops;
  bool handler_registered = false;
};

// Never destroyed: pools destroyed by static destructors unregister after the handler ran.
PoolStops& pool_stops() {
  static auto* stops = new PoolStops;
  return *stops;
}

void stop_every_pool() {
  PoolStops& all = pool_stops();
  // Held throughout: a pool's destructor waits in unregister_pool_stop until its thread
  // was joined here, so nothing joins one thread twice.
  const std::lock_guard lock(all.mutex);
  for (auto& [pool, stop] : all.stops) stop();
  all.stops.clear();
}

}  // namespace

void register_pool_stop(const void* pool, std::function<void()> stop) {
  PoolStops& all = pool_stops();
  const std::lock_guard lock(all.mutex);
  all.stops[pool] = std::move(stop);
  if (!all.handler_registered) {
    // Registered when the first pool is made, so it runs before the destructors of every
    // static made earlier (the backend holding the pool, the caches its builds read).
    all.handler_registered = std::atexit(stop_every_pool) == 0;
  }
}

void unregister_pool_stop(const void* pool) {
  PoolStops& all = pool_stops();
  const std::lock_guard lock(all.mutex);
  all.stops.erase(pool);
}

}  // namespace cordon::detail
