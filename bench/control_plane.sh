#!/usr/bin/env bash
# Control-plane latency, measured with our own code the way Archil's published latency script
# measures it (https://docs.archil.com/reference/limits.md#latency; rows described in
# docs/targets.md): `create ms` / `delete ms` are curl's time_total minus time_appconnect, one new
# connection per request, each create durably committed (SQLite WAL, synchronous=FULL) before it
# answers. The original script also runs against an `archil server` unchanged except for API and
# REGION; today it gets as far as its create and delete rows.
# Also: `archil version` cold start (hyperfine), and the floors under these rows (fio, health).
#
# Rows, in the order printed:
#   create ms / delete ms            plain HTTP (the `requests:` line above them says so), N each,
#                                    every create followed by the delete of its disk
#   create ms, back to back ...      the same creates on one keep-alive connection (plain HTTP)
#   create ms, HTTPS / delete ms, HTTPS
#                                    the same N and interleaving against a second server with a
#                                    self-signed certificate (its own data and run dirs), trusted
#                                    through CURL_CA_BUNDLE as the published script's plain curl
#                                    would be (no -k); time_appconnect is the end of the TLS
#                                    handshake there, so these leave out connect and handshake too
#   floor, 4k write+fdatasync ...    fio, back to back and 5 ms apart
#   health (HTTP, no commit) ms / health ms, HTTPS (no commit)
#                                    GET /api/health on a new connection: the round trip alone
#   floor, HTTPS request against openssl s_server -www
#                                    the same curl loop against the simplest TLS server there is
#   bytes written per create         the plain server's /proc/PID/io (wchar; write_bytes if the
#                                    kernel reports it) over 50 more creates, divided by 50
#   fdatasync / fsync / write calls per create
#                                    strace -f -c on the plain server over 20 more creates
#   floor, write+fdatasync of one create's bytes (N B) 5 ms apart
#                                    fio as the 5-ms-apart floor, with --bs = the wchar figure
#                                    rounded up to 512 B; and the target the control plane is held
#                                    to: create/delete HTTPS p50 <= 1.3 x (the s_server floor's p50
#                                    + that floor's p50), with the measured ratios
#   ... cold start ms                one hyperfine run of /bin/true, an empty C++ program linked
#                                    like `archil`, and `archil version`; their ratios (mean to
#                                    mean); then exact counts: relocations, dynamic libraries and
#                                    minor page faults of one run
#
#   bench/control_plane.sh [-n N] [--latency-script PATH]       default N=200
# --latency-script: afterwards, also run Archil's published latency script (its latency.sh, or the
# Markdown page that holds it) against the same server, unchanged except for its API and REGION
# lines; it prints the rows this project can already serve and stops at the first it cannot.
# Starts its own servers (plain HTTP and HTTPS) on free ports in a temporary directory under
# /var/tmp (a real disk, not tmpfs), and stops and removes them afterwards, on failure too
# (ARCHIL_BENCH_KEEP=1 keeps the directory); the latency script's mount at /mnt/latency-test too.
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
for tool in curl jq hyperfine fio openssl g++ readelf; do
  command -v $tool >/dev/null || { echo "bench: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done
BIN=${ARCHIL_BIN_DIR:-build/release/bin}  # another build: ARCHIL_BIN_DIR=build/xyz/bin
[ -x "$BIN/archil" ] || { echo "bench: build first (scripts/setup.sh)" >&2; exit 1; }

# The servers, and the mount the latency script makes, end within 1 s of this shell, even killed.
export ARCHIL_OWNER_PID=$$
T=$(mktemp -d /var/tmp/archil-bench.XXXXXX)
LATENCY_MNT=  # /mnt/latency-test once the latency script may have mounted it
cleanup() {
  set +e
  local p
  if [ -n "${WATCHDOG_PID:-}" ]; then kill -KILL "$WATCHDOG_PID" 2>/dev/null; reap "$WATCHDOG_PID" 5; fi
  stop "${LATENCY_PID:-}"
  stop "${FOLLOW_PID:-}"
  if [ -n "$LATENCY_MNT" ]; then force_unmount "$BIN/archil" "$LATENCY_MNT"; fi
  for p in "${JOURNALD_PID:-}" "${SSERVER_PID:-}" "${STRACE_PID:-}" "${TLS_PID:-}" "${PID:-}"; do
    stop "$p"
  done
  remove_work_dir "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start_server NAME [ARGS...]: an `archil server` with its data in $T/NAME and its advertisement in
# $T/NAME-run; sets SERVER_PID, SERVER_API and SERVER_KEY (its admin API key).
start_server() {
  local name=$1
  shift
  "$BIN/archil" server --data-dir "$T/$name" --api-listen 127.0.0.1:0 --mount-listen 127.0.0.1:0 \
    --run-dir "$T/$name-run" --log-level warn "$@" 2>"$T/$name.log" &
  SERVER_PID=$!
  for _ in $(seq 100); do
    [ -f "$T/$name-run/local.json" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  if [ ! -f "$T/$name-run/local.json" ]; then
    echo "bench: archil server ($name) did not start (waited up to 5 s):" >&2; cat "$T/$name.log" >&2; exit 1
  fi
  SERVER_API=$(jq -r .api "$T/$name-run/local.json")
  SERVER_KEY=$(cat "$T/$name/admin-api-key")
}
start_server data
PID=$SERVER_PID API=$SERVER_API KEY=$SERVER_KEY

# The HTTPS server: a self-signed certificate for 127.0.0.1 and localhost (P-256; the handshake is
# not in the rows, so the key type does not matter to them).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj /CN=localhost -addext 'subjectAltName=IP:127.0.0.1,DNS:localhost' \
  -keyout "$T/tls-key.pem" -out "$T/tls-cert.pem" 2>/dev/null
CERT=$T/tls-cert.pem
start_server tls --tls-cert "$CERT" --tls-key "$T/tls-key.pem"
TLS_PID=$SERVER_PID TLS_API=$SERVER_API TLS_KEY=$SERVER_KEY
case "$TLS_API" in https://*) ;; *) echo "bench: the TLS server advertises $TLS_API" >&2; exit 1 ;; esac
# curl trusts the certificate through CURL_CA_BUNDLE, as the published script's plain curl (no -k)
# would with a private CA; curl 7.88 (Debian 12) honours it. Checked here: a curl that ignored it
# would fail on the self-signed certificate, and we would say so rather than measure with -k.
if ! CURL_CA_BUNDLE=$CERT curl -sf -o /dev/null "$TLS_API/api/health"; then
  echo "bench: curl does not trust $CERT through CURL_CA_BUNDLE (use --cacert)" >&2; exit 1
fi
# The CLI trusts it through its own option (--ca-file, else ARCHIL_CA_FILE).
"$BIN/archil" --endpoint "$TLS_API" --api-key "$TLS_KEY" --ca-file "$CERT" -q disks list >/dev/null

# A safety net under the EXIT trap: in about one of a dozen SIGTERMs during the request loops, bash
# 5.2 died of the signal without running its traps and left both servers running. This watchdog
# (deaf to INT and TERM) stops them and removes $T once this shell is gone; cleanup() ends it first.
# (The servers also end by themselves through ARCHIL_OWNER_PID; the watchdog still removes $T.)
MAIN_PID=$$
( trap '' INT TERM
  while kill -0 "$MAIN_PID" 2>/dev/null; do sleep 0.5; done
  kill "$PID" "$TLS_PID" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$PID" 2>/dev/null || kill -0 "$TLS_PID" 2>/dev/null || break; sleep 0.1; done
  remove_work_dir "$T" ) >/dev/null 2>&1 &
WATCHDOG_PID=$!

pct() { sort -n | awk -v p="$1" '{ a[NR] = $1 } END { print a[int((NR * p + 99) / 100)] }'; }
stats() { local v; v=$(cat); echo "p50 $(pct 50 <<< "$v"), p95 $(pct 95 <<< "$v")"; }
api() { local key=$1; shift; curl -sf -H "Authorization: Bearer $key" -H 'Content-Type: application/json' "$@"; }

# create_delete URL KEY OUT: N creates, each followed by the delete of the disk it made, a new curl
# and connection per request; appends "time_appconnect time_total" to $T/OUT-create.txt and
# $T/OUT-delete.txt.
create_delete() {
  local url=$1 key=$2 out=$3 i
  for i in $(seq "$N"); do
    api "$key" -o "$T/$out-create.json" -w '%{time_appconnect} %{time_total}\n' -X POST "$url/api/disks" \
      -d "{\"name\":\"bench-$i\"}" >> "$T/$out-create.txt"
    api "$key" -o /dev/null -w '%{time_appconnect} %{time_total}\n' -X DELETE \
      "$url/api/disks/$(jq -r .data.diskId "$T/$out-create.json")" >> "$T/$out-delete.txt"
  done
}
create_delete "$API" "$KEY" plain
# The same creates and deletes back to back on one keep-alive connection (one curl process), to
# show the server's own cost without the idle gap the latency script's loop leaves between requests.
args=()
for i in $(seq "$N"); do
  args+=(-sf -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $KEY"
         -H 'Content-Type: application/json' -d "{\"name\":\"kept-$i\"}" "$API/api/disks" --next)
done
curl "${args[@]}" -s -o /dev/null "$API/api/health" > "$T/kept.txt"
CURL_CA_BUNDLE=$CERT create_delete "$TLS_API" "$TLS_KEY" tls
echo "machine: $(nproc) cores, $(uname -r), data dir on $(df --output=source "$T" | tail -1)"
echo "requests: $N creates + $N deletes, new connection each, plain HTTP on loopback"
echo "create ms: $(awk '{ print ($2 - $1) * 1000 }' "$T/plain-create.txt" | stats)"
echo "delete ms: $(awk '{ print ($2 - $1) * 1000 }' "$T/plain-delete.txt" | stats)"
echo "create ms, back to back on one connection: $(head -n "$N" "$T/kept.txt" | awk '{ print $1 * 1000 }' | stats)"
echo "requests: $N creates + $N deletes, new connection each, HTTPS on loopback (self-signed certificate; connect and TLS handshake left out)"
echo "create ms, HTTPS: $(awk '{ print ($2 - $1) * 1000 }' "$T/tls-create.txt" | stats)"
echo "delete ms, HTTPS: $(awk '{ print ($2 - $1) * 1000 }' "$T/tls-delete.txt" | stats)"

# The floors, measured the same way: a durable 4 KiB write back to back, and the same write 5 ms
# after the previous one (how creates arrive in the latency script's loop: curl starts between
# them; on this VM a flush after an idle gap costs several times a back-to-back one). And the HTTP round trip
# of this server on a new connection with no commit (GET /api/health).
floor() {  # floor BS [FIO ARGS...]
  local bs=$1
  shift
  fio --name=floor --directory="$T" --rw=write --bs="$bs" --size=16m --fdatasync=1 --runtime=5 \
    --time_based --output-format=json "$@" > "$T/fio.json" 2>/dev/null
  jq -r '.jobs[0].sync.lat_ns.percentile | "p50 \(.["50.000000"] / 1e6), p95 \(.["95.000000"] / 1e6)"' \
    "$T/fio.json"
}
echo "floor, 4k write+fdatasync back to back ms: $(floor 4k)"
echo "floor, 4k write+fdatasync 5 ms apart ms: $(floor 4k --thinktime=5000 --thinktime_blocks=1)"
for i in $(seq "$N"); do curl -s -o /dev/null -w '%{time_appconnect} %{time_total}\n' "$API/api/health"; done \
  > "$T/health.txt"
echo "health (HTTP, no commit) ms: $(awk '{ print ($2 - $1) * 1000 }' "$T/health.txt" | stats)"
for i in $(seq "$N"); do
  CURL_CA_BUNDLE=$CERT curl -sf -o /dev/null -w '%{time_appconnect} %{time_total}\n' "$TLS_API/api/health"
done > "$T/tls-health.txt"
echo "health ms, HTTPS (no commit): $(awk '{ print ($2 - $1) * 1000 }' "$T/tls-health.txt" | stats)"
# The floor under the HTTPS rows: the same curl against `openssl s_server -www` (one thread, no
# HTTP library, a fixed page) with the same certificate, measured the same way.
SSERVER_PORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
openssl s_server -accept "127.0.0.1:$SSERVER_PORT" -cert "$CERT" -key "$T/tls-key.pem" -www -quiet \
  > /dev/null 2>&1 &
SSERVER_PID=$!
for _ in $(seq 100); do CURL_CA_BUNDLE=$CERT curl -sf -o /dev/null "https://127.0.0.1:$SSERVER_PORT/" && break; sleep 0.05; done
if ! CURL_CA_BUNDLE=$CERT curl -sf -o /dev/null "https://127.0.0.1:$SSERVER_PORT/"; then
  echo "bench: openssl s_server did not answer on 127.0.0.1:$SSERVER_PORT within 5 s" >&2; exit 1
fi
for i in $(seq "$N"); do
  CURL_CA_BUNDLE=$CERT curl -s -o /dev/null -w '%{time_appconnect} %{time_total}\n' "https://127.0.0.1:$SSERVER_PORT/"
done > "$T/sserver.txt"
stop "$SSERVER_PID"; SSERVER_PID=
echo "floor, HTTPS request against openssl s_server -www ms: $(awk '{ print ($2 - $1) * 1000 }' "$T/sserver.txt" | stats)"

# What one create commits, on the plain server. /proc/PID/io covers every thread of the process:
# wchar counts the bytes passed to write-family calls (SQLite's WAL and its checkpoints, the
# engine's RocksDB WAL; amortized over the pass); write_bytes the bytes of page cache it dirtied
# (whole pages), when the kernel accounts it. ext4's journal (jbd2) is not in either.
creates() {  # creates COUNT NAME-PREFIX: COUNT creates on the plain server, a new connection each
  local i
  for i in $(seq "$1"); do
    api "$KEY" -o /dev/null -X POST "$API/api/disks" -d "{\"name\":\"$2-$i\"}"
  done
}
io() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$PID/io" 2>/dev/null; }
COMMIT_N=50 STRACE_N=20
echo "commit pass: $COMMIT_N more creates on the plain server (new connection each) for /proc/PID/io, then $STRACE_N under strace -f -c"
# Let the background work of the deletes above (space given back) settle first: at most 5 s.
prev=$(io wchar)
for _ in $(seq 10); do sleep 0.5; now=$(io wchar); [ "$now" = "$prev" ] && break; prev=$now; done
if [ "$(io wchar)" != "$prev" ]; then echo "# the plain server was still writing when the pass began"; fi
BYTES=
if [ -n "$(io wchar)" ]; then
  w0=$(io wchar) b0=$(io write_bytes)
  creates "$COMMIT_N" io
  w1=$(io wchar) b1=$(io write_bytes)
  BYTES=$(( (w1 - w0 + COMMIT_N / 2) / COMMIT_N ))
  echo "bytes written per create: $BYTES B (wchar)"
  if [ -n "$b0" ]; then
    echo "bytes written per create: $(( (b1 - b0 + COMMIT_N / 2) / COMMIT_N )) B (write_bytes)"
  else
    echo "# write_bytes: not reported by this kernel's /proc/PID/io"
  fi
else
  echo "# bytes written per create: /proc/$PID/io is not readable (no task I/O accounting)"
fi
if command -v strace >/dev/null; then
  # -f with -p attaches every thread of the server; the summary is written when strace detaches.
  # writev and pwritev too, so that the write calls add up to what wchar counts.
  strace -f -c -e trace=fdatasync,fsync,pwrite64,write,writev,pwritev -o "$T/strace.txt" -p "$PID" 2>"$T/strace.log" &
  STRACE_PID=$!
  for _ in $(seq 100); do grep -qs attached "$T/strace.log" && break; sleep 0.05; done
  if grep -qs attached "$T/strace.log" && kill -0 "$STRACE_PID" 2>/dev/null; then
    creates "$STRACE_N" strace
    sleep 0.2
    # SIGINT: strace detaches and writes its summary (bounded: a strace that hangs is stopped).
    kill -INT "$STRACE_PID"; reap "$STRACE_PID" 10 || stop "$STRACE_PID"; STRACE_PID=
    calls() { awk -v s="$1" '$NF == s && $4 ~ /^[0-9]+$/ { n = $4 } END { print n + 0 }' "$T/strace.txt"; }
    per() { awk -v c="$1" -v n="$STRACE_N" 'BEGIN { printf "%.2f", c / n }'; }
    echo "fdatasync per create: $(per "$(calls fdatasync)")"
    echo "fsync per create: $(per "$(calls fsync)")"
    wr=0 detail=
    for s in write pwrite64 writev pwritev; do
      wr=$(( wr + $(calls $s) )); detail+="${detail:+, }$s $(per "$(calls $s)")"
    done
    echo "write calls per create: $(per "$wr") ($detail)"
  else
    stop "$STRACE_PID"; STRACE_PID=
    echo "# fdatasync per create: strace could not attach to the server ($(head -c 200 "$T/strace.log" | tr '\n' ' '))"
  fi
else
  echo "# fdatasync per create: strace is not installed (scripts/setup.sh installs it)"
fi
if [ -n "$BYTES" ] && [ "$BYTES" -gt 0 ]; then
  bs=$(( (BYTES + 511) / 512 * 512 ))
  f=$(floor "$bs" --thinktime=5000 --thinktime_blocks=1)
  echo "floor, write+fdatasync of one create's bytes ($bs B) 5 ms apart ms: $f"
  # The target: 1.3 x (the same curl against s_server + this flush), and where the rows stand.
  ss=$(awk '{ print ($2 - $1) * 1000 }' "$T/sserver.txt" | pct 50)
  fl=$(awk '{ sub(",", "", $2); print $2 }' <<< "$f")
  cr=$(awk '{ print ($2 - $1) * 1000 }' "$T/tls-create.txt" | pct 50)
  de=$(awk '{ print ($2 - $1) * 1000 }' "$T/tls-delete.txt" | pct 50)
  awk -v ss="$ss" -v fl="$fl" -v cr="$cr" -v de="$de" 'BEGIN {
    t = 1.3 * (ss + fl)
    printf "target, create/delete HTTPS p50 <= 1.3 x (s_server %.3f + flush %.3f) ms: %.3f ms; create %.2f x the floors, delete %.2f x: %s\n",
      ss, fl, t, cr / (ss + fl), de / (ss + fl), (cr <= t && de <= t) ? "met" : "missed" }'

else
  echo "# floor of one create's bytes: no byte count"
fi

# Cold start, in one hyperfine run: /bin/true (the exec and loader alone), an empty C++ program
# linked as `archil` is (apps/archil/CMakeLists.txt and the release preset: -O2, -static-libstdc++
# -static-libgcc -Wl,--as-needed, and not a PIE, ADR 0022; no -g, which is not loaded), and
# `archil version`.
echo 'int main() {}' > "$T/empty.cc"
g++ -O2 -static-libstdc++ -static-libgcc -Wl,--as-needed -no-pie -o "$T/empty" "$T/empty.cc"
EMPTY=$T/empty
hyperfine -N -w 20 -r 300 --export-json "$T/hf.json" /bin/true "$EMPTY" "$BIN/archil version" >/dev/null 2>&1
cold() { jq -r ".results[$1] | \"mean \(.mean * 1000 | . * 100 | round / 100), min \(.min * 1000 | . * 100 | round / 100)\"" "$T/hf.json"; }
ratio() { jq -r ".results[2].mean / .results[$1].mean | . * 100 | round / 100" "$T/hf.json"; }
echo "/bin/true cold start ms: $(cold 0)"
echo "empty C++ program cold start ms: $(cold 1)"
echo "archil version cold start ms: $(cold 2)"
echo "archil version / /bin/true: $(ratio 0) x"
echo "archil version / empty C++ program: $(ratio 1) x"
relocs() { readelf -rW "$1" | awk '/^Relocation section/ { for (i = 1; i < NF; i++) if ($i == "contains") n += $(i + 1) } END { print n + 0 }'; }
libs() { { ldd "$1" 2>/dev/null || true; } | grep -c '=>\|ld-linux\|vdso' || true; }
echo "relocations (readelf -r entries): archil $(relocs "$BIN/archil"), empty C++ program $(relocs "$EMPTY")"
echo "dynamic libraries (ldd lines, vdso and loader included): archil $(libs "$BIN/archil"), empty C++ program $(libs "$EMPTY")"
faults() {  # faults CMD...: minor page faults of one run of CMD
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%R' -o "$T/faults.txt" "$@" >/dev/null 2>&1 && tail -1 "$T/faults.txt"
  else  # perf's page-faults counts minor and major faults together
    perf stat -x, -e page-faults -o "$T/faults.txt" -- "$@" >/dev/null 2>&1 &&
      awk -F, '$3 == "page-faults" { print $1 }' "$T/faults.txt"
  fi
}
if [ -x /usr/bin/time ] || command -v perf >/dev/null; then
  src=$([ -x /usr/bin/time ] && echo "/usr/bin/time %R" || echo "perf stat page-faults")
  echo "minor page faults, one run ($src): archil version $(faults "$BIN/archil" version), /bin/true $(faults /bin/true), empty C++ program $(faults "$EMPTY")"
else
  echo "# minor page faults: neither /usr/bin/time (Debian package time) nor perf is installed"
fi

if [ -n "$LATENCY_SCRIPT" ]; then
  # The script as published, from its own file or from the code block of its Markdown page; only
  # the API and REGION assignments are replaced.
  latency_script "$LATENCY_SCRIPT" "$T/latency.sh" "$API" local
  echo "Archil's published latency script, against this server:"
  bin_abs=$(realpath "$BIN")
  # Its mount rows read the daemon's line from journald: start one if none runs.
  JOURNALD_PID=
  if ! pgrep -x systemd-journal > /dev/null && [ -x /lib/systemd/systemd-journald ]; then
    /lib/systemd/systemd-journald > /dev/null 2>&1 &
    JOURNALD_PID=$!
    sleep 0.5
  fi
  # The script mounts at /mnt/latency-test; a mount already there is not ours to unmount.
  mounted /mnt/latency-test || LATENCY_MNT=/mnt/latency-test
  # `--region local` finds this server through its advertisement in $T/data-run. In the background,
  # followed by tail: timeout runs the script in a process group of its own, which Ctrl-C does not
  # reach, and this shell handles a signal while it waits, not after the script's 10 minutes.
  ( cd "$T"
    export ARCHIL_API_KEY="$KEY" ARCHIL_RUN_DIR="$T/data-run" PATH="$bin_abs:$PATH"
    exec timeout -k 10 600 bash latency.sh ) > "$T/latency.out" 2>&1 &
  LATENCY_PID=$!
  tail -n +1 -f --pid="$LATENCY_PID" "$T/latency.out" | sed 's/^/  /' &
  FOLLOW_PID=$!
  wait "$LATENCY_PID" || true
  LATENCY_PID=
  reap "$FOLLOW_PID" 5 || stop "$FOLLOW_PID"  # tail --pid ends within 1 s of the script
  FOLLOW_PID=
  stop "$JOURNALD_PID"; JOURNALD_PID=
  # The script stops at its first command we do not have yet (checkpoints), leaving its mount.
  if [ -n "$LATENCY_MNT" ]; then force_unmount "$BIN/archil" "$LATENCY_MNT" || true; fi
  LATENCY_MNT=
fi
