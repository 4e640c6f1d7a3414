#!/usr/bin/env bash
# Installs what the project needs on a fresh Debian 12 machine (apt and npm packages), then
# builds. Idempotent: when everything is there it only runs the (incremental) build.
#
#   scripts/setup.sh [--preset P] [--no-build]     everything: tests, sanitizers, fuzzers, benches
#   scripts/setup.sh --binaries                    only what the three binaries need to build and
#                                                  run; builds archil, archil-server, archil-mount
#                                                  (the dist preset, in build/dist) and installs
#                                                  them (cmake --install)
#
# P: release (default), dist, debug, asan, tsan, clang-tsa or fuzz. ARCHIL_PREFIX (default
# /usr/local): where --binaries installs (bin/archil, bin/archil-server, bin/archil-mount, and
# /sbin/mount.archil linked to archil-mount).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the checkout and ignores the build directory's own path, so
# every clone (CI's included) shares one cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"

preset=release
build=1
binaries=0
while [ $# -gt 0 ]; do
  case "$1" in
    --preset) preset="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --binaries) binaries=1; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

# What the three binaries need to build (configure finds the test libraries too: they are small)
# and to run (fuse3's fusermount3, jq and curl for the quickstart).
BUILD_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libssl-dev libsqlite3-dev librocksdb-dev libfuse3-dev fuse3 libasio-dev libcpp-httplib-dev
  libboost-dev  # Boost.Beast/Asio, header-only: the API server (docs/adr/0016-event-driven-api-server.md)
  nlohmann-json3-dev libprotobuf-dev protobuf-compiler libcli11-dev libspdlog-dev
  libcurl4-openssl-dev libpugixml-dev
  libre2-dev  # grep's patterns: linear-time matching (src/search/grep.h)
  libgtest-dev libgmock-dev libbenchmark-dev
  curl jq openssl
)
# The rest, for the tests and benchmarks: clang for the thread-safety analysis, clang-tidy
# (scripts/lint.sh) and libFuzzer (scripts/fuzz.sh).
TEST_PACKAGES=(
  clang clang-tidy clang-format libclang-rt-14-dev
  fio hyperfine
  strace valgrind  # measurements.md §9: syscalls and instructions per engine write
  iproute2         # tests/netns_tls_test.cc: a mount from another network namespace
  systemd          # tests/systemd_units_test.sh: systemd-analyze verify and the fstab generator
  time             # bench/control_plane.sh: page faults of one `archil version` (/usr/bin/time)
  rclone           # bench/mount.sh: the peer rows (rclone's VFS mount over s3rver)
)
APT_PACKAGES=("${BUILD_PACKAGES[@]}")
[ "$binaries" -eq 1 ] || APT_PACKAGES+=("${TEST_PACKAGES[@]}")

SUDO=
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "$binaries" -eq 0 ] && { ! command -v node >/dev/null || ! command -v npm >/dev/null; }; then
  missing+=(nodejs npm)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  apt_start=$SECONDS
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup: packages installed in $((SECONDS - apt_start)) s"
fi

# npm packages used by tests (package.json); reinstalled only when the lock file changed.
if [ "$binaries" -eq 0 ] && { [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; }; then
  echo "setup: installing npm packages"
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
  touch node_modules
fi

if [ "$binaries" -eq 1 ]; then
  # The three binaries only, in the dist preset: the release build's -O2 code without debug
  # information, each library compiled as a few unity sources (about 3 minutes cold on 2 cores
  # instead of 9; docs/adr/0021-the-dist-build.md). Installed where the shell and mount(8) find
  # them.
  build_start=$SECONDS
  cmake --preset dist >/dev/null
  cmake --build --preset dist
  echo "setup: the three binaries built in $((SECONDS - build_start)) s"
  prefix=${ARCHIL_PREFIX:-/usr/local}
  $SUDO cmake --install build/dist --prefix "$prefix" >/dev/null
  # mount -t archil and fstab lines run /sbin/mount.archil.
  $SUDO ln -sf "$prefix/bin/archil-mount" /sbin/mount.archil
  # The server's unit went to $prefix/lib/systemd/system (docs/operations.md).
  if [ -d /run/systemd/system ]; then $SUDO systemctl daemon-reload || true; fi
  echo "setup: installed archil, archil-server and archil-mount in $prefix/bin," \
    "archil-server.service in $prefix/lib/systemd/system"
elif [ "$build" -eq 1 ]; then
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
fi
