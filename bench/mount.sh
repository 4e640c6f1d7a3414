#!/usr/bin/env bash
# mount.sh: `archil mount` against this machine's floors and against a peer, in one run. The
# data-path rows of Archil's published latency script
# (https://docs.archil.com/reference/limits.md#latency; docs/targets.md), measured with our own
# code using the script's fio lines and percentile rule, then sequential and small-file rows; each
# floor is a row of its own, printed just before the row it bounds. Run by hand as root, with
# nothing else busy (not part of CI).
#
# Starts its own `archil server` (build/release/bin; data and run directory in a fresh directory
# under --dir), creates a disk, takes its token, and mounts it with `archil mount -q DISK MNT`.
#
#   mount ms, wall        wall time of `archil mount -q` over --cycles mount/unmount cycles of the
#                         (empty) disk, the script's mount row
#   mount ms, client log  the same mounts by the daemon's journal line "Mounted disk in N ms"
#                         (journalctl -t archil-<disk id>; systemd-journald is started if it is not
#                         running), in whole ms as the daemon logs it; if journald cannot run, the
#                         mount_ms of `archil --json status MNT` instead (a '#' line says which)
#   loopback rtt          floor: 4 KiB TCP ping-pong on loopback (bench/spikes/tcp_pingpong.cc)
#   local fsync floor (O_SYNC write on local ext4, fresh file)
#                         floor: the script's O_SYNC write line on a fresh file in --dir
#   O_SYNC write ms       the same line on the mount: $FIO --filename=$MNT/w --size=1G
#                         --rw=randwrite --sync=1, where FIO="fio --name=t --bs=4k --iodepth=1
#                         --direct=1 --time_based --runtime=30 --output-format=json"
#   local cache-miss read (O_DIRECT randread, local ext4)
#                         floor: the script's randread line on a file in --dir filled the script's
#                         way (fio --name=fill --size=4G --rw=write --bs=1M --end_fsync=1)
#   cache-miss read ms    the script's fill on the mount, unmount, mount with --read-ahead 0, then
#                         $FIO --filename=$MNT/r --size=4G --rw=randread. The server's page cache
#                         still holds what the fill wrote, as it would after the script's fill
#   cache-miss read ms, caches dropped
#                         the same line again after unmount, drop_caches and mount --read-ahead 0:
#                         misses on both sides, what the local floor measures (not a script row)
#   local seq write 1M + fsync, seq write 1M + fsync, ..., % of local
#                         fio --rw=write --bs=1M --size=2G --end_fsync=1 on a fresh file; fio's
#                         MiB/s, the final fsync included
#   local seq read 1M, seq read 1M, ..., % of local
#                         fio --rw=read --bs=1M of that file, after syncfs and drop_caches (the
#                         mount is also unmounted before and mounted again after)
#   local small files unpack / find / read / rm s, small files ... s, small files, x local
#                         a tarball of --files regular files (the first in name order under
#                         /usr/include, then /usr/share) on the mount and in --dir: tar x, then
#                         syncfs; find (every entry); cat of every file; rm -rf, then syncfs; each
#                         phase after drop_caches; the ratio row is of the four phases' sum. The
#                         unpacked tree is compared with the local one (md5 of every file)
#   FUSE floor small files unpack / find / read / rm s, ..., x local
#                         the same on libfuse's passthrough_ll example (built from Debian's
#                         libfuse3-dev examples into build/spikes, as bench/floor.sh does) over a
#                         directory in --dir: a local FUSE file system with no network and no
#                         durability, with its writeback option (as the mount has the kernel's
#                         writeback cache)
#   local creates, FUSE floor creates, creates: N ops/s; creates, % of local
#                         files created, written (1 KiB) and closed per second by one process
#                         (build/release/bench/creates_bench: open O_CREAT|O_EXCL, write, close),
#                         --creates files in a new directory, nothing synced; on --dir, on
#                         passthrough_ll over --dir, and on the mount, in turn, --rounds times:
#                         each row the median of its rounds ('#' lines list every round).
#                         passthrough_ll holds a descriptor per file it has seen, so it gets at
#                         most the descriptor limit less 1,000 files (a '#' line says so)
#   rclone ...            the seq and small-file rows on rclone's VFS mount (`rclone mount
#                         --vfs-cache-mode writes`, Debian's rclone) of a bucket on s3rver
#                         (node_modules/.bin/s3rver, from `npm ci`) on 127.0.0.1, each with its
#                         % of local / x local. What rclone guarantees at fsync: nothing. With
#                         --vfs-cache-mode writes a file is written to rclone's local cache file, and
#                         rclone mount answers fsync at once without syncing that file or uploading
#                         it (cmd/mount/file.go: "we don't do anything except return OK"); the
#                         upload to the bucket starts in the background 5 s (--vfs-write-back) after
#                         the last close. So its seq write row is its cache's page cache, and a '#'
#                         line says when the seq file was in the bucket. Before the seq read, rclone
#                         is unmounted and its cache emptied, so the read comes from s3rver
#
# Rows print as "ROW: p50 X ms, p95 Y ms", "ROW: N MiB/s", "ROW: X s" or, for a ratio, "ROW: X%" /
# "ROW: Xx"; '#' lines are details. Percentiles are nearest-rank. "local ext4" in row names is the
# file system of --dir.
#
# Usage: bench/mount.sh [--runtime S] [--full] [--cycles N] [--quick] [--dir DIR] [--rows LIST]
#                       [--files N] [--creates N] [--rounds N] [--no-peers] [--mount-flag F]...
#   --runtime S  fio runtime of each latency row (default 10)
#   --full       the latency script's 30 s per row
#   --cycles N   mount/unmount cycles (default 40)
#   --quick      a quick check: 3 s per row, 5 cycles, 256 MiB files instead of 4 GiB and 2 GiB,
#                2,000 small files, 5,000 creates (options given explicitly win)
#   --dir DIR    where the local files, the server's data and the peers' data go (default
#                /var/tmp; not tmpfs); a fresh subdirectory is created and removed, on failure and
#                Ctrl-C too (ARCHIL_BENCH_KEEP=1 in the environment keeps it). Needs ~10 GiB free
#                (a 4 GiB fill file and a 2 GiB seq file on each side, one at a time)
#   --rows LIST  comma-separated groups (default mount,sync,read,seq,small,creates,peers): mount
#                (mount rows), sync (loopback rtt, O_SYNC write), read (cache-miss read), seq
#                (sequential write and read), small (small files), creates (creates per second),
#                peers (the seq and small rows on rclone: those of the seq and small groups
#                chosen, both if neither is)
#   --files N    small files in the tarball (default 10000)
#   --creates N  files of each creates round (default 20000)
#   --rounds N   rounds of the creates rows (default 3)
#   --no-peers   leave out the rclone rows
#   --mount-flag F  pass F to every `archil mount` (e.g. --sync: every operation durable before
#                it is answered, to compare with the default write-back of names and attributes)
# Needs fio, jq, tar; rclone and s3rver for the peer rows (skipped with a message if missing);
# builds tcp_pingpong in build/spikes if it is missing (as bench/floor.sh does).
set -euo pipefail

