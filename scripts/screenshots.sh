#!/usr/bin/env bash
# Renders a screenshot of each inspector tab into docs/screenshots/ (referenced from
# README.md). Regenerate them when the UI changes:
#   scripts/screenshots.sh [BUILD_DIR]      (default build/dev)
# Runs under Xvfb when xvfb-run exists (the platform look of an X session), else on Qt's
# offscreen platform. Root is needed for the namespace backend's column in Compare.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build/dev}"
cmake --build "$build_dir" -j2 --target cordon_inspector_screenshots cordon_backend_subprocess \
  $(grep -q cordon_backend_namespace "$build_dir/build.ninja" 2>/dev/null &&
    echo cordon_backend_namespace cordon_init)
mkdir -p docs/screenshots
tool="$build_dir/bin/cordon_inspector_screenshots"
if command -v xvfb-run >/dev/null 2>&1; then
  xvfb-run -a -s "-screen 0 1280x800x24" "$tool" docs/screenshots
else
  QT_QPA_PLATFORM=offscreen "$tool" docs/screenshots
fi
