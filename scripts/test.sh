#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: dependencies, the `dev` preset
# (Debug, warnings as errors), every test through CTest, and the linters.
# Needs no terminal and no stdin (CI runs it as `bash .ci/run` with stdin closed).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's wall time, printed as one line at the end even when a step fails (CI has a
# 30-minute budget on a shared 2-core machine: issue #13).
step_times=()
step_name=""
step_start=$SECONDS
step() {
  if [[ -n "$step_name" ]]; then
    step_times+=("$step_name $(fmt_secs $((SECONDS - step_start)))")
  fi
  step_name="$1"
  step_start=$SECONDS
}
fmt_secs() { if (($1 >= 60)); then echo "$(($1 / 60))m$(($1 % 60))s"; else echo "$1s"; fi; }
print_times() {
  local rc=$?
  if [[ -n "$step_name" ]]; then
    step_times+=("$step_name $(fmt_secs $((SECONDS - step_start)))$( ((rc == 0)) || echo ' FAILED')")
  fi
  local line="" t
  for t in "${step_times[@]}"; do line+="$t | "; done
  echo "test.sh times: ${line}total $(fmt_secs "$SECONDS")"
  exit "$rc"
}
trap print_times EXIT

step deps
scripts/install-deps.sh

# Tests that need namespaces or cgroups fail instead of skipping when the kernel refuses:
# CI machines are root and must exercise them for real.
export CORDON_REQUIRE_KERNEL_FEATURES=1

step configure
cmake --preset dev
step build
cmake --build --preset dev

# The pinned MCP SDK that the CTest mcp_sdk_client drives `cordon mcp` with (its lockfile is
# tests/mcp_node/package-lock.json; node_modules stays out of git).
step "npm ci"
(cd tests/mcp_node && npm ci --no-audit --no-fund --loglevel=error)

# Lint before the tests so the closing lines of the run are CTest's summary.
step lint
scripts/lint.sh build/dev

# --no-tests=error: a suite that ran nothing has not passed.
step ctest
ctest --preset dev --no-tests=error </dev/null
