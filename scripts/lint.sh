#!/usr/bin/env bash
# Format check (clang-format-19) over every C++ file of ours, the copy-paste check between
# backends (jscpd), then clang-tidy-19 over the sources of core/, backends/, audit/,
# prompts/, frontend/ and cli/ using a build's compile_commands.json.
#   scripts/lint.sh [--update-cache] [BUILD_DIR]   (default: build/dev, configured if missing)
# Debian's -19 tools: clang-tidy 14 rejects std::expected (docs/CONVENTIONS.md §10).
#
# clang-tidy is the slow part (up to ~40 s a file on a loaded 2-core machine), so its
# verdicts are cached in scripts/lint-cache.txt, committed with the code: a translation unit
# whose key (clang-tidy version, .clang-tidy, compile command, the content of the file and
# of every header of ours it includes; see scripts/lint_cache.py) is listed there passed
# before and is not linted again. Run against build/dev, this script rewrites the cache with
# the TUs that are clean now, so commit the file after linting; other build dirs (CI's
# build/ci, whose keys equal build/dev's) only read it unless --update-cache.
# LINT_NO_CACHE=1 lints every TU.
# The build must be current: the header lists come from its ninja deps.
set -euo pipefail
cd "$(dirname "$0")/.."
update_cache=0
if [[ "${1:-}" == "--update-cache" ]]; then
  update_cache=1
  shift
fi
build_dir="${1:-build/dev}"
jobs="${LINT_JOBS:-2}"

# Tracked files plus new ones not yet committed, in our source folders only.
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- \
  'core/*.cpp' 'core/*.h' 'backends/*.cpp' 'backends/*.h' 'cli/*.cpp' 'cli/*.h' \
  'audit/*.cpp' 'audit/*.h' 'prompts/*.cpp' 'prompts/*.h' 'frontend/*.cpp' 'frontend/*.h' \
  'tests/*.cpp' 'tests/*.h' 'bench/*.cpp' 'bench/*.h' 'app/*.cpp' 'app/*.h' | sort -u)
if ((${#files[@]} == 0)); then
  echo "lint: no C++ files found" >&2
  exit 1
fi

echo "lint: clang-format-19 on ${#files[@]} files"
clang-format-19 --dry-run -Werror "${files[@]}"

# No run of six or more lines copied between two backends, in their code or their tests
# (issue #14): jscpd, pinned by scripts/jscpd/package-lock.json (scripts/test.sh runs
# `npm ci` there; node_modules stays out of git); scripts/cross_backend_clones.py says what
# counts. A few seconds.
jscpd=scripts/jscpd/node_modules/.bin/jscpd
if [[ ! -x "$jscpd" ]]; then
  echo "lint: jscpd is not installed here: run (cd scripts/jscpd && npm ci)" >&2
  exit 1
fi
echo "lint: copy-paste between backends (jscpd $("$jscpd" --version))"
python3 scripts/cross_backend_clones.py "$jscpd"

if [[ ! -f "$build_dir/compile_commands.json" ]]; then
  cmake --preset dev >/dev/null
fi
echo "lint: clang-tidy-19 on core/ backends/ audit/ prompts/ frontend/ cli/ sources ($build_dir)"
cache_args=()
if [[ "${LINT_NO_CACHE:-0}" == 1 ]]; then
  cache_args+=(--no-cache)
fi
if ((update_cache == 0)) && [[ "$(realpath -m "$build_dir")" != "$(realpath -m build/dev)" ]]; then
  cache_args+=(--no-write)
fi
# Warnings are errors (.clang-tidy): any warning prints and fails the run.
python3 scripts/lint_cache.py "$build_dir" scripts/lint-cache.txt "$jobs" "${cache_args[@]}"
echo "lint: clean"
