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
#   log MESSAGE...       "$BENCH: MESSAGE" on stderr; on a terminal "$BENCH [M:SS]: MESSAGE", the
#                        time since the bench started, so a long run shows how far it is (the
#                        rows on stdout and a log redirected to a file stay as they are)
#   stop PID             SIGTERM, then SIGKILL after 10 s; never waits more than 15 s in all
#   reap PID S           waits up to S s for PID to end (then collects it if it is our child);
#                        1 if it still runs
#   mounted DIR          whether DIR is a mount point, by the mount table alone
#   mounted_under DIR    whether DIR or anything under it is a mount point, the same way
#   force_unmount ARCHIL DIR
#                        detaches the mount at DIR, if any, without waiting on it: `ARCHIL unmount
#                        -f` (ARCHIL: the archil binary) within 5 s, else `umount -l`
#   remove_work_dir DIR  rm -rf --one-file-system DIR, unless ARCHIL_BENCH_KEEP=1 (then it says
#                        where DIR is); a mount left under DIR and its parents are not touched
#   wait_alive PID N CMD...
#                        runs CMD every 50 ms until it succeeds (0), PID ends or N tries pass (1)
#   start_fake FLAGS...  starts archil-s3-fake ($FAKE) with FLAGS, its output in $W/fake.out;
#                        sets FAKE_PID and EP (its endpoint); exits if it does not start in 5 s

BENCH_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SPIKES=${SPIKES_BUILD:-$BENCH_REPO/build/spikes}

BENCH_T0=$SECONDS
log() {
  if [[ -t 2 ]]; then
    local t=$((SECONDS - BENCH_T0))
    printf '%s [%d:%02d]: %s\n' "${BENCH:-bench}" $((t / 60)) $((t % 60)) "$*" >&2
  else
    echo "${BENCH:-bench}: $*" >&2
  fi
}

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

# Whether PID runs; a zombie does not count (it has ended; only its status waits to be collected).
alive() {
  local s
  { read -r s < "/proc/$1/stat"; } 2> /dev/null || return 1
  s=${s##*) }
  [[ ${s:0:1} != Z ]]
}

# Waits up to $2 s for process $1 to end, then collects its status if it is our child; 1 if it
# still runs. A bare `wait` could block forever on a process stuck on a dead mount. (The bound is
# on the clock, not a count of sleeps: on a loaded machine those take longer than asked.)
reap() {
  local end=$((${EPOCHREALTIME//[!0-9]/} + $2 * 1000000))
  while alive "$1" && ((${EPOCHREALTIME//[!0-9]/} < end)); do sleep 0.1; done
  alive "$1" && return 1
  wait "$1" 2> /dev/null || true
  return 0
}

# Stops process PID: SIGTERM, then SIGKILL after 10 s; waits for it if it is our child. Bounded: a
# process that outlives SIGKILL by 5 s (stuck in the kernel, say on a hung FUSE mount) is named
# and left rather than waited for. Always 0, for cleanup paths under set -e.
stop() {
  [[ -n ${1:-} ]] || return 0
  kill "$1" 2> /dev/null || { reap "$1" 0 || true; return 0; }
  reap "$1" 10 && return 0
  log "pid $1 ($(cat "/proc/$1/comm" 2> /dev/null)) still runs 10 s after SIGTERM: SIGKILL"
  kill -9 "$1" 2> /dev/null || true
  reap "$1" 5 || log "pid $1 still runs 5 s after SIGKILL; leaving it"
  return 0
}

# In the mount table (a dead FUSE mount fails stat with ENOTCONN and a hung one blocks it, so
# mountpoint(1) is no test on a cleanup path). DIR must be absolute and canonical, as the table is.
mounted() { awk -v m="$1" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }
mounted_under() {
  awk -v d="$1" '$5 == d || index($5, d "/") == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo
}

# Detaches the mount at $2 if there is one, without waiting on it: `archil unmount -f` (umount2
# with MNT_FORCE | MNT_DETACH: open files fail) within 5 s, else `umount -l`. 1 if it is still
# mounted.
force_unmount() {
  mounted "$2" || return 0
  timeout -k 1 5 "$1" unmount -f "$2" > /dev/null 2>&1 || true
  mounted "$2" && { timeout -k 1 5 umount -l "$2" || true; }
  if mounted "$2"; then
    log "could not unmount $2"
    return 1
  fi
}

# Removes work directory $1 with rm -rf --one-file-system, unless ARCHIL_BENCH_KEEP=1. A mount
# left under it (force_unmount failed) and the directories holding it are not touched, not even
# stat'ed (a hung FUSE mount blocks stat), but everything else goes: it is gigabytes.
remove_work_dir() {
  local d=$1 e restore
  [[ -n $d && -d $d ]] || return 0
  if [[ ${ARCHIL_BENCH_KEEP:-0} == 1 ]]; then
    log "ARCHIL_BENCH_KEEP=1: keeping $d"
    return 0
  fi
  if ! mounted_under "$d"; then
    rm -rf --one-file-system "$d"
    return
  fi
  restore=$(shopt -p nullglob dotglob)
  shopt -s nullglob dotglob
  for e in "$d"/*; do
    mounted_under "$e" || rm -rf --one-file-system "$e"
  done
  eval "$restore"
  log "a mount is left under $d; removed everything else"
}

wait_alive() {
  local pid=$1 tries=$2
  shift 2
  for _ in $(seq "$tries"); do
    "$@" && return 0
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.05
  done
  "$@"
}

# Starts archil-s3-fake ($FAKE) with the flags "$@", its output in $W/fake.out; sets FAKE_PID and
# EP (its endpoint). Its allocations use transparent huge pages (glibc 2.35+): it keeps every body
# in memory, and faulting in 4 KiB pages costs it more CPU than the bandwidth it simulates
# (docs/measurements.md §20).
# With FAKE_CPUS set (a taskset list), the fake runs on those CPUs only.
start_fake() {
  local pin=()
  [[ -n ${FAKE_CPUS:-} ]] && pin=(taskset -c "$FAKE_CPUS")
  GLIBC_TUNABLES=glibc.malloc.hugetlb=1 ${pin[@]+"${pin[@]}"} "$FAKE" "$@" > "$W/fake.out" 2>&1 &
  FAKE_PID=$!
  wait_alive "$FAKE_PID" 100 grep -q '^listening on' "$W/fake.out" || true
  EP=$(sed -n 's/^listening on //p' "$W/fake.out" | head -1)
  [[ -n $EP ]] || { log "archil-s3-fake did not start (waited up to 5 s): $(cat "$W/fake.out")"; exit 1; }
}
