# shellcheck shell=bash
# bench/lib.sh: helpers shared by the benchmark scripts (source it; it runs nothing). Set BENCH to
# the script's name first (messages start with it).
#
#   latency_fio S        sets FIO to the fio line of Archil's published latency script
#                        (https://docs.archil.com/reference/limits.md#latency) with S s of runtime;
#                        the rows append --filename, --size and --rw (and --sync=1) as the script does
#   fiostat SECTION      fio's JSON on stdin -> "P50 P95" of SECTION's (read, write) completion
#                        latency in ms, unrounded
#   fiolat SECTION       the same as "p50 X ms, p95 Y ms", to the microsecond
#   fiobw SECTION        fio's JSON on stdin -> SECTION's bandwidth in whole MiB/s
#   pct P                numbers on stdin, one a line -> their P-th percentile by the latency
#                        script's rule (nearest rank)
#   stats                numbers on stdin -> "p50 X ms, p95 Y ms" by that rule
#   need_tools TOOL...   exits 1 naming the first TOOL that is not installed
#   spike TARGET         builds bench/spikes' TARGET in $SPIKES (build/spikes, or SPIKES_BUILD) if
#                        it is missing; fails if it cannot
#   dir_fs DIR           "FSTYPE on SOURCE" of the file system holding DIR
#   latency_script SRC DEST API REGION
#                        writes Archil's published latency script to DEST: SRC is its latency.sh,
#                        or the Markdown page that holds it (its ```bash latency.sh block); only the
#                        API= and REGION= lines are replaced (by API and REGION; without them, the
#                        script as published); fails if SRC has no script or not exactly one of each
#   log MESSAGE...       "$BENCH: MESSAGE" on stderr

BENCH_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SPIKES=${SPIKES_BUILD:-$BENCH_REPO/build/spikes}

log() { echo "${BENCH:-bench}: $*" >&2; }

latency_fio() {
  # shellcheck disable=SC2034  # used by the scripts that source this
  FIO="fio --name=t --bs=4k --iodepth=1 --direct=1 --time_based --runtime=$1 --output-format=json"
}

fiostat() { jq -r ".jobs[0].$1.clat_ns.percentile | \"\(.[\"50.000000\"] / 1e6) \(.[\"95.000000\"] / 1e6)\""; }

fiolat() {
  jq -r ".jobs[0].$1.clat_ns.percentile | \"p50 \(.[\"50.000000\"] / 1e3 | round / 1e3) ms, p95 \(.[\"95.000000\"] / 1e3 | round / 1e3) ms\""
}

fiobw() { jq -r ".jobs[0].$1.bw_bytes / 1048576 | floor"; }

pct() { sort -n | awk -v p="$1" '{ a[NR] = $1 } END { print a[int((NR * p + 99) / 100)] }'; }

stats() {
  local v
  v=$(cat)
  echo "p50 $(pct 50 <<< "$v") ms, p95 $(pct 95 <<< "$v") ms"
}

need_tools() {
  local tool
  for tool in "$@"; do
    if ! command -v "$tool" > /dev/null; then
      log "'$tool' is not installed; it is required (Debian: apt-get install $tool)"
      exit 1
    fi
  done
}

spike() {
  [[ -x $SPIKES/$1 ]] && return 0
  log "building $1 in $SPIKES"
  if [[ ! -f $SPIKES/build.ninja ]]; then
    cmake -S "$BENCH_REPO/bench/spikes" -B "$SPIKES" -G Ninja > /dev/null || return 1
  fi
  ninja -C "$SPIKES" "$1" > /dev/null 2>&1
}

dir_fs() { findmnt -n -o FSTYPE,SOURCE --target "$1" | tr -s ' ' | sed 's/ / on /'; }

latency_script() {
  local src=$1 dest=$2
  if [[ $src == *.md ]]; then
    awk '/^```bash latency\.sh/ { on = 1; next } on && /^```/ { exit } on' "$src" > "$dest"
  else
    cp "$src" "$dest"
  fi
  if [[ ! -s $dest ]]; then
    log "no latency script in $src (expected a \`\`\`bash latency.sh block)"
    return 1
  fi
  if [[ $(grep -c '^API=' "$dest") != 1 || $(grep -c '^REGION=' "$dest") != 1 ]]; then
    log "$src: expected one API= and one REGION= line in the latency script"
    return 1
  fi
  [[ $# -ge 4 ]] || return 0
  sed -i -E "s|^API=.*|API=\"$3\"|; s|^REGION=.*|REGION=$4|" "$dest"
}

# Whether a probe line reaches the journal and journalctl reads it back.
journal_ok() {
  local id="archil-${BENCH%.sh}-probe-$$"
  printf 'SYSLOG_IDENTIFIER=%s\nMESSAGE=probe\n' "$id" | logger --journald 2> /dev/null || return 1
  for _ in $(seq 40); do
    journalctl -t "$id" -o cat --no-pager 2> /dev/null | grep -q probe && return 0
    sleep 0.05
  done
  return 1
}

# Stops process PID: SIGTERM, then SIGKILL after 10 s; waits for it if it is our child.
stop() {  # pid: SIGTERM, then SIGKILL after 10 s
  [[ -n $1 ]] || return 0
  kill "$1" 2> /dev/null || { wait "$1" 2> /dev/null || true; return 0; }
  for _ in $(seq 100); do kill -0 "$1" 2> /dev/null || break; sleep 0.1; done
  kill -9 "$1" 2> /dev/null || true
  wait "$1" 2> /dev/null || true
}
