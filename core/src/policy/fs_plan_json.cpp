// JSON form of an FsPlan, for `cordon plan --json` and for reading plans in tests.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cordon/policy/fs_plan.h"

namespace cordon::policy {

nlohmann::json to_json(const FsPlan& plan) {
  using nlohmann::json;
  json steps = json::array();
  for (const FsStep& s : plan.steps) {
    json j = {{"op", to_string(s.op)}, {"target", s.target}};
    if (!s.source.empty()) j["source"] = s.source;
    if (!s.data.empty()) j[s.op == FsOp::kWriteFile ? "contents" : "options"] = s.data;
    if (s.mode != 0) {
      char octal[16];
      std::snprintf(octal, sizeof octal, "%04o", s.mode);
      j["mode"] = octal;
    }
    json flags = json::array();
    if (s.read_only) flags.push_back("ro");
    if (s.nosuid) flags.push_back("nosuid");
    if (s.nodev) flags.push_back("nodev");
    if (s.noexec) flags.push_back("noexec");
    if (!flags.empty()) j["flags"] = flags;
    if (s.optional) j["optional"] = true;
    steps.push_back(std::move(j));
  }
  return {{"hostname", plan.hostname}, {"uid", plan.uid}, {"gid", plan.gid},
          {"home", plan.home},         {"cwd", plan.cwd}, {"steps", steps}};
}

}  // namespace cordon::policy
