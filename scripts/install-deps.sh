#!/usr/bin/env bash
# Installs what cordon needs to build, test and lint on Debian 12. Idempotent: when every
# package is already installed it touches nothing (no apt-get update, no network).
# Runs as root, or through sudo when not root. Needs no terminal and no stdin.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  lld  # the dev and ci presets link with it (cmake/linker.cmake); without it, GNU ld
  clang-19  # the ci preset compiles with it (CMakePresets.json), against libstdc++
  nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
  libseccomp-dev libsqlite3-dev libsystemd-dev dbus-daemon
  clang-format-19 clang-tidy-19
  python3 python3-jsonschema bubblewrap runc podman
  curl  # a client the allow-list's description names, run inside the sandbox by its tests
  runsc  # gVisor, the container backend's user-space-kernel runtime (`--runtime runsc`)
  qt6-base-dev xvfb xauth
  libcpp-httplib-dev libboost-dev libssl-dev debootstrap
)
# --fuzz: also clang-19's libFuzzer runtime, for the fuzz preset (scripts/fuzz.sh, the full
# tier); CI runs the fuzz targets without it (tests/fuzz/standalone_main.cpp).
# --guest: also what tests/guest/run.sh builds and boots its Debian guest with (the full tier).
for option in "$@"; do
  case "$option" in
    --fuzz) packages+=(libclang-rt-19-dev) ;;
    --guest) packages+=(qemu-system-x86 e2fsprogs) ;;
    *)
      echo "usage: scripts/install-deps.sh [--fuzz] [--guest]" >&2
      exit 2
      ;;
  esac
done
# Node.js and npm run the MCP SDK test (tests/mcp_node). Debian's packages only where no node
# is installed: a newer one from elsewhere (e.g. NodeSource's) stays.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for package in "${packages[@]}"; do
  # "install ok installed" is dpkg's state for a fully installed package; anything else
  # (absent, half-configured, removed with config left) needs installing.
  if [[ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)" != "install ok installed" ]]; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if [[ "$(id -u)" -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo -n)  # -n: fail instead of prompting, there may be no terminal
else
  echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
