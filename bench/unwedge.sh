#!/usr/bin/env bash
# unwedge.sh: how long each escape from an absent server or a stopped daemon takes, against the
# same operation when nothing is wrong, in one run (docs/measurements.md §16). As root (FUSE).
#
#   bench/unwedge.sh [--runs N] [--build DIR]
#
# Runs the measuring tests of tests/unwedge_e2e_test.cc N times (default 10) and prints one row per
# measure they report, floors as rows of their own:
#
#   floor: archil unmount, daemon healthy      plain unmount of a mount whose daemon answers
#   archil unmount -f, daemon stopped          the forced unmount of a SIGSTOPped daemon's mount
#   floor: df, server healthy                  statvfs of a mount whose server answers
#   df, server stopped                         statvfs with the server SIGSTOPped (5 s budget, by design)
#   floor: kill -9 to death, idle process      SIGKILL to reaped, a process in pause()
#   kill -9 to death, reader waiting ...       the same, a stat waiting on a stopped server
#   owner's death to daemon exit, mounted|mounting
#                                              ARCHIL_OWNER_PID's process SIGKILLed to daemon gone
#   EIO from a --timeout 2 mount, server gone  the soft mount's bound (2 s, by design)
#
# Each row is "ROW: p50 X ms, p95 Y ms" over the runs (nearest rank). The tests' own bounds still
# apply: a run whose test fails is reported and counts against the exit status.
set -euo pipefail
BENCH=unwedge.sh
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

runs=10
build=$BENCH_REPO/build/release
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) log "unknown flag $1"; exit 2 ;;
  esac
done
[[ $(id -u) == 0 ]] || { log "run as root: the tests mount with FUSE"; exit 1; }
bin=$build/tests/unwedge_e2e_test
[[ -x $bin ]] || { log "no $bin: cmake --build --preset release"; exit 1; }

export ARCHIL_TEST_ROOT=${ARCHIL_TEST_ROOT:-/tmp/archil-tests}/bench-unwedge-$$
out=$(mktemp)
trap 'ARCHIL_TEST_ROOT=$ARCHIL_TEST_ROOT "$BENCH_REPO/scripts/sweep.sh" > /dev/null; rm -rf "$ARCHIL_TEST_ROOT" "$out"' EXIT

filter='*ForcedUnmountOfAStoppedDaemon*:*AStoppedServerLeavesDf*:*ADaemonEndsWithItsOwner*:*ASoftMount*'
echo "# unwedge on $(hostname), $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $runs runs"
failed=0
# A run is bounded: its tests' waits all are, and a run cut at 10 minutes counts as failed.
timeout -k 5 600 "$bin" --gtest_filter="$filter" --gtest_repeat="$runs" > "$out" 2>&1 || failed=1
if ((failed)); then
  grep -E '^\[  FAILED|Failure' "$out" | head -10 >&2
  log "a test failed (full output kept: ARCHIL_BENCH_KEEP=1)"
fi
[[ ${ARCHIL_BENCH_KEEP:-0} == 1 ]] && cp "$out" "/tmp/unwedge-bench-$$.log" && log "output: /tmp/unwedge-bench-$$.log"

# "unwedge: ROW: N ms" lines -> one row per ROW, in the order first seen.
mapfile -t rows < <(sed -n 's/^unwedge: \(.*\): -\{0,1\}[0-9.]* ms$/\1/p' "$out" | awk '!seen[$0]++')
for row in "${rows[@]}"; do
  printf '%s: %s\n' "$row" "$(grep -F "unwedge: $row: " "$out" | sed 's/.*: \(-\{0,1\}[0-9.]*\) ms$/\1/' | stats)"
done
exit "$failed"
