#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: dependencies, the `dev` preset
# (Debug, warnings as errors), every test through CTest, and the linters.
# Needs no terminal and no stdin (CI runs it as `bash .ci/run` with stdin closed).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

# Tests that need namespaces or cgroups fail instead of skipping when the kernel refuses:
# CI machines are root and must exercise them for real.
export CORDON_REQUIRE_KERNEL_FEATURES=1

cmake --preset dev
cmake --build --preset dev

# The pinned MCP SDK that the CTest mcp_sdk_client drives `cordon mcp` with (its lockfile is
# tests/mcp_node/package-lock.json; node_modules stays out of git).
(cd tests/mcp_node && npm ci --no-audit --no-fund --loglevel=error)

# Lint before the tests so the closing lines of the run are CTest's summary.
scripts/lint.sh build/dev

# --no-tests=error: a suite that ran nothing has not passed.
ctest --preset dev --no-tests=error </dev/null
