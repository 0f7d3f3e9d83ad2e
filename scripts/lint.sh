#!/usr/bin/env bash
# Format check (clang-format-19) over every C++ file of ours, then clang-tidy-19 over the
# sources of core/, backends/ and cli/ using a build's compile_commands.json.
#   scripts/lint.sh [BUILD_DIR]      (default: build/dev, configured if missing)
# Debian's -19 tools: clang-tidy 14 rejects std::expected (CONVENTIONS.md §10).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build/dev}"
jobs="${LINT_JOBS:-2}"

# Tracked files plus new ones not yet committed, in our source folders only.
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- \
  'core/*.cpp' 'core/*.h' 'backends/*.cpp' 'backends/*.h' 'cli/*.cpp' 'cli/*.h' \
  'tests/*.cpp' 'tests/*.h' 'bench/*.cpp' 'bench/*.h' 'app/*.cpp' 'app/*.h' | sort -u)
if ((${#files[@]} == 0)); then
  echo "lint: no C++ files found" >&2
  exit 1
fi

echo "lint: clang-format-19 on ${#files[@]} files"
clang-format-19 --dry-run -Werror "${files[@]}"

if [[ ! -f "$build_dir/compile_commands.json" ]]; then
  cmake --preset dev >/dev/null
fi
echo "lint: clang-tidy-19 on core/ backends/ cli/ sources ($jobs jobs, $build_dir)"
# run-clang-tidy takes regexes of files in the compilation database; -quiet drops the
# per-file banner, warnings (errors, per .clang-tidy) still print and fail the run.
run-clang-tidy-19 -quiet -j "$jobs" -clang-tidy-binary clang-tidy-19 -p "$build_dir" \
  "$PWD/(core|backends|cli)/.*\.cpp$"
echo "lint: clean"
