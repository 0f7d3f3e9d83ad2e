// Plugins whose descriptor the loader must reject before calling anything in them. Their
// create() aborts: if the loader ever called it, the test process would die.
#include <cstddef>
#include <cstdlib>

#include "cordon/plugin_abi.h"

namespace {

cordon::Backend* create() { std::abort(); }
void destroy(cordon::Backend* /*backend*/) { std::abort(); }

#if defined(FIXTURE_BAD_MAJOR)
constexpr std::uint32_t kMajor = CORDON_PLUGIN_ABI_MAJOR + 1;
#else
constexpr std::uint32_t kMajor = CORDON_PLUGIN_ABI_MAJOR;
#endif
#if defined(FIXTURE_NEW_MINOR)
constexpr std::uint32_t kMinor = CORDON_PLUGIN_ABI_MINOR + 1;
#else
constexpr std::uint32_t kMinor = CORDON_PLUGIN_ABI_MINOR;
#endif
#if defined(FIXTURE_SMALL_STRUCT)
// As if built against an older, shorter descriptor that ended before `create`.
constexpr std::uint32_t kSize = offsetof(cordon_plugin_descriptor, create);
#else
constexpr std::uint32_t kSize = sizeof(cordon_plugin_descriptor);
#endif

const cordon_plugin_descriptor kDescriptor = {kMajor, kMinor,  kSize,    "bad",
                                              "0",    &create, &destroy, nullptr};

}  // namespace

CORDON_DEFINE_PLUGIN(kDescriptor)
