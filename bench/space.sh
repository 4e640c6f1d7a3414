#!/usr/bin/env bash
# space.sh: what a server's data directory holds on disk (du, allocated blocks) for what a disk
# holds, while it is written and after the file is deleted: what the engine keeps beyond the data
# (RocksDB's WAL and memtables, preallocated tails, the open segment). One `archil server` and one
# mount; run by hand as root.
#
#   data written                       the floor: the bytes the file holds
#   data dir after the writes          du of DATA_DIR once --size of --bs synced writes are in
#   of it, the engine's database       du of DATA_DIR/engine/db (WAL, SSTs, info log)
#   data dir after the delete          du of DATA_DIR 2 s after the file is removed
#
# Usage: bench/space.sh [--size MiB] [--bs KiB] [--dir DIR]
#   --size MiB  how much to write (default 256)
#   --bs KiB    the size of each synced write (default 64: small writes, which also ride in the WAL)
#   --dir DIR   where the server's data goes (default /var/tmp; not tmpfs)
set -euo pipefail

SIZE=256 BS=64 DIR=/var/tmp
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) SIZE="$2"; shift 2 ;;
    --bs) BS="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "space.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
BENCH=space.sh
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
[[ $SIZE =~ ^[0-9]+$ && $BS =~ ^[0-9]+$ && $BS -gt 0 ]] || { log "--size and --bs take whole numbers"; exit 2; }
[[ $(id -u) == 0 ]] || { log "run as root: archil mount needs it"; exit 1; }
need_tools jq du dd
ARCHIL=$BENCH_REPO/build/release/bin/archil
[[ -x $ARCHIL ]] || { log "no $ARCHIL: build first"; exit 1; }
unset ARCHIL_JOURNAL_SOCKET ARCHIL_ENDPOINT ARCHIL_REGION ARCHIL_API_KEY ARCHIL_MOUNT_TOKEN
export ARCHIL_OWNER_PID=$$
W=$(realpath "$(mktemp -d "$DIR/space-bench.XXXXXX")")
MNT=$W/mnt
mkdir -p "$MNT" "$W/run"
export ARCHIL_RUN_DIR=$W/run
SERVER_PID=''
cleanup() {
  set +e
  force_unmount "$ARCHIL" "$MNT"
  stop "$SERVER_PID"
  remove_work_dir "$W"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$ARCHIL" server --data-dir "$W/data" --api-listen 127.0.0.1:0 --mount-listen 127.0.0.1:0 \
  --region space-1 --log-level warn > "$W/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 200); do
  [[ -f $W/run/space-1.json ]] && break
  kill -0 "$SERVER_PID" 2> /dev/null || break
  sleep 0.05
done
[[ -f $W/run/space-1.json ]] || { log "the server did not start: $(cat "$W/server.log")"; exit 1; }
export ARCHIL_MOUNT_TOKEN
ARCHIL_MOUNT_TOKEN=$("$ARCHIL" --json disks create space | jq -r '.authorizedUsers[0].token')
"$ARCHIL" mount -q space "$MNT"
mib() { du -sm "$1" | cut -f1; }

echo "# space bench on $(hostname), $(date -u +%FT%TZ), revision $(git -C "$BENCH_REPO" describe --always --dirty 2> /dev/null || echo unknown)"
echo "# dir $DIR ($(dir_fs "$DIR")), $SIZE MiB in synced writes of $BS KiB"
count=$((SIZE * 1024 / BS))
timeout -k 1 600 dd if=/dev/urandom of="$MNT/f" bs="${BS}k" count="$count" oflag=dsync status=none
sync -f "$MNT/f"
echo "data written: $SIZE MiB"
echo "data dir after the writes: $(mib "$W/data") MiB"
echo "of it, the engine's database: $(mib "$W/data/engine/db") MiB"
rm "$MNT/f"
sleep 2
echo "data dir after the delete: $(mib "$W/data") MiB"
