#!/usr/bin/env bash
# seed.sh: Archil's published latency script (https://docs.archil.com/reference/limits.md#latency),
# verbatim but for its API= and REGION= lines, against a fresh local `archil server` over HTTPS,
# with this machine's floors measured in the same run, before it, as rows of their own. The
# results go into a table beside Archil's published figures (docs/benchmarks.md with --write-docs).
#
# What it does:
#   1. a self-signed CA and a server certificate for 127.0.0.1 and localhost (openssl), and
#      `archil server --tls-cert --tls-key` on free loopback ports with its data directory under
#      /var/tmp (a real disk: the script writes a 4 GiB and a 1 GiB file; 12 GiB free are required)
#   2. the floors: the script's fio lines on a local file in /var/tmp (an O_SYNC 4 KiB write on a
#      fresh 1 GiB file; a 4 KiB O_DIRECT random read of a 4 GiB file filled the script's way),
#      loopback TCP round trip (bench/spikes/tcp_pingpong), and `archil version` wall time over 40
#      runs, timed as the script's ms function times the CLI (date +%s%N around it, in µs here)
#   3. the script, run with bash as root (what `sudo -E bash latency.sh` does) with: PATH starting
#      with build/release/bin (so `archil` is ours), ARCHIL_API_KEY (the server's admin key),
#      ARCHIL_RUN_DIR (where the server advertises region "local"), CURL_CA_BUNDLE and
#      ARCHIL_CA_FILE (the CA), an empty ARCHIL_REGIONS_FILE (so /etc/archil/regions.json cannot
#      name another "local"), TMPDIR inside the work directory, and BASH_ENV pointing at an ERR
#      trap that records the line the script stops at (its text is unchanged). systemd-journald is
#      started if none runs (the script reads `journalctl -t archil-$DISK`) and stopped afterwards
#   4. the table: Row | Archil p50 | Archil p95 | ours p50 | ours p95 | floor, on stdout; with
#      --write-docs also in docs/benchmarks.md between <!-- seed:begin --> and <!-- seed:end -->,
#      with its data in docs/img/seed-latency.tsv and the chart docs/img/seed-latency.svg
#      (bench/seed_plot.py). Without --write-docs the TSV and SVG go to /var/tmp/archil-seed.tsv
#      and /var/tmp/archil-seed.svg
# If the script stops part way, what it printed is kept, the line it stopped at is named, and the
# table is written with the rows it has. On exit (failure, Ctrl-C and SIGTERM too) the mount at
# /mnt/latency-test is unmounted, the server (and journald, if started here) stopped and the work
# directory removed: ARCHIL_BENCH_KEEP=1 in the environment keeps it (the server's data included).
#
# Usage: sudo bench/seed.sh --latency-script PATH [--write-docs] [--quick]
#   --latency-script PATH  the script, or the Markdown page that holds it in a ```bash latency.sh
#                          block (https://docs.archil.com/reference/limits.md#latency); also
#                          ARCHIL_LATENCY_SCRIPT
#   --write-docs           write docs/benchmarks.md, docs/img/seed-latency.tsv and .svg
#   --quick                development run, NOT the published parameters: N=40 becomes N=5 and
#                          --runtime=30 becomes --runtime=5 in the script, floors 3 s each;
#                          refused with --write-docs
# Exit status: 0 when the script ran to its end, 3 when it stopped part way (the table is still
# written), 1 or 2 when the run could not start.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
LATENCY_SRC=${ARCHIL_LATENCY_SCRIPT:-}
WRITE_DOCS=0 QUICK=0
# The command as docs show it: the script's file by its name only, not where it lies here.
ARGS=$(sed -E 's#(--latency-script )[^ ]*/#\1#' <<< "$*")
while [[ $# -gt 0 ]]; do
  case "$1" in
    --latency-script) LATENCY_SRC="$2"; shift 2 ;;
    --write-docs) WRITE_DOCS=1; shift ;;
    --quick) QUICK=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "seed.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

if [[ -z $LATENCY_SRC ]]; then
  echo "seed.sh: give Archil's published latency script with --latency-script PATH (the script, or" \
    "its page, https://docs.archil.com/reference/limits.md#latency, saved as Markdown)" >&2
  exit 2
fi

BENCH=seed.sh
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"
cd "$REPO"  # a relative --latency-script is taken from the repository's root

if [[ $QUICK == 1 && $WRITE_DOCS == 1 ]]; then
  log "--quick does not run the published parameters: it cannot --write-docs"; exit 2
