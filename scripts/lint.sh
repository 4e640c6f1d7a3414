#!/usr/bin/env bash
# clang-tidy (.clang-tidy, warnings as errors) over the project's own sources: every translation
# unit under src/, apps/, tests/ and fuzz/ in the release build's compile_commands.json, and the
# project headers they include. Configures the release preset if needed; -j defaults to nproc.
#
#   scripts/lint.sh [-j N] [file regex]
set -uo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
if [ "${1:-}" = "-j" ]; then jobs="$2"; shift 2; fi
files="${1:-$PWD/(src|apps|tests|fuzz)/}"

[ -f build/release/compile_commands.json ] || cmake --preset release >/dev/null || exit 1
log=$(mktemp)
run-clang-tidy-14 -quiet -j "$jobs" -p build/release "$files" 2>&1 |
  sed -E 's/\x1b\[[0-9;]*m//g' >"$log"
rc=${PIPESTATUS[0]}
# run-clang-tidy prints each finding once per translation unit that includes the header.
grep -E '^/.*: (warning|error): ' "$log" | sort -u
count=$(grep -cE '^/.*: (warning|error): ' "$log")
if [ "$rc" -ne 0 ] || [ "$count" -ne 0 ]; then
  [ "$count" -ne 0 ] || tail -20 "$log"
  rm -f "$log"
  echo "lint: FAILED ($count findings)"
  exit 1
fi
rm -f "$log"
echo "lint: ok"
