#!/usr/bin/env bash
# lineage.sh: checkpoints and branches through the CLI and real mounts, in one run on one
# `archil server` (build/release/bin), as root. Run by hand with nothing else busy (not in CI).
#
#   archil version                    floor: the CLI's start, timed the way the rows below are
#   checkpoint ms, empty disk         wall time of `archil checkpoints create MNT NAME` (N times)
#   branch ms, empty disk             wall time of `archil branches create DISK NAME
#                                     --from-checkpoint CP` over plain HTTP (N times)
#   checkpoint ms, FILES files        the same on a disk holding FILES files of SIZE bytes each
#   branch ms, FILES files            (default 100,000 of 10 KiB: 1 GiB), written through the mount
#   checkpoint/branch, full / empty   the ratio of the p50s (target: within 1.2)
#   read ms, branch depth 1|D         4 KiB O_DIRECT random reads (fio, iodepth 1, --read-ahead 0,
#                                     fresh mount) of a 256 MiB file written on the root, read on
#                                     a branch 1 level deep and on one D levels deep (default 50;
#                                     each level a checkpoint of the one above it); ratio row
#   branch adds MiB                   the server data directory's growth (du) after a branch
#                                     rewrites 10 MiB of a 1 GiB file and fsyncs (target: ~10)
#   branch delete frees MiB           what deleting that branch gives back
#
# Rows print as "ROW: p50 X ms, p95 Y ms", "ROW: N MiB" or "ROW: Xx"; '#' lines are details.
#
# Usage: bench/lineage.sh [-n N] [--files FILES] [--size BYTES] [--depth D] [--dir DIR] [--quick]
#   --quick: N=10, 2,000 files, depth 10 (options given explicitly win)
#   --dir: where the server's data goes (default /var/tmp), a few GiB, in a fresh subdirectory that
#   is removed on exit, on failure and Ctrl-C too (ARCHIL_BENCH_KEEP=1 in the environment keeps it)
set -euo pipefail

N='' FILES='' SIZE=10240 DEPTH='' DIR=/var/tmp QUICK=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    -n) N="$2"; shift 2 ;;
    --files) FILES="$2"; shift 2 ;;
    --size) SIZE="$2"; shift 2 ;;
    --depth) DEPTH="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "lineage.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
if [[ $QUICK == 1 ]]; then : "${N:=10}" "${FILES:=2000}" "${DEPTH:=10}"; fi
: "${N:=40}" "${FILES:=100000}" "${DEPTH:=50}"

export BENCH=lineage.sh
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
need_tools fio jq du
[[ $(id -u) == 0 ]] || { log "run as root (it mounts)"; exit 1; }
BIN=$(cd "$(dirname "$0")/.." && pwd)/build/release/bin
[[ -x $BIN/archil && -x $BIN/archil-mount ]] || { log "build first: $BIN/archil is missing"; exit 1; }

# The server and the mount daemons end, their mounts aborted, within 1 s of this shell, even killed.
export ARCHIL_OWNER_PID=$$
W=$(realpath "$(mktemp -d "$DIR/archil-lineage.XXXXXX")")  # canonical, as the mount table has it
PID=''
MOUNTS=()
cleanup() {
  set +e
  local m
  for m in "${MOUNTS[@]}"; do force_unmount "$BIN/archil" "$m"; done
  stop "$PID"
  remove_work_dir "$W"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export ARCHIL_RUN_DIR=$W/run
"$BIN/archil" server --data-dir "$W/data" --api-listen 127.0.0.1:0 --mount-listen 127.0.0.1:0 \
  --run-dir "$W/run" --log-level warn 2> "$W/server.log" &
PID=$!
wait_alive "$PID" 200 test -f "$W/run/local.json" || true
[[ -f $W/run/local.json ]] || { log "the server did not start (waited up to 10 s): $(cat "$W/server.log")"; exit 1; }
ARCHIL_API_KEY=$(cat "$W/data/admin-api-key")
export ARCHIL_API_KEY
A() { "$BIN/archil" "$@"; }
ms() { local s; s=$(date +%s%N); "$@" > /dev/null; echo $(( ($(date +%s%N) - s) / 1000000 )); }
msf() {  # as ms, with a fraction (these rows are a few ms)
  local s e
  s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N)
  awk -v d=$((e - s)) 'BEGIN { printf "%.2f\n", d / 1e6 }'
}
new_disk() {  # NAME: sets DISK to its id and exports its token
  A --json disks create "$1" > "$W/$1.json"
  ARCHIL_MOUNT_TOKEN=$(jq -r '.authorizedUsers[0].token' "$W/$1.json")
  export ARCHIL_MOUNT_TOKEN
  DISK=$(jq -r .diskId "$W/$1.json")
}
mnt() {  # DISK DIR [args]
  mkdir -p "$2"
  MOUNTS+=("$2")  # before: a mount that fails half way is unmounted too
  A mount -q "$1" "$2" "${@:3}"
}
umnt() { A unmount "$1" > /dev/null; }

for _ in $(seq "$N"); do msf A version; done > "$W/version.txt"
echo "archil version: $(stats < "$W/version.txt")"

