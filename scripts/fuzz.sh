#!/usr/bin/env bash
# Builds every libFuzzer target (fuzz/*_fuzz.cc, with clang: the `fuzz` preset, build/fuzz) and
# runs each for SECONDS (default 30) over a temporary copy of its corpus fuzz/corpus/<name minus
# _fuzz>, so runs add nothing to the repository. Fails on any crash, leak or timeout and prints
# the input that caused it (kept in build/fuzz/artifacts/<target>/).
#
#   scripts/fuzz.sh [SECONDS] [target...]
set -uo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-30}"
shift $(($# > 0 ? 1 : 0))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/*_fuzz.cc; do targets+=("$(basename "$f" .cc)"); done
fi

cmake --preset fuzz >/dev/null || exit 1
cmake --build --preset fuzz --target "${targets[@]}" || exit 1

failed=0
for t in "${targets[@]}"; do
  work=$(mktemp -d)
  seeds="fuzz/corpus/${t%_fuzz}"
  [ -d "$seeds" ] && cp -r "$seeds/." "$work/"
  artifacts="build/fuzz/artifacts/$t"
  rm -rf "$artifacts" && mkdir -p "$artifacts"
  log="$artifacts/log.txt"
  echo "fuzz: $t for ${seconds}s over $(find "$work" -type f | wc -l) seeds"
  build/fuzz/fuzz/"$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$work" >"$log" 2>&1
  rc=$?
  rm -rf "$work"
  if [ "$rc" -ne 0 ]; then
    failed=$((failed + 1))
    grep -E 'ERROR|SUMMARY' "$log" | head -5
    for a in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*; do
      [ -e "$a" ] && echo "fuzz: $t FAILED, input: $a (replay: build/fuzz/fuzz/$t $a)"
    done
    echo "fuzz: $t FAILED (exit $rc), log: $log"
  else
    echo "fuzz: $t ok, $(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$') runs"
  fi
done
[ "$failed" -eq 0 ] || { echo "fuzz: $failed target(s) failed"; exit 1; }
echo "fuzz: ok"
