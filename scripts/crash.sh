#!/usr/bin/env bash
# Crash safety at full size (issue #13), for the full tier (`scripts/test.sh --full`) or
# by hand after `cmake --build build/dev`:
#   - cordon (the CLI, and `cordon mcp` holding a warm pool) SIGKILLed 100 times at random
#     points per isolating backend: no code process survives, the next start sweeps
#     every leftover;
#   - 10,000 history records from 4 concurrent writers (CLIs, an MCP server, the store
#     used directly as the inspector does): none lost;
#   - the host-side faults (history locked, corrupt, on a full disk; audit dir read-only;
#     /dev/shm full; a helper binary deleted mid-life), each simulated in a private mount
#     namespace or on a copy.
# CTest runs the same script at CI size (tests/CMakeLists.txt: crash_*). Root only.
#   scripts/crash.sh [BUILD_DIR]   (default build/dev); KILLS=100 WRITES=2500 override.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/dev}
kills=${KILLS:-100}
writes=${WRITES:-2500}
test=tests/crash_test.py
export CORDON_TEST_HISTORY_WRITER="$build/tests/history_writer_tool"
status=0
for backend in namespace container; do
  /usr/bin/python3 "$test" kill --cordon "$build/bin/cordon" --backend "$backend" --kills "$kills" ||
    status=1
done
/usr/bin/python3 "$test" writers --cordon "$build/bin/cordon" --per-writer "$writes" || status=1
/usr/bin/python3 "$test" faults --cordon "$build/bin/cordon" || status=1
echo "crash.sh: $([[ $status == 0 ]] && echo passed || echo FAILED)"
exit $status
