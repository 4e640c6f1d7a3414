#!/usr/bin/env bash
# tier_server.sh: the tier through `archil server --object-store s3://…`, against the strict S3 fake
# (tests/s3_fake, archil-s3-fake) with a realistic first byte and bandwidth, one mount, one run.
# Run by hand as root (archil mount needs it); release build.
#
#   floor, local fsync                fio's O_SYNC 4 KiB line of Archil's published latency script
#                                     on the file system of --dir
#   O_SYNC write, cache-miss read,    the script's O_SYNC and randread lines (a 64 MiB file, the
#   tier idle / while uploads run     mount with --read-ahead 0), in --rounds interleaved rounds:
#                                     with nothing waiting for the bucket, and right after
#                                     min(--size, 768) MiB was written with the fake stopped and
#                                     the fake continued (the MiB still waiting at each line's end
#                                     are printed); medians of the rounds' p50 and p95 (TARGET:
#                                     uploading p50 <= idle p50 + max(10 %, 30 us))
#   floor, the store client alone     S3Store::PutFile of 12 files of 64 MiB, 4 at once
#                                     (bench/store_bench.cc), on a fake of its own with the same
#                                     latency and bandwidth: what the fake and a client that does
#                                     nothing else manage together on this machine
#   upload through the server         --size MiB (at most 768: under the server's 1 GiB backlog
#                                     bound) written with 1 MiB writes and fsynced while the
#                                     fake is stopped (SIGSTOP, at most 8 s: under the stall
#                                     timeout and the lease), so a backlog builds that the mount
#                                     could not otherwise outpace the fake with; then the fake is
#                                     continued and the time until the disk's backlog (sealed, not
#                                     uploaded) is 0 is taken: MB/s, the share of the floor and
#                                     of the fake's bandwidth (TARGET >= 80 % of the bandwidth)
#   recovery point, sustained write   fio writing sequentially at the fake's bandwidth for
#                                     --sustain s; the disk's oldest waiting byte and backlog,
#                                     sampled every 200 ms from GET /api/disks/{id} (the open
#                                     segment, at most 8 s old, comes on top), and the rate fio got
#   recovery of the disk              the server stopped (it drains), its data directory deleted,
#                                     a new one started on the bucket: the time it reports
#
# Usage: bench/tier_server.sh [--latency-ms N] [--mbps N] [--size MiB] [--sustain S] [--runtime S]
#                             [--rounds N] [--dir DIR] [--pin] [--payload signed|unsigned]
#   --pin: the fake on the last CPU alone, the server, the mount and fio on the others (the store
#   stands for a service on other machines; without it, the fake's CPU competes with the server's)
#   --payload: how the server and the store client send PUT bodies (S3Config::payload: signed,
#   SHA-256 in the signature; unsigned, UNSIGNED-PAYLOAD and a CRC32C). The fake speaks http, where
#   the default is signed; unsigned is what a store reached over https gets by default.
#   defaults: 20 ms first byte, 200 MB/s, 1024 MiB, 20 s of sustained writes, 5 s per latency row,
#   3 rounds of the idle/uploading lines,
#   /var/tmp (a fresh subdirectory, removed on every exit unless ARCHIL_BENCH_KEEP=1). The fake
#   keeps objects in memory: --size 10240 needs over 10 GiB of it.
set -euo pipefail

LATENCY=20 MBPS=200 SIZE=1024 SUSTAIN=20 RUNTIME=5 ROUNDS=3 DIR=/var/tmp PIN=0 PAYLOAD=signed
while [[ $# -gt 0 ]]; do
  case "$1" in
    --latency-ms) LATENCY="$2"; shift 2 ;;
    --mbps) MBPS="$2"; shift 2 ;;
    --size) SIZE="$2"; shift 2 ;;
    --sustain) SUSTAIN="$2"; shift 2 ;;
    --runtime) RUNTIME="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    --pin) PIN=1; shift ;;
    --payload) PAYLOAD="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "tier_server.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[[ $PAYLOAD == signed || $PAYLOAD == unsigned ]] || { echo "tier_server.sh: --payload is signed or unsigned" >&2; exit 2; }
for n in "$LATENCY" "$MBPS" "$SIZE" "$SUSTAIN" "$RUNTIME" "$ROUNDS"; do
  [[ $n =~ ^[0-9]+$ && $n -gt 0 ]] || { echo "tier_server.sh: numbers must be whole and positive" >&2; exit 2; }