RUNTIME='' CYCLES='' FILL='' SEQ='' FILES='' CREATES='' ROUNDS=3 QUICK=0 NO_PEERS=0
DIR=/var/tmp
ROWS=mount,sync,read,seq,small,creates,peers
MOUNT_FLAGS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runtime) RUNTIME="$2"; shift 2 ;;
    --full) RUNTIME=30; shift ;;
    --cycles) CYCLES="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --dir) DIR="$2"; shift 2 ;;
    --rows) ROWS="$2"; shift 2 ;;
    --files) FILES="$2"; shift 2 ;;
    --creates) CREATES="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --no-peers) NO_PEERS=1; shift ;;
    --mount-flag) MOUNT_FLAGS+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "mount.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
if [[ $QUICK == 1 ]]; then
  : "${RUNTIME:=3}" "${CYCLES:=5}" "${FILL:=256M}" "${SEQ:=256M}" "${FILES:=2000}" "${CREATES:=5000}"
fi
: "${RUNTIME:=10}" "${CYCLES:=40}" "${FILL:=4G}" "${SEQ:=2G}" "${FILES:=10000}" "${CREATES:=20000}"
[[ $NO_PEERS == 1 ]] && ROWS=$(tr ',' '\n' <<< "$ROWS" | grep -vx peers | paste -sd, -)

BENCH=mount.sh
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