fi
[[ -r $LATENCY_SRC ]] || { log "cannot read the latency script '$LATENCY_SRC' (--latency-script PATH)"; exit 2; }
[[ $(id -u) == 0 ]] || { log "run as root (sudo bench/seed.sh): the latency script mounts"; exit 1; }
need_tools curl jq fio journalctl openssl /usr/bin/python3 awk findmnt timeout
[[ -c /dev/fuse ]] || { log "no /dev/fuse (modprobe fuse)"; exit 1; }
BIN=$REPO/build/release/bin
for b in archil archil-server archil-mount mount.archil; do
  [[ -x $BIN/$b ]] || { log "no $BIN/$b: build first (cmake --preset release && cmake --build build/release)"; exit 1; }
done
MNT=/mnt/latency-test  # the script's mount point
if mounted "$MNT"; then log "$MNT is already mounted; unmount it first"; exit 1; fi
need=$((12 * 1024 * 1024 * 1024))
free=$(df --output=avail -B1 /var/tmp | tail -1 | tr -d ' ')
if [[ $free -lt $need ]]; then
  log "/var/tmp has $((free / 1024 / 1024 / 1024)) GiB free; the run needs 12 GiB (the script's 4 GiB and 1 GiB files, and the 4 GiB floor file)"
  exit 1
fi
export LC_ALL=C  # '.' decimals in awk and date
unset ARCHIL_ENDPOINT ARCHIL_REGION ARCHIL_MOUNT_TOKEN ARCHIL_JOURNAL_SOCKET

