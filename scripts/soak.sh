#!/usr/bin/env bash
# The soak and leak test at full size (docs/SOAK.md), for the full tier: builds
# `cordon-soak` in the preset $SOAK_PRESET (default dev) and runs it niced, as root, on
# both isolating backends: 10,000 sequential and 1,000 concurrent runs each, a sample every
# 1,000. Arguments go to cordon-soak (e.g. --backend namespace, --markdown FILE).
# Exit status: cordon-soak's (0 flat and every outcome right, 1 a leak or a wrong outcome,
# 77 no isolating backend here). Takes ~15-40 min per backend on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${SOAK_PRESET:-dev}"
[[ -f "build/$preset/CMakeCache.txt" ]] || cmake --preset "$preset" >/dev/null
nice cmake --build "build/$preset" --target cordon_soak_tool -j2 >/dev/null
echo "soak: $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n), kernel $(uname -r), $(nproc) cores"
echo "soak: build/$preset/bench/cordon-soak $*"
exec nice "build/$preset/bench/cordon-soak" "$@"
