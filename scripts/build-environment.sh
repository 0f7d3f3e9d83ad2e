#!/usr/bin/env bash
# Builds an environment (frontend/environment.h) from Debian packages: a debootstrap tree of
# Debian 12 (minbase) with the packages asked for, cached by what it is built from, so a
# second call with the same packages costs nothing. Prints the tree's directory; with --add,
# also registers it with `cordon environment add` (which copies, pins and measures it).
#
#   scripts/build-environment.sh --package python3-numpy --package python3-pandas --add sci
#   scripts/build-environment.sh --ci      # the small one CI's tests use (python3, six)
#
# Needs root (debootstrap) and Debian's archive (--mirror, else $CORDON_DEBIAN_MIRROR, else
# deb.debian.org). The cache: $CORDON_ENVIRONMENT_CACHE, else /var/cache/cordon/environments.
# Not under /tmp: a cache that outlives reboots (and tmp cleaners).
set -euo pipefail

usage() {
  echo "usage: scripts/build-environment.sh [--ci] [--package PKG]... [--mirror URL]" \
    "[--add NAME] [--cordon PATH]" >&2
  exit 2
}

packages=()
add_name=""
cordon_bin="cordon"
mirror="${CORDON_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
suite="bookworm"
while (($#)); do
  case "$1" in
    --ci) packages+=(python3 python3-six) ;;
    --package) packages+=("${2:?--package needs a name}"); shift ;;
    --mirror) mirror="${2:?--mirror needs a URL}"; shift ;;
    --add) add_name="${2:?--add needs a name}"; shift ;;
    --cordon) cordon_bin="${2:?--cordon needs a path}"; shift ;;
    *) usage ;;
  esac
  shift
done
((${#packages[@]})) || usage

# The key: everything the tree is built from (this script's recipe version included).
sorted=$(printf '%s\n' "${packages[@]}" | sort -u | paste -sd, -)
key=$(printf 'recipe 1\nsuite %s\nvariant minbase\nmirror %s\npackages %s\n' \
  "$suite" "$mirror" "$sorted" | sha256sum | cut -c1-16)
cache="${CORDON_ENVIRONMENT_CACHE:-/var/cache/cordon/environments}"
tree="$cache/$key"

if [[ ! -e "$cache/$key.done" ]]; then
  command -v debootstrap >/dev/null || {
    echo "build-environment: debootstrap is not installed (scripts/install-deps.sh)" >&2
    exit 1
  }
  mkdir -p "$cache"
  rm -rf "$tree" "$tree.partial"
  echo "build-environment: debootstrap $suite with $sorted into $tree" >&2
  debootstrap --variant=minbase --include="$sorted" "$suite" "$tree.partial" "$mirror" >&2
  # What only the build needed: downloaded packages and the archive's indexes.
  rm -rf "$tree.partial"/var/cache/apt/archives/*.deb "$tree.partial"/var/lib/apt/lists/*
  mv "$tree.partial" "$tree"
  # The mark is beside the tree, not in it: the tree's digest covers only what was built.
  printf '%s\n' "$sorted" >"$cache/$key.done"
fi

if [[ -n "$add_name" ]]; then
  "$cordon_bin" environment add "$add_name" "$tree" >&2
fi
echo "$tree"
