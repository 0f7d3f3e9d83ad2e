#!/usr/bin/env bash
# Runs inside the guest (started by the image's cordon-guest-boot): the namespace and
# container backend tests, `cordon backends`, `cordon plan` and `cordon audit` against the
# shared build, each command's output, exit status and gtest JSON into OUT (the shared
# results directory), for run.sh to report.
#   inside.sh MODE OUT        MODE: systemd or bare
set -uo pipefail
mode="$1"
out="$2"
# shellcheck disable=SC1091
. /guest/results/env # BUILD, SOURCE, STEP_TIMEOUT
mkdir -p "$out"
export HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# As in CI: a kernel feature the host lacks fails the test instead of skipping it, so the
# report lists what this kind of host does not give.
export CORDON_REQUIRE_KERNEL_FEATURES=1
# qemu's software emulation (TCG) runs the code several times slower than the host: the
# tests' wall-clock bounds widen by this factor (tests/kernel_features.h), nothing else.
export CORDON_TEST_TIME_FACTOR="${CORDON_TEST_TIME_FACTOR:-8}"
# The asan preset's test environment (CMakePresets.json), harmless for other builds.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:strict_init_order=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS="suppressions=$SOURCE/tests/sanitizers/lsan.supp:print_suppressions=0"
cd /tmp || exit 1
# The bare boot has nobody to bring the loopback up; the tests' host-side listeners need it.
ip link set lo up
# A default route through a dummy interface: the guest has no NIC (-nic none), so without
# a route the audit's network positive controls (a UDP connect() to an outside address,
# which only looks the route up and sends nothing) cannot escape and are judged ERROR. A
# dummy device drops whatever is sent to it; nothing can leave the guest.
if modprobe dummy 2>/dev/null && ip link add cordon-dummy0 type dummy 2>/dev/null; then
  ip addr add 192.0.2.2/24 dev cordon-dummy0
  ip link set cordon-dummy0 up
  ip route add default via 192.0.2.1 dev cordon-dummy0 2>/dev/null || true
fi

{
  echo "mode: $mode"
  echo "kernel: $(uname -r)"
  echo "pid 1: $(cat /proc/1/comm)"
  echo "own cgroup: $(cat /proc/self/cgroup)"
  echo "mounts:"
  grep -E ' cgroup2? ' /proc/self/mounts
  echo "root cgroup.controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
  echo "root cgroup.subtree_control: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
  own="/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)"
  echo "own group controllers: $(cat "$own/cgroup.controllers" 2>&1)"
  echo "own group subtree_control: $(cat "$own/cgroup.subtree_control" 2>&1)"
  echo "own group writable: $(test -w "$own/cgroup.procs" && echo yes || echo no)"
  echo "user namespaces: max_user_namespaces=$(cat /proc/sys/user/max_user_namespaces)"
  echo "runc: $(runc --version 2>&1 | head -1)"
} >"$out/facts.txt" 2>&1

# step NAME CMD...: runs CMD with the step timeout, output to NAME.log, status to NAME.rc.
step() {
  local name="$1"
  shift
  echo "cordon-guest: $mode: $name"
  timeout -k 10 "$STEP_TIMEOUT" "$@" >"$out/$name.log" 2>&1 </dev/null
  local rc=$?
  echo "$rc" >"$out/$name.rc"
  echo "cordon-guest: $mode: $name exit $rc"
}

for t in proc_cgroup_delegation_test proc_limit_group_test namespace_backend_test container_backend_test; do
  step "$t" "$BUILD/tests/$t" --gtest_output="json:$out/$t.json"
done
cordon="$BUILD/bin/cordon"
step backends "$cordon" backends
step plan-auto "$cordon" plan -b auto --memory 256M --processes 64 --cpu 5s -c true
step plan-namespace "$cordon" plan -b namespace --memory 256M --processes 64 --cpu 5s -c true
step plan-container "$cordon" plan -b container --memory 256M --processes 64 --cpu 5s -c true
step audit-namespace "$cordon" audit -b namespace --no-store
step audit-container "$cordon" audit -b container --no-store
# What the runs left behind in the hierarchy (a leak shows here).
find /sys/fs/cgroup -type d >"$out/cgroups-after.txt" 2>&1
echo finished >"$out/done"
