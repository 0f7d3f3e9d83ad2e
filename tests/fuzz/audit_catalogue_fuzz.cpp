// The audit catalogue (audit/catalogue.json): built in today, but parse_catalogue()
// takes any text, and a catalogue is the input that decides what the audit runs and how
// each attempt's evidence is judged. Properties: it never throws; a parsed catalogue has
// unique attempt ids, each found by find(), and the same text always parses to the same
// hash and attempts.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "audit/catalogue.h"
#include "fuzz_util.h"

namespace {

using namespace cordon;
using cordon::fuzz::require;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Result<audit::Catalogue> catalogue = audit::parse_catalogue(text);
  if (!catalogue) {
    require(!catalogue.error().message.empty());
    return 0;
  }
  std::set<std::string> ids;
  for (const audit::Attempt& attempt : catalogue->attempts) {
    require(ids.insert(attempt.id).second);
    require(catalogue->find(attempt.id) == &attempt);
    (void)audit::to_string(attempt.judge);
    (void)audit::to_string(attempt.control);
  }
  const Result<audit::Catalogue> again = audit::parse_catalogue(text);
  require(again.has_value() && again->hash == catalogue->hash &&
          again->attempts.size() == catalogue->attempts.size());
  return 0;
}