for g in ${ROWS//,/ }; do
  case "$g" in mount|sync|read|seq|small|creates|peers) ;; *) log "unknown row group '$g' (try --help)"; exit 2 ;; esac
done
want() { [[ ,$ROWS, == *,$1,* ]]; }
for n in "$RUNTIME" "$CYCLES" "$FILES" "$CREATES" "$ROUNDS"; do
  [[ $n =~ ^[0-9]+$ && $n -gt 0 ]] || { log "--runtime, --cycles, --files, --creates and --rounds take whole numbers > 0"; exit 2; }
done
[[ $(id -u) == 0 ]] || { log "run as root: archil mount, drop_caches and rclone mount need it"; exit 1; }
[[ -d $DIR ]] || { log "--dir $DIR is not a directory"; exit 1; }
[[ -c /dev/fuse ]] || { log "no /dev/fuse (modprobe fuse)"; exit 1; }
need_tools fio jq tar awk
BIN=$BENCH_REPO/build/release/bin
ARCHIL=$BIN/archil
for b in archil archil-server archil-mount; do
  [[ -x $BIN/$b ]] || { log "no $BIN/$b: build first (cmake --preset release && cmake --build build/release)"; exit 1; }
done
export LC_ALL=C  # $EPOCHREALTIME with a '.', and sort in byte order
unset ARCHIL_JOURNAL_SOCKET ARCHIL_ENDPOINT ARCHIL_REGION ARCHIL_API_KEY ARCHIL_MOUNT_TOKEN

# The server and the mount daemons end, their mounts aborted, within 1 s of this shell, even killed.
export ARCHIL_OWNER_PID=$$
W=$(realpath "$(mktemp -d "$DIR/mount-bench.XXXXXX")")  # canonical, as the mount table has it
L=$W/local         # local files
MNT=$W/mnt         # the archil mount
RMNT=$W/rclone     # the rclone mount
PMNT=$W/pll        # passthrough_ll's mount, of $W/pll-src
mkdir -p "$L" "$MNT" "$RMNT" "$PMNT" "$W/pll-src" "$W/run"
export ARCHIL_RUN_DIR=$W/run  # the server advertises here; the CLI finds it here
SERVER_PID='' JOURNALD_PID='' S3_PID='' RCLONE_PID='' PLL_PID=''
FSTYPE=$(findmnt -n -o FSTYPE --target "$DIR")

