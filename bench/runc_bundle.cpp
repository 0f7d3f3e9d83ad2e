#include "runc_bundle.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "bundle_writer.h"
#include "cordon/policy/fs_plan.h"
#include "cordon/policy/oci_seccomp.h"
#include "cordon/policy/syscall_policy.h"

namespace cordon::bench {

void release_runc_bundle(const std::string& dir) {
  (void)::umount2((dir + "/b/scratch").c_str(), MNT_DETACH);
}

std::string write_runc_bundle(const std::string& dir, const std::vector<std::string>& argv,
                              const std::string& init) {
  ::mkdir(dir.c_str(), 0700);
  cordon::oci::BundleInputs in;
  in.layout = *cordon::policy::probe_host_layout();
  in.init_host_path = init;
  in.scratch_host_path = dir + "/b/scratch";
  in.code_host_path = dir + "/b/code";
  in.rootfs_host_path = dir + "/rootfs";
  in.cgroups_path = "cordon-oci-bench-" + std::to_string(::getpid());
  in.seccomp = cordon::policy::to_oci_seccomp(cordon::policy::default_syscall_policy());
  auto plan = cordon::oci::make_bundle_plan(in);
  if (!plan) {
    std::fprintf(stderr, "bench: %s\n", plan.error().describe().c_str());
    std::exit(2);
  }
  plan->config["process"]["args"] = argv;
  // What a direct user of runc would set for the same ceilings (the backend puts these on
  // a parent group of its own instead, to keep the OOM count).
  plan->config["linux"]["resources"]["memory"] = {{"limit", in.key.memory_bytes},
                                                  {"swap", in.key.memory_bytes}};
  plan->config["linux"]["resources"]["pids"] = {{"limit", in.key.max_processes + 1}};
  plan->config["process"]["env"] = {"PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8"};
  auto st = cordon::oci::write_shared_rootfs(in.rootfs_host_path, *plan);
  if (st) st = cordon::oci::write_bundle(dir + "/b", plan->config.dump(), in.key.scratch_bytes);
  if (!st) {
    std::fprintf(stderr, "bench: %s\n", st.error().describe().c_str());
    std::exit(2);
  }
  return dir + "/b";
}

}  // namespace cordon::bench
