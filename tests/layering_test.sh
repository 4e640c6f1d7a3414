#!/usr/bin/env bash
# The libraries in src/ depend on each other one way only (src/CMakeLists.txt draws the graph).
# A shared include root cannot stop a file from including a header of a library it must not know,
# so this test reads every #include in src/ and fails on any that crosses the graph the wrong way,
# and on the client side including a server-side third-party header.
#
#   tests/layering_test.sh [SRC_DIR]
set -uo pipefail
src="${1:-$(dirname "$0")/../src}"

declare -A allowed=(
  [base]="base"
  [io]="io base"
  [posix]="posix base"
  [api]="api base"
  [catalog]="catalog api base"
  [control]="control catalog api metrics io base"
  [http]="http base"
  [cli]="cli http api base"
  [engine]="engine posix io base"
  [proto]="proto base"
  [store]="store io base"
  [tier]="tier engine store api posix io base"
  [net]="net base"
  [metrics]="metrics net base"
  [server]="server metrics net proto engine posix io base"
  [client]="client metrics net proto posix base"
  [fs]="fs posix base"
  [fuse]="fuse fs posix base"
  [mount]="mount fuse fs client metrics http api net proto posix base"
)
# Libraries linked into the client binary, and the third-party headers they must never see
# (docs/adr/0001-binary-split.md).
client_libs=" base posix api http cli proto net metrics client fs fuse mount "
client_forbidden='^(httplib\.h|sqlite3\.h|rocksdb/|spdlog/)'

failures=0
for dir in "$src"/*/; do
  lib=$(basename "$dir")
  if [ -z "${allowed[$lib]+x}" ]; then
    echo "FAIL: src/$lib has no entry in tests/layering_test.sh: add its allowed dependencies"
    failures=$((failures + 1))
    continue
  fi
  while IFS= read -r line; do
    file=${line%%:*}
    header=$(sed -E 's/^[^:]*:[0-9]+:\s*#\s*include\s*[<"]([^>"]+)[>"].*/\1/' <<<"$line")
    top=${header%%/*}
    if [ "$top" != "$header" ] && [ -d "$src/$top" ]; then
      if [[ " ${allowed[$lib]} " != *" $top "* ]]; then
        echo "FAIL: ${file#"$src"/} includes $header, but $lib may depend only on: ${allowed[$lib]}"
        failures=$((failures + 1))
      fi
    fi
    if [[ "$client_libs" == *" $lib "* ]] && grep -qE "$client_forbidden" <<<"$header"; then
      echo "FAIL: ${file#"$src"/} includes $header, a server-side library"
      failures=$((failures + 1))
    fi
  done < <(grep -nE '^\s*#\s*include\s*[<"]' -r "$dir" --include='*.h' --include='*.cc' \
             | sed -E 's/^([^:]*):([0-9]+):/\1:\2:/')
done

if [ "$failures" -gt 0 ]; then
  echo "$failures layering violation(s)"
  exit 1
fi
echo "layering: every include in $src follows the dependency graph"