# The server and the script's mount daemon end, its mount aborted, within 1 s of this shell, even
# killed.
export ARCHIL_OWNER_PID=$$
W=$(realpath "$(mktemp -d /var/tmp/archil-seed.XXXXXX)")  # canonical, as the mount table has it
SERVER_PID='' JOURNALD_PID='' RUN_PID='' TAIL_PID=''
cleanup() {
  set +e
  stop "$RUN_PID"
  stop "$TAIL_PID"
  if mounted "$MNT"; then  # the script's mount: the run refuses to begin with one there
    log "unmounting $MNT"
    force_unmount "$BIN/archil" "$MNT"
  fi
  stop "$SERVER_PID"
  stop "$JOURNALD_PID"
  remove_work_dir "$W"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- TLS and the server -------------------------------------------------------------------------
mkdir -p "$W/tls" "$W/floor" "$W/tmp"
log "making a CA and a certificate for 127.0.0.1 and localhost"
(
  cd "$W/tls"
  ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 2 -subj "/CN=archil seed CA"
  openssl req "${ec[@]}" -keyout server.key -out server.csr -subj "/CN=localhost"
  printf '%s\n' 'subjectAltName=IP:127.0.0.1,DNS:localhost' 'basicConstraints=CA:FALSE' \
    'keyUsage=digitalSignature' 'extendedKeyUsage=serverAuth' > ext.cnf
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
    -days 2 -extfile ext.cnf
) > "$W/tls/openssl.log" 2>&1 || { log "openssl failed: $(cat "$W/tls/openssl.log")"; exit 1; }

REGION=local
log "starting archil server (HTTPS) in $W"
"$BIN/archil" server --data-dir "$W/data" --api-listen 127.0.0.1:0 --mount-listen 127.0.0.1:0 \
  --run-dir "$W/run" --region "$REGION" --tls-cert "$W/tls/server.pem" --tls-key "$W/tls/server.key" \
  --log-level warn > "$W/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 200); do
  [[ -f $W/run/$REGION.json ]] && break
  kill -0 "$SERVER_PID" 2> /dev/null || break
  sleep 0.05
done
[[ -f $W/run/$REGION.json ]] || { log "the server did not start (waited up to 10 s): $(cat "$W/server.log")"; exit 1; }
API=$(jq -r .api "$W/run/$REGION.json")
[[ $API == https://* ]] || { log "the server advertises $API, not an https URL"; exit 1; }

# --- journald -----------------------------------------------------------------------------------
if [[ ! -S /run/systemd/journal/socket ]] || ! pgrep -x systemd-journal > /dev/null; then
  if [[ -x /lib/systemd/systemd-journald ]]; then
    log "starting systemd-journald (stopped again at the end)"
    /lib/systemd/systemd-journald > /dev/null 2>&1 &
    JOURNALD_PID=$!
    sleep 0.2
  fi
fi
journal_ok || log "journald does not answer: the script's 'mount ms, client log' row will be empty"

# --- floors -------------------------------------------------------------------------------------
declare -A F50 F95
set_floor() { read -r "F50[$1]" "F95[$1]" <<< "$2"; }
f3() { awk -v v="$1" 'BEGIN { printf "%.3f", v }'; }
floor_row() { echo "$1: p50 $(f3 "${F50[$2]}"), p95 $(f3 "${F95[$2]}")"; }
FLOOR_RUNTIME=10
[[ $QUICK == 0 ]] || FLOOR_RUNTIME=3
latency_fio "$FLOOR_RUNTIME"

echo "# seed run $(date -u +%FT%TZ) on $(hostname): $(nproc) CPUs, kernel $(uname -r), /var/tmp on $(dir_fs /var/tmp), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# floors: the script's fio lines for ${FLOOR_RUNTIME} s on /var/tmp, loopback rtt, archil version x40"
log "floor: O_SYNC write on /var/tmp, ${FLOOR_RUNTIME} s"
set_floor sync "$($FIO --filename="$W/floor/w" --size=1G --rw=randwrite --sync=1 | fiostat write)"
rm -f "$W/floor/w"
floor_row "floor, local O_SYNC write ms" sync
log "floor: filling 4 GiB the script's way, then random reads for ${FLOOR_RUNTIME} s"
fio --name=fill --filename="$W/floor/r" --size=4G --rw=write --bs=1M --end_fsync=1 > /dev/null
set_floor read "$($FIO --filename="$W/floor/r" --size=4G --rw=randread | fiostat read)"
rm -f "$W/floor/r"
floor_row "floor, local cache-miss read ms" read
if spike tcp_pingpong; then
  set_floor rtt "$("$SPIKES/tcp_pingpong" --floor)"
  floor_row "floor, loopback rtt ms" rtt
else
  log "could not build tcp_pingpong: no loopback rtt floor"
fi
# The script's ms, to the microsecond: one `date` start is inside the interval, as in the script.
us() { local s e; s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N); echo $(((e - s) / 1000)); }
for _ in $(seq 40); do us "$BIN/archil" version; done | awk '{ print $1 / 1000 }' > "$W/version.txt"
set_floor cli "$(pct 50 < "$W/version.txt") $(pct 95 < "$W/version.txt")"
floor_row "floor, archil version start ms" cli
for _ in $(seq 40); do us /bin/true; done | awk '{ print $1 / 1000 }' > "$W/true.txt"
echo "# the same timer around /bin/true: p50 $(pct 50 < "$W/true.txt"), p95 $(pct 95 < "$W/true.txt") (a process start and one of date)"

# --- the script ---------------------------------------------------------------------------------
latency_script "$LATENCY_SRC" "$W/published.sh"
latency_script "$LATENCY_SRC" "$W/latency.sh" "$API" "$REGION"
if [[ $QUICK == 1 ]]; then
  if [[ $(grep -c '^N=40$' "$W/latency.sh") != 1 || $(grep -c -- '--runtime=30 ' "$W/latency.sh") != 1 ]]; then
    log "--quick: the script has no single N=40 line and --runtime=30 to shorten"; exit 1
  fi
  sed -i 's/^N=40$/N=5/; s/--runtime=30 /--runtime=5 /' "$W/latency.sh"
  echo "# QUICK RUN, NOT THE PUBLISHED PARAMETERS: N=5 instead of 40, fio --runtime=5 instead of 30"
fi
echo "# Archil's published latency script, changed only in these lines (published -> here):"
diff "$W/published.sh" "$W/latency.sh" | sed -n 's/^< /#   - /p; s/^> /#   + /p' || true

# The ERR trap (through BASH_ENV, so the script's text is unchanged) records the status, the line
# of the script's top level that was running, and the command; the last record is where it stopped.
cat > "$W/errtrap.sh" << 'EOF'
set -E
trap '__seed_s=$?; if [[ -n ${FUNCNAME[*]:-} ]]; then __seed_l=${BASH_LINENO[${#BASH_LINENO[@]}-2]}; else __seed_l=$LINENO; fi; printf "%s %s %s\n" "$__seed_s" "$__seed_l" "$BASH_COMMAND" >> "$SEED_ERR"' ERR
EOF
echo '{"regions": {}}' > "$W/regions.json"  # no regions file of this machine's in the way
log "running the latency script (about $([[ $QUICK == 1 ]] && echo 1 || echo 3) min)"
: > "$W/out.txt"
(
  cd "$W"
  ARCHIL_API_KEY=$(cat "$W/data/admin-api-key")
  export PATH="$BIN:$PATH" ARCHIL_API_KEY ARCHIL_RUN_DIR="$W/run" \
    ARCHIL_CA_FILE="$W/tls/ca.pem" CURL_CA_BUNDLE="$W/tls/ca.pem" TMPDIR="$W/tmp" \
    ARCHIL_REGIONS_FILE="$W/regions.json" BASH_ENV="$W/errtrap.sh" SEED_ERR="$W/err.txt"
  exec timeout -k 10 1800 bash latency.sh
) > "$W/out.txt" 2>&1 &
RUN_PID=$!
# tail in the background: a signal to this script is handled while it waits, not after.
tail -n +1 -f --pid="$RUN_PID" "$W/out.txt" &
TAIL_PID=$!
RC=0
wait "$RUN_PID" || RC=$?
RUN_PID=
reap "$TAIL_PID" 5 || stop "$TAIL_PID"  # tail --pid ends within 1 s of the script
TAIL_PID=

STOPPED='' STOPPED_MD=''  # why the script did not finish, for the terminal and for Markdown
if [[ $RC == 124 ]]; then
  STOPPED="the script did not finish within 30 min (timeout)"
  STOPPED_MD=$STOPPED
elif [[ $RC != 0 ]]; then
  line='' text='' last=''
  [[ -s $W/err.txt ]] && line=$(tail -1 "$W/err.txt" | awk '{ print $2 }')
  [[ -z $line ]] || text=$(sed -n "${line}p" "$W/latency.sh" | sed 's/^ *//')
  last=$(grep -v -E '^[a-zA-Z0-9_ ,-]+ ms[a-z ,]*: p50 ' "$W/out.txt" | tail -1 || true)
  STOPPED="the latency script stopped (exit $RC)${line:+ at its line $line: $text}${last:+; its last output: $last}"
  STOPPED_MD="the script stopped (exit $RC)${line:+ at its line $line, \`\` $text \`\`}${last:+, whose last output was \`\` $last \`\`}"
fi
[[ -z $STOPPED ]] || log "$STOPPED"

# --- the table ----------------------------------------------------------------------------------
declare -A O50 O95
while IFS=$'\t' read -r row p50 p95; do
  O50[$row]=$p50 O95[$row]=$p95
done < <(sed -n -E 's/^([a-zA-Z_ ,-]+ ms[a-z ,]*): p50 ([0-9.]+), p95 ([0-9.]+)$/\1\t\2\t\3/p' "$W/out.txt")

add() { awk 'BEGIN { s = 0; for (i = 1; i < ARGC; i++) { if (ARGV[i] == "") { print ""; exit } s += ARGV[i] } printf "%.4f", s }' "$@"; }
fmt() {  # a figure as the table shows it
  awk -v v="$1" 'BEGIN {
    if (v == "") { print "—"; exit }
    if (v == int(v)) { printf "%d\n", v; exit }
    if (v < 1) printf "%.3f\n", v; else if (v < 10) printf "%.2f\n", v; else printf "%.1f\n", v }'
}
# Rows in the order of Archil's table: name, Archil p50, p95, floor key list, floor's meaning.
ROWS=(
  "create ms|9.3|11|rtt sync|RTT + sync"
  "delete ms|8.1|10|rtt sync|RTT + sync"
  "mount ms, client log|41|49|rtt|RTT"
  "mount ms, wall|50|58|cli|CLI start"
  "checkpoint ms|13|19|cli rtt sync|CLI start + RTT + sync"
  "branch ms|33|36|cli rtt sync|CLI start + RTT + sync"
  "O_SYNC write ms|2.0|8.2|sync rtt|sync + RTT"
  "cache-miss read ms|0.50|0.75|read rtt|read + RTT"
)
TSV=$W/seed-latency.tsv
MD=$W/table.md
printf 'row\tarchil_p50\tarchil_p95\tours_p50\tours_p95\tfloor_p50\n' > "$TSV"
{
  echo "| Row | Archil p50 | Archil p95 | ours p50 | ours p95 | floor |"
  echo "|---|---|---|---|---|---|"
  echo "| floor: local O_SYNC write (sync) | — | — | $(fmt "${F50[sync]}") | $(fmt "${F95[sync]}") | — |"
  echo "| floor: local cache-miss read (read) | — | — | $(fmt "${F50[read]}") | $(fmt "${F95[read]}") | — |"
  echo "| floor: loopback round trip (RTT) | — | — | $(fmt "${F50[rtt]:-}") | $(fmt "${F95[rtt]:-}") | — |"
  echo "| floor: \`archil version\` start (CLI start) | — | — | $(fmt "${F50[cli]}") | $(fmt "${F95[cli]}") | — |"
  for r in "${ROWS[@]}"; do
    IFS='|' read -r name a50 a95 keys what <<< "$r"
    vals=()
    for k in $keys; do vals+=("${F50[$k]:-}"); done
    fl=$(add "${vals[@]}")
    o50=${O50[$name]:-} o95=${O95[$name]:-}
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$a50" "$a95" "$o50" "$o95" "$fl" >> "$TSV"
    if [[ -n $o50 ]]; then ours="$(fmt "$o50") | $(fmt "$o95")"; else ours="not run | not run"; fi
    if [[ -n $fl ]]; then floor="$(fmt "$fl") ($what)"; else floor="—"; fi
    echo "| \`$name\` | $a50 | $a95 | $ours | $floor |"
  done
  echo
  echo "All figures in ms. Archil's: their run from a c7gn.2xlarge in AWS us-east-1, October 27, 2026."
  commit=$(git -C "$REPO" rev-parse --short HEAD 2> /dev/null || echo unknown)
  if [[ -n $(git -C "$REPO" status --porcelain -uno -- src apps 2> /dev/null) ]]; then
    commit="$commit (with uncommitted changes under src/ or apps/)"
  fi
  echo "Ours: $(date -u +%F), $(nproc) CPUs, kernel $(uname -r), /var/tmp on $(dir_fs /var/tmp)$(
    d=$(findmnt -n -o SOURCE --target /var/tmp); d=${d##*/}; p=$(lsblk -no PKNAME "/dev/$d" 2> /dev/null | head -1)
    drv=/sys/class/block/${p:-$d}/device/driver; [[ -e $drv ]] && echo " ($(basename "$(readlink -f "$drv")"))"
  ), load $(cut -d' ' -f1-3 /proc/loadavg) at the end, commit $commit, \`sudo bench/seed.sh${ARGS:+ $ARGS}\`."
  if [[ $QUICK == 1 ]]; then
    echo "**Quick run, not the published parameters: N=5 instead of 40, fio --runtime=5 instead of 30.**"
  fi
  if [[ -n $STOPPED_MD ]]; then
    echo "\"not run\": $STOPPED_MD."
  fi
} > "$MD"

echo
cat "$MD"

if [[ $WRITE_DOCS == 1 ]]; then
  DOC=$REPO/docs/benchmarks.md
  mkdir -p "$REPO/docs/img"
  cp "$TSV" "$REPO/docs/img/seed-latency.tsv"
  /usr/bin/python3 "$REPO/bench/seed_plot.py" "$REPO/docs/img/seed-latency.tsv" "$REPO/docs/img/seed-latency.svg"
  if [[ ! -f $DOC ]]; then
    # shellcheck disable=SC2016  # Markdown backticks
    printf '%s\n' '# Benchmarks' '' \
      "The rows of [Archil's published latency script](https://docs.archil.com/reference/limits.md#latency)," \
      'run against a local `archil server` by `sudo bench/seed.sh --write-docs`.' '' \
      '<!-- seed:begin -->' '<!-- seed:end -->' '' '![Latency of the script rows](img/seed-latency.svg)' > "$DOC"
  fi
  if ! grep -q '^<!-- seed:begin -->$' "$DOC" || ! grep -q '^<!-- seed:end -->$' "$DOC"; then
    log "$DOC has no <!-- seed:begin --> and <!-- seed:end --> lines"; exit 1
  fi
  awk -v t="$MD" '
    /^<!-- seed:begin -->$/ { print; while ((getline l < t) > 0) print l; skip = 1; next }
    /^<!-- seed:end -->$/ { skip = 0 }
    !skip' "$DOC" > "$W/doc.md"
  cat "$W/doc.md" > "$DOC"
  log "wrote $DOC, docs/img/seed-latency.tsv and docs/img/seed-latency.svg"
else
  cp "$TSV" /var/tmp/archil-seed.tsv
  /usr/bin/python3 "$REPO/bench/seed_plot.py" /var/tmp/archil-seed.tsv /var/tmp/archil-seed.svg
  log "table not written to docs (no --write-docs); data and chart: /var/tmp/archil-seed.tsv, /var/tmp/archil-seed.svg"
fi
[[ $RC == 0 ]] || exit 3
