// A trivial backend for the loader's tests. It counts create() calls in an exported
// variable so a test can prove that listing plugins never creates a backend.
#include "cordon/backend.h"
#include "cordon/plugin_abi.h"

extern "C" {
__attribute__((visibility("default"))) int cordon_fixture_create_calls = 0;
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

const cordon_plugin_descriptor kDescriptor = {CORDON_PLUGIN_ABI_MAJOR,
                                              CORDON_PLUGIN_ABI_MINOR,
                                              sizeof(cordon_plugin_descriptor),
                                              "fixture",
                                              FIXTURE_VERSION,
                                              &create,
                                              &destroy};

}  // namespace

CORDON_DEFINE_PLUGIN(kDescriptor)
