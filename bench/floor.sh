#!/usr/bin/env bash
# floor.sh: this machine's floor for the latency rows of Archil's published latency script
# (https://docs.archil.com/reference/limits.md#latency; see docs/targets.md), in one run, measured
# with our own code using the script's fio lines and percentile rule.
#
#   O_SYNC write ms     the script's fio O_SYNC line, verbatim, on a fresh file on the local disk
#   cache-miss read ms  the script's fio randread line on a file filled the way the script fills it
#                       (fio --rw=write --bs=1M --end_fsync=1: real blocks, not holes)
#   loopback rtt ms     4 KiB TCP ping-pong on loopback (bench/spikes/tcp_pingpong.cc)
#   fuse read ms        the same randread line through libfuse's passthrough_ll (cache=never,
#                       i.e. direct_io, libfuse's multi-threaded loop) over the same file
#   fuse overhead ms    fuse read minus cache-miss read (difference of the p50s and of the p95s)
#
# There is no FUSE write row: passthrough_ll passes O_DIRECT to its backing file with unaligned
# buffers, so the script's --direct=1 write fails with EINVAL through it.
#
# Usage: bench/floor.sh [--runtime S] [--full] [--dir DIR]
#   --runtime S  fio runtime per row (default 10; the latency script uses 30)
#   --full       the latency script's 30 s per row
#   --dir DIR    directory on the disk to measure (default /var/tmp); a fresh subdirectory is
#                created and removed, on failure and Ctrl-C too (ARCHIL_BENCH_KEEP=1 in the
#                environment keeps it). Needs ~5 GiB free. Run as root for FUSE.
set -euo pipefail

RUNTIME=10
DIR=/var/tmp
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runtime) RUNTIME="$2"; shift 2 ;;
    --full) RUNTIME=30; shift ;;
    --dir) DIR="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "floor.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

BENCH=floor.sh
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
need_tools fio jq
[[ -d "$DIR" ]] || { echo "floor.sh: --dir $DIR is not a directory" >&2; exit 1; }

spike tcp_pingpong
spike passthrough_ll || true  # optional: libfuse examples

W=$(realpath "$(mktemp -d "$DIR/floor.XXXXXX")")  # canonical, as the mount table has it
MNT=$W/mnt
FUSE_PID=
cleanup() {
  set +e
  # By the mount table, and bounded: a hung passthrough_ll would block mountpoint's stat and umount.
  if mounted "$MNT"; then
    timeout -k 1 5 fusermount3 -u "$MNT" 2> /dev/null || timeout -k 1 5 umount -l "$MNT"
  fi
  stop "$FUSE_PID"
  remove_work_dir "$W"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The latency script's fio line and its percentile extraction (p50 and p95 of clat, in ms).
latency_fio "$RUNTIME"

declare -A P50 P95
set_row() { read -r "P50[$1]" "P95[$1]" <<< "$2"; }

log "O_SYNC write: fresh file, ${RUNTIME} s"
set_row write "$($FIO --filename="$W/w" --size=1G --rw=randwrite --sync=1 | fiostat write)"
rm -f "$W/w"

log "filling a 4 GiB file the latency script's way"
fio --name=fill --filename="$W/r" --size=4G --rw=write --bs=1M --end_fsync=1 > /dev/null
log "cache-miss read: ${RUNTIME} s"
set_row read "$($FIO --filename="$W/r" --size=4G --rw=randread | fiostat read)"

log "loopback rtt"
set_row rtt "$("$SPIKES/tcp_pingpong" --floor)"

if [[ -x $SPIKES/passthrough_ll && -c /dev/fuse ]]; then
  log "fuse read through passthrough_ll: ${RUNTIME} s"
  mkdir "$MNT"
  "$SPIKES/passthrough_ll" -f -o source="$W",cache=never "$MNT" 2> "$W/passthrough.log" &
  FUSE_PID=$!
  wait_alive "$FUSE_PID" 100 mounted "$MNT" || true
  if mounted "$MNT" && timeout -k 1 5 mountpoint -q "$MNT"; then
    set_row fuse "$($FIO --filename="$MNT/r" --size=4G --rw=randread | fiostat read)"
    P50[fuse_overhead]=$(awk -v a="${P50[fuse]}" -v b="${P50[read]}" 'BEGIN { print a - b }')
    P95[fuse_overhead]=$(awk -v a="${P95[fuse]}" -v b="${P95[read]}" 'BEGIN { print a - b }')
  else
    log "passthrough_ll did not mount (waited up to 5 s): $(cat "$W/passthrough.log")"
  fi
else
  log "no passthrough_ll binary or no /dev/fuse: FUSE rows skipped"
fi

echo "# floor on $(hostname), $(date -u +%FT%TZ), kernel $(uname -r), $(nproc) CPUs"
echo "# dir $DIR ($(dir_fs "$DIR")), fio runtime ${RUNTIME} s, load $(cut -d' ' -f1-3 /proc/loadavg)"
row() {  # name key
  if [[ -n ${P50[$2]:-} ]]; then
    printf '%-20s %8.3f %8.3f\n' "$1" "${P50[$2]}" "${P95[$2]}"
  else
    printf '%-20s %8s %8s\n' "$1" n/a n/a
  fi
}
printf '%-20s %8s %8s\n' row p50 p95
row "O_SYNC write ms" write
row "cache-miss read ms" read
row "loopback rtt ms" rtt
row "fuse read ms" fuse
row "fuse overhead ms" fuse_overhead
