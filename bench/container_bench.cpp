// Per-run cost of the container backend, through the production path (the plugin loaded
// by the registry, Backend::run), against the runtime invoked directly, in one run:
//
//   cold:    Backend::run(sh -c true)           vs runc run on an equivalent bundle  target <= 1.2x
//   pooled:  Backend::run(true), warm pool      vs Backend::run(true), cold          target >= 2.5x
//   faster python:  the same two comparisons on python3 -c pass reported sustained: runs/s of
//   `true` through a pool of 2 on 2 threads                     reported
//   gVisor (runsc), where usable: cold vs runc cold (reported), pooled vs cold (target
//   >= 5x faster), python start vs the namespace backend (reported)
//
// The equivalent bundle is the backend's own plan (same mounts, namespaces, resources,
// seccomp section) with the code as the container's process instead of cordon's init;
// OOM detection and removal are part of both sides (runc run deletes its container).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "container_backend.h"
#include "cordon/backend_options.h"
#include "cordon/plugin_registry.h"
#include "cordon/temp_dir.h"
#include "harness.h"
#include "runc_bundle.h"
#include "spawn_baseline.h"

namespace {

using cordon::bench::arg_int;
using cordon::bench::ms_since;

using Clock = std::chrono::steady_clock;

cordon::RunRequest request(std::string code, cordon::Language lang) {
  cordon::RunRequest r;
  r.code = std::move(code);
  r.language = lang;
  r.timeout = std::chrono::seconds(10);
  return r;
}

void must_run(cordon::Backend& b, const cordon::RunRequest& r) {
  const cordon::RunResult res = b.run(r, {}, nullptr);
  if (!res.ok()) {
    std::fprintf(stderr, "bench: container run failed: %s %s\n",
                 res.error.value_or("not ok").c_str(), res.stderr_data.c_str());
    std::exit(2);
  }
}

// gVisor (issue #18), where runsc is installed and usable, through the same plugin made with
// --runtime runsc: a cold runsc run against a cold runc run (reported: what the user-space
// kernel costs), a pooled runsc run against a cold one (target >= 5x faster: its start is
// where a pool pays most), and python's start under runsc against the namespace backend's
// (reported). Returns the targets missed.
int gvisor(cordon::PluginRegistry& registry, cordon::Backend& runc, int rounds) {
  cordon::BackendOptions options;
  options.runtime = "runsc";
  auto cold = registry.create("container", options);
  if (!cold || !(*cold)->probe().available) {
    std::printf("runsc: skipped (%s)\n",
                cold ? (*cold)->probe().reason.c_str() : cold.error().describe().c_str());
    return 0;
  }
  options.pool_size = 2;
  auto pooled = registry.create("container", options);
  auto ns = registry.create("namespace");
  if (!pooled) return 1;
  int missed = 0;
  // A run costs ~0.3-0.5 s cold under runsc: fewer rounds than runc's.
  const int few = std::max(rounds / 4, 5);
  const auto sh_true = request("true", cordon::Language::kSh);
  const auto py_pass = request("pass", cordon::Language::kPython);
  const auto c1 = cordon::bench::compare(
      "runsc cold vs runc cold, `true`", "Backend::run, runsc", [&] { must_run(**cold, sh_true); },
      "Backend::run, runc", [&] { must_run(runc, sh_true); }, few, 1, /*target=*/0);
  cordon::bench::print(c1);
  cordon::bench::print_json(c1);

  auto* pool = static_cast<cordon::oci::ContainerBackend*>(pooled->get())->pool();
  const auto settle = [&] { (void)pool->wait_ready(Clock::now() + std::chrono::seconds(20)); };
  const auto c2 = cordon::bench::compare(
      "runsc pooled vs runsc cold, `true`", "Backend::run, runsc, warm pool of 2",
      [&] { must_run(**pooled, sh_true); }, "Backend::run, runsc, cold",
      [&] { must_run(**cold, sh_true); }, few, 1, /*target=*/0.2, settle);
  cordon::bench::print(c2);
  cordon::bench::print_json(c2);
  if (!c2.met()) ++missed;

  if (ns && (*ns)->probe().available) {
    const auto c3 = cordon::bench::compare(
        "python start: runsc vs namespace, python3 -c pass", "Backend::run, runsc, cold",
        [&] { must_run(**cold, py_pass); }, "Backend::run, namespace, cold",
        [&] { must_run(**ns, py_pass); }, few, 1, /*target=*/0);
    cordon::bench::print(c3);
    cordon::bench::print_json(c3);
  }
  return missed;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = arg_int(argc, argv, "--rounds", 40);
  const int warmup = arg_int(argc, argv, "--warmup", 4);

  cordon::PluginRegistry registry;
  registry.discover(cordon::PluginRegistry::default_search_path());
  auto cold = registry.create("container");
  if (!cold || !(*cold)->probe().available) {
    std::fprintf(stderr, "bench: container backend unavailable: %s\n",
                 cold ? (*cold)->probe().reason.c_str() : cold.error().describe().c_str());
    return 2;
  }
  // The same plugin with a warm pool (the plugin reads its size from the environment).
  ::setenv("CORDON_CONTAINER_POOL_SIZE", "2", 1);
  auto pooled = registry.create("container");
  ::unsetenv("CORDON_CONTAINER_POOL_SIZE");
  if (!pooled) return 2;
  int missed = 0;

  const auto init = cordon::oci::find_oci_init();
  // Beside the backend's own bundles (the same filesystem).
  auto tmp = cordon::TempDir::create("cordon-oci-bench-",
                                     cordon::oci::default_oci_runtime_dir().parent_path());
  if (!init || !tmp) return 2;
  const std::string state = tmp->path().string() + "/state";
  int n = 0;
  auto runc_run = [&](const std::string& bundle) {
    cordon::bench::spawn_and_wait(
        {"/usr/sbin/runc", "--root", state, "run", "--bundle", bundle,
         "bench-" + std::to_string(::getpid()) + "-" + std::to_string(n++)});
  };
  const std::string direct_true = cordon::bench::write_runc_bundle(
      tmp->path().string() + "/t", {"/bin/sh", "-c", "true"}, init->string());
  const std::string direct_py = cordon::bench::write_runc_bundle(
      tmp->path().string() + "/p", {"/usr/bin/python3", "-c", "pass"}, init->string());

  const auto sh_true = request("true", cordon::Language::kSh);
  const auto c1 = cordon::bench::compare(
      "cold: container backend vs runc run, `true`", "Backend::run(sh -c true)",
      [&] { must_run(**cold, sh_true); }, "runc run (equivalent bundle)",
      [&] { runc_run(direct_true); }, rounds, warmup, /*target=*/1.2);
  cordon::bench::print(c1);
  cordon::bench::print_json(c1);
  if (!c1.met()) ++missed;

  const auto py_pass = request("pass", cordon::Language::kPython);
  const auto c2 = cordon::bench::compare(
      "cold: container backend vs runc run, python3 -c pass", "Backend::run(python3 -c pass)",
      [&] { must_run(**cold, py_pass); }, "runc run (equivalent bundle)",
      [&] { runc_run(direct_py); }, rounds / 2, warmup, /*target=*/1.2);
  cordon::bench::print(c2);
  cordon::bench::print_json(c2);
  if (!c2.met()) ++missed;

  // Pooled against cold: the pool refills in the background between rounds, as it would
  // between the requests of a server; each pooled run waits for a ready container so the
  // comparison is of a run's own path.
  auto* pool = static_cast<cordon::oci::ContainerBackend*>(pooled->get())->pool();
  auto pooled_run = [&](const cordon::RunRequest& r) {
    pool->wait_ready(Clock::now() + std::chrono::seconds(10));
    const auto t0 = Clock::now();
    must_run(**pooled, r);
    return ms_since(t0);
  };
  for (const auto& [label, req] :
       {std::pair{"`true`", sh_true}, std::pair{"python3 -c pass", py_pass}}) {
    cordon::bench::Sample warm{"pooled", {}};
    cordon::bench::Sample fresh{"cold", {}};
    for (int i = 0; i < rounds / 2; ++i) {
      warm.ms.push_back(pooled_run(req));
      const auto t0 = Clock::now();
      must_run(**cold, req);
      fresh.ms.push_back(ms_since(t0));
    }
    const double speedup = fresh.median() / warm.median();
    std::printf("pooled vs cold on %s: pooled %.2f ms, cold %.2f ms, %.2fx faster%s\n", label,
                warm.median(), fresh.median(), speedup,
                std::string(label) == "`true`" && speedup < 2.5 ? "  MISSED (target >= 2.5x)" : "");
    std::printf(
        "BENCH_JSON {\"label\":\"pooled vs cold %s\",\"pooled_ms\":%.3f,\"cold_ms\":%.3f}\n", label,
        warm.median(), fresh.median());
    if (std::string(label) == "`true`" && speedup < 2.5) ++missed;
  }

  // Sustained: two threads through a pool of two, more runs than containers.
  const double rate = cordon::bench::runs_per_second([&] { must_run(**pooled, sh_true); }, 2,
                                                     std::chrono::seconds(5));
  std::printf("sustained: %.1f runs/s of `true` with a pool of 2 on 2 threads\n", rate);
  pooled->reset();
  missed += gvisor(registry, **cold, rounds);
  cold->reset();
  for (const char* b : {"/t", "/p"}) cordon::bench::release_runc_bundle(tmp->path().string() + b);
  std::printf("targets missed: %d\n", missed);
  return 0;
}
