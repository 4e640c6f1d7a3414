#!/usr/bin/env bash
# engine.sh: the storage engine against this machine's floor, in one run on one directory. Each
# engine row (build/release/bench/engine_bench, bench/engine_bench.cc: an Engine on io::PosixEnv()
# with sync=true, so every call returns only when durable) comes right after the fio floor it is
# compared with, then a TARGET line (docs/targets.md) says met or missed.
#
#   floor fsync        fio, fresh file growing by 4 KiB O_DSYNC writes (--rw=write --bs=4k
#                      --sync=dsync --fallocate=none, buffered, iodepth 1): each write returns
#                      when its data and the new size are durable, as pwrite + fdatasync would;
#                      fio's completion latency includes the sync. The file grows like a WAL.
#   floor fsync preallocated   the same with fio's default layout (posix_fallocate first: each
#                      write converts an unwritten extent), for reference; the target uses the above
#   engine synced 4k write / engine 1 synced writer
#                      1 thread: DiskFs Write of 4 KiB at successive offsets of one file
#   engine 8 synced writers (+ latency, + WAL syncs per write: exact, from Engine::commit_stats())
#   floor seq write    fio --rw=write --bs=1M --end_fsync=1 (buffered) on a fresh file; MiB/s
#                      including the fsync; and device bytes per byte written
#   engine seq write   1 MiB Writes, 64 in flight (64 threads), then the engine's sync; MiB/s and
#                      device bytes per byte (sectors-written delta of /sys/block/<disk>/stat for the
#                      disk holding --dir: anything else writing to that disk meanwhile counts too)
#   floor direct read  fio --rw=randread --bs=4k --direct=1, iodepth 1, on the floor's seq file;
#                      both read rows stop after --runtime or a quarter of the file's blocks
#   engine 4k read     random 4 KiB Reads of the engine's seq file, each block once, metadata warm
#                      (one Read per MiB chunk first) and data cold (POSIX_FADV_DONTNEED on the
#                      segment files; the engine reads segments through the page cache)
#   engine creates, engine creates 16 threads, engine stats, engine readdir 100k (+ entries/s)
#   history rows (engine_bench --rows history, on disks of their own; no fio floor):
#     engine checkpoint 1k files / 100k files, engine branch 1k files / 100k files
#                      Checkpoint, and CreateBranch from one checkpoint, on a disk of 1,000 /
#                      100,000 files (Mknod + 4 KiB Write each); each a synced commit, so a '#'
#                      line gives the synced 4 KiB Write timed between the samples
#     engine read depth 1 / 10 / 50 (+ changed at every level)
#                      4 KiB Read, page cache warm, through the deepest branch of a chain of
#                      branches of a file written on the root (and one setattr'd on every level)
#     engine head read / engine readdir 0 / 100 / 1000 checkpoints
#                      4 KiB Read and a whole ReadDir of a 1,000-entry directory at the head after
#                      that many checkpoints (a write, a create and an unlink between each two)
#
# Rows print as "ROW: p50 X ms, p95 Y ms", "ROW: N MiB/s", "ROW: N ops/s" or, for a ratio,
# "ROW: X"; '#' lines are details. Percentiles are nearest-rank.
#
# Usage: bench/engine.sh [--runtime S] [--quick] [--dir DIR] [--rows LIST]
#   --runtime S  seconds per timed row, fio and engine (default 10)
#   --quick      3 s per row and a 256 MiB seq file instead of 1 GiB (about a minute in all)
#   --dir DIR    directory on the disk to measure (default /var/tmp; not tmpfs); a fresh
#                subdirectory is created and removed, on failure and Ctrl-C too
#                (ARCHIL_BENCH_KEEP=1 in the environment keeps it). Needs ~3 GiB free.
#   --rows LIST  comma-separated groups to run (default write,seq,meta,history): write (floor
#                fsync, synced writes, 8 writers), seq (seq write and 4k read with their floors),
#                meta, history (about a minute; --runtime caps each of its rows' sampling)
# Builds engine_bench in build/release if it is missing (cmake --preset release first).
set -euo pipefail

RUNTIME=10
SEQ_MIB=1024
DIR=/var/tmp
ROWS=write,seq,meta,history
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runtime) RUNTIME="$2"; shift 2 ;;
    --quick) RUNTIME=3; SEQ_MIB=256; shift ;;
    --dir) DIR="$2"; shift 2 ;;
    --rows) ROWS="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "engine.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

TOOLS=awk
[[ ,$ROWS, == *,write,* || ,$ROWS, == *,seq,* ]] && TOOLS="fio jq awk"
for tool in $TOOLS; do
  if ! command -v "$tool" > /dev/null; then
    echo "engine.sh: '$tool' is not installed; it is required (Debian: apt-get install $tool)" >&2
    exit 1
  fi
