// The JSON that crosses the C plugin boundary (plugin_abi.h), as the loader reads a
// plugin's answers and a plugin reads cordon's requests: capabilities (with their claim
// data, claims.h), results, requests, limits, probes and plans, and a session's options
// and answers (session_wire.h, ABI 3.4). A plugin is code of
// another build, possibly another compiler; what it returns is outside input. The bytes
// are parsed as JSON and handed to every reader. Properties: no reader throws; what a
// reader accepts, written back and read again, is a fixed point (the second writing equals
// the first), so nothing a plugin says changes on its way through cordon.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "cordon/claims.h"
#include "cordon/plan.h"
#include "cordon/plugin_wire.h"
#include "cordon/result_json.h"
#include "cordon/session_wire.h"
#include "fuzz_util.h"

namespace {

using cordon::fuzz::require;
using nlohmann::json;

// read(json) -> Result<T>, write(T) -> json: accepted input settles after one pass.
template <typename Read, typename Write>
void check_fixed_point(const json& in, Read read, Write write) {
  const auto first = read(in);
  if (!first) return;
  const json written = write(*first);
  const auto second = read(written);
  require(second.has_value());
  require(write(*second) == written);
}

json result_with_raw(const cordon::RunResult& r) {
  json out = cordon::to_json(r);
  cordon::with_raw_output(r, out);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const json in = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (in.is_discarded()) return 0;
  check_fixed_point(in, &cordon::capabilities_from_json,
                    [](const cordon::Capabilities& c) { return cordon::to_json(c); });
  check_fixed_point(in, &cordon::result_from_json, &result_with_raw);
  check_fixed_point(in, &cordon::wire::request_from_json,
                    [](const cordon::RunRequest& r) { return cordon::wire::to_json(r); });
  check_fixed_point(in, &cordon::wire::limits_from_json,
                    [](const cordon::Limits& l) { return cordon::wire::to_json(l); });
  check_fixed_point(in, &cordon::wire::probe_from_json,
                    [](const cordon::Probe& p) { return cordon::wire::to_json(p); });
  check_fixed_point(in, &cordon::wire::plan_from_json,
                    [](const cordon::Plan& p) { return cordon::wire::to_json(p); });
  check_fixed_point(in, &cordon::plan_from_json,
                    [](const cordon::Plan& p) { return cordon::to_json(p); });
  check_fixed_point(in, &cordon::wire::session_options_from_json,
                    [](const cordon::SessionOptions& o) { return cordon::wire::to_json(o); });
  // A session's answers: read without throwing, whatever their shape.
  if (auto payload = cordon::wire::session_answer(in)) {
    (void)cordon::wire::session_stats_from_json(*payload);
    (void)cordon::wire::workspace_entries_from_json(*payload);
    (void)cordon::wire::file_content_from_json(*payload);
  }
  (void)cordon::wire::session_stats_from_json(in);
  (void)cordon::wire::workspace_entries_from_json(in);
  (void)cordon::wire::file_content_from_json(in);
  // A claim's data alone, as one capability carries it.
  cordon::Capability c;
  if (cordon::read_claim_json(in, c)) {
    const json written = cordon::claim_json(c);
    cordon::Capability again;
    require(cordon::read_claim_json(written, again).has_value());
    require(cordon::claim_json(again) == written);
  }
  return 0;
}
