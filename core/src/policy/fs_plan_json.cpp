// An FsPlan as a plan shows it (cordon/plan.h): what `cordon plan` renders and --json prints.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cordon/policy/fs_plan.h"

namespace cordon::policy {

PlanStep plan_step(const FsStep& s) {
  PlanStep step{.op = std::string(to_string(s.op)), .target = s.target, .source = s.source};
  (s.op == FsOp::kWriteFile ? step.contents : step.options) = s.data;
  if (s.mode != 0) {
    char octal[16];
    std::snprintf(octal, sizeof octal, "%04o", s.mode);
    step.mode = octal;
  }
  if (s.read_only) step.flags.emplace_back("ro");
  if (s.nosuid) step.flags.emplace_back("nosuid");
  if (s.nodev) step.flags.emplace_back("nodev");
  if (s.noexec) step.flags.emplace_back("noexec");
  step.optional = s.optional;
  return step;
}

PlanFilesystem plan_filesystem(const FsPlan& plan) {
  PlanFilesystem fs;
  for (const FsStep& s : plan.steps) fs.steps.push_back(plan_step(s));
  fs.extra = {{"hostname", plan.hostname},
              {"uid", plan.uid},
              {"gid", plan.gid},
              {"home", plan.home},
              {"cwd", plan.cwd}};
  return fs;
}

}  // namespace cordon::policy