done
[[ -d "$DIR" ]] || { echo "engine.sh: --dir $DIR is not a directory" >&2; exit 1; }
for g in ${ROWS//,/ }; do
  case "$g" in write|seq|meta|history) ;; *) echo "engine.sh: unknown row group '$g' (try --help)" >&2; exit 2 ;; esac
done
want() { [[ ,$ROWS, == *,$1,* ]]; }
[[ $RUNTIME =~ ^[0-9]+$ && $RUNTIME -gt 0 ]] || { echo "engine.sh: --runtime needs whole seconds" >&2; exit 2; }

REPO=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$REPO/build/release/bench/engine_bench
if [[ ! -x $BENCH ]]; then
  [[ -d $REPO/build/release ]] || { echo "engine.sh: no build/release (run cmake --preset release)" >&2; exit 1; }
  echo "engine.sh: building engine_bench" >&2
  cmake --build "$REPO/build/release" --target engine_bench > /dev/null
fi

W=$(mktemp -d "$DIR/engine-bench.XXXXXX")
log() { echo "engine.sh: $*" >&2; }
cleanup() {  # engine_bench runs in the foreground and mounts nothing: only $W to remove
  if [[ ${ARCHIL_BENCH_KEEP:-0} == 1 ]]; then
    log "ARCHIL_BENCH_KEEP=1: keeping $W"
  else
    rm -rf --one-file-system "$W"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The disk holding $W (its parent disk if $W is on a partition), for sectors written.
DEVSTAT=
if mm=$(stat -c '%Hd:%Ld' "$W" 2> /dev/null) && [[ -e /sys/dev/block/$mm ]]; then
  d=$(readlink -f "/sys/dev/block/$mm")
  [[ -e $d/partition ]] && d=$(dirname "$d")
  [[ -r $d/stat ]] && DEVSTAT=$d/stat
fi
sectors() { awk '{ print $7 }' "$DEVSTAT"; }

fiolat() {  # section: "p50 X ms, p95 Y ms" of fio's completion latency
  jq -r ".jobs[0].$1.clat_ns.percentile | \"p50 \(.[\"50.000000\"] / 1e3 | round / 1e3) ms, p95 \(.[\"95.000000\"] / 1e3 | round / 1e3) ms\""
}
p50() { sed -n 's/.*p50 \([0-9.]*\) ms.*/\1/p'; }
num() { sed -n 's/^[^:]*: \([0-9.]*\).*/\1/p'; }
target() {  # name, awk condition on a and b, description
  local verdict
  verdict=$(awk -v a="$2" -v b="$3" "BEGIN { print ($4) ? \"met\" : \"missed\" }")
  echo "TARGET $1 ($5): $verdict"
}
engine() { "$BENCH" --dir "$(mktemp -d "$W/e.XXXX")" --runtime "$RUNTIME" --seq-mib "$SEQ_MIB" "$@"; }

echo "# engine bench on $(hostname), $(date -u +%FT%TZ), kernel $(uname -r), $(nproc) CPUs, revision $(git -C "$REPO" describe --always --dirty 2> /dev/null || echo unknown)"
echo "# dir $DIR ($(findmnt -n -o FSTYPE,SOURCE --target "$DIR" | tr -s ' ' | sed 's/ / on /')), ${RUNTIME} s per row, seq file ${SEQ_MIB} MiB, load $(cut -d' ' -f1-3 /proc/loadavg)"

devstat() { [[ -n $DEVSTAT ]] && awk '{ print $5, $7, $16 }' "$DEVSTAT" || echo 0 0 0; }
perop() {  # before, after ("writes sectors flushes"), ops: the device's work per op
  awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { split(a, x); split(b, y);
    printf "%.2f write requests, %.1f KiB, %.2f flushes", (y[1] - x[1]) / n, (y[2] - x[2]) / 2 / n, (y[3] - x[3]) / n }'
}
fsync_floor() {  # row name, extra fio arguments
  local d0 d1 json
  d0=$(devstat)
  json=$(fio --name=t --filename="$W/fsync" --size=1G --rw=write --bs=4k --iodepth=1 --sync=dsync \
    "${@:2}" --time_based --runtime="$RUNTIME" --output-format=json)
  d1=$(devstat)
  rm -f "$W/fsync"
  echo "# $1, device per write: $(perop "$d0" "$d1" "$(jq .jobs[0].write.total_ios <<< "$json")")"
  echo "$1: $(fiolat write <<< "$json")"
}
if want write; then
  log "floor fsync: ${RUNTIME} s"
  FSYNC_OUT=$(fsync_floor "floor fsync" --fallocate=none)
  echo "$FSYNC_OUT"
  FSYNC=$(grep '^floor fsync:' <<< "$FSYNC_OUT")
  log "floor fsync preallocated: ${RUNTIME} s"
  fsync_floor "floor fsync preallocated"
  log "engine synced 4k write: ${RUNTIME} s"
  OUT=$(engine --rows write1)
  echo "$OUT"
  target "engine synced 4k write" "$(p50 <<< "$OUT" | head -1)" "$(p50 <<< "$FSYNC")" \
    "a <= b + 0.030" "p50 <= floor fsync p50 + 30 us"
  ONE=$(grep '^engine 1 synced writer:' <<< "$OUT" | num)

  log "engine 8 synced writers: ${RUNTIME} s"
  OUT=$(engine --rows writers)
  echo "$OUT"
  target "engine 8 synced writers" "$(grep '^engine 8 synced writers:' <<< "$OUT" | num)" "$ONE" \
    "a >= 2 * b" ">= 2x engine 1 synced writer"
  target "engine 8 synced writers WAL syncs per write" \
    "$(grep 'WAL syncs per write:' <<< "$OUT" | num)" 0 "a <= 0.3" "<= 0.3"
fi

if want seq; then
  log "floor seq write: ${SEQ_MIB} MiB"
  S0=$([[ -n $DEVSTAT ]] && sectors || echo 0)
  SEQ=$(fio --name=seq --filename="$W/seq" --size="${SEQ_MIB}M" --rw=write --bs=1M --end_fsync=1 \
    --output-format=json | jq -r '.jobs[0].write.bw_bytes / 1048576 | floor')
  S1=$([[ -n $DEVSTAT ]] && sectors || echo 0)
  log "floor direct read: ${RUNTIME} s"
  READ=$(fio --name=t --filename="$W/seq" --size="${SEQ_MIB}M" --rw=randread --bs=4k --iodepth=1 \
    --direct=1 --runtime="$RUNTIME" --number_ios=$((SEQ_MIB * 64)) --output-format=json | fiolat read)
  rm -f "$W/seq"
  log "engine seq write and 4k read"
  OUT=$(engine --rows seq,read)

  echo "floor seq write: $SEQ MiB/s"
  if [[ -n $DEVSTAT ]]; then
    echo "floor seq write device bytes per byte: $(awk -v s=$((S1 - S0)) -v m="$SEQ_MIB" 'BEGIN { printf "%.3f", s * 512 / (m * 1048576) }')"
fi
grep -v '^engine 4k read' <<< "$OUT" || true
ESEQ=$(grep '^engine seq write:' <<< "$OUT" | num)
target "engine seq write" "$ESEQ" "$SEQ" "a >= 0.7 * b" ">= 70% of floor seq write"
if grep -q '^engine seq write device bytes per byte:' <<< "$OUT"; then
  target "engine seq write device bytes per byte" \
    "$(grep '^engine seq write device bytes per byte:' <<< "$OUT" | num)" 0 "a <= 1.05" "<= 1.05"
fi
echo "floor direct read: $READ"
grep '^engine 4k read' <<< "$OUT"
target "engine 4k read" "$(grep '^engine 4k read:' <<< "$OUT" | p50)" "$(p50 <<< "$READ")" \
  "a <= b + 0.020" "p50 <= floor direct read p50 + 20 us"
fi

if want meta; then
  log "engine metadata rows"
  engine --rows meta
fi

if want history; then
  log "engine history rows (checkpoints, branches, reads through branches)"
  OUT=$(engine --rows history)
  echo "$OUT"
  row() { grep "^$1:" <<< "$OUT" | p50; }
  for what in checkpoint branch; do
    target "engine $what 1k files" "$(row "engine $what 1k files")" 0 "a <= 1" "p50 <= 1 ms"
    target "engine $what 100k files" "$(row "engine $what 100k files")" 0 "a <= 1" "p50 <= 1 ms"
    target "engine $what 100k files vs 1k" "$(row "engine $what 100k files")" \
      "$(row "engine $what 1k files")" "a <= 1.2 * b" "p50 <= 1.2x engine $what 1k files p50"
  done
  target "engine read depth 50" "$(row "engine read depth 50")" "$(row "engine read depth 1")" \
    "a <= 2 * b" "p50 <= 2x engine read depth 1 p50"
  for n in 100 1000; do
    target "engine head read $n checkpoints" "$(row "engine head read $n checkpoints")" \
      "$(row "engine head read 0 checkpoints")" "a <= 1.2 * b" "p50 <= 1.2x the 0 checkpoints row"
    target "engine readdir $n checkpoints" "$(row "engine readdir $n checkpoints")" \
      "$(row "engine readdir 0 checkpoints")" "a <= 1.2 * b" "p50 <= 1.2x the 0 checkpoints row"
  done
fi