# Unmounts the FUSE mount at MNT, by the mount table and bounded (a hung daemon would block
# mountpoint's stat and the unmount), then stops its daemon PID; nothing if PID is empty.
fuse_down() {  # PID MNT FUSERMOUNT
  [[ -n $1 ]] || return 0
  if mounted "$2"; then
    timeout -k 1 10 "$3" -u "$2" 2> /dev/null || timeout -k 1 5 umount -l "$2" 2> /dev/null || true
  fi
  reap "$1" 5 || true
  stop "$1"
}
rclone_down() { fuse_down "$RCLONE_PID" "$RMNT" fusermount; RCLONE_PID=; }
# passthrough_ll (the FUSE floor) over $W/pll-src at $PMNT, in the foreground of a background job.
pll_up() {
  "$SPIKES/passthrough_ll" -f -o source="$W/pll-src",writeback "$PMNT" 2> "$W/pll.log" &
  PLL_PID=$!
  wait_alive "$PLL_PID" 100 mounted "$PMNT" && return 0
  log "passthrough_ll did not mount (waited up to 5 s): $(cat "$W/pll.log")"
  return 1
}
pll_down() { fuse_down "$PLL_PID" "$PMNT" fusermount3; PLL_PID=; }
cleanup() {
  set +e
  force_unmount "$ARCHIL" "$MNT"
  pll_down
  rclone_down
  mounted "$RMNT" && timeout -k 1 5 umount -l "$RMNT"
  stop "$S3_PID"
  stop "$SERVER_PID"
  stop "$JOURNALD_PID"
  remove_work_dir "$W"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
set -E
trap 'log "failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR

now() { echo "$EPOCHREALTIME"; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }'; }  # seconds
pctof() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f%%", 100 * a / b }'; }
times() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
drop_caches() {  # syncfs of each DIR given, then drop the page, dentry and inode caches
  local d
  for d in "$@"; do sync -f "$d" || sync -f "$d"; done
  echo 3 > /proc/sys/vm/drop_caches
}

# --- the server and the disk --------------------------------------------------------------------
log "starting archil server in $W"
"$ARCHIL" server --data-dir "$W/data" --api-listen 127.0.0.1:0 --mount-listen 127.0.0.1:0 \
  --region bench-1 --log-level warn > "$W/server.log" 2>&1 &
SERVER_PID=$!
wait_alive "$SERVER_PID" 200 test -f "$W/run/bench-1.json" || true
[[ -f $W/run/bench-1.json ]] || { log "the server did not start (waited up to 10 s): $(cat "$W/server.log")"; exit 1; }
DISK=bench
DISK_JSON=$("$ARCHIL" --json disks create "$DISK")
DISK_ID=$(jq -r .diskId <<< "$DISK_JSON")
ARCHIL_MOUNT_TOKEN=$(jq -r '.authorizedUsers[0].token' <<< "$DISK_JSON")
export ARCHIL_MOUNT_TOKEN
[[ -n $DISK_ID && $ARCHIL_MOUNT_TOKEN != null ]] || { log "unexpected disk: $DISK_JSON"; exit 1; }

mnt_check() {  # the mount answers (in 10 s: a hung one blocks stat), else its daemon's log and exit
  timeout -k 1 10 mountpoint -q "$MNT" && return 0
  log "archil mount succeeded but $MNT does not answer: $(timeout -k 1 5 stat "$MNT" 2>&1 | head -1 || true); daemon log and journal:"
  cat "$W"/run/mounts/*.log >&2 2> /dev/null || true
  journalctl -t "archil-$DISK_ID" -o cat --no-pager 2> /dev/null | tail -5 >&2 || true
  exit 1
}
mnt_up() {  # [archil mount flags]
  "$ARCHIL" mount -q ${MOUNT_FLAGS[@]+"${MOUNT_FLAGS[@]}"} "$@" "$DISK" "$MNT"
  mnt_check
}
mnt_down() { "$ARCHIL" unmount "$MNT"; }

echo "# mount bench on $(hostname), $(date -u +%FT%TZ), kernel $(uname -r), $(nproc) CPUs, revision $(git -C "$BENCH_REPO" describe --always --dirty 2> /dev/null || echo unknown)"
echo "# dir $DIR ($(dir_fs "$DIR")), fio runtime ${RUNTIME} s, ${CYCLES} mount cycles, fill file $FILL, seq file $SEQ, load $(cut -d' ' -f1-3 /proc/loadavg)"

# --- mount rows ---------------------------------------------------------------------------------
if want mount; then
  JOURNAL=0
  if command -v journalctl > /dev/null; then
    if ! pgrep -x systemd-journal > /dev/null && [[ -x /lib/systemd/systemd-journald ]]; then
      log "starting systemd-journald (stopped again at the end)"
      /lib/systemd/systemd-journald > /dev/null 2>&1 &
      JOURNALD_PID=$!
      sleep 0.2
    fi
    journal_ok && JOURNAL=1
  fi
  [[ $JOURNAL == 1 ]] || log "no working journald: the client log row comes from archil status"

  log "mount: $CYCLES cycles"
  : > "$W/mount-wall.txt"
  : > "$W/mount-status.txt"
  for _ in $(seq "$CYCLES"); do
    t0=$EPOCHREALTIME
    "$ARCHIL" mount -q "$DISK" "$MNT"
    echo "$t0 $EPOCHREALTIME" >> "$W/mount-wall.txt"
    mnt_check
    "$ARCHIL" --json status "$MNT" | jq -r .mount_ms >> "$W/mount-status.txt"
    mnt_down
  done
  echo "mount ms, wall: $(awk '{ printf "%.3f\n", ($2 - $1) * 1000 }' "$W/mount-wall.txt" | stats)"
  if [[ $JOURNAL == 1 ]]; then
    for _ in $(seq 100); do
      journalctl -t "archil-$DISK_ID" -o cat --no-pager |
        sed -n 's/^Mounted disk in \([0-9.]*\) ms.*/\1/p' > "$W/mount-journal.txt"
      [[ $(wc -l < "$W/mount-journal.txt") -ge $CYCLES ]] && break
      sleep 0.05
    done
    got=$(wc -l < "$W/mount-journal.txt")
    if [[ $got -ge $CYCLES ]]; then
      echo "mount ms, client log: $(tail -n "$CYCLES" "$W/mount-journal.txt" | stats)"
      echo "# client log from journalctl -t archil-$DISK_ID (whole ms); archil status mount_ms: $(awk '{ printf "%.3f\n", $1 }' "$W/mount-status.txt" | stats)"
    else
      log "journalctl -t archil-$DISK_ID has $got \"Mounted disk in\" lines for $CYCLES mounts"
      JOURNAL=0
    fi
  fi
  if [[ $JOURNAL == 0 ]]; then
    echo "mount ms, client log: $(awk '{ printf "%.3f\n", $1 }' "$W/mount-status.txt" | stats)"
    echo "# client log from archil --json status (mount_ms), not the journal"
  fi
fi

# --- latency rows -------------------------------------------------------------------------------
latency_fio "$RUNTIME"
fio_row() {  # row name, section, the row's arguments to $FIO: "NAME: p50 X ms, p95 Y ms"
  local v
  v=$($FIO "${@:3}" | fiolat "$2")
  echo "$1: $v"
}
RTT_DONE=0
rtt_floor() {
  [[ $RTT_DONE == 0 ]] || return 0
  RTT_DONE=1
  if spike tcp_pingpong; then
    log "loopback rtt"
    local v
    v=$("$SPIKES/tcp_pingpong" --floor | awk '{ printf "p50 %.3f ms, p95 %.3f ms", $1, $2 }')
    echo "loopback rtt: $v"
  else
    log "could not build tcp_pingpong: no loopback rtt row"
  fi
}

if want sync; then
  rtt_floor
  log "local fsync floor: ${RUNTIME} s"
  fio_row "local fsync floor (O_SYNC write on local $FSTYPE, fresh file)" write --filename="$L/w" --size=1G --rw=randwrite --sync=1
  rm -f "$L/w"
  log "O_SYNC write on the mount: ${RUNTIME} s"
  mnt_up
  fio_row "O_SYNC write ms" write --filename="$MNT/w" --size=1G --rw=randwrite --sync=1
  rm -f "$MNT/w"
  mnt_down
fi

if want read; then
  rtt_floor
  log "local cache-miss read: filling $FILL, then ${RUNTIME} s"
  fio --name=fill --filename="$L/r" --size="$FILL" --rw=write --bs=1M --end_fsync=1 > /dev/null
  fio_row "local cache-miss read (O_DIRECT randread, local $FSTYPE)" read --filename="$L/r" --size="$FILL" --rw=randread
  rm -f "$L/r"
  log "cache-miss read on the mount: filling $FILL, remounting with --read-ahead 0, ${RUNTIME} s"
  mnt_up
  fio --name=fill --filename="$MNT/r" --size="$FILL" --rw=write --bs=1M --end_fsync=1 > /dev/null
  mnt_down
  mnt_up --read-ahead 0
  fio_row "cache-miss read ms" read --filename="$MNT/r" --size="$FILL" --rw=randread
  mnt_down
  drop_caches "$DIR"
  mnt_up --read-ahead 0
  fio_row "cache-miss read ms, caches dropped" read --filename="$MNT/r" --size="$FILL" --rw=randread
  rm -f "$MNT/r"
  mnt_down
fi

# --- sequential rows ----------------------------------------------------------------------------
seqw() { fio --name=seq --filename="$1" --size="$SEQ" --rw=write --bs=1M --end_fsync=1 --output-format=json | fiobw write; }
seqr() { fio --name=seq --filename="$1" --size="$SEQ" --rw=read --bs=1M --output-format=json | fiobw read; }
LOCAL_SEQW='' LOCAL_SEQR=''
local_seq() {  # measures the local seq rows once
  [[ -z $LOCAL_SEQW ]] || return 0
  log "local seq write and read: $SEQ"
  LOCAL_SEQW=$(seqw "$L/seq")
  drop_caches "$DIR"
  LOCAL_SEQR=$(seqr "$L/seq")
  rm -f "$L/seq"
}
if want seq; then
  local_seq
  log "seq write and read on the mount: $SEQ"
  mnt_up
  W_MNT=$(seqw "$MNT/seq")
  mnt_down
  drop_caches "$DIR"
  mnt_up
  R_MNT=$(seqr "$MNT/seq")
  rm -f "$MNT/seq"
  mnt_down
  echo "local seq write 1M + fsync: $LOCAL_SEQW MiB/s"
  echo "seq write 1M + fsync: $W_MNT MiB/s"
  echo "seq write 1M + fsync, % of local: $(pctof "$W_MNT" "$LOCAL_SEQW")"
  echo "local seq read 1M, caches dropped: $LOCAL_SEQR MiB/s"
  echo "seq read 1M, caches dropped: $R_MNT MiB/s"
  echo "seq read 1M, % of local: $(pctof "$R_MNT" "$LOCAL_SEQR")"
fi

# --- small files --------------------------------------------------------------------------------
TAR=$W/src.tar
make_tar() {
  [[ -f $TAR ]] && return 0
  (cd /usr && find include share -type f 2> /dev/null | sort | awk -v n="$FILES" 'NR <= n') > "$W/files.txt"
  tar -C /usr -cf "$TAR" -T "$W/files.txt"
  echo "# small files: $(wc -l < "$W/files.txt") files, $(du -m --apparent-size "$TAR" | cut -f1) MiB (the first in name order under /usr/include, then /usr/share)"
}
tree_sum() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 md5sum) | md5sum | cut -c1-32; }
sum4() { awk '{ printf "%.3f\n", $1 + $2 + $3 + $4 }' "$1"; }
syncfs() {  # DIR NAME PHASE: syncfs, a failure noted in $W/notes.NAME (printed with the rows)
  # Then an fsync of DIR: syncfs does not reach a FUSE daemon (the kernel sends it only to
  # virtio-fs), and a mount makes the names and attributes it answered durable at an fsync.
  local err
  if ! err=$(sync -f "$1" 2>&1 && sync "$1" 2>&1); then
    echo "# $2 small files $3: syncfs failed: $err" >> "$W/notes.$2"
  fi
}
small_files() {  # DIR (empty, on the file system to measure), NAME: leaves in $W/small.NAME
  # "unpack find read rm" in s, in $W/entries.NAME what find listed, in $W/sum.NAME the tree's md5
  local d=$1/t t0 out=()
  mkdir "$d"
  drop_caches "$1"
  t0=$(now); tar -C "$d" -xf "$TAR"; syncfs "$d" "$2" unpack; out+=("$(since "$t0")")
  drop_caches "$1"
  t0=$(now); find "$d" > "$W/find.$2"; out+=("$(since "$t0")")
  drop_caches "$1"
  t0=$(now); find "$d" -type f -exec cat {} + > /dev/null; out+=("$(since "$t0")")
  wc -l < "$W/find.$2" > "$W/entries.$2"
  tree_sum "$d" > "$W/sum.$2"  # untimed
  drop_caches "$1"
  t0=$(now); rm -rf --one-file-system "$d"; syncfs "$1" "$2" rm; out+=("$(since "$t0")")
  echo "${out[*]}" > "$W/small.$2"
}
LOCAL_SMALL_PRINTED=0
small_rows() {  # NAME, row prefix: local floor rows (once) and the rows of $W/small.NAME
  local -a s l
  local i phases=(unpack find read rm)
  read -ra s < "$W/small.$1"
  read -ra l < "$W/small.local"
  for i in 0 1 2 3; do
    [[ $LOCAL_SMALL_PRINTED == 1 ]] || echo "local small files ${phases[i]}: ${l[i]} s"
    echo "${2}small files ${phases[i]}: ${s[i]} s"
  done
  [[ $LOCAL_SMALL_PRINTED == 1 ]] || cat "$W/notes.local" 2> /dev/null || true
  LOCAL_SMALL_PRINTED=1
  echo "${2}small files, x local: $(times "$(sum4 "$W/small.$1")" "$(sum4 "$W/small.local")")"
  if [[ $(cat "$W/entries.$1") != "$(cat "$W/entries.local")" ]]; then
    echo "# ${2}small files: find listed $(cat "$W/entries.$1") entries, local $(cat "$W/entries.local")"
  fi
  if [[ $(cat "$W/sum.$1") != "$(cat "$W/sum.local")" ]]; then
    echo "# ${2}small files: the unpacked files DIFFER from the local unpack"
  fi
  cat "$W/notes.$1" 2> /dev/null || true
  return 0
}
local_small() {
  [[ ! -f $W/small.local ]] || return 0
  make_tar
  log "small files, local"
  small_files "$L" local
}
# passthrough_ll keeps an O_PATH descriptor for every inode the kernel has looked up in it.
PLL_MAX_FILES=$(( $(ulimit -Hn) - 1000 ))
pll_ok() {  # FILES: whether passthrough_ll can hold FILES files here (else says why)
  if ! spike passthrough_ll; then
    log "no passthrough_ll (Debian's libfuse3-dev examples): no FUSE floor rows"; return 1
  fi
  [[ $1 -le $PLL_MAX_FILES ]] && return 0
  log "passthrough_ll would need more than the $(ulimit -Hn) descriptors allowed: no FUSE floor small-file rows"
  return 1
}
if want small; then
  local_small
  if pll_ok "$(( FILES * 11 / 10 ))" && pll_up; then  # the files and their directories
    log "small files on passthrough_ll"
    small_files "$PMNT" pll
    pll_down
    small_rows pll "FUSE floor "
  fi
  log "small files on the mount"
  mnt_up
  small_files "$MNT" archil
  mnt_down
  small_rows archil ""