done
BENCH=tier_server.sh
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
[[ $(id -u) == 0 ]] || { log "run as root: archil mount needs it"; exit 1; }
need_tools jq fio curl dd
B=$BENCH_REPO/build/release
ARCHIL=$B/bin/archil
FAKE=$B/tests/s3_fake/archil-s3-fake
[[ -x $ARCHIL && -x $FAKE ]] || { log "no $ARCHIL or $FAKE: build the release preset first"; exit 1; }
unset ARCHIL_JOURNAL_SOCKET ARCHIL_ENDPOINT ARCHIL_REGION ARCHIL_API_KEY ARCHIL_MOUNT_TOKEN
export ARCHIL_OWNER_PID=$$
W=$(realpath "$(mktemp -d "$DIR/tier-server-bench.XXXXXX")")
MNT=$W/mnt
mkdir -p "$MNT" "$W/run"
export ARCHIL_RUN_DIR=$W/run
SERVER_PID='' FAKE_PID=''
cleanup() {
  set +e
  [[ -n $FAKE_PID ]] && kill -CONT "$FAKE_PID" 2> /dev/null
  force_unmount "$ARCHIL" "$MNT"
  stop "$SERVER_PID"
  stop "$FAKE_PID"
  remove_work_dir "$W"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

FAKE_CPUS=''
if [[ $PIN == 1 && $(nproc) -ge 2 ]]; then
  need_tools taskset
  FAKE_CPUS=$(($(nproc) - 1))
  taskset -pc "0-$(($(nproc) - 2))" $$ > /dev/null  # this shell and what it starts but the fake
fi
export AWS_ACCESS_KEY_ID=archil-test AWS_SECRET_ACCESS_KEY=archil-test-secret
# The floor of the upload row: the store client alone (bench/store_bench.cc: S3Store::PutFile of
# 12 files of 64 MiB, 4 at once, as the server's uploader sends them) on a fake of its own with
# the same latency and bandwidth, on this machine's cores: what the fake and a client that does
# nothing else manage together here.
STORE_BENCH=$B/bench/store_bench
FLOOR_MBS=unmeasured
if [[ -x $STORE_BENCH ]]; then
  start_fake --first-byte-latency-ms "$LATENCY" --bandwidth-mbps "$MBPS"
  FLOOR_MBS=$("$STORE_BENCH" --endpoint "$EP" --dir "$W" --segments 12 --in-flight 4 --reads 1 \
    --payload "$PAYLOAD" |
    sed -n 's/^upload.*: \([0-9.]*\) MB\/s$/\1/p')
  stop "$FAKE_PID"
fi
start_fake --first-byte-latency-ms "$LATENCY" --bandwidth-mbps "$MBPS"
STORE="s3://archil/bench?endpoint=$EP&region=us-east-1&payload=$PAYLOAD"

start_server() {
  "$ARCHIL" server --data-dir "$W/data" --api-listen 127.0.0.1:0 --mount-listen 127.0.0.1:0 \
    --region tier-1 --object-store "$STORE" --metrics-listen 127.0.0.1:0 >> "$W/server.log" 2>&1 &
  SERVER_PID=$!
  rm -f "$W/run/tier-1.json"
  for _ in $(seq 36000); do  # a recovery takes minutes for a large disk: up to 30, while it runs
    [[ -f $W/run/tier-1.json ]] && break
    kill -0 "$SERVER_PID" 2> /dev/null || break
    sleep 0.05
  done
  [[ -f $W/run/tier-1.json ]] || { log "the server did not start: $(tail -5 "$W/server.log")"; exit 1; }
  API=$(jq -r .api "$W/run/tier-1.json")
  KEY=$(cat "$W/data/admin-api-key")
  METRICS=$(sed -n 's/.*metrics: serving GET \/metrics on //p' "$W/server.log" | tail -1)
}
# A counter or gauge of the server's /metrics, as an integer: one curl and one awk, since a
# loop that polls must not take the CPU it measures (curl and two jq every 0.1 s took 17 % of
# this 2-core machine during the upload row).
metric() { curl -sf "http://$METRICS/metrics" | awk -v m="$1" '$1 == m { printf "%.0f", $2 }'; }
# Segment bytes the server has stored in the bucket so far.
uploaded() { metric archil_tier_uploaded_bytes_total; }
# The disk's "tier" object (api.md), compact.
tier() { curl -sf -H "Authorization: Bearer $KEY" "$API/api/disks/$DISK" | jq -c '.data.tier // .tier'; }
# Waits until the server's backlog (sealed, not uploaded: this bench's one disk) is 0 (up to
# $1 s); prints the seconds it took, to the ms.
drain_time() {
  local start=$EPOCHREALTIME end=$((SECONDS + $1))
  while (($(metric archil_tier_upload_backlog_bytes) > 0)) && ((SECONDS < end)); do sleep 0.1; done
  awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }'
}

