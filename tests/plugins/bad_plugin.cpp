// Plugins whose descriptor the loader must reject before calling anything in them. Every
// function aborts: if the loader ever called one, the test process would die.
// FIXTURE_OLD_MAJOR is a plugin of ABI 2.1 as it was built before the boundary became C:
// its descriptor's first three fields are the same in every version, and the loader reads
// nothing past them from another major.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "cordon/plugin_abi.h"

namespace {

cordon_backend* create(const cordon_backend_options* /*options*/, char* /*error*/,
                       std::size_t /*size*/) {
  std::abort();
}
void destroy(cordon_backend* /*backend*/) { std::abort(); }
char* probe(const cordon_backend* /*backend*/) { std::abort(); }
char* capabilities(const cordon_backend* /*backend*/, const char* /*limits*/) { std::abort(); }
[[maybe_unused]] char* run(cordon_backend* /*backend*/, const char* /*request*/,
                           const cordon_run_events* /*events*/) {
  std::abort();
}
void free_text(char* /*text*/) { std::abort(); }

#if defined(FIXTURE_BAD_MAJOR)
constexpr std::uint32_t kMajor = CORDON_PLUGIN_ABI_MAJOR + 1;
#elif defined(FIXTURE_OLD_MAJOR)
constexpr std::uint32_t kMajor = 2;
#else
constexpr std::uint32_t kMajor = CORDON_PLUGIN_ABI_MAJOR;
#endif
#if defined(FIXTURE_NEW_MINOR)
constexpr std::uint32_t kMinor = CORDON_PLUGIN_ABI_MINOR + 1;
#elif defined(FIXTURE_OLD_MAJOR)
constexpr std::uint32_t kMinor = 1;
#else
constexpr std::uint32_t kMinor = CORDON_PLUGIN_ABI_MINOR;
#endif
#if defined(FIXTURE_SMALL_STRUCT)
// As if built against an older, shorter descriptor that ended before `probe`.
constexpr std::uint32_t kSize = offsetof(cordon_plugin_descriptor, probe);
#else
constexpr std::uint32_t kSize = sizeof(cordon_plugin_descriptor);
#endif
#if defined(FIXTURE_NO_RUN)
constexpr auto kRun = nullptr;
#else
constexpr auto kRun = &run;
#endif

const cordon_plugin_descriptor kDescriptor = {kMajor,
                                              kMinor,
                                              kSize,
                                              "bad",
                                              "0",
                                              &create,
                                              &destroy,
                                              &probe,
                                              &capabilities,
                                              /*describe_plan=*/nullptr,
                                              kRun,
                                              &free_text,
                                              /*prepare=*/nullptr,
                                              /*session_open=*/nullptr,
                                              /*session_run=*/nullptr,
                                              /*session_call=*/nullptr,
                                              /*session_close=*/nullptr};

}  // namespace

CORDON_DEFINE_PLUGIN(kDescriptor)