fi

# --- creates per second -------------------------------------------------------------------------
creates_on() {  # DIR NAME FILES ROUND: FILES creates in the new directory DIR/cROUND, the rate
  # appended to $W/creates.NAME, then a syncfs (untimed). Rounds and medians because local ext4's
  # rate moved 2,000-65,000/s between runs of the same loop on the test VM (perf: its inode
  # allocator's scan of block groups, find_get_block_common and recently_deleted).
  local rate
  rate=$("$CREATES_BIN" "$1/c$4" --files "$3" --size 1024 | awk '{ print $1 }')
  echo "$rate" >> "$W/creates.$2"
  sync -f "$1"
}
if want creates; then
  CREATES_BIN=$BENCH_REPO/build/release/bench/creates_bench
  [[ -x $CREATES_BIN ]] || { log "no $CREATES_BIN: build first (cmake --build --preset release)"; exit 1; }
  PLL_CREATES=$(( CREATES < PLL_MAX_FILES ? CREATES : PLL_MAX_FILES ))
  PLL=0
  pll_ok 0 && PLL=1
  log "creates: $ROUNDS rounds of $CREATES files, local, passthrough_ll and the mount in turn"
  : > "$W/creates.local"; : > "$W/creates.pll"; : > "$W/creates.archil"
  for r in $(seq "$ROUNDS"); do
    creates_on "$L" local "$CREATES" "$r"
    if [[ $PLL == 1 ]] && pll_up; then
      creates_on "$PMNT" pll "$PLL_CREATES" "$r"
      pll_down
    fi
    mnt_up
    creates_on "$MNT" archil "$CREATES" "$r"
    mnt_down
  done
  rm -rf --one-file-system "$L"/c* "$W"/pll-src/c*  # the mount's go with the server's data
  med() { pct 50 < "$W/creates.$1"; }
  echo "local creates (create, write 1 KiB, close; one process): $(med local) ops/s"
  if [[ -s $W/creates.pll ]]; then
    echo "FUSE floor creates (passthrough_ll over local $FSTYPE): $(med pll) ops/s"
    [[ $PLL_CREATES == "$CREATES" ]] || echo "# passthrough_ll: $PLL_CREATES files a round (its descriptor limit)"
  fi
  echo "creates: $(med archil) ops/s"
  echo "creates, % of local: $(pctof "$(med archil)" "$(med local)")"
  echo "# creates rounds, ops/s: local $(paste -sd' ' "$W/creates.local"); passthrough_ll $(paste -sd' ' "$W/creates.pll"); mount $(paste -sd' ' "$W/creates.archil")"