start_server
export ARCHIL_MOUNT_TOKEN
created=$("$ARCHIL" --json disks create tb)
DISK=$(jq -r .diskId <<< "$created")
ARCHIL_MOUNT_TOKEN=$(jq -r '.authorizedUsers[0].token' <<< "$created")
"$ARCHIL" mount -q --read-ahead 0 tb "$MNT"  # as bench/mount.sh's cache-miss line
latency_fio "$RUNTIME"

echo "# tier_server bench on $(hostname), $(date -u +%FT%TZ), kernel $(uname -r), $(nproc) CPUs, revision $(git -C "$BENCH_REPO" describe --always --dirty 2> /dev/null || echo unknown)"
echo "# store: archil-s3-fake at $EP, first byte ${LATENCY} ms, ${MBPS} MB/s; --dir $DIR ($(dir_fs "$DIR")); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# CPUs: ${FAKE_CPUS:-all} for the fake; $([[ -n $FAKE_CPUS ]] && echo "0-$((FAKE_CPUS - 1))" || echo all) for the server, the mount and fio"
mkdir -p "$W/floor"
echo "floor, local fsync: $($FIO --filename="$W/floor/f" --size=64m --rw=write --sync=1 | fiolat write)"

# What the rows that need uploads to run write while the fake is stopped: at most 768 MiB, under
# the server's 1 GiB backlog bound.
HELD=$((SIZE < 768 ? SIZE : 768))
# Stops the fake, with a guard that continues it after 8 s whatever happens: a longer stop would
# lapse the server's lease (13 s) and hold the writes, and with them this script, until it came
# back. continue_fake ends the stop and the guard.
hold_fake() {
  kill -STOP "$FAKE_PID"
  (sleep 8; kill -CONT "$FAKE_PID" 2> /dev/null) &
  GUARD_PID=$!
}
continue_fake() {
  kill -CONT "$FAKE_PID"
  kill "$GUARD_PID" 2> /dev/null || true
  wait "$GUARD_PID" 2> /dev/null || true
}
# Writes and fsyncs $HELD MiB to $1 with 1 MiB writes; the last full segment is then sealed.
write_held() {
  timeout -k 1 900 dd if=/dev/urandom of="$1" bs=1M count="$HELD" conv=fsync status=none
  sleep 1
}

# $HELD MiB written with the fake stopped, then how long the bucket takes for it.
hold_fake
start=$EPOCHREALTIME
write_held "$MNT/big"
wrote=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
u0=$(uploaded)
continue_fake
# The uploads the fake's pause held, and every segment sealed meanwhile: the bytes the server
# stored from here until nothing sealed waits.
secs=$(drain_time 600)
moved=$(($(uploaded) - u0))
mib=$(awk -v b="$moved" 'BEGIN { printf "%.0f", b / 1048576 }')
rate=$(awk -v b="$moved" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0 ? b / s / 1e6 : 0) }')
echo "# $HELD MiB written and fsynced in $wrote s with the fake stopped; $mib MiB uploaded once it was continued (the rest in the open segment)"
echo "floor, the store client alone on the same fake, 4 files in flight: ${FLOOR_MBS} MB/s"
echo "upload through the server: $rate MB/s ($mib MiB in $secs s; $(awk -v a="$rate" -v b="$FLOOR_MBS" 'BEGIN { if (b + 0 > 0) printf "%.0f %% of the floor", 100 * a / b; else printf "no floor" }'))"
share=$(awk -v a="$rate" -v b="$MBPS" 'BEGIN { printf "%.0f", 100 * a / b }')
echo "TARGET upload-share ($share % of $MBPS MB/s, target >= 80 %): $(awk -v s="$share" 'BEGIN { print (s >= 80) ? "met" : "missed" }')"

