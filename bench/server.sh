#!/usr/bin/env bash
# server.sh: the disk server and its client library against this machine's floors, in one run
# (bench/server_bench.cc says what each row measures). Run with nothing else busy: loopback
# round trips on this 2-vCPU VM move with the load of the other vCPU.
#
# Usage: bench/server.sh [--runtime S] [--dir DIR]
#   --runtime S  seconds per row (default 5)
#   --dir DIR    where the engine lives (default /var/tmp; not tmpfs: writes are synced)
# Builds server_bench in build/release if it is missing (cmake --preset release first).
set -euo pipefail
cd "$(dirname "$0")/.."
ARGS=("$@")
BIN=build/release/bench/server_bench
if [[ ! -x "$BIN" ]]; then
  cmake --build build/release --target server_bench >&2
fi
exec "$BIN" "${ARGS[@]}"
