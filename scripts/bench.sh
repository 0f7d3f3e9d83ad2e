#!/usr/bin/env bash
# Builds the release preset and runs every benchmark. Each prints ratios against a
# baseline measured in the same run; "MISSED" marks a target not met on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release
for b in build/release/bench/bench-*; do
  echo "== $(basename "$b")"
  "$b" "$@"
done
