// A syscall policy as JSON (syscall_policy_from_json(), cordon/policy/syscall_policy.h):
// the format a policy is written and shown in. Properties: nothing throws; a policy it
// accepts serialises canonically and reads back to the same canonical form and hash
// (parse -> print -> parse is stable), and validate() runs on it without crashing.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "cordon/policy/syscall_policy.h"
#include "fuzz_util.h"

namespace {

using namespace cordon;
using namespace cordon::policy;
using cordon::fuzz::require;
using nlohmann::json;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const json j = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  const Result<SyscallPolicy> policy = syscall_policy_from_json(j);
  if (!policy) {
    require(!policy.error().message.empty());
    return 0;
  }
  (void)validate(*policy);
  const std::string canonical = canonical_form(*policy);
  const Result<SyscallPolicy> again = syscall_policy_from_json(json::parse(canonical));
  require(again.has_value() && canonical_form(*again) == canonical &&
          content_hash(*again) == content_hash(*policy));
  return 0;
}
