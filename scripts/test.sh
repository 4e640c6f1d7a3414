#!/usr/bin/env bash
# Sets up (scripts/setup.sh), builds and runs every test suite. The last line is the summary:
# "N passed, N failed".
#
#   scripts/test.sh [--preset release|debug|asan|tsan] [ctest arguments...]
set -uo pipefail
cd "$(dirname "$0")/.."

preset=release
if [ "${1:-}" = "--preset" ]; then preset="$2"; shift 2; fi

scripts/setup.sh --preset "$preset" || { echo "0 passed, 1 failed"; exit 1; }

log=$(mktemp)
ctest --preset "$preset" -j2 --timeout 300 "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
rm -f "$log"
if [ -z "$summary" ]; then
  echo "0 passed, 1 failed"
  exit 1
fi
failed=$(echo "$summary" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/')
total=$(echo "$summary" | sed -E 's/.* failed out of ([0-9]+).*/\1/')
echo "$((total - failed)) passed, ${failed} failed"
exit "$rc"
