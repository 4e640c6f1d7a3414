#!/usr/bin/env bash
# Control-plane latency, measured the way the seed's latency script measures it (seed/latency.md):
# `create ms` / `delete ms` are curl's time_total minus time_appconnect, one new connection per
# request, each create durably committed (SQLite WAL, synchronous=FULL) before it answers.
# Also: `archil version` cold start (hyperfine) and this disk's fdatasync floor (fio), for context.
#
#   bench/control_plane.sh [-n N]        default N=200
# Starts its own server on a free port in a temporary directory under /var/tmp (a real disk, not
# tmpfs), and removes it afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
N=200
while [ $# -gt 0 ]; do
  case "$1" in
    -n) N="$2"; shift 2 ;;
    *) echo "usage: bench/control_plane.sh [-n N]" >&2; exit 2 ;;
  esac
done
for tool in curl jq hyperfine fio; do
  command -v $tool >/dev/null || { echo "bench: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done
BIN=build/release/bin
[ -x $BIN/archil ] || { echo "bench: build first (scripts/setup.sh)" >&2; exit 1; }

T=$(mktemp -d /var/tmp/archil-bench.XXXXXX)
cleanup() { [ -n "${PID:-}" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
$BIN/archil server --data-dir "$T/data" --api-listen 127.0.0.1:0 --run-dir "$T/run" --log-level warn \
  2>"$T/server.log" &
PID=$!
for _ in $(seq 100); do [ -f "$T/run/local.json" ] && break; sleep 0.05; done
API=$(jq -r .api "$T/run/local.json")
KEY=$(cat "$T/data/admin-api-key")

pct() { sort -n | awk -v p=$1 '{ a[NR] = $1 } END { print a[int((NR * p + 99) / 100)] }'; }
stats() { local v; v=$(cat); echo "p50 $(pct 50 <<< "$v"), p95 $(pct 95 <<< "$v")"; }
api() { curl -sf -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' "$@"; }

for i in $(seq "$N"); do
  api -o "$T/create.json" -w '%{time_appconnect} %{time_total}\n' -X POST "$API/api/disks" \
    -d "{\"name\":\"bench-$i\"}" >> "$T/create.txt"
  api -o /dev/null -w '%{time_appconnect} %{time_total}\n' -X DELETE \
    "$API/api/disks/$(jq -r .data.diskId "$T/create.json")" >> "$T/delete.txt"
done
echo "machine: $(nproc) cores, $(uname -r), data dir on $(df --output=source "$T" | tail -1)"
echo "requests: $N creates + $N deletes, new connection each, plain HTTP on loopback"
echo "create ms: $(awk '{ print ($2 - $1) * 1000 }' "$T/create.txt" | stats)"
echo "delete ms: $(awk '{ print ($2 - $1) * 1000 }' "$T/delete.txt" | stats)"

fio --name=floor --directory="$T" --rw=write --bs=4k --size=16m --fdatasync=1 --runtime=5 \
  --time_based --output-format=json > "$T/fio.json" 2>/dev/null
echo "fdatasync floor ms (fio 4k append+fdatasync): $(jq -r '.jobs[0].sync.lat_ns.percentile |
  "p50 \(.["50.000000"] / 1e6), p95 \(.["95.000000"] / 1e6)"' "$T/fio.json")"

hyperfine -N -w 20 -r 300 --export-json "$T/hf.json" "$BIN/archil version" >/dev/null 2>&1
echo "archil version cold start ms: $(jq -r '.results[0] | "mean \(.mean * 1000 | . * 100 | round / 100), min \(.min * 1000 | . * 100 | round / 100)"' "$T/hf.json")"
