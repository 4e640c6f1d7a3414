#!/usr/bin/env bash
# Runs N simulated power losses against the storage engine (src/engine/engine_crash_test.cc):
# random operations mirrored on the reference model, the power cut at a random file operation,
# restart, compare. Prints each failing round's seed (replay: ARCHIL_CRASH_SEED=S) and ends with
# the line "N crashes, M lost".
#
#   scripts/crashtest.sh [N] [--first-seed S] [--seconds T]    default N=1000, no time limit
#   scripts/crashtest.sh 1000000 --seconds 3600               an hour's worth (progress every 10k)
set -euo pipefail
cd "$(dirname "$0")/.."
n=1000
first=1000
seconds=0
while [ $# -gt 0 ]; do
  case "$1" in
    --first-seed) first="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) n="$1"; shift ;;
  esac
done
bin=build/release/src/engine/engine_crash_test
[ -x "$bin" ] || { cmake --preset release >/dev/null && cmake --build --preset release --target engine_crash_test; }
ARCHIL_CRASH_ROUNDS="$n" ARCHIL_CRASH_FIRST_SEED="$first" ARCHIL_CRASH_SECONDS="$seconds" "$bin" --gtest_brief=1 | grep -v '^\[' | grep -v '^Running main' | grep -v '^$'
