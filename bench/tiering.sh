#!/usr/bin/env bash
# tiering.sh: the object-store path against an S3 store with a realistic first byte and bandwidth,
# in one run: S3Store (src/store/s3_store.h) on the strict fake (tests/s3_fake, archil-s3-fake)
# set to --latency-ms of first-byte latency and --mbps of bandwidth shared by all connections.
#
#   floor, empty request     HEAD of a missing key: the fake's first-byte latency plus loopback,
#                            the least any request costs (bench/store_bench.cc)
#   upload ... in flight     PutFile of --segments sealed-segment-sized files (multipart, 8 MiB
#                            parts, 4 in flight per file), 1 and 2 files at a time; MiB/s and the
#                            share of the fake's bandwidth (TARGET: >= 80 %)
#   requests per GiB         every request sent per GiB uploaded (creates, parts, completes)
#   cold 4 KiB read          ranged GET of 4 KiB at random offsets (TARGET: p50 <= first-byte
#                            latency + 2 ms)
#   floor, the fake unthrottled   the same upload with no latency and no limit: what client and
#                            fake manage together on this machine's cores
# The rows of the tier itself (the seed's O_SYNC and cache-miss rows while uploads run) arrive with
# the tier (docs/tiering.md).
#
# Usage: bench/tiering.sh [--latency-ms N] [--mbps N] [--segments N] [--dir DIR]
#   defaults: 20 ms, 200 MB/s, 16 segments of 64 MiB (1 GiB; the fake keeps them in memory)
#   --dir: where the segment files go (default /var/tmp), in a fresh subdirectory removed on exit,
#   on failure and Ctrl-C too (ARCHIL_BENCH_KEEP=1 in the environment keeps it)
# Builds store_bench and archil-s3-fake in build/release if they are missing.
set -euo pipefail

LATENCY=20
MBPS=200
SEGMENTS=16
DIR=/var/tmp
while [[ $# -gt 0 ]]; do
  case "$1" in
    --latency-ms) LATENCY="$2"; shift 2 ;;
    --mbps) MBPS="$2"; shift 2 ;;
    --segments) SEGMENTS="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "tiering.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
for n in "$LATENCY" "$MBPS" "$SEGMENTS"; do
  [[ $n =~ ^[0-9]+$ ]] || { echo "tiering.sh: numbers must be whole" >&2; exit 2; }
done

BENCH=tiering.sh
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
REPO=$BENCH_REPO
B=$REPO/build/release
STORE_BENCH=$B/bench/store_bench
FAKE=$B/tests/s3_fake/archil-s3-fake
if [[ ! -x $STORE_BENCH || ! -x $FAKE ]]; then
  [[ -d $B ]] || { echo "tiering.sh: no build/release (run cmake --preset release)" >&2; exit 1; }
  echo "tiering.sh: building store_bench and archil-s3-fake" >&2
  cmake --build "$B" --target store_bench archil-s3-fake > /dev/null
fi

W=$(mktemp -d "$DIR/tiering-bench.XXXXXX")
FAKE_PID=
cleanup() { set +e; stop "$FAKE_PID"; remove_work_dir "$W"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

stop_fake() { stop "$FAKE_PID"; FAKE_PID=; }

# The ceiling of this machine: the fake with no latency and no bandwidth limit, same client. The
# fake keeps objects in memory and hashes every body twice (SigV4, MD5), on the same cores as the
# client: a --mbps above this floor measures the machine, not the client.
start_fake
ceiling=$("$STORE_BENCH" --endpoint "$EP" --dir "$W" --segments "$SEGMENTS" --in-flight 2 --reads 1 |
  sed -n 's/^upload.*: \([0-9.]*\) MB\/s$/\1/p')
stop_fake
start_fake --first-byte-latency-ms "$LATENCY" --bandwidth-mbps "$MBPS"

echo "# tiering bench on $(hostname), $(date -u +%FT%TZ), kernel $(uname -r), $(nproc) CPUs, revision $(git -C "$REPO" describe --always --dirty 2> /dev/null || echo unknown)"
echo "# store: archil-s3-fake at $EP, first byte ${LATENCY} ms, ${MBPS} MB/s shared; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "floor, the fake unthrottled on this machine (no latency, no bandwidth limit), 2 in flight: $ceiling MB/s"
target() {  # name, a, b, awk condition, description
  local verdict
  verdict=$(awk -v a="$2" -v b="$3" "BEGIN { print ($4) ? \"met\" : \"missed\" }")
  echo "TARGET $1 ($5): $verdict"
}
for f in 1 2; do
  out=$("$STORE_BENCH" --endpoint "$EP" --dir "$W" --segments "$SEGMENTS" --in-flight "$f" --reads 200)
  if [[ $f == 1 ]]; then
    echo "$out" | grep -E '^(# store|floor)'
  fi
  echo "$out" | grep -E '^(# [0-9]+ segments|upload|requests)' | grep -v 'MB/s$'
  mbs=$(echo "$out" | sed -n 's/^upload.*: \([0-9.]*\) MB\/s$/\1/p')
  share=$(awk -v a="$mbs" -v b="$MBPS" 'BEGIN { printf "%.0f", 100 * a / b }')
  echo "upload share of the store's bandwidth, $f in flight: $share %"
  [[ $f == 2 ]] && target upload-share "$share" 80 'a >= b' "$share % of ${MBPS} MB/s, target >= 80 %"
  if [[ $f == 1 ]]; then
    echo "$out" | grep -E '^cold'
    p50=$(echo "$out" | sed -n 's/^cold.*p50 \([0-9.]*\) ms.*/\1/p')
    target cold-read "$p50" "$((LATENCY + 2))" 'a <= b' "p50 $p50 ms, target <= $LATENCY + 2 ms"
  fi
done
