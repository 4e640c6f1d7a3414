#!/usr/bin/env bash
# Control-plane latency, measured with our own code the way Archil's published latency script
# measures it (https://docs.archil.com/reference/limits.md#latency; rows described in
# docs/targets.md): `create ms` / `delete ms` are curl's time_total minus time_appconnect, one new
# connection per request, each create durably committed (SQLite WAL, synchronous=FULL) before it
# answers. The original script also runs against an `archil server` unchanged except for API and
# REGION; today it gets as far as its create and delete rows.
# Also: `archil version` cold start (hyperfine), and the floors under these rows (fio, health).
#
#   bench/control_plane.sh [-n N] [--latency-script PATH]       default N=200
# --latency-script: afterwards, also run Archil's published latency script (its latency.sh, or the
# Markdown page that holds it) against the same server, unchanged except for its API and REGION
# lines; it prints the rows this project can already serve and stops at the first it cannot.
# Starts its own server on a free port in a temporary directory under /var/tmp (a real disk, not
# tmpfs), and removes it afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=bench
# shellcheck source=bench/lib.sh
source bench/lib.sh
N=200
LATENCY_SCRIPT=
while [ $# -gt 0 ]; do
  case "$1" in
    -n) N="$2"; shift 2 ;;
    --latency-script) LATENCY_SCRIPT="$2"; shift 2 ;;
    *) echo "usage: bench/control_plane.sh [-n N] [--latency-script PATH]" >&2; exit 2 ;;
  esac
done
if [ -n "$LATENCY_SCRIPT" ] && [ ! -r "$LATENCY_SCRIPT" ]; then
  echo "bench: cannot read $LATENCY_SCRIPT" >&2; exit 2
fi
for tool in curl jq hyperfine fio; do
  command -v $tool >/dev/null || { echo "bench: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done
BIN=${ARCHIL_BIN_DIR:-build/release/bin}  # another build: ARCHIL_BIN_DIR=build/xyz/bin
[ -x $BIN/archil ] || { echo "bench: build first (scripts/setup.sh)" >&2; exit 1; }

T=$(mktemp -d /var/tmp/archil-bench.XXXXXX)
cleanup() { [ -n "${PID:-}" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
$BIN/archil server --data-dir "$T/data" --api-listen 127.0.0.1:0 --mount-listen 127.0.0.1:0 --run-dir "$T/run" --log-level warn \
  2>"$T/server.log" &
PID=$!
for _ in $(seq 100); do [ -f "$T/run/local.json" ] && break; sleep 0.05; done
API=$(jq -r .api "$T/run/local.json")
KEY=$(cat "$T/data/admin-api-key")

pct() { sort -n | awk -v p="$1" '{ a[NR] = $1 } END { print a[int((NR * p + 99) / 100)] }'; }
stats() { local v; v=$(cat); echo "p50 $(pct 50 <<< "$v"), p95 $(pct 95 <<< "$v")"; }
api() { curl -sf -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' "$@"; }

for i in $(seq "$N"); do
  api -o "$T/create.json" -w '%{time_appconnect} %{time_total}\n' -X POST "$API/api/disks" \
    -d "{\"name\":\"bench-$i\"}" >> "$T/create.txt"
  api -o /dev/null -w '%{time_appconnect} %{time_total}\n' -X DELETE \
    "$API/api/disks/$(jq -r .data.diskId "$T/create.json")" >> "$T/delete.txt"
done
# The same creates and deletes back to back on one keep-alive connection (one curl process), to
# show the server's own cost without the idle gap the latency script's loop leaves between requests.
args=()
for i in $(seq "$N"); do
  args+=(-sf -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $KEY"
         -H 'Content-Type: application/json' -d "{\"name\":\"kept-$i\"}" "$API/api/disks" --next)
done
curl "${args[@]}" -s -o /dev/null "$API/api/health" > "$T/kept.txt"
echo "machine: $(nproc) cores, $(uname -r), data dir on $(df --output=source "$T" | tail -1)"
echo "requests: $N creates + $N deletes, new connection each, plain HTTP on loopback"
echo "create ms: $(awk '{ print ($2 - $1) * 1000 }' "$T/create.txt" | stats)"
echo "delete ms: $(awk '{ print ($2 - $1) * 1000 }' "$T/delete.txt" | stats)"
echo "create ms, back to back on one connection: $(head -n "$N" "$T/kept.txt" | awk '{ print $1 * 1000 }' | stats)"

# The floors, measured the same way: a durable 4 KiB write back to back, and the same write 5 ms
# after the previous one (how creates arrive in the latency script's loop: curl starts between
# them; on this VM a flush after an idle gap costs several times a back-to-back one). And the HTTP round trip
# of this server on a new connection with no commit (GET /api/health).
floor() {
  fio --name=floor --directory="$T" --rw=write --bs=4k --size=16m --fdatasync=1 --runtime=5 \
    --time_based --output-format=json "$@" > "$T/fio.json" 2>/dev/null
  jq -r '.jobs[0].sync.lat_ns.percentile | "p50 \(.["50.000000"] / 1e6), p95 \(.["95.000000"] / 1e6)"' \
    "$T/fio.json"
}
echo "floor, 4k write+fdatasync back to back ms: $(floor)"
echo "floor, 4k write+fdatasync 5 ms apart ms: $(floor --thinktime=5000 --thinktime_blocks=1)"
for i in $(seq "$N"); do curl -s -o /dev/null -w '%{time_appconnect} %{time_total}\n' "$API/api/health"; done \
  > "$T/health.txt"
echo "health (HTTP, no commit) ms: $(awk '{ print ($2 - $1) * 1000 }' "$T/health.txt" | stats)"

hyperfine -N -w 20 -r 300 --export-json "$T/hf.json" "$BIN/archil version" >/dev/null 2>&1
echo "archil version cold start ms: $(jq -r '.results[0] | "mean \(.mean * 1000 | . * 100 | round / 100), min \(.min * 1000 | . * 100 | round / 100)"' "$T/hf.json")"

if [ -n "$LATENCY_SCRIPT" ]; then
  # The script as published, from its own file or from the code block of its Markdown page; only
  # the API and REGION assignments are replaced.
  latency_script "$LATENCY_SCRIPT" "$T/latency.sh" "$API" local
  echo "Archil's published latency script, against this server:"
  bin_abs=$(realpath "$BIN")
  # Its mount rows read the daemon's line from journald: start one if none runs.
  JOURNALD=
  if ! pgrep -x systemd-journal > /dev/null && [ -x /lib/systemd/systemd-journald ]; then
    /lib/systemd/systemd-journald > /dev/null 2>&1 &
    JOURNALD=$!
    sleep 0.5
  fi
  # `--region local` finds this server through its advertisement in $T/run.
  ( cd "$T" && ARCHIL_API_KEY="$KEY" ARCHIL_RUN_DIR="$T/run" PATH="$bin_abs:$PATH" \
      timeout 600 bash latency.sh ) 2>&1 | sed 's/^/  /' || true
  if [ -n "$JOURNALD" ]; then kill "$JOURNALD" 2> /dev/null || true; fi
  # The script stops at its first command we do not have yet (checkpoints), leaving its mount.
  if grep -qs " /mnt/latency-test fuse.archil " /proc/self/mounts; then
    "$BIN/archil" unmount -f /mnt/latency-test > /dev/null 2>&1 || umount -l /mnt/latency-test || true
  fi
fi
