#!/usr/bin/env bash
# abuse.sh: what a disk's user sees while a holder of another disk's token attacks the server
# (docs/protocol.md §12). One `archil server`, two disks: the victim's is mounted and written
# with the O_SYNC line of Archil's published latency script
# (https://docs.archil.com/reference/limits.md#latency); the attacker holds the other disk's
# token and runs bench/abuse_attack.cc. Run by hand as root, with nothing else busy.
#
#   local fsync floor (O_SYNC write on DIR's file system, fresh file)
#                        floor: the script's O_SYNC write line on a file in --dir
#   O_SYNC write ms, idle               the line on the victim's mount, nothing else running
#   O_SYNC write ms, xattr attack       while one file of the attacker's disk is given xattrs up
#                                       to the server's totals and listed in a loop
#   O_SYNC write ms, stall attack       while 256 authenticated connections of the attacker's
#                                       disk each hold a 4 MiB WRITE but its last byte
#   O_SYNC write ms, idle connections   while 4,200 connections from 70 loopback addresses hold
#                                       the disk server's port without a word
#   O_SYNC write ms, all three          the three at once
#   mount ms, all three                 `archil mount` of a disk at a second mount point while
#                                       the three run (a new client gets in)
#   api health ms, idle connections     `curl /api/health` while 4,200 silent connections from
#                                       17 addresses hold the HTTP API's port
# Each attack row is followed by a '#' line with its ratio to the idle row and what the attacker
# did; the target is every attack row's p50 within 2x of the idle one.
#
# The attacker stands for clients on other machines: on a machine with 2 CPUs or more it runs on
# the last CPU alone and the server, the mount and fio on the others (taskset), so that the rows
# show what the server's handling of the attack costs the victim, not the attacker's own loop
# (--no-pin runs everything everywhere).
#
# Usage: bench/abuse.sh [--runtime S] [--lead S] [--dir DIR] [--no-pin] [--rows LIST]
#   --runtime S  fio runtime of each row (default 10)
#   --lead S     how long each attack runs before its row starts (default 2)
#   --rows LIST  comma-separated, of xattr,stall,idle,all,api (default all of them)
#   --dir DIR    where the server's data and the floor's file go (default /var/tmp; not tmpfs)
# Needs fio, jq, curl; build/release (bin/ and bench/abuse_attack).
set -euo pipefail

RUNTIME=10
LEAD=2
DIR=/var/tmp
PIN=1
ROWS=xattr,stall,idle,all,api
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runtime) RUNTIME="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    --no-pin) PIN=0; shift ;;
    --lead) LEAD="$2"; shift 2 ;;
    --rows) ROWS="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "abuse.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

BENCH=abuse.sh
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
[[ $RUNTIME =~ ^[0-9]+$ && $RUNTIME -gt 0 && $LEAD =~ ^[0-9]+$ ]] || { log "--runtime and --lead take whole numbers"; exit 2; }
want() { [[ ,$ROWS, == *,$1,* ]]; }
[[ $(id -u) == 0 ]] || { log "run as root: archil mount needs it"; exit 1; }
[[ -d $DIR ]] || { log "--dir $DIR is not a directory"; exit 1; }
need_tools fio jq curl
BIN=$BENCH_REPO/build/release/bin
ARCHIL=$BIN/archil
ATTACK=$BENCH_REPO/build/release/bench/abuse_attack
for b in "$ARCHIL" "$BIN/archil-server" "$BIN/archil-mount" "$ATTACK"; do
  [[ -x $b ]] || { log "no $b: build first (cmake --preset release && cmake --build build/release)"; exit 1; }
done
export LC_ALL=C
NCPU=$(nproc)
VICTIM_CPUS='' ATTACK_CPUS=''
if [[ $PIN == 1 && $NCPU -ge 2 ]]; then
  need_tools taskset
  VICTIM_CPUS=0-$((NCPU - 2)) ATTACK_CPUS=$((NCPU - 1))
  # This shell and what it starts (server, mount daemons, fio) keep off the attacker's CPU.
  taskset -pc "$VICTIM_CPUS" $$ > /dev/null
fi
unset ARCHIL_JOURNAL_SOCKET ARCHIL_ENDPOINT ARCHIL_REGION ARCHIL_API_KEY ARCHIL_MOUNT_TOKEN
latency_fio "$RUNTIME"

export ARCHIL_OWNER_PID=$$  # the server and the mount daemons end with this shell
W=$(realpath "$(mktemp -d "$DIR/abuse-bench.XXXXXX")")
MNT=$W/mnt MNT2=$W/mnt2
mkdir -p "$MNT" "$MNT2" "$W/run" "$W/local"
export ARCHIL_RUN_DIR=$W/run
SERVER_PID='' ATTACKS=()