# checkpoint and branch rows on DISK mounted at MNT; TAG names the rows
cp_branch_rows() {
  local disk=$1 m=$2 tag=$3 i
  for i in $(seq "$N"); do msf A checkpoints create "$m" "$tag-cp-$i"; done > "$W/cp-$tag.txt"
  for i in $(seq "$N"); do
    msf A branches create "$disk" "$tag-br-$i" --from-checkpoint "$tag-cp-$i"
  done > "$W/br-$tag.txt"
}

log "empty disk"
new_disk empty
E=$DISK
mnt "$E" "$W/m-empty"
cp_branch_rows "$E" "$W/m-empty" empty
echo "checkpoint ms, empty disk: $(stats < "$W/cp-empty.txt")"
echo "branch ms, empty disk: $(stats < "$W/br-empty.txt")"
umnt "$W/m-empty"

log "writing $FILES files of $SIZE bytes through the mount"
new_disk full
F=$DISK
mnt "$F" "$W/m-full"
t0=$(date +%s)
# One process writes them all (a process per file would measure process start-up instead).
/usr/bin/python3 - "$W/m-full" "$FILES" "$SIZE" <<'PY'
import os, sys
root, files, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = os.urandom(size)
for n in range(files):
    d = os.path.join(root, "d%d" % (n // 1000))
    if n % 1000 == 0:
        os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%d" % (n % 1000)), "wb") as f:
        f.write(data)
PY
sync -f "$W/m-full"
echo "# wrote $FILES files ($(( FILES * SIZE / 1048576 )) MiB) in $(( $(date +%s) - t0 )) s"
cp_branch_rows "$F" "$W/m-full" full
echo "checkpoint ms, $FILES files: $(stats < "$W/cp-full.txt")"
echo "branch ms, $FILES files: $(stats < "$W/br-full.txt")"
ratio() { awk -v a="$(pct 50 < "$1")" -v b="$(pct 50 < "$2")" 'BEGIN { printf "%.2fx\n", a / b }'; }
echo "checkpoint, full / empty: $(ratio "$W/cp-full.txt" "$W/cp-empty.txt")"
echo "branch, full / empty: $(ratio "$W/br-full.txt" "$W/br-empty.txt")"
umnt "$W/m-full"

log "a chain of $DEPTH branches"
new_disk deep
R=$DISK
mnt "$R" "$W/m-deep"
fio --name=fill --filename="$W/m-deep/r" --size=256M --rw=write --bs=1M --end_fsync=1 > /dev/null
A checkpoints create "$W/m-deep" level-0 > /dev/null
umnt "$W/m-deep"
declare -A LEVEL
for l in $(seq 1 "$DEPTH"); do
  from=()
  (( l > 1 )) && from=(--from-branch "level-$((l - 1))")
  LEVEL[$l]=$(A -q branches create "$R" "level-$l" --from-checkpoint "level-$((l - 1))" "${from[@]}")
  mnt "${LEVEL[$l]}" "$W/m-level"
  A checkpoints create "$W/m-level" "level-$l" > /dev/null
  umnt "$W/m-level"
done
FIO="fio --name=t --bs=4k --iodepth=1 --direct=1 --time_based --runtime=10 --output-format=json"
read_row() {  # LEVEL
  mnt "${LEVEL[$1]}" "$W/m-read" --read-ahead 0
  $FIO --filename="$W/m-read/r" --size=256M --rw=randread > "$W/read-$1.json"
  umnt "$W/m-read"
  fiolat read < "$W/read-$1.json"
}
r1=$(read_row 1)
rd=$(read_row "$DEPTH")
echo "read ms, branch depth 1: $r1"
echo "read ms, branch depth $DEPTH: $rd"
awk -v a="$(jq -r '.jobs[0].read.clat_ns.percentile["50.000000"]' "$W/read-$DEPTH.json")" \
    -v b="$(jq -r '.jobs[0].read.clat_ns.percentile["50.000000"]' "$W/read-1.json")" \
    'BEGIN { printf "read, depth '"$DEPTH"' / depth 1: %.2fx\n", a / b }'

log "space: a branch rewrites 10 MiB of a 1 GiB file"
new_disk space
S=$DISK
mnt "$S" "$W/m-space"
fio --name=fill --filename="$W/m-space/big" --size=1G --rw=write --bs=1M --end_fsync=1 > /dev/null
A checkpoints create "$W/m-space" base > /dev/null
umnt "$W/m-space"
SB=$(A -q branches create "$S" rewrite --from-checkpoint base)
# syncfs of the data directory's file system alone: a global sync also waits on every other mount.
du_mib() { sync -f "$W/data"; du -sm "$W/data" | awk '{ print $1 }'; }
before=$(du_mib)
mnt "$SB" "$W/m-space"
dd if=/dev/urandom of="$W/m-space/big" bs=1M count=10 seek=100 conv=notrunc,fsync status=none
umnt "$W/m-space"
sleep 2  # the engine's intent sync
after=$(du_mib)
echo "branch adds MiB: $(( after - before )) MiB"
A branches delete "$S" rewrite > /dev/null
sleep 3  # the purge runs in the background
freed=$(du_mib)
echo "branch delete frees MiB: $(( after - freed )) MiB"
echo "# data directory: $before MiB before the branch's writes, $after after, $freed after its delete"
