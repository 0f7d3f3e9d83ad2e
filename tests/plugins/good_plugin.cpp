// A trivial backend for the loader's tests. It counts create() calls in an exported
// variable so a test can prove that listing plugins never creates a backend, and records
// the options create_with_options was given. Its one option it can refuse: a runtime
// other than "fixture-runtime".
// With FIXTURE_OLD_MINOR it is built as a plugin of ABI 2.0 would be: its descriptor ends
// at destroy (no create_with_options), as one compiled before minor 1 was.
#include <cstring>
#include <string>

#include "cordon/backend.h"
#include "cordon/plugin_abi.h"
#include "cordon/plugin_options.h"

extern "C" {
__attribute__((visibility("default"))) int cordon_fixture_create_calls = 0;
__attribute__((visibility("default"))) int cordon_fixture_options_calls = 0;
__attribute__((visibility("default"))) long long cordon_fixture_last_pool_size = -2;
__attribute__((visibility("default"))) char cordon_fixture_last_engine[64] = "";
}

namespace {

class FixtureBackend final : public cordon::Backend {
 public:
  std::string_view name() const override { return "fixture"; }
  std::string_view version() const override { return FIXTURE_VERSION; }
  cordon::Probe probe() const override { return {true, ""}; }
  cordon::Capabilities capabilities(const cordon::Limits& /*limits*/) const override { return {}; }
  cordon::RunResult run(const cordon::RunRequest& /*request*/,
                        const cordon::CancelToken& /*cancel*/,
                        cordon::RunObserver* /*observer*/) override {
    cordon::RunResult result;
    result.outcome = cordon::Outcome::kOk;
    result.exit_code = 0;
    result.backend = {"fixture", FIXTURE_VERSION};
    return result;
  }
};

cordon::Backend* create() {
  ++cordon_fixture_create_calls;
  return new FixtureBackend();
}

void destroy(cordon::Backend* backend) { delete backend; }

#if defined(FIXTURE_OLD_MINOR)
// The ABI 2.0 descriptor, field for field.
struct DescriptorV20 {
  std::uint32_t abi_major;
  std::uint32_t abi_minor;
  std::uint32_t struct_size;
  const char* name;
  const char* version;
  cordon::Backend* (*create)();
  void (*destroy)(cordon::Backend*);
};

const DescriptorV20 kDescriptor = {CORDON_PLUGIN_ABI_MAJOR,
                                   0,
                                   sizeof(DescriptorV20),
                                   "oldminor",
                                   FIXTURE_VERSION,
                                   &create,
                                   &destroy};

}  // namespace

extern "C" __attribute__((visibility("default"))) const cordon_plugin_descriptor*
cordon_plugin_entry() {
  // The loader reads only the fields struct_size covers, which DescriptorV20 has.
  return reinterpret_cast<const cordon_plugin_descriptor*>(&kDescriptor);
}
#else
cordon::Result<cordon::Backend*> create_from(const cordon::BackendOptions& options) {
  ++cordon_fixture_create_calls;
  ++cordon_fixture_options_calls;
  cordon_fixture_last_pool_size =
      options.pool_size ? static_cast<long long>(*options.pool_size) : -1;
  const std::string engine = options.engine.value_or("(unset)");
  std::strncpy(cordon_fixture_last_engine, engine.c_str(), sizeof(cordon_fixture_last_engine) - 1);
  if (options.runtime && *options.runtime != "fixture-runtime") {
    return cordon::fail(cordon::ErrorCode::kInvalidArgument,
                        "--runtime " + *options.runtime + ": only fixture-runtime is supported");
  }
  return new FixtureBackend();
}

cordon::Backend* create_with_options(const cordon_backend_options* options, char* error,
                                     std::size_t error_size) {
  return cordon::create_backend_from_c(options, error, error_size, &create_from);
}

const cordon_plugin_descriptor kDescriptor = {CORDON_PLUGIN_ABI_MAJOR,
                                              CORDON_PLUGIN_ABI_MINOR,
                                              sizeof(cordon_plugin_descriptor),
                                              "fixture",
                                              FIXTURE_VERSION,
                                              &create,
                                              &destroy,
                                              &create_with_options};

}  // namespace

CORDON_DEFINE_PLUGIN(kDescriptor)
#endif