# The seed's O_SYNC and cache-miss lines with the tier idle and while uploads run, interleaved
# over --rounds rounds so that the VM's drift between rows falls on both. Uploads run: the fake
# is stopped while $HELD MiB is written (sealed, waiting), continued, and the line runs at once;
# the backlog at the line's end shows whether the uploads outlasted it.
$FIO --filename="$MNT/r" --size=64m --rw=write > /dev/null  # the cache-miss line's file
sync -f "$MNT/r"
line() {  # write|read: one run of that line; prints "p50 p95" in ms
  if [[ $1 == write ]]; then
    $FIO --filename="$MNT/osync" --size=64m --rw=write --sync=1 | fiostat write
  else
    $FIO --filename="$MNT/r" --size=64m --rw=randread | fiostat read
  fi
}
: > "$W/rounds"
for ((round = 1; round <= ROUNDS; round++)); do
  for kind in write read; do
    drain_time 600 > /dev/null
    echo "$kind idle $(line "$kind")" >> "$W/rounds"
    hold_fake
    write_held "$MNT/churn"
    continue_fake
    l=$(line "$kind")
    echo "$kind busy $l $(($(metric archil_tier_upload_backlog_bytes) >> 20))" >> "$W/rounds"
  done
done
drain_time 600 > /dev/null
for kind in write read; do
  name=$([[ $kind == write ]] && echo "O_SYNC write" || echo "cache-miss read")
  # The median over the rounds of column $2 ($3: idle|busy), in ms to the µs.
  med() { awk -v k="$kind" -v s="$2" -v c="$1" '$1 == k && $2 == s { print $c }' "$W/rounds" | pct 50 | awk '{ printf "%.3f", $1 }'; }
  idle=$(med 3 idle) busy=$(med 3 busy) idle95=$(med 4 idle) busy95=$(med 4 busy)
  left=$(awk -v k="$kind" '$1 == k && $2 == "busy" { printf "%s%d", (n++ ? "/" : ""), $5 }' "$W/rounds")
  echo "$name, tier idle: p50 $idle ms, p95 $idle95 ms (median of $ROUNDS rounds)"
  echo "$name while uploads run: p50 $busy ms, p95 $busy95 ms (median of $ROUNDS rounds; MiB still waiting at each line's end: $left)"
  echo "TARGET $kind-while-uploading (p50 $busy ms against $idle ms, target <= + max(10 %, 30 us)): $(awk -v a="$busy" -v b="$idle" 'BEGIN { m = b * 0.1; if (m < 0.03) m = 0.03; print (a <= b + m) ? "met" : "missed" }')"
done

# The recovery point under a sustained write at the store's bandwidth.
fio --name=sustain --filename="$MNT/sustain" --rw=write --bs=1m --size=$((MBPS * SUSTAIN * 2))m \
  --fallocate=none --time_based \
  --runtime="$SUSTAIN" --rate="${MBPS}m" --end_fsync=1 --output-format=json > "$W/sustain.json" &
FIO_PID=$!
: > "$W/samples"
while alive "$FIO_PID"; do
  tier | jq -r '"\(.oldestToUploadMs) \(.bytesToUpload) \(.writes)"' >> "$W/samples" || true
  sleep 0.2
done
reap "$FIO_PID" 30 || true
got=$(jq -r '.jobs[0].write.bw_bytes / 1e6 | floor' "$W/sustain.json")
oldest=$(cut -d' ' -f1 "$W/samples")
held=$(cut -d' ' -f2 "$W/samples" | awk '{ print int($1 / 1048576) }')
waits=$(grep -c waiting "$W/samples" || true)
echo "recovery point at ${MBPS} MB/s sustained, oldest waiting byte: p50 $(pct 50 <<< "$oldest") ms, max $(pct 100 <<< "$oldest") ms (plus the open segment: at most 8 s)"
echo "recovery point at ${MBPS} MB/s sustained, backlog: p50 $(pct 50 <<< "$held") MiB, max $(pct 100 <<< "$held") MiB; fio wrote $got MB/s; $waits of $(wc -l < "$W/samples") samples had writes waiting"
drain_time 600 > /dev/null

# Recovery: everything drains at the stop; a new server on the bucket from an empty directory.
used=$(du -sm "$W/data/engine/segments" | cut -f1)
force_unmount "$ARCHIL" "$MNT"
stop "$SERVER_PID"
SERVER_PID=''
rm -rf --one-file-system "$W/data"
start=$EPOCHREALTIME
start_server
took=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
echo "recovery of the disk ($used MiB of segments): $took s to serving; the server says: $(grep -o 'tier: recovered.*' "$W/server.log" | tail -1)"
