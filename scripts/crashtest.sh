#!/usr/bin/env bash
# Crash tests run by hand, many more rounds than CI runs. Each ends with the line
# "N crashes, M lost".
#
# Engine (default): N simulated power losses against the storage engine
# (src/engine/engine_crash_test.cc): random operations mirrored on the reference model, the power
# cut at a random file operation, restart, compare. Prints each failing round's seed (replay:
# ARCHIL_CRASH_SEED=S).
#
# Client (--client): N `kill -9`s of a mount's daemon (tests/mount_e2e_test.cc,
# MountTest.AKilledDaemonLeavesAPrefixOfItsOperations): random creates, appends, attribute
# changes, renames, unlinks and fsyncs on a real FUSE mount of a real server, the daemon killed
# at a random moment, remounted, and the disk compared with every prefix of the operations that
# holds what had to be there. Stops at the first round that finds none (its seed is printed:
# replay with ARCHIL_TEST_SEED=S). Needs root and /dev/fuse.
#
#   scripts/crashtest.sh [N] [--first-seed S] [--seconds T]    default N=1000, no time limit
#   scripts/crashtest.sh 1000000 --seconds 3600               an hour's worth (progress every 10k)
#   scripts/crashtest.sh --client [N] [--seed S]               default N=200
set -euo pipefail
cd "$(dirname "$0")/.."
n=''
first=1000
seconds=0
client=0
seed=''
while [ $# -gt 0 ]; do
  case "$1" in
    --first-seed) first="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --client) client=1; shift ;;
    --seed) seed="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) n="$1"; shift ;;
  esac
done
if [ "$client" = 1 ]; then
  n=${n:-200}
  bin=build/release/tests/mount_e2e_test
  [ -x "$bin" ] || { cmake --preset release >/dev/null && cmake --build --preset release --target mount_e2e_test archil archil-server archil-mount; }
  export ARCHIL_TEST_ROOT="${ARCHIL_TEST_ROOT:-/tmp/archil-tests}" ARCHIL_REQUIRE_FUSE=1
  out=$(mktemp)
  trap 'rm -f "$out"' EXIT
  rc=0
  ARCHIL_CLIENT_CRASH_ROUNDS="$n" ARCHIL_TEST_SEED="$seed" timeout -k 10 $((60 + n * 5)) "$bin" \
    --gtest_filter=MountTest.AKilledDaemonLeavesAPrefixOfItsOperations > "$out" 2>&1 || rc=$?
  grep -E '^seed=|^round [0-9]+:|answered by the mount' "$out" | grep -v '^round [0-9]*: the disk holds the first' || true
  if [ "$rc" = 0 ] && grep -q '^[0-9]* crashes, 0 lost' "$out"; then
    grep '^[0-9]* crashes, 0 lost' "$out"
  else
    grep -E 'Failure|failed|holds no prefix|on the disk:|after every|after those|^op ' "$out" | head -20 || true
    failed_round=$(sed -n 's/.*round \([0-9]*\): the disk holds no prefix.*/\1/p' "$out" | head -1)
    if [ -n "$failed_round" ]; then
      echo "$((failed_round + 1)) crashes, 1 lost (round $failed_round)"
    else
      echo "the crash test failed (exit $rc) before any round lost anything"
    fi
    exit 1
  fi
  exit 0
fi
n=${n:-1000}
bin=build/release/src/engine/engine_crash_test
[ -x "$bin" ] || { cmake --preset release >/dev/null && cmake --build --preset release --target engine_crash_test; }
ARCHIL_CRASH_ROUNDS="$n" ARCHIL_CRASH_FIRST_SEED="$first" ARCHIL_CRASH_SECONDS="$seconds" "$bin" --gtest_brief=1 | grep -v '^\[' | grep -v '^Running main' | grep -v '^$'
