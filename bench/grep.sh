#!/usr/bin/env bash
# grep.sh: the engine's grep (src/search/grep.h on an Engine::OpenSnapshot view, the code behind
# the API's grep) against GNU grep -r on a local copy of the same tree, in one run, on one
# directory. Run by hand with nothing else busy (not part of CI).
#
#   local grep -r P     floor: `grep -rE P TREE | wc -l` over the tree of text files (the page
#                       cache warm: one run first, then the median of three), MiB of the tree per s
#   engine grep P       build/release/bench/grep_bench: the same tree loaded into an engine disk
#                       (bench/grep_bench.cc), the median of three greps of the whole tree
#                       (recursive, up to 10,000 matches, so every file is read), MiB/s
#   TARGET              engine >= 70% of local, per pattern (docs/targets.md)
#   engine grep N files (with --many-files N) one grep with the API's defaults (30 s budget,
#                       1,000 results) over a disk of N small files in directories of 1,000; its
#                       time and stop reason
#
# The tree: --files text files of about --file-kib KiB each (default 10,000 x 105 KiB, about 1 GiB),
# lines of words, one line in 20,000 holding "zyzzyva", one in 5,000 a date (grep_bench
# --make-tree; deterministic). The patterns: the literal `zyzzyva` and the regex
# `2026-12-[0-9]{2}`.
#
# Usage: bench/grep.sh [--dir DIR] [--files N] [--file-kib K] [--concurrency C] [--many-files N]
#   --dir DIR         where the tree and the engine go (default /var/tmp; not tmpfs); a fresh
#                     subdirectory, removed at the end (ARCHIL_BENCH_KEEP=1 keeps it)
#   --concurrency C   the engine grep's concurrency (default 4)
# Builds grep_bench in build/release if it is missing (cmake --preset release first).
set -euo pipefail

DIR=/var/tmp
FILES=10000
FILE_KIB=105
CONCURRENCY=4
MANY=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) DIR="$2"; shift 2 ;;
    --files) FILES="$2"; shift 2 ;;
    --file-kib) FILE_KIB="$2"; shift 2 ;;
    --concurrency) CONCURRENCY="$2"; shift 2 ;;
    --many-files) MANY="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "grep.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
for n in "$FILES" "$FILE_KIB" "$CONCURRENCY" "$MANY"; do
  [[ $n =~ ^[0-9]+$ ]] || { echo "grep.sh: --files, --file-kib, --concurrency and --many-files take whole numbers" >&2; exit 2; }
done
[[ -d "$DIR" ]] || { echo "grep.sh: --dir $DIR is not a directory" >&2; exit 1; }

REPO=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$REPO/build/release/bench/grep_bench
if [[ ! -x $BENCH ]]; then
  [[ -d $REPO/build/release ]] || { echo "grep.sh: no build/release (run cmake --preset release)" >&2; exit 1; }
  echo "grep.sh: building grep_bench" >&2
  cmake --build "$REPO/build/release" --target grep_bench > /dev/null
fi

W=$(mktemp -d "$DIR/grep-bench.XXXXXX")
log() { echo "grep.sh: $*" >&2; }
cleanup() {
  if [[ ${ARCHIL_BENCH_KEEP:-0} == 1 ]]; then log "ARCHIL_BENCH_KEEP=1: keeping $W"; else rm -rf --one-file-system "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "# grep bench on $(hostname), $(date -u +%FT%TZ), kernel $(uname -r), $(nproc) CPUs, revision $(git -C "$REPO" describe --always --dirty 2> /dev/null || echo unknown), grep $(grep --version | head -1 | awk '{ print $NF }')"
log "making the tree: $FILES files of $FILE_KIB KiB"
"$BENCH" --make-tree "$W/tree" --files "$FILES" --file-kib "$FILE_KIB"
BYTES=$(du -sb --apparent-size "$W/tree" | cut -f1)
echo "# tree: $FILES files, $((BYTES / 1048576)) MiB"

PATTERNS=(zyzzyva '2026-12-[0-9]{2}')
declare -A LOCAL
for p in "${PATTERNS[@]}"; do
  grep -rE "$p" "$W/tree" | wc -l > /dev/null  # the page cache warm, as the engine's will be
  times=()
  for _ in 1 2 3; do
    start=$(date +%s.%N)
    lines=$(grep -rE "$p" "$W/tree" | wc -l)
    times+=("$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')")
  done
  median=$(printf '%s\n' "${times[@]}" | sort -g | sed -n 2p)
  LOCAL[$p]=$(awk -v b="$BYTES" -v t="$median" 'BEGIN { printf "%.0f", b / 1048576 / t }')
  echo "# local grep -r $p: $lines lines, runs ${times[*]} s"
  echo "local grep -r $p: ${LOCAL[$p]} MiB/s"
done

args=()
for p in "${PATTERNS[@]}"; do args+=(--pattern "$p"); done
out=$("$BENCH" --dir "$W/engine" --tree "$W/tree" --concurrency "$CONCURRENCY" "${args[@]}")
echo "$out"
for p in "${PATTERNS[@]}"; do
  e=$(grep -F "engine grep $p: " <<< "$out" | sed -n 's/.*: \([0-9]*\) MiB\/s/\1/p')
  verdict=$(awk -v e="$e" -v l="${LOCAL[$p]}" 'BEGIN { print (e >= 0.7 * l) ? "met" : "missed" }')
  echo "TARGET engine grep $p (>= 70% of local grep -r): $verdict ($(awk -v e="$e" -v l="${LOCAL[$p]}" 'BEGIN { printf "%.0f%%", 100 * e / l }'))"
done

if [[ $MANY -gt 0 ]]; then
  log "making a disk of $MANY small files"
  "$BENCH" --dir "$W/many" --many-files "$MANY"
fi