fi

# --- rclone over s3rver -------------------------------------------------------------------------
LOCAL_SEQ_PRINTED=0
want seq && LOCAL_SEQ_PRINTED=1
# The endpoint is plain http; a caller's AWS_CA_BUNDLE would make rclone's S3 client fail ("unable
# to load custom CA bundle, HTTPClient's transport unsupported type").
RCLONE=(env -u AWS_CA_BUNDLE rclone --config "$W/rclone.conf")
rclone_up() {
  "${RCLONE[@]}" mount s3r:bench "$RMNT" --vfs-cache-mode writes --cache-dir "$W/rclone-cache" \
    --log-file "$W/rclone.log" &
  RCLONE_PID=$!
  for _ in $(seq 200); do
    mounted "$RMNT" && timeout -k 1 5 mountpoint -q "$RMNT" && return 0
    kill -0 "$RCLONE_PID" 2> /dev/null || break
    sleep 0.05
  done
  log "rclone did not mount (waited up to 10 s): $(tail -5 "$W/rclone.log")"
  return 1
}
in_bucket() {  # NAME BYTES: waits (up to ~15 min) until the bucket holds NAME with BYTES bytes
  for _ in $(seq 3000); do
    [[ $(timeout -k 1 30 "${RCLONE[@]}" lsjson "s3r:bench/$1" 2> /dev/null | jq '.[0].Size // -1') == "$2" ]] && return 0
    sleep 0.2
  done
  return 1
}
peers() {
  local s3rver=$BENCH_REPO/node_modules/.bin/s3rver port t0 rw rr
  if ! command -v rclone > /dev/null; then
    log "rclone is not installed (apt-get install rclone): no rclone rows"; return 0
  fi
  if [[ ! -x $s3rver ]] || ! command -v node > /dev/null; then
    log "s3rver is not installed (npm ci in $BENCH_REPO): no rclone rows"; return 0
  fi
  log "starting s3rver and rclone mount"
  "$s3rver" -d "$W/s3" -a 127.0.0.1 -p 0 --silent --configure-bucket bench > "$W/s3rver.log" 2>&1 &
  S3_PID=$!
  wait_alive "$S3_PID" 200 grep -q 'listening on' "$W/s3rver.log" || true
  port=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$W/s3rver.log")
  if [[ -z $port ]]; then
    log "s3rver did not start (waited up to 10 s): $(tail -5 "$W/s3rver.log"): no rclone rows"
    stop "$S3_PID"; S3_PID=
    return 0
  fi
  touch "$W/rclone.conf"
  export RCLONE_CONFIG_S3R_TYPE=s3 RCLONE_CONFIG_S3R_PROVIDER=Other \
    RCLONE_CONFIG_S3R_ENDPOINT=http://127.0.0.1:$port RCLONE_CONFIG_S3R_ACCESS_KEY_ID=S3RVER \
    RCLONE_CONFIG_S3R_SECRET_ACCESS_KEY=S3RVER RCLONE_CONFIG_S3R_FORCE_PATH_STYLE=true
  rclone_up || { log "no rclone rows"; return 0; }
  echo "# rclone $("${RCLONE[@]}" version | awk 'NR == 1 { print $2 }') mount --vfs-cache-mode writes of a bucket on s3rver $(jq -r .version "$BENCH_REPO/node_modules/s3rver/package.json") (127.0.0.1:$port)"

  if want seq || ! want small; then
    local_seq
    log "seq write and read on rclone: $SEQ"
    rw=$(seqw "$RMNT/seq")
    t0=$(now)
    if in_bucket seq "$(numfmt --from=iec "$SEQ")"; then
      echo "# rclone: the seq file was in the bucket $(since "$t0") s after fio's fsync returned"
    else
      echo "# rclone: the seq file was not in the bucket $(since "$t0") s after fio's fsync returned"
    fi
    rclone_down
    rm -rf --one-file-system "$W/rclone-cache"
    drop_caches "$DIR"
    rclone_up || return 0
    rr=$(seqr "$RMNT/seq")
    rm -f "$RMNT/seq"
    if [[ $LOCAL_SEQ_PRINTED == 0 ]]; then
      echo "local seq write 1M + fsync: $LOCAL_SEQW MiB/s"
    fi
    echo "rclone seq write 1M + fsync: $rw MiB/s"
    echo "rclone seq write 1M + fsync, % of local: $(pctof "$rw" "$LOCAL_SEQW")"
    if [[ $LOCAL_SEQ_PRINTED == 0 ]]; then
      echo "local seq read 1M, caches dropped: $LOCAL_SEQR MiB/s"
    fi
    echo "rclone seq read 1M, caches dropped: $rr MiB/s"
    echo "rclone seq read 1M, % of local: $(pctof "$rr" "$LOCAL_SEQR")"
  fi
  if want small || ! want seq; then
    local_small
    log "small files on rclone"
    small_files "$RMNT" rclone
    small_rows rclone "rclone "
  fi
  rclone_down
  stop "$S3_PID"
  S3_PID=
}
if want peers; then peers; fi