stop_attacks() {
  local p
  for p in ${ATTACKS[@]+"${ATTACKS[@]}"}; do stop "$p"; done
  ATTACKS=()
}
cleanup() {
  set +e
  stop_attacks
  force_unmount "$ARCHIL" "$MNT2"
  force_unmount "$ARCHIL" "$MNT"
  stop "$SERVER_PID"
  remove_work_dir "$W"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "starting archil server in $W"
"$ARCHIL" server --data-dir "$W/data" --api-listen 127.0.0.1:0 --mount-listen 127.0.0.1:0 \
  --region abuse-1 --log-level warn > "$W/server.log" 2>&1 &
SERVER_PID=$!
wait_alive "$SERVER_PID" 200 test -f "$W/run/abuse-1.json" || true
[[ -f $W/run/abuse-1.json ]] || { log "the server did not start: $(cat "$W/server.log")"; exit 1; }
MOUNT_ADDR=$(jq -r .mount "$W/run/abuse-1.json")
API_ADDR=$(jq -r .api "$W/run/abuse-1.json" | sed 's|^http://||')
VICTIM_JSON=$("$ARCHIL" --json disks create victim)
ATTACKER_JSON=$("$ARCHIL" --json disks create attacker)
export ARCHIL_MOUNT_TOKEN
ARCHIL_MOUNT_TOKEN=$(jq -r '.authorizedUsers[0].token' <<< "$VICTIM_JSON")
ATTACKER_TOKEN=$(jq -r '.authorizedUsers[0].token' <<< "$ATTACKER_JSON")
"$ARCHIL" mount -q victim "$MNT"
timeout -k 1 10 mountpoint -q "$MNT" || { log "$MNT does not answer"; exit 1; }

echo "# abuse bench on $(hostname), $(date -u +%FT%TZ), kernel $(uname -r), $(nproc --all) CPUs, revision $(git -C "$BENCH_REPO" describe --always --dirty 2> /dev/null || echo unknown)"
echo "# dir $DIR ($(dir_fs "$DIR")), fio runtime $RUNTIME s, disk server $MOUNT_ADDR, API $API_ADDR, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# CPUs: ${VICTIM_CPUS:-all} for the server, the mount and fio; ${ATTACK_CPUS:-all} for the attacker"

# Starts attack "$@" for the row's runtime plus its 2 s lead, its output in $W/attack-N.txt.
attack() {
  if [[ -n $ATTACK_CPUS ]]; then
    taskset -c "$ATTACK_CPUS" "$ATTACK" "$@" > "$W/attack-${#ATTACKS[@]}.txt" 2>&1 &
  else
    "$ATTACK" "$@" > "$W/attack-${#ATTACKS[@]}.txt" 2>&1 &
  fi
  ATTACKS+=($!)
}
# Waits for the attacks to finish (bounded) and prints their last lines as '#' lines.
attacks_done() {
  local p i=0
  for p in ${ATTACKS[@]+"${ATTACKS[@]}"}; do
    reap "$p" 30 || stop "$p"
  done
  while [[ -f $W/attack-$i.txt ]]; do
    echo "# attacker: $(tail -1 "$W/attack-$i.txt")"
    rm -f "$W/attack-$i.txt"
    i=$((i + 1))
  done
  ATTACKS=()
}
# fio's O_SYNC write line on the victim's mount, on a fresh file each time (the latency script's
# own condition: rewriting a file already written is a different and slower path, see
# docs/measurements.md §17; and the earlier rows' files are kept, not deleted, so that no row
# overlaps the background work of a deletion): its JSON in $W/fio.json, "P50 P95" in OSYNC.
# Called in this shell, never in a subshell, so that the next row's file is a new one.
ROW_FILE=0
osync() {
  ROW_FILE=$((ROW_FILE + 1))
  $FIO --filename="$MNT/w-$ROW_FILE" --size=1G --rw=randwrite --sync=1 > "$W/fio.json"
  OSYNC=$(fiostat write < "$W/fio.json")
}
# Sums /proc/PID/task/*/schedstat over PIDS by thread name (digits dropped: the pool's threads
# as one): "NAME CPU_NS WAIT_NS" lines (time run, time runnable but waiting for a CPU).
sched_ns() {
  local pid t
  for pid; do
    for t in /proc/"$pid"/task/*; do
      { read -r name < "$t/comm" && read -r run wait _ < "$t/schedstat" && echo "${name//[0-9]/} $run $wait"; } 2> /dev/null || true
    done
  done | awk '{ r[$1] += $2; w[$1] += $3 } END { for (n in r) printf "%s %.0f %.0f\n", n, r[n], w[n] }' | sort
}
# After osync: '#' lines with what each of its writes cost the server's and the mount daemon's
# threads, by name, in CPU and in time runnable but waiting for a CPU (BEFORE: a file of
# sched_ns lines taken before it).
sched_line() {
  local n
  n=$(jq '.jobs[0].write.total_ios' "$W/fio.json")
  sched_victim > "$W/sched-after"
  awk -v n="$n" 'NR == FNR { r[$1] = $2; w[$1] = $3; next }
    { c = ($2 - r[$1]) / n / 1e3; q = ($3 - w[$1]) / n / 1e3
      if (c >= 1 || q >= 1) line = line sprintf("%s%s %.0f/%.0f", line == "" ? "" : ", ", $1, c, q) }
    END { printf "# per write (%d), us of CPU/us runnable waiting by thread: %s\n", n, line }' "$1" "$W/sched-after"
}
# The server's and the victim's mount daemon's threads (the daemon's names prefixed "mount:").
sched_victim() {
  sched_ns "$SERVER_PID"
  local daemons
  mapfile -t daemons < <(pgrep -f "archil-mount.* $MNT$" || true)
  sched_ns ${daemons[@]+"${daemons[@]}"} | sed 's/^/mount:/'
}
row() {  # NAME P50 P95
  printf '%s: p50 %.3f ms, p95 %.3f ms\n' "$1" "$2" "$3"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
SECS=$((RUNTIME + LEAD + 1))

log "floor: the O_SYNC line on $DIR"
read -r p50 p95 < <($FIO --filename="$W/local/w" --size=1G --rw=randwrite --sync=1 | fiostat write)
row "local fsync floor (O_SYNC write on $(findmnt -n -o FSTYPE --target "$DIR"), fresh file)" "$p50" "$p95"
rm -f "$W/local/w"

log "idle"
sched_victim > "$W/sched-before"
osync
read -r idle50 idle95 <<< "$OSYNC"
row "O_SYNC write ms, idle" "$idle50" "$idle95"
sched_line "$W/sched-before"

measure() {  # NAME: the O_SYNC row while the attacks started just before run
  sleep "$LEAD"
  sched_victim > "$W/sched-before"
  osync
  read -r p50 p95 <<< "$OSYNC"
  row "O_SYNC write ms, $1" "$p50" "$p95"
  echo "# $1: $(ratio "$p50" "$idle50") of idle at p50, $(ratio "$p95" "$idle95") at p95"
  sched_line "$W/sched-before"
}

if want xattr; then
  log "xattr attack"
  attack xattr "$MOUNT_ADDR" "$ATTACKER_TOKEN" "$SECS"
  measure "xattr attack"
  attacks_done
fi

if want stall; then
  log "stall attack"
  attack stall "$MOUNT_ADDR" "$ATTACKER_TOKEN" "$SECS"
  measure "stall attack"
  attacks_done
fi

if want idle; then
  log "idle-connection flood"
  attack idle "$MOUNT_ADDR" "$SECS" 4200 70
  measure "idle connections"
  attacks_done
fi

want all || ROWS=$ROWS,skip-all
if want all; then
log "all three"
attack xattr "$MOUNT_ADDR" "$ATTACKER_TOKEN" "$SECS"
attack stall "$MOUNT_ADDR" "$ATTACKER_TOKEN" "$SECS"
attack idle "$MOUNT_ADDR" "$SECS" 4200 70
measure "all three"
attacks_done
# A new client gets in while the three run: the attacker's own disk mounted at a second point.
attack xattr "$MOUNT_ADDR" "$ATTACKER_TOKEN" 8
attack stall "$MOUNT_ADDR" "$ATTACKER_TOKEN" 8
attack idle "$MOUNT_ADDR" 8 4200 70
sleep "$LEAD"
t0=$EPOCHREALTIME
if ARCHIL_MOUNT_TOKEN=$ATTACKER_TOKEN "$ARCHIL" mount -q attacker "$MNT2" > "$W/mount2.txt" 2>&1; then
  echo "mount ms, all three: $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", (b - a) * 1000 }') ms"
else
  echo "mount ms, all three: failed ($(head -1 "$W/mount2.txt"))"
fi
force_unmount "$ARCHIL" "$MNT2" || true
attacks_done
fi

want api || exit 0
log "idle connections on the HTTP API"
attack idle "$API_ADDR" "$SECS" 4200 17
sleep "$LEAD"
: > "$W/health.txt"
end=$((SECONDS + RUNTIME))
while ((SECONDS < end)); do
  curl -s -o /dev/null -m 5 -w '%{time_total}\n' "http://$API_ADDR/api/health" >> "$W/health.txt" || echo 5 >> "$W/health.txt"
done
attacks_done
echo "api health ms, idle connections: $(awk '{ print $1 * 1000 }' "$W/health.txt" | stats) ($(wc -l < "$W/health.txt") requests)"
